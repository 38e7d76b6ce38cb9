"""Plotly figures built from the tidy frames and the discovery tables; no Streamlit here, so they can be tested alone.

Below the task modules (STS draws its scatter through `Task.selection_charts`), so it imports nothing of
klue_viz but markup; plotly and pandas are loaded on first use, so `klue-viz evaluate` never loads them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from klue_viz.core.lazy import lazy_module
from klue_viz.drawing.markup import chart_text

if TYPE_CHECKING:
    import pandas as pd
    import plotly.graph_objects as go
else:
    pd = lazy_module("pandas")  # the CLI scores without it
    go = lazy_module("plotly.graph_objects")  # the app draws, the CLI does not

OTHER = "(other)"
FONT = "Noto Sans CJK KR, Noto Sans KR, Malgun Gothic, sans-serif"


def confusion_counts(pairs: pd.DataFrame, max_labels: int = 15, hide: tuple[str, ...] = (), outcomes: tuple[str, ...] = ()) -> pd.DataFrame:
    """Gold x predicted counts; labels beyond the `max_labels` most frequent are pooled as '(other)'.

    `outcomes` are predicted-side columns that are not labels (NER's "wrong boundary", DP's "wrong head"):
    they are never pooled, come last, and have no row of their own.
    """
    pairs = pairs[~pairs["gold"].astype(str).isin(hide) & ~pairs["pred"].astype(str).isin(hide)]
    gold, pred = pairs["gold"].astype(str), pairs["pred"].astype(str)
    frequency = pd.concat([gold, pred[~pred.isin(outcomes)]]).value_counts()
    kept = list(frequency.index[:max_labels]) + list(outcomes)
    gold = gold.where(gold.isin(kept), OTHER)
    pred = pred.where(pred.isin(kept), OTHER)
    table = pd.crosstab(gold, pred)
    present = set(table.index) | set(table.columns)
    labels = [label for label in sorted(present - set(outcomes)) if label != OTHER]
    labels += [OTHER] if OTHER in present else []
    columns = labels + [o for o in outcomes if o in set(table.columns)]
    return table.reindex(index=labels, columns=columns, fill_value=0)


def confusion_figure(counts: pd.DataFrame, axis_name: str) -> go.Figure:
    """A heatmap with an invisible marker on every cell, so a click selects that (gold, pred) cell."""
    z = counts.to_numpy()
    # Labels come from files: escaped for plotly (a click hands back the escaped label; html.unescape restores it).
    labels_x, labels_y = [chart_text(v) for v in counts.columns], [chart_text(v) for v in counts.index]
    row_share = z / np.maximum(z.sum(axis=1, keepdims=True), 1)
    fig = go.Figure(go.Heatmap(
        z=row_share, x=labels_x, y=labels_y, colorscale="Blues", zmin=0, zmax=1, showscale=False,
        text=z, texttemplate="%{text}", hovertemplate="gold %{y}<br>pred %{x}<br>%{text} (%{z:.0%} of the row)<extra></extra>",
    ))
    xs, ys, counts_flat = [], [], []
    for i, gold in enumerate(labels_y):
        for j, pred in enumerate(labels_x):
            if z[i, j]:
                xs.append(pred)
                ys.append(gold)
                counts_flat.append(int(z[i, j]))
    fig.add_trace(go.Scatter(
        x=xs, y=ys, mode="markers", customdata=counts_flat, name="cells",
        marker={"size": 28, "symbol": "square", "opacity": 0.01, "color": "#000"},
        hovertemplate="gold %{y}<br>pred %{x}<br>%{customdata} — click to show these examples<extra></extra>",
    ))
    side = max(320, 34 * len(labels_y) + 140)
    few = len(labels_x) <= 12
    fig.update_layout(
        height=side, margin={"l": 10, "r": 10, "t": 30, "b": 10}, font={"family": FONT},
        xaxis={"title": f"predicted {axis_name}", "side": "top", "type": "category", "tickvals": labels_x,
               "ticktext": [label.replace(" ", "<br>") if few else label for label in labels_x],
               "tickangle": 0 if few else -90},
        yaxis={"title": f"gold {axis_name}", "autorange": "reversed", "type": "category"},
        showlegend=False, clickmode="event+select", dragmode=False,
    )
    return fig


def top_confusions(pairs: pd.DataFrame, n: int = 15) -> pd.DataFrame:
    """The most frequent wrong (gold, pred) pairs."""
    wrong = pairs[pairs["gold"].astype(str) != pairs["pred"].astype(str)]
    if wrong.empty:
        return pd.DataFrame(columns=["gold", "pred", "count"])
    return wrong.groupby(["gold", "pred"], observed=True).size().rename("count").reset_index().nlargest(n, "count", keep="all").reset_index(drop=True)


def slice_figure(table: pd.DataFrame, metric: str, label: str) -> go.Figure:
    """The slice metric per value, bars labelled with the number of examples behind them."""
    shown = table.dropna(subset=[metric]) if metric in table else pd.DataFrame({metric: [], "value": [], "n": []})
    fig = go.Figure(go.Bar(
        x=shown[metric], y=[chart_text(v) for v in shown["value"]], orientation="h", text=[f"n={n}" for n in shown["n"]], textposition="auto",
        hovertemplate="%{y}<br>" + metric + " %{x:.2f}<br>%{text}<extra></extra>", marker_color="#0969da",
    ))
    fig.update_layout(
        height=max(220, 30 * len(shown) + 90), margin={"l": 10, "r": 10, "t": 30, "b": 10}, font={"family": FONT},
        xaxis={"title": metric, "range": [0, 100]}, yaxis={"title": chart_text(label), "autorange": "reversed", "type": "category"},
    )
    return fig


def sts_scatter(examples: pd.DataFrame) -> go.Figure:
    """Gold against predicted similarity; box or lasso selection picks the examples shown below."""
    colours = np.where(examples["correct"], "#0969da", "#cf222e")
    fig = go.Figure(go.Scatter(
        x=examples["gold"], y=examples["pred"], mode="markers", customdata=examples["guid"], marker={"color": colours, "size": 8, "opacity": 0.75},
        text=[chart_text(g) for g in examples["guid"]], hovertemplate="%{text}<br>gold %{x:.2f}<br>pred %{y:.2f}<extra></extra>",
    ))
    fig.add_shape(type="line", x0=0, y0=0, x1=5, y1=5, line={"dash": "dot", "color": "#8c959f"})
    for value in (3.0,):
        fig.add_vline(x=value, line={"dash": "dash", "color": "#bf8700"})
        fig.add_hline(y=value, line={"dash": "dash", "color": "#bf8700"})
    fig.update_layout(
        height=380, margin={"l": 10, "r": 10, "t": 30, "b": 10}, font={"family": FONT}, dragmode="select",
        xaxis={"title": "gold similarity (real-label)", "range": [-0.2, 5.2]}, yaxis={"title": "predicted", "range": [-0.2, 5.2]},
    )
    return fig


def reliability_figure(bins: list[dict], title: str) -> go.Figure:
    """Reliability diagram of a calibration's bins (klue_viz.discovery.calibration): accuracy per confidence bin, each bar
    as wide as its share of the examples."""
    largest = max(row["n"] for row in bins) or 1
    filled = [row for row in bins if row["n"]]
    centres = [(row["low"] + row["high"]) / 2 * 100 for row in filled]
    widths = [max(10 * row["n"] / largest, 0.6) for row in filled]
    fig = go.Figure()
    fig.add_bar(x=centres, y=[row["accuracy"] for row in filled], width=widths, name="accuracy",
                customdata=[[row["n"], row["confidence"]] for row in filled], marker_color="#0969da",
                hovertemplate="confidence %{x:.0f}±5<br>accuracy %{y:.1f}<br>mean confidence %{customdata[1]:.1f}<br>%{customdata[0]} examples<extra></extra>")
    fig.add_scatter(x=centres, y=[row["confidence"] for row in filled], mode="markers", name="mean confidence", marker_color="#cf222e")
    fig.add_scatter(x=[0, 100], y=[0, 100], mode="lines", name="perfect calibration", line={"dash": "dot", "color": "#57606a"})
    fig.update_layout(title=chart_text(title), xaxis_title="confidence (bar width ∝ examples in the bin)", yaxis_title="accuracy",
                      xaxis_range=[0, 100], yaxis_range=[0, 100], height=340, margin={"l": 10, "r": 10, "t": 40, "b": 10})
    return fig


def coverage_figure(curves: dict[str, pd.DataFrame]) -> go.Figure:
    """Accuracy against coverage, one line per run (run names escaped)."""
    fig = go.Figure()
    for run, curve in curves.items():
        fig.add_scatter(x=curve["coverage"], y=curve["accuracy"], mode="lines+markers", name=chart_text(run),
                        customdata=curve["threshold"], hovertemplate="coverage %{x:.0f}%<br>accuracy %{y:.1f}<br>confidence ≥ %{customdata:.3f}<extra></extra>")
    fig.update_layout(xaxis_title="coverage (% of examples kept, most confident first)", yaxis_title="accuracy",
                      xaxis_autorange="reversed", height=320, margin={"l": 10, "r": 10, "t": 20, "b": 10})
    return fig
