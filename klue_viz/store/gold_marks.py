"""'Gold looks wrong' remarks written from the suspect queue (klue_viz.discovery.suspects): a write to the store.

A reviewer confirming a suspect stores its proposed correction on the gold of the suspect's example, in
the form the gold patch export (klue_viz.discovery.patch) reads back.
"""

from __future__ import annotations

from klue_viz.store.annotations import Annotation, Store
from klue_viz.tasks.base import Task
from klue_viz.tasks.kit import REVIEWED, Suspect

GOLD = "gold"
#: What a reviewer does with a suspect (klue_viz.ui.review's keys).
ACCEPT, KEEP_GOLD, OTHER, SKIP = "accept", "keep", "other", "skip"
FINE_UNITS = frozenset({"entity", "head", "relation", "slot"})


def mark_gold_wrong(db: Store, task: Task, suspect: Suspect, annotator: str) -> Annotation:
    """Store 'gold looks wrong' with the proposed correction on the gold of the suspect's example.

    One record per (example, annotator): for entities, words and slots the proposals of one example
    are kept together, `;`-separated, as the patch export reads them; notes are added, never replaced.
    """
    guid, turn = suspect.guid, suspect.turn
    item = db.get(task.facts.name, guid, "gold", annotator, turn=turn) or Annotation(task.facts.name, guid, "gold", annotator, turn=turn)
    proposed = str(suspect.proposed)
    if suspect.unit in FINE_UNITS and item.corrected_label:
        parts = [p.strip() for p in item.corrected_label.split(";") if p.strip()]
        item.corrected_label = "; ".join(parts + ([proposed] if proposed not in parts else []))
    else:
        item.corrected_label = proposed
    item.gold_wrong = True
    remark = f"suspect queue: {suspect.unit} gold {suspect.gold} -> {proposed}"
    if remark not in item.note:
        item.note = "; ".join(n for n in (item.note, remark) if n)
    return db.save(item)


def record_review(db: Store, task: Task, suspect: Suspect, reviewer: str, action: str, typed: str = "") -> Annotation | None:
    """Store one reviewer's decision on a suspect (`ACCEPT` its proposal, `KEEP_GOLD`, `OTHER` with `typed`); `SKIP` stores nothing.

    The reviewer's earlier record on the example is updated (one record per example and reviewer), its note kept and extended.
    """
    if action == SKIP:
        return None
    guid, turn = suspect.guid, suspect.turn
    item = db.get(task.facts.name, guid, GOLD, reviewer, turn=turn) or Annotation(task.facts.name, guid, GOLD, reviewer, turn=turn)
    if action == KEEP_GOLD:
        item.gold_wrong, item.corrected_label = False, None
        item.tags = sorted(set(item.tags) | {REVIEWED})
        remark = f"review: gold {suspect.gold} kept"
    else:
        correction = str(suspect.proposed) if action == ACCEPT else typed.strip()
        if not correction:
            raise ValueError("type the correction first")
        item.gold_wrong, item.corrected_label = True, correction
        item.tags = [t for t in item.tags if t != REVIEWED]
        remark = f"review: gold {suspect.gold} -> {correction}"
    if remark not in item.note:
        item.note = "; ".join(n for n in (item.note, remark) if n)
    return db.save(item)
