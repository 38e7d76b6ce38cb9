"""Plotly figures of the run comparison (pure: no Streamlit): the example x run matrix and metrics along a sequence."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from klue_viz.drawing.charts import FONT
from klue_viz.drawing.markup import chart_text

WRONG, RIGHT = "#cf222e", "#2da44e"


def matrix_figure(runs: Sequence[str], examples: Sequence[str], values: np.ndarray, rows: Sequence[int], by_score: bool) -> go.Figure:
    """Examples (rows, in the order given) x runs (columns): right/wrong, or the per-example score 0..1 (`by_score`);
    blank where a run has no such example. Every cell carries an invisible marker whose customdata is [row, column]
    (the table's row position and the run's column), so a click selects that cell."""
    labels_x, labels_y = [chart_text(r) for r in runs], [chart_text(e) for e in examples]
    scale = "RdYlGn" if by_score else [[0.0, WRONG], [0.5, WRONG], [0.5, RIGHT], [1.0, RIGHT]]
    text = np.where(np.isnan(values), "not scored", np.where(values >= 1, "right", "wrong")) if not by_score else np.round(values, 3).astype(str)
    fig = go.Figure(go.Heatmap(
        z=values, x=labels_x, y=labels_y, colorscale=scale, zmin=0, zmax=1, showscale=by_score, text=text,
        hovertemplate="%{y}<br>%{x}: %{text}<extra></extra>", xgap=1, ygap=1,
    ))
    xs, ys, cells = [], [], []
    for i, row in enumerate(rows):
        for j, run in enumerate(labels_x):
            xs.append(run)
            ys.append(labels_y[i])
            cells.append([int(row), j])
    fig.add_trace(go.Scatter(
        x=xs, y=ys, mode="markers", customdata=cells, name="cells",
        marker={"size": 14, "symbol": "square", "opacity": 0.01, "color": "#000"},
        hovertemplate="%{y}<br>%{x} — click to draw this example<extra></extra>",
    ))
    fig.update_layout(
        height=max(260, 18 * len(labels_y) + 140), margin={"l": 10, "r": 10, "t": 40, "b": 10}, font={"family": FONT},
        xaxis={"side": "top", "type": "category", "tickangle": -30 if len(labels_x) > 6 else 0},
        yaxis={"autorange": "reversed", "type": "category", "tickfont": {"size": 10}},
        showlegend=False, clickmode="event+select", dragmode=False,
    )
    return fig


def sequence_figure(frame: pd.DataFrame, runs: Sequence[str], metric: str, slice_label: str) -> go.Figure:
    """One line per slice value (or the overall value) of `metric` along the runs in order (klue_viz.compare.ranking.sequence_metrics)."""
    chosen = frame[(frame["metric"] == metric) & (frame["slice"] == slice_label)]
    labels = [chart_text(r) for r in runs]
    position = {r: k for k, r in enumerate(runs)}
    fig = go.Figure()
    for value, part in chosen.groupby("value", sort=True):
        part = part.assign(at=part["run"].map(position)).dropna(subset=["at"]).sort_values("at")
        fig.add_trace(go.Scatter(
            x=[labels[int(k)] for k in part["at"]], y=part["score"], mode="lines+markers", name=chart_text(value),
            customdata=part["n"], hovertemplate=f"{chart_text(value)}<br>%{{x}}: %{{y:.2f}} (n=%{{customdata}})<extra></extra>",
        ))
    fig.update_layout(
        height=360, margin={"l": 10, "r": 10, "t": 30, "b": 10}, font={"family": FONT},
        xaxis={"type": "category", "categoryorder": "array", "categoryarray": labels, "title": "run"},
        yaxis={"title": chart_text(metric)}, legend={"title": chart_text(slice_label or "overall")},
    )
    return fig
