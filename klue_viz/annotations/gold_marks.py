"""'Gold looks wrong' remarks written from the suspect queue (klue_viz.discovery.suspects): a write to the store.

A reviewer confirming a suspect stores its proposed correction on the gold of the suspect's example, in
the form the gold patch export (klue_viz.discovery.patch) reads back.
"""

from __future__ import annotations

from klue_viz.annotations.store import Annotation, Store
from klue_viz.kit import Suspect
from klue_viz.tasks.base import Task

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
