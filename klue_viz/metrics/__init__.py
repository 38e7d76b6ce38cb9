"""The official KLUE metrics, as per-example statistics plus one aggregate per task (`official`).

Byte-faithful to the official scorers (docs/metrics.md). May import: nothing of klue_viz, so a metric
can be read and tested alone (the `metrics-alone` contract in pyproject.toml).
"""
