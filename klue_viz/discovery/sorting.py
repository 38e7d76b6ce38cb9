"""Orders for the example list: what matters first. The shared orders are here, each task adds its own (`Task.sort_orders`).

Each key is a name the app lists and a function giving one number per example (lower comes first);
ties keep file order, and examples without a value (no probabilities, not in the queue) go last.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from klue_viz.core.results import Frames
from klue_viz.scoring.user_features import user_sort_orders
from klue_viz.tasks.base import Task
from klue_viz.tasks.kit import Suspect

FILE_ORDER = "file order"
SUSPECT_RANK = "rank in the suspect queue"


def sort_keys(task: Task, frames: Frames) -> dict[str, Callable[[Frames], pd.Series]]:
    """The orders that make sense for this task and run (confidence only where the run gave probabilities)."""
    ex = frames.examples
    keys: dict[str, Callable[[Frames], pd.Series]] = {FILE_ORDER: lambda f: pd.Series(np.arange(len(f.examples)), index=f.examples.index)}
    keys["wrong first"] = lambda f: f.examples["correct"].astype(int)
    if "confidence" in ex and ex["confidence"].notna().any():
        keys["least confident first"] = lambda f: f.examples["confidence"]
        keys["most confident first"] = lambda f: -f.examples["confidence"]
        keys["confidently wrong first"] = lambda f: np.where(f.examples["correct"], np.nan, -f.examples["confidence"])
    keys.update(task.sort_orders())
    keys.update(user_sort_orders(frames))
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



def suspect_ranks(task: Task, queue: list[Suspect]) -> dict[str, int]:
    """Example guid -> its best (lowest) rank in the suspect queue, starting at 1."""
    ranks: dict[str, int] = {}
    for k, suspect in enumerate(queue, 1):
        ranks.setdefault(task.example_guid(suspect.guid, suspect.turn), k)
    return ranks
