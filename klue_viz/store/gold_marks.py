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
    The record is edited as stored at the moment of writing (`Store.change`), so a save confirmed meanwhile stays.
    """
    proposed = str(suspect.proposed)

    def edit(item: Annotation) -> None:
        if suspect.unit in FINE_UNITS and item.corrected_label:
            parts = [p.strip() for p in item.corrected_label.split(";") if p.strip()]
            item.corrected_label = "; ".join(parts + ([proposed] if proposed not in parts else []))
        else:
            item.corrected_label = proposed
        item.gold_wrong = True
        _add_note(item, f"suspect queue: {suspect.unit} gold {suspect.gold} -> {proposed}")

    return db.change(task.facts.name, suspect.guid, GOLD, annotator, suspect.turn, edit)


def record_review(db: Store, task: Task, suspect: Suspect, reviewer: str, action: str, typed: str = "") -> Annotation | None:
    """Store one reviewer's decision on a suspect (`ACCEPT` its proposal, `KEEP_GOLD`, `OTHER` with `typed`); `SKIP` stores nothing.

    The reviewer's record on the example is edited as stored at the moment of writing (`Store.change`: one record per
    example and reviewer): the decision sets the gold flag, the correction and the reviewed tag, and adds its remark
    to the note; the other tags and the note someone saved meanwhile (the Annotate form in another tab) stay.
    """
    if action == SKIP:
        return None
    correction = "" if action == KEEP_GOLD else (str(suspect.proposed) if action == ACCEPT else typed.strip())
    if action != KEEP_GOLD and not correction:
        raise ValueError("type the correction first")

    def edit(item: Annotation) -> None:
        if action == KEEP_GOLD:
            item.gold_wrong, item.corrected_label = False, None
            item.tags = sorted(set(item.tags) | {REVIEWED})
            _add_note(item, f"review: gold {suspect.gold} kept")
        else:
            item.gold_wrong, item.corrected_label = True, correction
            item.tags = [t for t in item.tags if t != REVIEWED]
            _add_note(item, f"review: gold {suspect.gold} -> {correction}")

    return db.change(task.facts.name, suspect.guid, GOLD, reviewer, suspect.turn, edit)


def add_tags(db: Store, task: Task, keys: list[tuple[str, int | None]], run: str, annotator: str, tags: list[str],
             note: str = "") -> list[Annotation]:
    """Add `tags` (and `note`, once, to the end of the note) to one person's record of each example `keys` names (guid, turn) on
    `run`: the bulk tagger. Each record is edited as stored at the moment of writing (`Store.change`), so a save
    confirmed meanwhile keeps its own tags and note. Returns the records written, in order; a StoreError stops at the
    record it happened on (those before it are written)."""
    def edit(item: Annotation) -> None:
        item.tags = sorted(set(item.tags) | set(tags))
        _add_note(item, note)

    return [db.change(task.facts.name, guid, run, annotator, turn, edit) for guid, turn in keys]


def _add_note(item: Annotation, remark: str) -> None:
    """Add a remark to the end of a record's note, once: a remark already among the note's "; "-separated parts is not
    added again (a bulk note or a review decision applied twice), while one that is only part of another is."""
    if remark and remark not in item.note.split("; "):
        item.note = "; ".join(n for n in (item.note, remark) if n)
