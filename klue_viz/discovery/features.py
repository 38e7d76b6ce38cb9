"""Seen in training: with the task's training file, whether the entity (text), answer, relation pair or dialogue
value of a unit occurs in the training gold, and how often (the task module says what a unit's key is:
`Task.training`, a `SeenInTraining`).

The slice features that know Korean (script mix, attached particle, eojeol count), which the task modules
add in build_frames, are in klue_viz.tasks.kit, below the task modules.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

from klue_viz.core.lazy import lazy_module
from klue_viz.core.problems import InputError
from klue_viz.core.results import Frames
from klue_viz.discovery.slices import unit_level
from klue_viz.scoring.evaluate import Gold, load_gold, official_file
from klue_viz.tasks.base import SeenInTraining, Slice, Task

if TYPE_CHECKING:
    import pandas as pd
else:
    pd = lazy_module("pandas")  # the CLI scores without it
NOT_SEEN = "not in training"


# ---- seen in training ----------------------------------------------------------------------------

def _how_often(count: int) -> str:
    return NOT_SEEN if count == 0 else ("seen once" if count == 1 else ("seen 2-9 times" if count < 10 else "seen 10+ times"))


def seen_in_training(task: Task) -> SeenInTraining:
    """The task's seen-in-training part; KeyError for a task without one."""
    if task.training is None:
        raise KeyError(f"{task.facts.name} has no seen-in-training feature (its task module sets no `training`)")
    return task.training


def training_counts(task: Task, train_rows: list[dict]) -> Counter:
    """How often each key of the task's units (entity text, answer, relation pair, slot value) occurs in the training gold."""
    return Counter(seen_in_training(task).keys(train_rows))


def training_feature(task: Task, units: pd.DataFrame, counts: Counter) -> pd.Series:
    """'not in training', 'seen once', ... for each unit row (entity, example or slot) of a run."""
    keys = seen_in_training(task).unit_keys(units)
    return pd.Series([_how_often(counts.get(k, 0)) if k is not None else "(no answer)" for k in keys], index=units.index, dtype="string")


TRAINING_SLICE = "seen_in_training"


def with_training(task: Task, frames: Frames, train_rows: list[dict]) -> tuple[Frames, Slice]:
    """The frames with a seen-in-training column at the task's unit level, and the slice that reads it."""
    level = unit_level(task)
    counts = training_counts(task, train_rows)
    if level == "examples":
        examples = frames.examples.assign(**{TRAINING_SLICE: training_feature(task, frames.examples, counts)})
        return Frames(examples, frames.details), Slice(TRAINING_SLICE, seen_in_training(task).label)
    detail = frames.details[level]
    details = {**frames.details, level: detail.assign(**{TRAINING_SLICE: training_feature(task, detail, counts)})}
    return Frames(frames.examples, details), Slice(TRAINING_SLICE, seen_in_training(task).label, level=level)


def load_training(task: Task, source: str | Path) -> Gold:
    """The task's training gold: an official file, a klue_benchmark/-like folder (its `_train` file: the dev file beside
    it is no training data), or `hf` (the train split; `hf:<split>` as given)."""
    if str(source) == "hf":
        return load_gold(task, "hf:train")
    path = Path(source)
    if path.is_dir():
        found = official_file(task, path, split="train")
        if found is None:
            raise InputError(f"{path}: no {task.facts.official_folder}/{task.facts.official_folder}_train.{task.facts.official_ext} in this folder")
        return load_gold(task, found)
    return load_gold(task, source)


def training_features(task: Task, frames: Frames, train: Gold) -> pd.DataFrame:
    """The seen-in-training feature aligned with the finder's unit rows (for `weak_slices(extra=...)`)."""
    level = unit_level(task)
    units = (frames.examples if level == "examples" else frames.details[level]).reset_index(drop=True)
    return pd.DataFrame({TRAINING_SLICE: training_feature(task, units, training_counts(task, train.rows)).to_numpy()})
