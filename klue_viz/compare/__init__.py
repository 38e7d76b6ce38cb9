"""Many runs of one task compared: paired ranking (`ranking`) and the regression gate (`gate`).
May import: scoring, tasks, drawing, reading, metrics, core.
"""
