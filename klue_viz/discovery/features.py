"""Slice features that know Korean and the training data; the task modules call these in build_frames.

* Script mix of a span (an entity, an answer, a title): which of Hangul, Hanja, Latin and digits it
  uses, e.g. 'Hangul+digits' for 16명.
* Whether an NER entity ends inside its eojeol (the space-separated word) with a particle attached,
  as in 경찰은 (entity 경찰 + 은), and which particle.
* The eojeol count of a sentence.
* Seen in training: with the task's training file, whether the entity (text), answer, relation pair
  or dialogue value of a unit occurs in the training gold, and how often (the task module says what a
  unit's key is: `Task.training_keys`, `Task.unit_training_keys`).
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

import numpy as np

from klue_viz.lazy import lazy_module
from klue_viz.tasks.base import Frames, Slice, Task

if TYPE_CHECKING:
    import pandas as pd
else:
    pd = lazy_module("pandas")  # the CLI scores without it

SCRIPTS = ("Hangul", "Hanja", "Latin", "digits")
#: Common case particles and auxiliaries that attach to a noun, longest first so 에서 wins over 에.
PARTICLES = ("에서는", "에게서", "으로는", "에서", "에게", "으로", "까지", "부터", "처럼", "보다", "이나", "이다",
             "은", "는", "이", "가", "을", "를", "의", "에", "와", "과", "로", "도", "만", "나", "께")
WHOLE = "whole eojeol"
NOT_SEEN = "not in training"


def script_of(char: str) -> str | None:
    code = ord(char)
    if 0xAC00 <= code <= 0xD7A3 or 0x1100 <= code <= 0x11FF or 0x3130 <= code <= 0x318F:
        return "Hangul"
    if 0x4E00 <= code <= 0x9FFF or 0x3400 <= code <= 0x4DBF or 0xF900 <= code <= 0xFAFF:
        return "Hanja"
    if char.isascii() and char.isalpha():
        return "Latin"
    if char.isdigit():
        return "digits"
    return None


def script_mix(text: str) -> str:
    """'Hangul', 'Hangul+Latin', 'digits'...: the scripts a text uses, in a fixed order; 'other' for none of them."""
    found = {script_of(c) for c in str(text)}
    return "+".join(s for s in SCRIPTS if s in found) or "other"


def attached_particle(sentence: str, end: int) -> str:
    """What follows an entity up to the end of its eojeol: WHOLE when nothing, '+은' for a known particle, else '+other'."""
    rest = sentence[end:].split(" ", 1)[0] if end < len(sentence) else ""
    rest = rest.rstrip(".,!?\"')]}”’…")
    if not rest:
        return WHOLE
    for particle in PARTICLES:
        if rest == particle:
            return f"+{particle}"
    return "+other"


def eojeol_bucket(sentences: pd.Series) -> pd.Series:
    """Eojeol (space-separated word) count of each sentence, as ordered buckets."""
    counts = sentences.astype(str).str.split().str.len().fillna(0).astype(int)
    labels = np.select([counts <= 5, counts <= 10, counts <= 20], ["1-5 eojeols", "6-10 eojeols", "11-20 eojeols"], "21+ eojeols")
    return pd.Series(labels, index=sentences.index, dtype="string")


def entity_features(sentences: list[str], sent: np.ndarray, starts: np.ndarray, ends: np.ndarray, texts: list[str]) -> dict[str, list[str]]:
    """Script mix and attached particle of each entity row (NER build_frames)."""
    scripts = {t: script_mix(t) for t in set(texts)}  # entity texts repeat a lot
    return {
        "script": [scripts[t] for t in texts],
        "particle": [attached_particle(sentences[s], e) for s, e in zip(sent.tolist(), ends.tolist())],
    }


# ---- seen in training ----------------------------------------------------------------------------

def _how_often(count: int) -> str:
    return NOT_SEEN if count == 0 else ("seen once" if count == 1 else ("seen 2-9 times" if count < 10 else "seen 10+ times"))


def training_counts(task: Task, train_rows: list[dict]) -> Counter:
    """How often each key of the task's units (entity text, answer, relation pair, slot value) occurs in the training gold."""
    return Counter(task.training_keys(train_rows))


def training_feature(task: Task, units: pd.DataFrame, counts: Counter) -> pd.Series:
    """'not in training', 'seen once', ... for each unit row (entity, example or slot) of a run."""
    keys = task.unit_training_keys(units)
    return pd.Series([_how_often(counts.get(k, 0)) if k is not None else "(no answer)" for k in keys], index=units.index, dtype="string")


TRAINING_SLICE = "seen_in_training"


def with_training(task: Task, frames: Frames, train_rows: list[dict]) -> tuple[Frames, Slice]:
    """The frames with a seen-in-training column at the task's unit level, and the slice that reads it."""
    from klue_viz.discovery.slices import unit_level

    level = unit_level(task)
    counts = training_counts(task, train_rows)
    if level == "examples":
        examples = frames.examples.assign(**{TRAINING_SLICE: training_feature(task, frames.examples, counts)})
        return Frames(examples, frames.details), Slice(TRAINING_SLICE, task.training_label)
    detail = frames.details[level]
    details = {**frames.details, level: detail.assign(**{TRAINING_SLICE: training_feature(task, detail, counts)})}
    return Frames(frames.examples, details), Slice(TRAINING_SLICE, task.training_label, level=level)


def load_training(task: Task, source):
    """The task's training gold: an official file, a klue_benchmark/-like folder (its `_train` file: the dev file beside
    it is no training data), or `hf` (the train split; `hf:<split>` as given)."""
    from pathlib import Path

    from klue_viz.evaluate import load_gold, official_file
    from klue_viz.problems import InputError

    if str(source) == "hf":
        return load_gold(task, "hf:train")
    path = Path(source)
    if path.is_dir():
        found = official_file(task, path, split="train")
        if found is None:
            raise InputError(f"{path}: no {task.official_folder}/{task.official_folder}_train.{task.official_ext} in this folder")
        return load_gold(task, found)
    return load_gold(task, source)


def training_features(task: Task, frames: Frames, train) -> pd.DataFrame:
    """The seen-in-training feature aligned with the finder's unit rows (for `weak_slices(extra=...)`)."""
    from klue_viz.discovery.slices import unit_level

    level = unit_level(task)
    units = (frames.examples if level == "examples" else frames.details[level]).reset_index(drop=True)
    return pd.DataFrame({TRAINING_SLICE: training_feature(task, units, training_counts(task, train.rows)).to_numpy()})
