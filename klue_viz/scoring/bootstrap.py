"""Bootstrap confidence intervals and paired run comparisons as weighted sums of per-example statistics.

A resample is a vector of counts over the examples (n draws with replacement), so its statistics
are the examples' statistic rows weighted by those counts, and the statistics of many resamples
are one matrix product (B x n counts times the n x k statistics), taken in chunks so that memory
stays bounded. Each task's own aggregate then gives every official metric of every resample at
once; AUPRC, which does not sum, is computed from the counts directly (docs/metrics.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from klue_viz.core.lazy import lazy_module
from klue_viz.core.results import Frames
from klue_viz.metrics.official import Statistics
from klue_viz.tasks.base import Task

if TYPE_CHECKING:
    from scipy import sparse
else:
    sparse = lazy_module("scipy.sparse")  # only the bootstrap needs scipy

#: How many resample counts (resamples x examples) are held in memory at once.
CHUNK_CELLS = 2_000_000


def resample_counts(rng: np.random.Generator, n: int, size: int) -> np.ndarray:
    """`size` bootstrap resamples of n examples as a size x n matrix of counts (each row sums to n)."""
    draws = rng.integers(0, n, size=(size, n)) + (np.arange(size) * n)[:, None]
    return np.bincount(draws.ravel(), minlength=size * n).reshape(size, n).astype(np.float64)


class Weighted:
    """Statistics ready for many weighted sums: a sparse matrix made once, multiplied by each chunk of counts."""

    def __init__(self, stats: Statistics) -> None:
        self.stats = stats
        self.transposed = sparse.csc_matrix((stats.values, (stats.cols, stats.rows)), shape=(stats.width, stats.n))

    def scores(self, counts: np.ndarray) -> dict[str, np.ndarray]:
        summed = np.asarray(self.transposed @ counts.T).T
        return self.stats.scores(summed, counts)


def resampled_scores(runs: list[Statistics], samples: int, seed: int) -> list[dict[str, np.ndarray]]:
    """Every metric of each run on the same `samples` resamples of their (common) examples."""
    n = runs[0].n
    weighted = [Weighted(stats) for stats in runs]
    parts: list[list[dict[str, np.ndarray]]] = [[] for _ in runs]
    rng = np.random.default_rng(seed)
    chunk = max(1, CHUNK_CELLS // max(n, 1))
    for start in range(0, samples, chunk):
        counts = resample_counts(rng, n, min(chunk, samples - start))
        for part, run in zip(parts, weighted):
            part.append(run.scores(counts))
    return [{key: np.concatenate([p[key] for p in part]) for key in part[0]} for part in parts]


def percentile_interval(values: np.ndarray, level: float) -> tuple[float, float] | None:
    """The central `level` interval of the defined values, None if there are none."""
    values = values[~np.isnan(values)]
    if not len(values):
        return None
    tail = 100 * (1 - level) / 2
    return float(np.percentile(values, tail)), float(np.percentile(values, 100 - tail))


def confidence_intervals(task: Task, frames: Frames, samples: int = 1000, level: float = 0.95, seed: int = 0) -> dict[str, tuple[float, float] | None]:
    """Percentile intervals of every official metric; None where the metric is undefined on every resample."""
    stats = task.statistics(frames)
    if stats.n == 0 or samples <= 0:
        return {m.key: None for m in task.facts.metrics}
    (values,) = resampled_scores([stats], samples, seed)
    return {m.key: percentile_interval(values[m.key], level) for m in task.facts.metrics}


@dataclass
class Comparison:
    metric: str
    difference: float  # first - second on the shared examples
    low: float
    high: float
    first_better: float  # share of resamples where the first run scores higher


def compare_runs(task: Task, first: Frames, second: Frames, samples: int = 1000, level: float = 0.95, seed: int = 0) -> list[Comparison]:
    """Paired bootstrap over the examples both runs scored: each resample weighs both runs' examples alike."""
    shared = pd.Index(sorted(set(first.examples["guid"]) & set(second.examples["guid"])))
    if not len(shared) or samples <= 0:
        return []
    runs = [task.statistics(frames).take(pd.Index(frames.examples["guid"]).get_indexer(shared)) for frames in (first, second)]
    base = [stats.scores(stats.totals()) for stats in runs]
    values_a, values_b = resampled_scores(runs, samples, seed)
    out = []
    for metric in task.facts.metrics:
        difference = float(base[0][metric.key][0] - base[1][metric.key][0])
        diffs = values_a[metric.key] - values_b[metric.key]
        diffs = diffs[~np.isnan(diffs)]
        if np.isnan(difference) or not len(diffs):  # undefined for either run
            continue
        tail = 100 * (1 - level) / 2
        out.append(Comparison(metric.key, difference, float(np.percentile(diffs, tail)), float(np.percentile(diffs, 100 - tail)), float(np.mean(diffs > 0))))
    return out
