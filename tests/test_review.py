"""Reviews of suspected gold errors are annotations: decisions, k reviews per unit, Krippendorff's alpha, import/export."""

from __future__ import annotations

import pytest

from klue_viz.discovery.review import accepted_corrections, disagreements, outcomes, reviewer_agreement
from klue_viz.store.annotation_files import export_text, parse
from klue_viz.store.annotations import Store
from klue_viz.store.gold_marks import ACCEPT, KEEP_GOLD, OTHER, SKIP, record_review
from klue_viz.tasks import get_task
from klue_viz.tasks.kit import KEEP, Evidence, Suspect

TASK = get_task("nli")


def suspect(k, gold="neutral", proposed="entailment"):
    return Suspect(f"klue-nli-v1_dev_{k:05d}", None, "label", gold, proposed, 1.0, Evidence(1, 1, ["run"]))


def test_each_decision_is_a_gold_annotation(tmp_path):
    db = Store(str(tmp_path / "a.sqlite3"))
    assert record_review(db, TASK, suspect(0), "kim", SKIP) is None and db.find() == []
    accepted = record_review(db, TASK, suspect(0), "kim", ACCEPT)
    assert (accepted.run, accepted.gold_wrong, accepted.corrected_label) == ("gold", True, "entailment")
    kept = record_review(db, TASK, suspect(0), "kim", KEEP_GOLD)  # a change of mind updates the same record, the note keeps both
    assert kept.version == 2 and not kept.gold_wrong and kept.corrected_label is None
    assert "review: gold neutral -> entailment" in kept.note and "review: gold neutral kept" in kept.note
    with pytest.raises(ValueError, match="type the correction"):
        record_review(db, TASK, suspect(1), "kim", OTHER, "  ")
    record_review(db, TASK, suspect(1), "kim", OTHER, "contradiction")
    assert [o.decisions for o in outcomes(TASK, db.find())] == [{"kim": KEEP}, {"kim": "contradiction"}]
    assert [(c.guid, c.correction) for c in accepted_corrections(TASK, db.find())] == [("klue-nli-v1_dev_00001", "contradiction")]


def test_k_reviews_a_majority_alpha_and_the_units_to_adjudicate(tmp_path):
    db = Store(str(tmp_path / "a.sqlite3"))
    # Four units, two reviewers: (x, x), (x, x), (y, y), (y, x) with x = accept, y = keep the gold.
    for k, (a, b) in enumerate([(ACCEPT, ACCEPT), (ACCEPT, ACCEPT), (KEEP_GOLD, KEEP_GOLD), (KEEP_GOLD, ACCEPT)]):
        record_review(db, TASK, suspect(k), "kim", a)
        record_review(db, TASK, suspect(k), "lee", b)
    record_review(db, TASK, suspect(4), "kim", ACCEPT)  # one review only
    items = db.find()
    # By hand (coincidences): o_xx = 4, o_yy = 2, o_xy = o_yx = 1; n_x = 5, n_y = 3, n = 8;
    # alpha = 1 - (n - 1) * (o_xy + o_yx) / (2 * n_x * n_y) = 1 - 7 * 2 / 30 = 8/15.
    alpha, units = reviewer_agreement(TASK, items)
    assert units == 4 and alpha == pytest.approx(8 / 15)
    assert [(o.guid, o.decisions) for o in disagreements(TASK, items)] == [("klue-nli-v1_dev_00003", {"kim": KEEP, "lee": "entailment"})]
    one = {c.guid for c in accepted_corrections(TASK, items, reviews=1)}
    two = {c.guid for c in accepted_corrections(TASK, items, reviews=2)}
    assert one == {"klue-nli-v1_dev_00000", "klue-nli-v1_dev_00001", "klue-nli-v1_dev_00004"}  # unit 3 is a 1:1 tie: undecided
    assert two == {"klue-nli-v1_dev_00000", "klue-nli-v1_dev_00001"}
    first = next(c for c in accepted_corrections(TASK, items, reviews=2) if c.guid.endswith("00000"))
    assert first.annotator == "kim, lee"
    record_review(db, TASK, suspect(3), "park", KEEP_GOLD)  # the third person adjudicates
    assert disagreements(TASK, db.find())[0].decisions["park"] == KEEP
    assert next(o for o in outcomes(TASK, db.find()) if o.guid.endswith("00003")).decided == KEEP


def test_reviews_survive_export_and_import(tmp_path):
    db = Store(str(tmp_path / "a.sqlite3"))
    record_review(db, TASK, suspect(0), "kim", ACCEPT)
    record_review(db, TASK, suspect(1), "kim", KEEP_GOLD)
    for name in ("reviews.jsonl", "reviews.csv"):
        text = export_text(db.find(), name)
        other = Store(str(tmp_path / f"{name}.sqlite3"))
        items, problems = parse(text.encode("utf-8"), name)
        assert not problems
        other.apply_import(other.plan_import(items))
        assert [o.decisions for o in outcomes(TASK, other.find())] == [{"kim": "entailment"}, {"kim": KEEP}]
