"""Per-slice metrics: the task's own scoring applied to each group of examples (or of detail rows).

Example-level slices rescore the subset with the official metrics, so a slice table and the
headline numbers can never disagree; detail-level slices (an entity type, a relation, a slot)
use the task's precision/recall/F1 of those rows.
"""

from __future__ import annotations

import pandas as pd

from klue_viz.tasks.base import Frames, Slice, Task


def slice_table(task: Task, frames: Frames, spec: Slice) -> pd.DataFrame:
    """One row per value of the slicing attribute: count, errors and metrics, largest groups first."""
    rows = []
    if spec.level == "examples":
        frame = frames.examples
        for value, part in frame.groupby(spec.key, dropna=False, observed=True, sort=False):
            scores = task.score(frames.subset(part["guid"])).values
            rows.append({"value": _name(value), "n": len(part), "errors": int((~part["correct"]).sum()), **scores})
    else:
        frame = frames.details[spec.level]
        for value, part in frame.groupby(spec.key, dropna=False, observed=True, sort=False):
            rows.append({"value": _name(value), "n": len(part), "errors": int((~part["correct"]).sum()), **task.detail_scores(spec.level, part)})
    table = pd.DataFrame(rows)
    if table.empty:
        return pd.DataFrame(columns=["value", "n", "errors"])
    table["error_rate"] = 100.0 * table["errors"] / table["n"]
    return table.sort_values(["n", "value"], ascending=[False, True], ignore_index=True)


def _name(value) -> str:
    value = value[0] if isinstance(value, tuple) and len(value) == 1 else value
    return "(missing)" if value is None or (isinstance(value, float) and value != value) else str(value)
