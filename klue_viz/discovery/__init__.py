"""Discovery: what a user should look at first (weak slices, likely gold errors, calibration, sort orders).

Pure functions over a run's tidy frames; the CLI (`klue-viz slices`, `klue-viz suspects`,
`evaluate --out`) and the app panel (`klue_viz.ui.discovery`) call the same ones.
"""
