"""Orders for the example list: what matters first, per task. Pure pandas on a run's frames.

Each key is a name the app lists and a function giving one number per example (lower comes first);
ties keep file order, and examples without a value (no probabilities, not in the queue) go last.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from klue_viz.tasks.base import Frames, Task

FILE_ORDER = "file order"
SUSPECT_RANK = "rank in the suspect queue"


def _entity_f1(frames: Frames) -> pd.Series:
    """Entity F1 per sentence (0..100) from the entity rows; a sentence without entities on either side scores 100."""
    ents = frames.details["entities"]
    tp = ents[(ents["side"] == "gold") & ents["matched"]].groupby("guid").size()
    fn = ents[(ents["side"] == "gold") & ~ents["matched"]].groupby("guid").size()
    fp = ents[(ents["side"] == "pred") & ~ents["matched"]].groupby("guid").size()
    guids = frames.examples["guid"]
    tp, fn, fp = (s.reindex(guids).fillna(0).to_numpy() for s in (tp, fn, fp))
    denominator = 2 * tp + fp + fn
    return pd.Series(np.where(denominator > 0, 100 * 2 * tp / np.maximum(denominator, 1), 100.0), index=frames.examples.index)


def sort_keys(task: Task, frames: Frames) -> dict[str, Callable[[Frames], pd.Series]]:
    """The orders that make sense for this task and run (confidence only where the run gave probabilities)."""
    ex = frames.examples
    keys: dict[str, Callable[[Frames], pd.Series]] = {FILE_ORDER: lambda f: pd.Series(np.arange(len(f.examples)), index=f.examples.index)}
    keys["wrong first"] = lambda f: f.examples["correct"].astype(int)
    if "confidence" in ex and ex["confidence"].notna().any():
        keys["least confident first"] = lambda f: f.examples["confidence"]
        keys["most confident first"] = lambda f: -f.examples["confidence"]
        keys["confidently wrong first"] = lambda f: np.where(f.examples["correct"], np.nan, -f.examples["confidence"])
    if task.name == "sts":
        keys["largest |gold - predicted| first"] = lambda f: -f.examples["abs_error"]
    if task.name == "ner":
        keys["most entity errors first"] = lambda f: -f.examples["n_errors"]
        keys["lowest entity F1 first"] = _entity_f1
    if task.name == "dp":
        keys["most word errors first"] = lambda f: -f.examples["errors"]
        keys["lowest sentence UAS first"] = lambda f: f.examples["uas"]
        keys["lowest sentence LAS first"] = lambda f: f.examples["las"]
    if task.name == "wos":
        keys["most slot errors first"] = lambda f: -(f.examples["fp"] + f.examples["fn"])
        keys["lowest slot F1 first"] = lambda f: f.examples["f1"]
    if task.name == "mrc":
        keys["lowest ROUGE-W first"] = lambda f: f.examples["rouge_w"]
    return keys


def sort_examples(task: Task, frames: Frames, shown: pd.DataFrame, key: str, suspect_rank: dict[str, int] | None = None) -> pd.DataFrame:
    """`shown` (rows of frames.examples) in the order `key` names; 'rank in the suspect queue' uses `suspect_rank`."""
    if key == FILE_ORDER or shown.empty:
        return shown
    if key == SUSPECT_RANK:
        values = shown["guid"].map(suspect_rank or {}).astype(float)
    else:
        values = pd.Series(np.asarray(sort_keys(task, frames)[key](frames), dtype=float), index=frames.examples.index).loc[shown.index]
    order = np.lexsort((np.arange(len(shown)), np.nan_to_num(values.to_numpy(dtype=float), nan=np.inf)))  # value first, then file order
    return shown.iloc[order]



def suspect_ranks(task: Task, queue: list[dict]) -> dict[str, int]:
    """Example guid -> its best (lowest) rank in the suspect queue, starting at 1."""
    ranks: dict[str, int] = {}
    for k, suspect in enumerate(queue, 1):
        ranks.setdefault(task.example_guid(suspect["guid"], suspect["turn"]), k)
    return ranks
