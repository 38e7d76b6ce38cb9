"""Plotly figures of the run comparison (pure: no Streamlit): the example x run matrix and metrics along a sequence."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.colors import qualitative

from klue_viz.core.steps import step_of
from klue_viz.drawing.charts import FONT
from klue_viz.drawing.markup import chart_text

WRONG, RIGHT = "#cf222e", "#2da44e"
#: One colour per series (a slice's value); plotly's default cycle, named so the models' dashes can share it.
PALETTE = qualitative.Plotly


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


#: Line styles telling models apart when a slice's values already take the colours.
DASHES = ("solid", "dash", "dot", "dashdot", "longdash", "longdashdot")


def sequence_figure(runs: Sequence[str], models: Sequence[str], series: Mapping[str, Sequence[float | None]],
                    counts: Mapping[str, Sequence[int]], metric: str, legend_title: str) -> go.Figure:
    """`metric` along the runs in order: one line per model and series (a slice's value, or "overall"), so model A's
    checkpoints and model B's epochs are two lines, never one line with a cliff where A ends. When every run's name
    carries a step (klue_viz.core.steps), the x axis is the step, read as a number; else the runs in order, by name.
    `series`: value name -> one metric value per run (None: none); `counts`: the same shape, its size per run."""
    steps = [step_of(r) for r in runs]
    by_step = all(step is not None for step in steps)
    labels = [chart_text(r) for r in runs]
    owners = list(dict.fromkeys(models))
    many = len(owners) > 1
    single = len(series) == 1  # the overall line: each model its own colour; a slice's values: a colour each, a dash per model
    fig = go.Figure()
    for v, (value, scores) in enumerate(series.items()):
        for m, model in enumerate(owners):
            mine = [k for k, owner in enumerate(models) if owner == model and scores[k] is not None]
            if by_step:
                mine.sort(key=lambda k: (steps[k], k))
            if not mine:
                continue
            name = chart_text(value) + (f" · {chart_text(model or '(no model)')}" if many else "")
            fig.add_trace(go.Scatter(
                x=[steps[k] for k in mine] if by_step else [labels[k] for k in mine], y=[scores[k] for k in mine],
                mode="lines+markers", name=name, legendgroup=chart_text(value),
                line=({"color": PALETTE[m % len(PALETTE)]} if single else {"color": PALETTE[v % len(PALETTE)], "dash": DASHES[m % len(DASHES)]}),
                customdata=[[labels[k], counts[value][k]] for k in mine],
                hovertemplate=f"{name}<br>%{{customdata[0]}}: %{{y:.2f}} (n=%{{customdata[1]}})<extra></extra>",
            ))
    xaxis = ({"type": "linear", "title": "step"} if by_step else
             {"type": "category", "categoryorder": "array", "categoryarray": labels, "title": "run"})
    fig.update_layout(
        height=360, margin={"l": 10, "r": 10, "t": 30, "b": 10}, font={"family": FONT}, xaxis=xaxis,
        yaxis={"title": chart_text(metric)}, legend={"title": chart_text(legend_title)},
    )
    return fig
