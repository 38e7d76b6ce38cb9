"""Reviewing suspected gold errors: each review is an annotation, and the reviews of a unit decide its correction.

A review is one reviewer's "gold looks wrong" record on the gold (run "gold") of an example, stored by
the annotation store like any other (versions, conflicts, import and export): accepting the proposal
or typing another correction stores `gold_wrong` with that `corrected_label`; keeping the gold stores
`gold_wrong` false with the tag `REVIEWED`. Skipping stores nothing.

A unit's decision is what most of its reviewers decided. With `reviews=k`, a correction counts only
once k reviewers have decided and more than half of them chose that same correction. The reviewers'
agreement is Krippendorff's alpha (nominal; the `krippendorff` package) over the units two or more of
them reviewed, and the units where they differ are listed for a third person to adjudicate.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

import krippendorff
import numpy as np

from klue_viz.annotations.store import Annotation, Store
from klue_viz.discovery.corrected import Correction
from klue_viz.tasks.base import Task

GOLD = "gold"
#: The decision "the gold is right" (a review that keeps it).
KEEP = "(gold kept)"
#: The tag of a review that kept the gold.
REVIEWED = "reviewed: gold kept"
ACCEPT, KEEP_GOLD, OTHER, SKIP = "accept", "keep", "other", "skip"


def decision_of(item: Annotation) -> str | None:
    """A gold annotation's decision: its correction, KEEP for a review that kept the gold, None for a remark without one."""
    if item.gold_wrong and item.corrected_label:
        return item.corrected_label.strip()
    if not item.gold_wrong and REVIEWED in item.tags:
        return KEEP
    return None


def unit_decisions(task: Task, items: Iterable[Annotation]) -> dict[tuple[str, int | None], dict[str, Annotation]]:
    """(guid, turn) -> reviewer -> their deciding annotation, for the task's gold annotations that decide something."""
    out: dict[tuple[str, int | None], dict[str, Annotation]] = {}
    for item in items:
        if item.task == task.name and item.run == GOLD and decision_of(item) is not None:
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


def outcomes(task: Task, items: Iterable[Annotation], reviews: int = 1) -> list[UnitOutcome]:
    """Every reviewed unit with its reviewers' decisions, and what counts with `reviews` reviews needed per unit."""
    found = []
    for (guid, turn), by_reviewer in sorted(unit_decisions(task, items).items(), key=lambda kv: (kv[0][0], kv[0][1] or -1)):
        decisions = {who: decision_of(item) or KEEP for who, item in sorted(by_reviewer.items())}
        decided = None
        if len(decisions) >= reviews:
            counts = Counter(decisions.values()).most_common()
            top, count = counts[0]
            if count * 2 > len(decisions) or len(decisions) == 1:
                decided = top
        found.append(UnitOutcome(guid, turn, decisions, decided))
    return found


def accepted_corrections(task: Task, items: Iterable[Annotation], reviews: int = 1) -> list[Correction]:
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


def reviewer_agreement(task: Task, items: Iterable[Annotation]) -> tuple[float | None, int]:
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


def disagreements(task: Task, items: Iterable[Annotation]) -> list[UnitOutcome]:
    """The units whose reviewers decided differently: for a third person to adjudicate."""
    return [o for o in outcomes(task, items) if len(o.decisions) >= 2 and not o.agreed]


def record_review(db: Store, task: Task, suspect: dict, reviewer: str, action: str, typed: str = "") -> Annotation | None:
    """Store one reviewer's decision on a suspect (`ACCEPT` its proposal, `KEEP_GOLD`, `OTHER` with `typed`); `SKIP` stores nothing.

    The reviewer's earlier record on the example is updated (one record per example and reviewer), its note kept and extended.
    """
    if action == SKIP:
        return None
    guid, turn = suspect["guid"], suspect["turn"]
    item = db.get(task.name, guid, GOLD, reviewer, turn=turn) or Annotation(task.name, guid, GOLD, reviewer, turn=turn)
    if action == KEEP_GOLD:
        item.gold_wrong, item.corrected_label = False, None
        item.tags = sorted(set(item.tags) | {REVIEWED})
        remark = f"review: gold {suspect['gold']} kept"
    else:
        correction = str(suspect["proposed"]) if action == ACCEPT else typed.strip()
        if not correction:
            raise ValueError("type the correction first")
        item.gold_wrong, item.corrected_label = True, correction
        item.tags = [t for t in item.tags if t != REVIEWED]
        remark = f"review: gold {suspect['gold']} -> {correction}"
    if remark not in item.note:
        item.note = "; ".join(n for n in (item.note, remark) if n)
    return db.save(item)
