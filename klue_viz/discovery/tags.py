"""What the tags say: per-tag metrics and share of the errors, and agreement between two annotators."""

from __future__ import annotations

import pandas as pd

from klue_viz.core.lazy import lazy_module
from klue_viz.core.results import Frames
from klue_viz.store.annotations import Annotation
from klue_viz.tasks.base import Task

#: scikit-learn (and scipy under it) costs 2 CPU s to import: loaded when two annotators are first compared, not with the home page.
sklearn = lazy_module("sklearn")


def tag_rows(task: Task, items: list[Annotation]) -> pd.DataFrame:
    """One row per (example, tag, annotator): the tidy form that filters and slices use."""
    rows = [{"guid": task.example_guid(a.guid, a.turn), "tag": tag, "annotator": a.annotator} for a in items for tag in a.tags]
    return pd.DataFrame(rows, columns=["guid", "tag", "annotator"])


def tag_table(task: Task, frames: Frames, tags: pd.DataFrame) -> pd.DataFrame:
    """Per tag: tagged examples, how many are wrong, the tag's share of all wrong examples, and the official metrics."""
    examples = frames.examples
    wrong_total = int((~examples["correct"]).sum())
    rows = []
    for tag, part in tags.groupby("tag"):
        guids = set(part["guid"]) & set(examples["guid"])
        if not guids:
            continue
        subset = examples[examples["guid"].isin(guids)]
        errors = int((~subset["correct"]).sum())
        rows.append({"tag": tag, "n": len(subset), "errors": errors,
                     "share_of_errors": 100.0 * errors / wrong_total if wrong_total else None,
                     **task.score(frames.subset(guids)).values})
    table = pd.DataFrame(rows)
    return table.sort_values("n", ascending=False, ignore_index=True) if not table.empty else pd.DataFrame(columns=["tag", "n", "errors", "share_of_errors"])


def agreement(first: list[Annotation], second: list[Annotation]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Cohen's kappa per tag (present/absent) and on the whole tag set, over the examples both annotated; and the disagreements."""
    a = {(x.guid, x.turn, x.run): set(x.tags) for x in first}
    b = {(x.guid, x.turn, x.run): set(x.tags) for x in second}
    shared = sorted(a.keys() & b.keys(), key=str)
    columns = ["guid", "turn", "run", "first", "second"]
    if not shared:
        return pd.DataFrame(columns=["tag", "kappa", "examples"]), pd.DataFrame(columns=columns)
    rows = []
    for tag in sorted(set().union(*(a[k] | b[k] for k in shared))):
        x, y = [tag in a[k] for k in shared], [tag in b[k] for k in shared]
        rows.append({"tag": tag, "kappa": _kappa(x, y), "examples": len(shared)})
    whole_x, whole_y = ["|".join(sorted(a[k])) for k in shared], ["|".join(sorted(b[k])) for k in shared]
    rows.append({"tag": "(whole tag set)", "kappa": _kappa(whole_x, whole_y), "examples": len(shared)})
    differ = [{"guid": k[0], "turn": k[1], "run": k[2], "first": ", ".join(sorted(a[k])), "second": ", ".join(sorted(b[k]))}
              for k in shared if a[k] != b[k]]
    return pd.DataFrame(rows), pd.DataFrame(differ, columns=columns)


def _kappa(x: list, y: list) -> float | None:
    """Cohen's kappa; None when both annotators used one single value throughout (kappa is undefined)."""
    if len(set(x) | set(y)) < 2:
        return None
    return float(sklearn.metrics.cohen_kappa_score(x, y))
