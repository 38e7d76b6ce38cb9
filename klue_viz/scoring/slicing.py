"""Per-slice metrics: the task's statistics summed per group and aggregated, all groups at once.

Example-level slices sum the same per-example statistics the headline numbers come from, so a
slice table and the headline can never disagree; detail-level slices (an entity type, a word
relation, a slot) sum the statistics of those rows (docs/metrics.md).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from klue_viz.core.results import Frames
from klue_viz.metrics.official import Statistics
from klue_viz.tasks.base import Slice, Task

#: How a slice by an error tag is named (the weak-slice finder's feature, the gate's slice): `tag: <tag>`.
TAG_PREFIX = "tag: "


def slice_table(task: Task, frames: Frames, spec: Slice) -> pd.DataFrame:
    """One row per value of the slicing attribute: count, errors and metrics, largest groups first."""
    if spec.level == "examples":
        frame, stats = frames.examples, task.statistics(frames)
    else:
        frame = frames.details[spec.level]
        stats = task.detail_statistics(spec.level, frame)
    codes, names, n, values = group_scores(stats, frame[spec.key])
    if not names:
        return pd.DataFrame(columns=["value", "n", "errors"])
    errors = np.bincount(codes, weights=(~frame["correct"].to_numpy(dtype=bool)).astype(np.float64), minlength=len(names)).astype(int)
    table = pd.DataFrame({"value": names, "n": n, "errors": errors})
    for key, column in values.items():
        table[key] = [None if np.isnan(v) else float(v) for v in column]
    table["error_rate"] = 100.0 * table["errors"] / table["n"]
    return table.sort_values(["n", "value"], ascending=[False, True], ignore_index=True)


def group_scores(stats: Statistics, column: pd.Series) -> tuple[np.ndarray, list[str], np.ndarray, dict[str, np.ndarray]]:
    """The rows of `stats` grouped by the values of `column` (one per row, first-seen order): each row's group code, the
    groups' names, sizes and metrics (NaN where a metric is undefined on a group)."""
    codes, uniques = pd.factorize(column, use_na_sentinel=False)
    groups = len(uniques)
    codes = codes.astype(np.int64)
    if not groups:
        return codes, [], np.zeros(0, dtype=np.int64), {}
    weights = None
    if stats.unsummed is not None:  # metrics that do not sum (AUPRC) take each group as 0/1 weights
        weights = (codes[None, :] == np.arange(groups)[:, None]).astype(np.float64)
    values = stats.scores(stats.group_totals(codes, groups), weights)
    return codes, [_name(v) for v in uniques], np.bincount(codes, minlength=groups), values


def _name(value: object) -> str:
    return "(missing)" if value is None or value is pd.NA or (isinstance(value, float) and value != value) else str(value)
