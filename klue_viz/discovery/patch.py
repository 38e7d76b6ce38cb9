"""Gold corrections as a patch in the official file format: the corrected records only, as they should read.

A correction is the text stored with a "gold looks wrong" remark (the suspect queue writes it; a user
may type it): a label name (YNAT, NLI, RE), a score 0..5 (STS), an answer (MRC), and for the finer
units one or more `;`-separated items (MRC: `(unanswerable)` makes the question unanswerable): NER `start-end:TYPE` (end exclusive, `O` removes the entity),
DP `index:head:DEPREL`, WoS `domain-slot-value` (`none` removes the slot) for the remark's turn.
Corrections that cannot be read are returned as problems and left out; the others are applied to a
copy of the official record. Each task writes its own file format (`Task.write_patch` in its module,
the single-label writer on `LabelTask`, with the readers and writers of `klue_viz.tasks.kit`); this module
gathers the corrections and asks the task for the patch.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from klue_viz.core.problems import Problem
from klue_viz.tasks.base import Task

if TYPE_CHECKING:
    from klue_viz.store.annotations import Annotation as Remark  # a stored annotation, as read here


@dataclass
class Patch:
    text: str
    records: int
    problems: list[Problem] = field(default_factory=list)


def corrections_from(items: Iterable[Remark], task: Task) -> dict[tuple[str, int | None], list[str]]:
    """(guid, turn) -> correction texts, from stored annotations marked 'gold looks wrong' with a correction."""
    out: dict[tuple[str, int | None], list[str]] = {}
    for item in items:
        if item.task == task.facts.name and item.gold_wrong and item.corrected_label:
            out.setdefault((item.guid, item.turn), []).append(item.corrected_label)
    return out


def make_patch(task: Task, official_text: str, name: str, corrections: dict[tuple[str, int | None], list[str]]) -> Patch:
    """The corrected records of the official file `official_text`, in the same format."""
    problems: list[Problem] = []
    text, count = task.write_patch(official_text, name, corrections, problems)
    return Patch(text, count, problems)
