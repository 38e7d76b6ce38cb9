"""Discovery: what a user should look at first (weak slices, likely gold errors, calibration, sort orders).

Pure functions over a run's tidy frames; the CLI (`klue-viz slices`, `klue-viz suspects`,
`evaluate --out`) and the app panel (`klue_viz.ui.discovery`) call the same ones. Also the review of
suspected gold errors and the corrected gold it yields, and what the tags say.
May import: store, scoring, tasks, drawing, reading, metrics, core.
"""
