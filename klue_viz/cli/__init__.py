"""The command line (`klue-viz ...`): the commands of `main` and the stored-run commands of `runs`.
May import: every floor but ui.
"""
