"""Calibration of runs that give class probabilities (YNAT, NLI, RE).

Expected calibration error as in Guo et al. 2017 with 10 equal-width bins: the confidence `c` of an
example is the probability its run gave to the class it predicted; it falls in bin
`min(floor(10c), 9)`, and ECE = sum over bins of (bin size / N) * |accuracy - mean confidence|.
MCE is the largest of those gaps over non-empty bins. Both are on the 0..100 scale like every metric.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from klue_viz.lazy import lazy_module

if TYPE_CHECKING:
    import pandas as pd
else:
    pd = lazy_module("pandas")  # the CLI scores without it

N_BINS = 10


@dataclass
class Calibration:
    ece: float
    mce: float
    n: int
    bins: list[dict]

    def to_dict(self) -> dict:
        return {"ece": self.ece, "mce": self.mce, "n": self.n, "bins": self.bins}


def predicted_confidence(examples: pd.DataFrame, labels: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray]:
    """(confidence, correct) of the examples whose run gave probabilities; confidence is p(predicted class)."""
    index = {label: k for k, label in enumerate(labels)}
    confidence, correct = [], []
    for probs, pred, ok in zip(examples["probs"], examples["pred"], examples["correct"]):
        if probs is None or not isinstance(pred, str) or pred not in index:
            continue
        confidence.append(float(probs[index[pred]]))
        correct.append(bool(ok))
    return np.asarray(confidence, dtype=float), np.asarray(correct, dtype=bool)


def bin_of(confidence: np.ndarray) -> np.ndarray:
    """The bin of each confidence: min(floor(10c), 9), so c = 1.0 falls in the last bin."""
    return np.minimum(np.floor(confidence * N_BINS), N_BINS - 1).clip(0).astype(int)


def calibration(confidence: np.ndarray, correct: np.ndarray) -> Calibration | None:
    """ECE, MCE and the ten bins; None when no example has a confidence."""
    n = len(confidence)
    if n == 0:
        return None
    bins = bin_of(confidence)
    rows, ece, mce = [], 0.0, 0.0
    for b in range(N_BINS):
        inside = bins == b
        size = int(inside.sum())
        row = {"low": b / N_BINS, "high": (b + 1) / N_BINS, "n": size, "accuracy": None, "confidence": None}
        if size:
            accuracy, mean_confidence = float(correct[inside].mean()), float(confidence[inside].mean())
            gap = abs(accuracy - mean_confidence)
            ece += size / n * gap
            mce = max(mce, gap)
            row.update(accuracy=100.0 * accuracy, confidence=100.0 * mean_confidence)
        rows.append(row)
    return Calibration(100.0 * ece, 100.0 * mce, n, rows)


def run_calibration(task, examples: pd.DataFrame) -> Calibration | None:
    """The calibration of a run's example frame, for tasks with class probabilities."""
    labels = getattr(task, "labels", None)
    if not labels or "probs" not in examples:
        return None
    return calibration(*predicted_confidence(examples, labels))


def coverage_curve(confidence: np.ndarray, correct: np.ndarray, steps: int = 20) -> pd.DataFrame:
    """Accuracy of the most confident share of examples, as the least confident ones are set aside.

    Ties in confidence are kept together (a threshold cannot split them), so each row's coverage is
    the share actually kept at that threshold.
    """
    n = len(confidence)
    if n == 0:
        return pd.DataFrame(columns=["coverage", "accuracy", "threshold", "kept"])
    order = np.argsort(-confidence, kind="stable")
    sorted_conf, sorted_ok = confidence[order], correct[order]
    cumulative = np.cumsum(sorted_ok)
    rows = []
    for share in np.linspace(1.0, 1.0 / steps, steps):
        k = max(1, round(share * n))
        threshold = sorted_conf[k - 1]
        k = int(np.searchsorted(-sorted_conf, -threshold, side="right"))  # keep every tie of the threshold
        rows.append({"coverage": 100.0 * k / n, "accuracy": 100.0 * cumulative[k - 1] / k, "threshold": float(threshold), "kept": k})
    return pd.DataFrame(rows).drop_duplicates("kept", ignore_index=True)


def confidence_bucket(confidence: pd.Series) -> pd.Series:
    """Confidence as a slice: the ten calibration bins as readable labels; no probabilities is its own value."""
    values = confidence.to_numpy(dtype=float, na_value=np.nan)
    known = ~np.isnan(values)
    labels = np.full(len(values), "(no probabilities)", dtype=object)
    bins = bin_of(values[known])
    labels[known] = [f"{b / N_BINS:.1f}-{(b + 1) / N_BINS:.1f}" for b in bins]
    return pd.Series(labels, index=confidence.index, dtype="string")


def reliability_figure(cal: Calibration, title: str):
    """Reliability diagram: accuracy per confidence bin, each bar as wide as its share of the examples."""
    import plotly.graph_objects as go

    from klue_viz.markup import chart_text

    largest = max(row["n"] for row in cal.bins) or 1
    filled = [row for row in cal.bins if row["n"]]
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


def coverage_figure(curves: dict[str, pd.DataFrame]):
    """Accuracy against coverage, one line per run (run names escaped)."""
    import plotly.graph_objects as go

    from klue_viz.markup import chart_text

    fig = go.Figure()
    for run, curve in curves.items():
        fig.add_scatter(x=curve["coverage"], y=curve["accuracy"], mode="lines+markers", name=chart_text(run),
                        customdata=curve["threshold"], hovertemplate="coverage %{x:.0f}%<br>accuracy %{y:.1f}<br>confidence ≥ %{customdata:.3f}<extra></extra>")
    fig.update_layout(xaxis_title="coverage (% of examples kept, most confident first)", yaxis_title="accuracy",
                      xaxis_autorange="reversed", height=320, margin={"l": 10, "r": 10, "t": 20, "b": 10})
    return fig
