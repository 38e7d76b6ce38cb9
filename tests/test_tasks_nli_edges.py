"""KLUE-NLI's task module (tasks/nli.py) piece by piece on inputs made by hand (issue 14's mutation run: each test pins
what a survivor showed untested; every expected value is counted by hand in the test)."""

from __future__ import annotations

import pytest

from klue_viz.scoring.evaluate import evaluate_bytes
from klue_viz.tasks import get_task
from klue_viz.tasks.base import RecordError
from klue_viz.tasks.nli import PairColumns
from tests.cases import gold_of
from tests.conftest import jsonl

TASK = get_task("nli")


def test_official_and_hugging_face_rows_votes_agreement_source():
    assert TASK.looks_like_hf({"label": 0}) and not TASK.looks_like_hf({"gold_label": "neutral"})
    official = {"guid": "g0", "genre": "wikitree", "premise": "p", "hypothesis": "h", "gold_label": "neutral",
                "author": "neutral", "label2": "entailment", "label3": "neutral", "label4": "", "label5": "neutral"}
    row = TASK.hf_row(official)
    assert (row["gold"], row["source"], row["votes"], row["agreement"]) == (
        "neutral", "wikitree", ["neutral", "entailment", "neutral", "neutral"], "3/4 agree")  # the empty vote is none
    row = TASK.hf_row({"guid": "g1", "source": "airbnb", "genre": "x", "premise": "p", "hypothesis": "h", "label": 2})
    assert (row["gold"], row["source"], row["votes"], row["agreement"]) == ("contradiction", "airbnb", [], "(no votes)")
    assert TASK.hf_row({"guid": "g2", "premise": "p", "hypothesis": "h", "label": 0})["source"] == "(unknown)"
    with pytest.raises(RecordError) as err:
        TASK.hf_row({"guid": "g3", "premise": "p", "hypothesis": "h", "gold_label": "maybe"})
    assert str(err.value).startswith("gold label 'maybe' is not a NLI label")


def test_crowd_view_of_each_pair_from_its_votes_and_confidence():
    records = [{"guid": f"klue-nli-v1_dev_{k:05d}", "source": "airbnb", "premise": "전제", "hypothesis": "가설", "gold_label": g,
                "author": a, "label2": b, "label3": c, "label4": d, "label5": e}
               for k, (g, a, b, c, d, e) in enumerate([
                   ("neutral", "neutral", "entailment", "entailment", "neutral", "neutral"),  # 3 of 5 for the gold
                   ("neutral", "neutral", "neutral", "neutral", "neutral", "neutral"),        # unanimous
                   ("neutral", "neutral", "neutral", "neutral", "neutral", "neutral")])]
    records.append({"guid": "klue-nli-v1_dev_00003", "source": "airbnb", "premise": "전제", "hypothesis": "가설",
                    "gold_label": "neutral"})  # no votes
    gold = gold_of("nli", records)
    probs = [[0.05, 0.9, 0.05], [0.3, 0.5, 0.2], [0.1, 0.8, 0.1], [0.05, 0.9, 0.05]]
    data = jsonl([{"guid": r["guid"], "label": "neutral", "probs": p} for r, p in zip(records, probs)])
    ex = evaluate_bytes(TASK, gold, data, "run.jsonl").frames.examples
    assert ex["crowd_view"].tolist() == ["run confident (p ≥ 0.9), annotators split (≤ 3 of 5 for the gold)",
                                         "annotators unanimous, run unsure (p < 0.6)", "neither", "(no votes)"]
    no_probs = jsonl([{"guid": r["guid"], "label": "neutral"} for r in records])
    ex = evaluate_bytes(TASK, gold, no_probs, "run.jsonl").frames.examples
    assert ex["crowd_view"].tolist() == ["(run gave no probabilities)"] * 3 + ["(no votes)"]


def test_pair_columns_keep_the_last_four_golds_and_drop_the_oldest():
    columns = PairColumns()
    golds = [([f"전제 {k}"], [f"가설 {k}"]) for k in range(6)]
    first = [columns.get(*g) for g in golds[:4]]
    assert columns.get(*golds[0]) is first[0]  # kept, and now the most recent
    columns.get(*golds[4])  # a fifth: the least recent (gold 1) goes
    assert columns.get(*golds[0]) is first[0] and columns.get(*golds[3]) is first[3]
    assert columns.get(*golds[1]) is not first[1]
    overlap, length = columns.get(["a b c"], ["a b x y" + "z" * 34])  # 2 of 4 words; 41 characters
    assert list(overlap) == ["high (≥50%)"] and list(length) == ["41+ chars"]

