"""Calibration of runs that give class probabilities (YNAT, NLI, RE).

Expected calibration error as in Guo et al. 2017 with 10 equal-width bins: the confidence `c` of an
example is the probability its run gave to the class it predicted; it falls in bin
`min(floor(10c), 9)`, and ECE = sum over bins of (bin size / N) * |accuracy - mean confidence|.
MCE is the largest of those gaps over non-empty bins. Both are on the 0..100 scale like every metric.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from klue_viz.core.lazy import lazy_module
from klue_viz.tasks.base import Task
from klue_viz.tasks.kit import N_BINS, bin_of

if TYPE_CHECKING:
    import pandas as pd
else:
    pd = lazy_module("pandas")  # the CLI scores without it


@dataclass
class Calibration:
    ece: float
    mce: float
    n: int
    bins: list[dict]

    def to_dict(self) -> dict:
        return {"ece": self.ece, "mce": self.mce, "n": self.n, "bins": self.bins}


def predicted_confidence(examples: Mapping[str, Sequence], labels: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray]:
    """(confidence, correct) of the examples whose run gave probabilities; confidence is p(predicted class).
    `examples`: a run's example frame, or its `RunResult.example_columns()` (no pandas)."""
    index = {label: k for k, label in enumerate(labels)}
    confidence, correct = [], []
    for probs, pred, ok in zip(examples["probs"], examples["pred"], examples["correct"]):
        if probs is None or not isinstance(pred, str) or pred not in index:
            continue
        confidence.append(float(probs[index[pred]]))
        correct.append(bool(ok))
    return np.asarray(confidence, dtype=float), np.asarray(correct, dtype=bool)


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


def run_calibration(task: Task, examples: Mapping[str, Sequence]) -> Calibration | None:
    """The calibration of a run's example frame, for tasks with class probabilities."""
    labels = task.labels
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


