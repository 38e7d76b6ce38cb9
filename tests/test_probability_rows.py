"""Class probabilities must be a distribution (issue 27.3, 29.9): values in [0, 1] whose sum is within 0.02 of 1.

A row that is not is a listed problem on its line; its label is still scored, its probabilities are left out, so
no calibration, cross-entropy or divergence is computed from scores on another scale. Accepted rows are scaled to
sum 1 (the rule the suspect queue already followed). Expected values are worked by hand in each test."""

from __future__ import annotations

import math

from klue_viz.discovery.annotators import run_crowd
from klue_viz.discovery.calibration import run_calibration
from klue_viz.scoring.evaluate import evaluate_bytes
from klue_viz.tasks import get_task
from tests.cases import gold_of, nli
from tests.conftest import jsonl

TASK = get_task("nli")


def _gold_with_votes():
    records = nli(["neutral"] * 4)
    for record in records:
        record.update(author="neutral", label2="neutral", label3="neutral", label4="entailment", label5="neutral")
    return gold_of("nli", records)


def test_rows_that_are_not_distributions_are_listed_with_their_line_and_lose_their_probabilities():
    gold = _gold_with_votes()
    rows = [[5, 5, 5], [0.2, 1.3, -0.5], [0.1, 0.2, 0.3], [0.1, 0.8, 0.1]]
    data = jsonl([{"guid": f"klue-nli-v1_dev_{k:05d}", "label": "neutral", "probs": p} for k, p in enumerate(rows)])
    result = evaluate_bytes(TASK, gold, data, "run.jsonl")
    listed = {p.line: p.message for p in result.problems}
    assert sorted(listed) == [1, 2, 3]
    assert "outside [0, 1]" in listed[1] and "5" in listed[1]
    assert "outside [0, 1]" in listed[2] and "1.3" in listed[2] and "1 more" in listed[2]
    assert "sum to 0.6" in listed[3]
    assert all("label is scored" in m for m in listed.values())
    ex = result.frames.examples
    assert ex["probs"].tolist()[:3] == [None, None, None]
    assert result.scores.values["accuracy"] == 100.0  # every label kept: 4 of 4 right
    cal = run_calibration(TASK, ex)
    assert cal is not None and cal.n == 1 and math.isclose(cal.ece, 20.0)  # one row, p 0.8, right: |1 - 0.8|
    crowd = run_crowd(TASK, result)
    assert crowd["vote_cross_entropy"]["n"] == 1
    # -(0.8 ln 0.8 + 0.2 ln 0.1), by hand
    assert math.isclose(crowd["vote_cross_entropy"]["value"], -(0.8 * math.log(0.8) + 0.2 * math.log(0.1)))


def test_rows_close_to_one_are_scaled_to_sum_one_everywhere():
    gold = gold_of("nli", nli(["neutral", "entailment"]))
    data = jsonl([{"guid": "klue-nli-v1_dev_00000", "label": "neutral", "probs": [0.1, 0.8, 0.11]},  # sums 1.01
                  {"guid": "klue-nli-v1_dev_00001", "probs": {"entailment": 0.5, "neutral": 0.49, "contradiction": 0.0}}])  # 0.99
    result = evaluate_bytes(TASK, gold, data, "run.jsonl")
    assert not result.problems
    first, second = result.frames.examples["probs"].tolist()
    assert all(math.isclose(a, b) for a, b in zip(first, [0.1 / 1.01, 0.8 / 1.01, 0.11 / 1.01]))
    assert all(math.isclose(a, b) for a, b in zip(second, [0.5 / 0.99, 0.49 / 0.99, 0.0]))
    assert math.isclose(result.frames.examples["confidence"].tolist()[0], 0.8 / 1.01)


def test_a_row_of_scores_is_listed_and_its_label_still_read():
    gold = gold_of("nli", nli(["neutral"]))
    result = evaluate_bytes(TASK, gold, jsonl([{"guid": "klue-nli-v1_dev_00000", "probs": [1, 1, 1]}]), "scores.jsonl")
    (problem,) = result.problems
    assert problem.file == "scores.jsonl" and problem.guid == "klue-nli-v1_dev_00000" and "sum to 3" in problem.message
    assert result.frames.examples["pred"].tolist() == ["entailment"]  # the label the scores name (first of a tie), scored


def test_float_arithmetic_just_below_zero_is_read_as_zero():
    gold = gold_of("nli", nli(["neutral"]))
    rest = 1.0 - 0.9 - 0.1  # -2.8e-17
    assert rest < 0
    result = evaluate_bytes(TASK, gold, jsonl([{"guid": "klue-nli-v1_dev_00000", "probs": [0.1, 0.9, rest]}]), "run.jsonl")
    assert not result.problems and result.frames.examples["probs"].tolist()[0][2] == 0.0
