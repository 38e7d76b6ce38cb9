"""A review decision, the "gold looks wrong" button and the bulk tagger never erase a confirmed save (issue 29 item 1).

An Annotate save checks the version it was made against; the other write paths used to read the record and save it
back whole without that check, so a save confirmed in between was replaced. Real threads on SQLite and PostgreSQL.
"""

from __future__ import annotations

import threading

import pytest

from klue_viz.store.annotations import Annotation, ConflictError, Store, StoreBusy
from klue_viz.store.gold_marks import ACCEPT, KEEP_GOLD, add_tags, mark_gold_wrong, record_review
from klue_viz.tasks import get_task
from klue_viz.tasks.kit import REVIEWED, Evidence, Suspect

GUID = "klue-nli-v1_dev_00001"
WHO = "지민"
SAVES = 100


def suspect(proposed: str = "neutral") -> Suspect:
    return Suspect(GUID, None, "label", "entailment", proposed, 0.9, Evidence(2, 2, ["a", "b"]))


def confirmed_saves(db: Store, stop: threading.Event, confirmed: list[str], escaped: list[BaseException]) -> None:
    """The Annotate editor: read the record, add one tag and a note, save with the version read; on a conflict (or a
    busy database) the user reads again and saves again (the form keeps what was typed). Every save that returned is
    confirmed; any other error ends the editing and is kept in `escaped`, for the failure message."""
    try:
        for k in range(SAVES):
            tag = f"save-{k}"
            while True:
                try:  # a busy database on the read, too, is read again: only a confirmed save counts
                    current = db.get("nli", GUID, "gold", WHO) or Annotation("nli", GUID, "gold", WHO)
                    current.tags = sorted(set(current.tags) | {tag})
                    current.note = "; ".join(n for n in (current.note, tag) if n)
                    db.save(current, expected_version=current.version)
                except (ConflictError, StoreBusy):
                    continue
                confirmed.append(tag)
                break
    except Exception as err:
        escaped.append(err)
    finally:
        stop.set()


def decide_until(stop: threading.Event, decide) -> int:
    """The other tab, deciding again and again until the saves are done (a busy database: pressed again)."""
    count = 0
    while not stop.is_set():
        try:
            decide(count)
        except StoreBusy:
            continue
        count += 1
    return count


@pytest.mark.slow
@pytest.mark.parametrize("writer", ["review", "mark", "bulk"])
def test_no_confirmed_save_is_lost_to_another_write_path(db_url, writer):
    task = get_task("nli")
    db = Store(db_url)
    other = Store(db_url)  # the other tab: its own connections
    writes = {
        "review": lambda k: record_review(other, task, suspect(), WHO, ACCEPT if k % 2 else KEEP_GOLD),
        "mark": lambda k: mark_gold_wrong(other, task, suspect(("neutral", "contradiction")[k % 2]), WHO),
        "bulk": lambda k: add_tags(other, task, [(GUID, None)], "gold", WHO, [f"bulk-{k % 3}"], f"bulk note {k % 3}"),
    }
    stop, confirmed, escaped = threading.Event(), [], []
    saver = threading.Thread(target=confirmed_saves, args=(db, stop, confirmed, escaped))
    counts: list[int] = []
    decider = threading.Thread(target=lambda: counts.append(decide_until(stop, writes[writer])))
    saver.start()
    decider.start()
    saver.join(timeout=300)
    decider.join(timeout=300)
    assert not escaped, f"the editor stopped after {len(confirmed)} saves on {escaped[0]!r}"
    assert len(confirmed) == SAVES and counts and counts[0] > 0
    final = db.get("nli", GUID, "gold", WHO)
    assert final is not None
    lost = [tag for tag in confirmed if tag not in final.tags or tag not in final.note.split("; ")]
    assert not lost, f"{len(lost)} of {SAVES} confirmed saves lost to {counts[0]} {writer} writes: {lost[:5]}"


def test_a_review_decision_keeps_the_records_other_fields_and_sets_its_own(db_url):
    task = get_task("nli")
    db = Store(db_url)
    db.save(Annotation("nli", GUID, "gold", WHO, tags=["ambiguous"], note="두 해석이 가능"))
    accepted = record_review(db, task, suspect(), WHO, ACCEPT)
    assert accepted is not None and accepted.version == 2
    assert (accepted.gold_wrong, accepted.corrected_label, accepted.tags) == (True, "neutral", ["ambiguous"])
    assert accepted.note == "두 해석이 가능; review: gold entailment -> neutral"
    kept = record_review(db, task, suspect(), WHO, KEEP_GOLD)
    assert (kept.gold_wrong, kept.corrected_label, sorted(kept.tags), kept.version) == (False, None, sorted(["ambiguous", REVIEWED]), 3)
    assert db.get("nli", GUID, "gold", WHO) == kept


def test_bulk_tags_add_to_each_record_and_count_what_they_wrote(db_url):
    task = get_task("nli")
    db = Store(db_url)
    db.save(Annotation("nli", "g1", "run-a", WHO, tags=["negation"], note="first"))
    written = add_tags(db, task, [("g1", None), ("g2", None)], "run-a", WHO, ["lexical overlap"], "bulk")
    assert [(a.guid, a.tags, a.note, a.version) for a in written] == [
        ("g1", ["lexical overlap", "negation"], "first; bulk", 2), ("g2", ["lexical overlap"], "bulk", 1)]


def test_bulk_tagging_the_same_note_again_adds_it_once(db_url):
    """The bulk tagger adds its note to a record once, however often it is applied: repeated, it used to append the
    same note every time until the record passed the note's length limit and every later save of it was refused (the
    SQLite race above stopped on that after a few thousand bulk writes)."""
    task = get_task("nli")
    db = Store(db_url)
    db.save(Annotation("nli", "g1", "run-a", WHO, note="bulk note 10"))
    for _ in range(3):
        add_tags(db, task, [("g1", None)], "run-a", WHO, ["negation"], "bulk note 1")
    add_tags(db, task, [("g1", None)], "run-a", WHO, ["negation"], "bulk note 10")
    stored = db.get("nli", "g1", "run-a", WHO)
    assert stored is not None and stored.note == "bulk note 10; bulk note 1" and stored.version == 5
