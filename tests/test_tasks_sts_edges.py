"""KLUE-STS's task module (tasks/sts.py) piece by piece on inputs made by hand (issue 14's mutation run: each test pins
what a survivor showed untested; every expected value is counted by hand in the test)."""

from __future__ import annotations

import json
import math

import pytest
from scipy.stats import pearsonr
from sklearn.metrics import f1_score

from klue_viz.core.problems import InputError
from klue_viz.core.results import Frames, Repaired
from klue_viz.metrics.official import scalar
from klue_viz.scoring.evaluate import evaluate_bytes
from klue_viz.tasks import get_task
from klue_viz.tasks.base import RecordError
from tests.cases import gold_of
from tests.conftest import jsonl

TASK = get_task("sts")


def _guid(k: int) -> str:
    return f"klue-sts-v1_dev_{k:05d}"


def _pair(k: int, real: float, **extra) -> dict:
    return {"guid": _guid(k), "sentence1": f"문장 {k}", "sentence2": f"다른 문장 {k}",
            "labels": {"label": round(real, 1), "real-label": real, "binary-label": int(real >= 3)}, **extra}


PAIRS = [
    _pair(0, 3.0, source="airbnb-rtt", annotations={"annotations": [3, 3, 3], "annotators": ["a", "b", "c"]}),
    _pair(1, 2.9, source="policy", annotations={"annotations": [2, 4], "annotators": ["a"]}),
    _pair(2, 4.0, source="news-sampled-rtt"),
    _pair(3, 0.5),
]


# ---- the official file --------------------------------------------------------------------------------


def test_rows_source_parts_votes_annotators_and_agreement():
    assert TASK.looks_like_hf({"guid": "g"}) and not TASK.looks_like_hf({"annotations": {}})
    rows, problems = TASK.read_official_json(PAIRS, "dev.json")
    assert problems == []
    assert [(r["source"], r["genre"], r["method"]) for r in rows] == [
        ("airbnb-rtt", "airbnb", "rtt"), ("policy", "policy", "(unknown)"), ("news-sampled-rtt", "news", "sampled-rtt"),
        ("(unknown)", "(unknown)", "(unknown)")]
    assert [(r["votes"], r["annotators"], r["agreement"]) for r in rows] == [
        ([3.0, 3.0, 3.0], ["a", "b", "c"], "spread 0"), ([2.0, 4.0], [], "spread 2"),  # one name for two votes: none kept
        ([], [], "(no votes)"), ([], [], "(no votes)")]
    assert {k: rows[1][k] for k in ("guid", "sentence1", "sentence2", "gold", "gold_rounded")} == {
        "guid": _guid(1), "sentence1": "문장 1", "sentence2": "다른 문장 1", "gold": 2.9, "gold_rounded": 2.9}


def test_rows_refusals_name_the_record_and_its_guid():
    with pytest.raises(InputError) as err:
        TASK.read_official_json({"data": []}, "dev.json")
    assert str(err.value) == "dev.json: expected the official KLUE-STS JSON list of pairs"
    records = [_pair(0, 1.0), {"guid": "g1", "sentence1": "a", "sentence2": "b"}, _pair(2, 5.5), "not a record"]
    rows, problems = TASK.rows_from_hf(records)
    assert [r["guid"] for r in rows] == [_guid(0)]
    assert [(p.message, p.guid) for p in problems[:2]] == [
        ("gold record #2: missing or bad field 'labels'", "g1"),
        ("gold record #3: missing or bad field real-label 5.5 is not a similarity from 0 to 5", _guid(2))]
    assert problems[2].message.startswith("gold record #4: missing or bad field ") and problems[2].guid is None


# ---- predictions -----------------------------------------------------------------------------------------


def _refusal(record) -> str:
    with pytest.raises(RecordError) as err:
        TASK.parse_prediction(record, {})
    return str(err.value)


def test_parse_prediction_fields_binary_and_refusals():
    assert TASK.parse_prediction({"label": 2}, {}) == {"score": 2.0, "binary": 0}
    assert TASK.parse_prediction({"score": 3, "label": 1}, {}) == {"score": 3.0, "binary": 1}  # 3.0 is similar
    assert TASK.parse_prediction({"score": 1.0, "binary": 1}, {}) == {"score": 1.0, "binary": 1}
    assert TASK.parse_prediction({"score": 4, "binary": 0}, {}) == {"score": 4.0, "binary": 0}
    assert TASK.parse_prediction({"score": 4, "binary": "0"}, {}) == {"score": 4.0, "binary": 0}
    assert TASK.parse_prediction({"score": 4, "binary": ""}, {}) == {"score": 4.0, "binary": 1}
    assert TASK.parse_prediction({"score": 5.0}, {}) == {"score": 5.0, "binary": 1}  # the end of the scale: as given
    assert TASK.parse_prediction({"score": 5.5}, {}) == Repaired({"score": 5.5, "binary": 1},
                                                                  ("score 5.5 is outside 0..5; scored as given",))
    missing = "missing field 'score' (a similarity from 0 to 5)"
    assert _refusal({}) == missing and _refusal({"score": ""}) == missing
    assert _refusal({"score": True}) == "score must be a number from 0 to 5, found True"
    assert _refusal({"score": "abc"}) == "score must be a number from 0 to 5, found 'abc'"
    assert _refusal({"score": 4, "binary": 2}) == "binary must be 0 or 1, found 2"
    assert _refusal({"score": 4, "binary": "x"}) == "binary must be an integer, found 'x'"


def test_unreadable_prediction_is_the_far_end_on_the_other_side():
    assert TASK.unreadable_prediction({"gold": 3.0}) == {"score": 0.0, "binary": 0}
    assert TASK.unreadable_prediction({"gold": 2.9}) == {"score": 5.0, "binary": 1}
    assert TASK.parse_answer("3.5점", {}).fields == {"score": 3.5}


# ---- frames -------------------------------------------------------------------------------------------------


def test_frame_of_four_pairs():
    gold = gold_of("sts", PAIRS)
    preds = [{"guid": _guid(0), "score": 3.0}, {"guid": _guid(1), "label": 3.5},
             {"guid": _guid(2), "score": 1.0, "binary": 0}, {"guid": _guid(3), "score": 6.0}]
    ex = evaluate_bytes(TASK, gold, jsonl(preds), "run.jsonl").frames.examples
    assert ex["pred"].tolist() == [3.0, 3.5, 1.0, 6.0]
    assert ex["gold_binary"].tolist() == [1, 0, 1, 0] and ex["pred_binary"].tolist() == [1, 1, 0, 1]
    assert ex["gold_binary"].dtype == "int64"
    assert ex["abs_error"].tolist() == pytest.approx([0.0, 0.6, 3.0, 5.5])
    assert ex["correct"].tolist() == [True, False, False, False]
    assert ex["error_type"].tolist() == ["correct", "false positive (pred ≥ 3)", "false negative (pred < 3)",
                                         "false positive (pred ≥ 3)"]
    # bins closed on the left: 3.0 is in 3-4, 1.0 in 1-2, above 4 in 4-5
    assert ex["gold_bin"].tolist() == ["3-4", "2-3", "4-5", "0-1"] and ex["pred_bin"].tolist() == ["3-4", "3-4", "1-2", "4-5"]
    # population std of [3, 3, 3] and [2, 4]; none without two votes
    assert ex["vote_std"].tolist()[:2] == [0.0, 1.0] and math.isnan(ex["vote_std"].iloc[2])
    assert ex["spread"].dtype == "string"
    assert ex["spread"].tolist()[:2] == ["std < 0.5", "std ≥ 1"] and ex["spread"].isna().tolist()[2:] == [True, True]
    # 1 - |error| / 5, at least 0
    assert TASK.example_scores(Frames(ex)).tolist() == pytest.approx([1.0, 0.88, 0.4, 0.0])


# ---- suspects ------------------------------------------------------------------------------------------------


def test_suspects_are_pairs_both_runs_score_on_one_side_a_point_away():
    gold = gold_of("sts", [_pair(k, r) for k, r in enumerate([1.0, 4.0, 2.0, 2.0, 3.0])])
    scores = [[2.0, 2.5, 3.5, 0.5, 3.0], [2.68, 2.9, 1.0, 1.01, 3.5]]
    runs = [evaluate_bytes(TASK, gold, jsonl([{"guid": _guid(k), "score": s} for k, s in enumerate(run)]), f"run{j}.jsonl",
                           run=f"run{j}") for j, run in enumerate(scores)]
    found = TASK.find_suspects(runs)
    # pair 0: +1.0 and +1.68 (mean 2.34, proposed to one decimal; the least is the margin itself); 1: -1.5 and -1.1; 2: either side; 3: -0.99 too close;
    # 4: 0 and +0.5 (zero is no side)
    assert [(s.guid, s.turn, s.unit, s.gold, s.proposed) for s in found] == [
        (_guid(0), None, "score", 1.0, 2.3), (_guid(1), None, "score", 4.0, 2.7)]
    assert [s.score for s in found] == pytest.approx([2 * 1.0 / 5, 2 * 1.1 / 5])
    assert [(s.evidence.agreeing, s.evidence.of, dict(s.evidence.runs)) for s in found] == [
        (2, 2, {"run0": 2.0, "run1": 2.68}), (2, 2, {"run0": 2.5, "run1": 2.9})]


# ---- the patch --------------------------------------------------------------------------------------------------


def test_patch_sets_the_three_labels_and_refuses_scores_off_the_scale():
    records = [_pair(9, 1.0), {**_pair(0, 1.0), "labels": {"label": 1.0, "real-label": 1.0, "binary-label": 0, "extra": "kept"}},
               _pair(1, 1.0), _pair(2, 1.0), _pair(3, 1.0), _pair(4, 1.0), {"guid": _guid(5), "sentence1": "a"}, _pair(6, 1.0),
               _pair(7, 1.0), _pair(8, 1.0), _pair(10, 1.0)]
    corrections = {(_guid(0), None): ["4.26"], (_guid(1), None): ["x"], (_guid(2), None): ["5.5"],
                   (_guid(3), None): ["2.96"], (_guid(4), None): ["1; 2.5"], (_guid(5), None): ["3"],
                   (_guid(6), None): ["0"], (_guid(7), None): ["0.5"], (_guid(8), None): ["5"], (_guid(10), None): ["2.6"]}
    problems: list = []
    text, count = TASK.write_patch(json.dumps(records, ensure_ascii=False), "dev.json", corrections, problems)
    out = json.loads(text)
    # the first record has no correction: left out, and the others still read
    assert count == 8 and [r["guid"] for r in out] == [_guid(k) for k in (0, 3, 4, 5, 6, 7, 8, 10)]
    assert [r["labels"]["binary-label"] for r in out[4:]] == [0, 0, 1, 0]  # 0, 0.5 and 5 are on the scale; 2.6 < 3
    assert out[0] == {**records[1], "labels": {"label": 4.3, "real-label": 4.26, "binary-label": 1, "extra": "kept"}}
    assert out[1]["labels"] == {"label": 3.0, "real-label": 2.96, "binary-label": 1}  # rounded to 3.0: similar
    assert out[2]["labels"] == {"label": 2.5, "real-label": 2.5, "binary-label": 0}  # the last item counts
    assert out[3] == {"guid": _guid(5), "sentence1": "a", "labels": {"real-label": 3.0, "label": 3.0, "binary-label": 1}}
    assert [(p.message, p.guid, p.file) for p in problems] == [
        ("corrected score 'x' is not a number from 0 to 5", _guid(1), "dev.json"),
        ("corrected score '5.5' is not a number from 0 to 5", _guid(2), "dev.json")]
    with pytest.raises(InputError) as err:
        TASK.write_patch("[", "dev.json", corrections, [])
    assert str(err.value).startswith("dev.json: invalid JSON at line 1")


def test_statistics_from_the_declared_columns_only():
    gold = gold_of("sts", PAIRS)
    preds = [{"guid": _guid(0), "score": 3.0}, {"guid": _guid(1), "score": 3.5}, {"guid": _guid(2), "score": 1.0},
             {"guid": _guid(3), "score": 0.0}]
    run = evaluate_bytes(TASK, gold, jsonl(preds), "run.jsonl")
    columns = TASK.statistics_columns()
    assert set(columns) == {"examples"}
    statistics = TASK.statistics(Frames(run.frames.examples[list(columns["examples"])]))
    # gold 3.0 2.9 4.0 0.5 against 3.0 3.5 1.0 0.0; binary gold 1 0 1 0, predicted 1 1 0 0: F1 of one hit = 2/4
    assert scalar(statistics, "pearsonr") == pytest.approx(100 * pearsonr([3.0, 2.9, 4.0, 0.5], [3.0, 3.5, 1.0, 0.0])[0])
    assert scalar(statistics, "f1") == pytest.approx(100 * f1_score([1, 0, 1, 0], [1, 1, 0, 0]))
