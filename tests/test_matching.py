"""Matching predictions to gold: coverage, strict mode, broken records, keyless files, wrong tasks."""

from __future__ import annotations

import json

import pytest

from klue_viz.core.problems import InputError
from klue_viz.reading.demo import DEMO_BENCHMARK, demo_runs
from klue_viz.scoring.evaluate import evaluate_bytes, load_gold
from klue_viz.tasks import get_task
from tests.conftest import jsonl


@pytest.fixture(scope="module")
def ynat_gold():
    return load_gold(get_task("ynat"), DEMO_BENCHMARK)


def ynat_preds(gold):
    return [{"guid": r["guid"], "label": r["gold"]} for r in gold.rows]


def test_missing_records_are_reported_and_left_out_unless_strict(ynat_gold):
    ynat = get_task("ynat")
    preds = ynat_preds(ynat_gold)[3:]
    result = evaluate_bytes(ynat, ynat_gold, jsonl(preds), "p.jsonl")
    n = len(ynat_gold.rows)
    assert (result.coverage.n_gold, result.coverage.n_scored, result.coverage.n_missing) == (n, n - 3, 3)
    assert result.scores.values["macro_f1"] == 100.0
    strict = evaluate_bytes(ynat, ynat_gold, jsonl(preds), "p.jsonl", strict=True)
    assert strict.coverage.n_scored == n and strict.scores.values["macro_f1"] < 100.0
    assert any("--strict" in note for note in strict.notes)


def test_extra_duplicate_and_invalid_records(ynat_gold):
    ynat = get_task("ynat")
    preds = ynat_preds(ynat_gold)
    preds.insert(1, {"guid": "ynat-v1_dev_99999", "label": "사회"})
    preds.insert(3, dict(preds[0], label="정치"))
    target = preds[6]["guid"]
    preds.insert(5, {"guid": target, "label": "날씨"})
    preds[7] = {"id": preds[7]["guid"], "label": preds[7]["label"]}  # 'id' is a synonym of 'guid'
    result = evaluate_bytes(ynat, ynat_gold, jsonl(preds), "p.jsonl")
    assert result.coverage.n_extra == 1 and result.extra_guids == ["ynat-v1_dev_99999"]
    assert result.coverage.n_invalid == 1  # the unusable label; the two duplicates are counted as such
    assert "2 duplicate line(s) of a guid given before were left out (the first line of each guid is used)" in result.notes
    duplicates = [p for p in result.problems if "duplicate" in p.message]
    assert duplicates[0].line == 4 and "line 1" in duplicates[0].message
    bad_label = next(p for p in result.problems if "날씨" in p.message)
    assert bad_label.line == 6 and bad_label.guid == target and "expected one of" in bad_label.message
    # The first line of a guid is the one used, even when unusable: the valid line after the bad label is a
    # duplicate too (it used to be scored without a word), and the example counts as missing.
    assert duplicates[1].line == 8 and duplicates[1].guid == target and "could not be used either" in duplicates[1].message
    assert result.coverage.n_scored == len(ynat_gold.rows) - 1 and result.coverage.n_missing == 1
    assert result.scores.values["macro_f1"] == 100.0


def test_keyless_file_aligns_by_order_only_when_counts_match(ynat_gold):
    ynat = get_task("ynat")
    rows = "label\n" + "\n".join(r["gold"] for r in ynat_gold.rows)
    result = evaluate_bytes(ynat, ynat_gold, rows.encode("cp949"), "trainer_predict.csv")
    assert result.scores.values["macro_f1"] == 100.0 and "aligned with the gold in order" in result.notes[0]
    with pytest.raises(InputError, match=f"exactly {len(ynat_gold.rows)}"):
        evaluate_bytes(ynat, ynat_gold, "\n".join(rows.split("\n")[:5]).encode(), "short.csv")


def test_probabilities_as_object_or_list_and_label_from_probs(ynat_gold):
    ynat = get_task("ynat")
    first = ynat_gold.rows[0]
    as_object = {"guid": first["guid"], "probs": {first["gold"]: 0.9, "정치": 0.1}}
    result = evaluate_bytes(ynat, ynat_gold, jsonl([as_object]), "p.jsonl")
    assert result.frames.examples.loc[0, "pred"] == first["gold"]
    assert result.frames.examples.loc[0, "confidence"] == pytest.approx(0.9)
    wrong_length = {"guid": first["guid"], "label": 0, "probs": [0.5, 0.5]}
    with pytest.raises(InputError, match="probs must be a list of 7"):
        evaluate_bytes(ynat, ynat_gold, jsonl([wrong_length]), "p.jsonl")


def test_a_file_of_another_task_says_which_task_it_looks_like(ynat_gold):
    ner_run = next(demo_runs("ner"))
    with pytest.raises(InputError, match="looks like a NER file"):
        evaluate_bytes(get_task("ynat"), ynat_gold, ner_run.read_bytes(), ner_run.name)


@pytest.mark.parametrize("task_name,bad,message", [
    ("ner", {"entities": [{"start": 0, "end": 999, "label": "PS"}]}, "outside the sentence"),
    ("ner", {"entities": [{"start": 0, "end": 1, "label": "PER"}]}, "not one of"),
    ("ner", {"entities": None, "tags": ["O"]}, "one per character"),
    ("dp", {"head": [1], "deprel": ["NP"]}, "one per word"),
    ("dp", {"head": "x", "deprel": []}, "JSON list"),
    ("wos", {"turn": 0, "state": ["식당가격대"]}, "domain-slot-value"),
    ("sts", {"score": "high"}, "number from 0 to 5"),
    ("mrc", {"answer": ["a"]}, "text"),
])
def test_unusable_records_name_line_guid_and_expectation(task_name, bad, message):
    task = get_task(task_name)
    gold = load_gold(task, DEMO_BENCHMARK)
    good_run = next(p for p in demo_runs(task_name) if p.suffix == ".jsonl")
    records = [json.loads(line) for line in good_run.read_text(encoding="utf-8").splitlines()]
    broken = dict(records[1], **bad)
    if task_name == "wos":
        broken["turn"] = records[1]["turn"]
    records[1] = broken
    result = evaluate_bytes(task, gold, jsonl(records), "p.jsonl")
    problem = result.problems[0]
    assert problem.line == 2 and problem.guid is not None and message in problem.message
    assert result.coverage.n_invalid == 1 and result.coverage.n_scored == len(records) - 1


def test_wos_dict_and_mrc_squad_style_predictions_are_read():
    for task_name in ("wos", "mrc"):
        task = get_task(task_name)
        gold = load_gold(task, DEMO_BENCHMARK)
        mapping_run = next(p for p in demo_runs(task_name) if p.suffix == ".json")
        result = evaluate_bytes(task, gold, mapping_run.read_bytes(), mapping_run.name)
        assert result.coverage.n_scored == len(gold.rows) and not result.problems


def test_no_readable_record_is_a_one_line_error(ynat_gold):
    with pytest.raises(InputError, match="no record could be read"):
        evaluate_bytes(get_task("ynat"), ynat_gold, b"not json at all\n{oops", "p.jsonl")
