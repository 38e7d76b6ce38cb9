"""Markup and figures, dict in and markup out: the one escaping path (`markup`), dependency arcs
(`arcs`), standalone SVG (`svg`) and plotly figures (`charts`, `compare_charts`). Knows no task.
May import: core.
"""
