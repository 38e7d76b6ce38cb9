"""Bootstrap confidence intervals and paired run comparisons, through each task's own scoring.

Examples are resampled with replacement and the detail rows (entities, words, slots) follow their
example, so every official metric, however it aggregates, is recomputed on each resample by the
same `task.score` that produced the headline number.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from klue_viz.tasks.base import Frames, Task


def resample(frames: Frames, positions: np.ndarray) -> Frames:
    """The examples at `positions` (repeats allowed), each with as many copies of its detail rows."""
    examples = frames.examples.iloc[positions].reset_index(drop=True)
    copies = examples["guid"].value_counts()
    details = {}
    for name, detail in frames.details.items():
        repeats = detail["guid"].map(copies).fillna(0).astype(int).to_numpy()
        details[name] = detail.iloc[np.repeat(np.arange(len(detail)), repeats)].reset_index(drop=True)
    return Frames(examples, details)


def confidence_intervals(task: Task, frames: Frames, samples: int = 1000, level: float = 0.95, seed: int = 0) -> dict[str, tuple[float, float] | None]:
    """Percentile intervals of every official metric; None where the metric is undefined on the resamples."""
    rng = np.random.default_rng(seed)
    n = len(frames.examples)
    values: dict[str, list[float]] = {m.key: [] for m in task.metrics}
    for _ in range(samples if n else 0):
        scores = task.score(resample(frames, rng.integers(0, n, n))).values
        for key, value in scores.items():
            if value is not None:
                values[key].append(value)
    tail = 100 * (1 - level) / 2
    return {key: (float(np.percentile(v, tail)), float(np.percentile(v, 100 - tail))) if v else None for key, v in values.items()}


@dataclass
class Comparison:
    metric: str
    difference: float  # first - second on the shared examples
    low: float
    high: float
    first_better: float  # share of resamples where the first run scores higher


def compare_runs(task: Task, first: Frames, second: Frames, samples: int = 1000, level: float = 0.95, seed: int = 0) -> list[Comparison]:
    """Paired bootstrap over the examples both runs scored: the same resample is scored for each run."""
    shared = sorted(set(first.examples["guid"]) & set(second.examples["guid"]))
    a, b = first.subset(shared), second.subset(shared)
    order = pd.Index(shared)
    a = Frames(a.examples.set_index("guid").loc[order].reset_index(), a.details)
    b = Frames(b.examples.set_index("guid").loc[order].reset_index(), b.details)
    base_a, base_b = task.score(a).values, task.score(b).values
    rng = np.random.default_rng(seed)
    n = len(shared)
    diffs: dict[str, list[float]] = {m.key: [] for m in task.metrics}
    for _ in range(samples if n else 0):
        positions = rng.integers(0, n, n)
        sa, sb = task.score(resample(a, positions)).values, task.score(resample(b, positions)).values
        for key in diffs:
            if sa.get(key) is not None and sb.get(key) is not None:
                diffs[key].append(sa[key] - sb[key])
    tail = 100 * (1 - level) / 2
    out = []
    for metric in task.metrics:
        d = diffs[metric.key]
        if not d or base_a.get(metric.key) is None or base_b.get(metric.key) is None:
            continue
        out.append(Comparison(metric.key, base_a[metric.key] - base_b[metric.key], float(np.percentile(d, tail)),
                              float(np.percentile(d, 100 - tail)), float(np.mean(np.array(d) > 0))))
    return out
