"""Korean behavioural test suites (CheckList-style MFT/INV/DIR tests, issue 30): making perturbed copies of a dev set
in the task's official format (`make`), the Korean edits behind them (`korean`, with the kiwipiepy analyzer), and
scoring a model's predictions on them test by test (`score`).

What a task knows about its own data for this (its fields, spans and official file) is the task's `probe` part
(klue_viz.tasks.probing); nothing here branches on a task's name.
May import: scoring, tasks, drawing, reading, metrics, core (a sibling of store; compare, outputs, ui and cli import it).
"""
