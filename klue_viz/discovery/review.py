"""Reviewing suspected gold errors: each review is an annotation, and the reviews of a unit decide its correction.

A review is one reviewer's "gold looks wrong" record on the gold (run "gold") of an example, stored by
the annotation store like any other (versions, conflicts, import and export;
`klue_viz.store.gold_marks.record_review` writes it): accepting the proposal or typing another
correction stores `gold_wrong` with that `corrected_label`; keeping the gold stores `gold_wrong` false
with the tag `REVIEWED`. Skipping stores nothing.

A unit's decision is what most of its reviewers decided. With `reviews=k`, a correction counts only
once k reviewers have decided and more than half of them chose that same correction. The reviewers'
agreement is Krippendorff's alpha (nominal; the `krippendorff` package) over the units two or more of
them reviewed, and the units where they differ are listed for a third person to adjudicate.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from klue_viz.core.lazy import lazy_module
from klue_viz.discovery.corrected import Correction
from klue_viz.tasks.base import Task
from klue_viz.tasks.kit import KEEP, REVIEWED, Evidence, Suspect

if TYPE_CHECKING:
    import krippendorff

    from klue_viz.store.annotations import Annotation as Remark  # what a review reads of a stored annotation
else:
    krippendorff = lazy_module("krippendorff")

GOLD = "gold"


def decision_of(item: Remark) -> str | None:
    """A gold annotation's decision: its correction, KEEP for a review that kept the gold, None for a remark without one."""
    if item.gold_wrong and item.corrected_label:
        return item.corrected_label.strip()
    if not item.gold_wrong and REVIEWED in item.tags:
        return KEEP
    return None


def unit_decisions(task: Task, items: Iterable[Remark]) -> dict[tuple[str, int | None], dict[str, Remark]]:
    """(guid, turn) -> reviewer -> their deciding annotation, for the task's gold annotations that decide something."""
    out: dict[tuple[str, int | None], dict[str, Remark]] = {}
    for item in items:
        if item.task == task.facts.name and item.run == GOLD and decision_of(item) is not None:
            out.setdefault((item.guid, item.turn), {})[item.annotator] = item
    return out


@dataclass(frozen=True)
class UnitOutcome:
    """Where the reviews of one unit stand."""

    guid: str
    turn: int | None
    decisions: dict[str, str]
    #: The winning decision once it counts (enough reviews, a majority), else None.
    decided: str | None

    @property
    def agreed(self) -> bool:
        return len(set(self.decisions.values())) == 1


def outcomes(task: Task, items: Iterable[Remark], reviews: int = 1) -> list[UnitOutcome]:
    """Every reviewed unit with its reviewers' decisions, and what counts with `reviews` reviews needed per unit."""
    found = []
    # a dialogue-level remark (turn None) sorts before the dialogue's turns, 0 included, whatever order the remarks came in
    for (guid, turn), by_reviewer in sorted(unit_decisions(task, items).items(), key=lambda kv: (kv[0][0], -1 if kv[0][1] is None else kv[0][1])):
        decisions = {who: decision_of(item) or KEEP for who, item in sorted(by_reviewer.items())}
        decided = None
        if len(decisions) >= reviews:
            counts = Counter(decisions.values()).most_common()
            top, count = counts[0]
            if count * 2 > len(decisions) or len(decisions) == 1:
                decided = top
        found.append(UnitOutcome(guid, turn, decisions, decided))
    return found


def accepted_corrections(task: Task, items: Iterable[Remark], reviews: int = 1) -> list[Correction]:
    """The corrections that count: units decided (with `reviews` reviews) on a correction rather than on keeping the gold;
    who made it and why are the agreeing reviewers and their notes."""
    items = list(items)
    by_unit = unit_decisions(task, items)
    out = []
    for outcome in outcomes(task, items, reviews):
        if outcome.decided is None or outcome.decided == KEEP:
            continue
        agreeing = [by_unit[(outcome.guid, outcome.turn)][who] for who, d in outcome.decisions.items() if d == outcome.decided]
        out.append(Correction(outcome.guid, outcome.decided, outcome.turn, ", ".join(a.annotator for a in agreeing),
                              "; ".join(a.note for a in agreeing if a.note), max(a.updated_at for a in agreeing)))
    return out


def reviewer_agreement(task: Task, items: Iterable[Remark]) -> tuple[float | None, int]:
    """Krippendorff's alpha (nominal) of the reviewers over the units at least two of them decided, and that number of units;
    None when fewer than two such units or a single decision value throughout (alpha is undefined)."""
    shared = [o for o in outcomes(task, items) if len(o.decisions) >= 2]
    if len(shared) < 2:
        return None, len(shared)
    reviewers = sorted({who for o in shared for who in o.decisions})
    values = sorted({d for o in shared for d in o.decisions.values()})
    if len(values) < 2:
        return None, len(shared)
    code = {v: k for k, v in enumerate(values)}
    data = np.full((len(reviewers), len(shared)), np.nan)
    for j, outcome in enumerate(shared):
        for who, decision in outcome.decisions.items():
            data[reviewers.index(who), j] = code[decision]
    return float(krippendorff.alpha(reliability_data=data, level_of_measurement="nominal")), len(shared)


def disagreements(task: Task, items: Iterable[Remark]) -> list[UnitOutcome]:
    """The units whose reviewers decided differently: for a third person to adjudicate."""
    return [o for o in outcomes(task, items) if len(o.decisions) >= 2 and not o.agreed]


def example_items(task: Task, examples: list[dict], run: str) -> list[Suspect]:
    """Examples of a filtered list (rows of a run's example frame) as review items in the suspect queue's form: the run's
    answer is the proposal where it is one a patch can take (a label of the task, an STS score), else there is none
    (the reviewer keeps the gold or types a correction)."""
    labels = set(task.labels or ())
    out = []
    for row in examples:
        guid, turn = task.annotation_key(row)
        pred = row.get("pred")
        if isinstance(pred, str) and pred in labels:
            proposed: str | None = pred
        elif isinstance(pred, float) and isinstance(row.get("gold"), float) and pred == pred:
            proposed = f"{min(max(pred, 0.0), 5.0):.1f}"
        else:
            proposed = None
        runs = {run: {"label": None if pred is None else str(pred)}}
        out.append(Suspect(guid, turn, task.facts.unit, row.get("gold"), proposed, 0.0, Evidence(int(proposed is not None), 1, runs)))
    return out
