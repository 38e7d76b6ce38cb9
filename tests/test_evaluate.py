"""klue_viz.scoring.evaluate's own contracts: the CLI's JSON record of a run, matching defaults, gold files as JSON or
JSON lines, the hub's gold and the official-layout search. Written to kill the mutants that survived the tests of matching and
gold reading (docs/mutation.md); expected values are the inputs planted here."""

from __future__ import annotations

import json
from pathlib import Path

import datasets
import pytest

from klue_viz.core.problems import InputError
from klue_viz.reading.demo import DEMO_BENCHMARK, demo_runs
from klue_viz.reading.records import read_records
from klue_viz.scoring.evaluate import (
    evaluate_bytes,
    gold_from_bytes,
    load_gold,
    load_hf,
    match_records,
    official_file,
)
from klue_viz.tasks import get_task
from tests.conftest import jsonl

# ---- the JSON record of a run (the CLI's --out) ----------------------------------------------------


def test_a_run_as_json_holds_file_metrics_reasons_coverage_problems_and_notes_and_ci95_only_when_asked():
    nli = get_task("nli")
    gold = load_gold(nli, DEMO_BENCHMARK)
    first, second = gold.rows[0]["guid"], gold.rows[1]["guid"]
    lines = [{"guid": first, "label": "neutral"}, {"guid": first, "label": "neutral"}, {"guid": second, "label": "neutral"},
             {"guid": "not-in-gold", "label": "neutral"}]
    result = evaluate_bytes(nli, gold, jsonl(lines), "my-run.jsonl")
    record = json.loads(json.dumps(result.to_dict()))
    assert set(record) == {"run", "file", "metrics", "undefined", "coverage", "problems", "notes"}
    assert record["run"] == "my-run" and record["file"] == "my-run.jsonl"
    assert set(record["metrics"]) == {"accuracy"} and record["undefined"] == {}
    assert record["coverage"] == {"n_gold": len(gold.rows), "n_scored": 2, "n_missing": len(gold.rows) - 2, "n_extra": 1, "n_invalid": 0,
                                  "unreadable_answers": 0}  # a prediction file, not a harness log; the duplicate is not unreadable
    (problem,) = record["problems"]
    assert problem["line"] == 2 and problem["guid"] == first and "duplicate guid" in problem["message"]
    assert record["notes"] == ["1 guid(s) not in the gold were ignored: not-in-gold",
                               "1 duplicate line(s) of a guid given before were left out (the first line of each guid is used)"]
    result.intervals = {"accuracy": (40.0, 60.0)}
    assert result.to_dict()["ci95"] == {"accuracy": (40.0, 60.0)}


def test_an_undefined_metric_is_in_the_record_with_its_reason():
    sts = get_task("sts")
    gold = load_gold(sts, DEMO_BENCHMARK)
    result = evaluate_bytes(sts, gold, jsonl({"guid": r["guid"], "score": 3.0} for r in gold.rows), "constant.jsonl")
    record = result.to_dict()
    assert record["metrics"]["pearsonr"] is None and record["undefined"]["pearsonr"]


def test_a_run_keeps_the_name_it_is_given_and_its_frames_the_gold_columns_first():
    nli = get_task("nli")
    gold = load_gold(nli, DEMO_BENCHMARK)
    result = evaluate_bytes(nli, gold, jsonl([{"guid": gold.rows[3]["guid"], "label": "neutral"}]), "p.jsonl", run="named")
    assert result.run == "named" and result.file == "p.jsonl"
    examples = result.frames.examples
    assert list(examples.columns[:len(gold.frame.columns)]) == list(gold.frame.columns) and "index" not in examples.columns
    assert examples["guid"].tolist() == [gold.rows[3]["guid"]]


def test_matching_is_not_strict_unless_asked():
    nli = get_task("nli")
    gold = load_gold(nli, DEMO_BENCHMARK)
    matched = match_records(nli, gold, read_records(jsonl([{"guid": gold.rows[0]["guid"], "label": "neutral"}]), "p.jsonl", nli.normalise_record))
    assert matched.order == [0] and matched.filled == set()
    assert (matched.coverage.n_scored, matched.coverage.n_missing) == (1, len(gold.rows) - 1)


def test_a_file_without_records_or_problems_is_refused_in_exactly_one_line():
    gold = load_gold(get_task("nli"), DEMO_BENCHMARK)
    with pytest.raises(InputError) as info:
        evaluate_bytes(get_task("nli"), gold, b"{}", "empty-object.json")
    assert str(info.value) == "empty-object.json: no record could be read"


def test_a_file_of_unreadable_lines_is_refused_naming_its_first_problem():
    gold = load_gold(get_task("nli"), DEMO_BENCHMARK)
    with pytest.raises(InputError) as info:
        evaluate_bytes(get_task("nli"), gold, b"not json\nnot json either\n", "bad.jsonl")
    message = str(info.value)
    assert message.startswith("bad.jsonl: no record could be read (bad.jsonl, line 1: ") and "line 2" not in message


def test_records_without_a_guid_and_guids_given_twice_are_listed_with_file_line_and_why():
    nli = get_task("nli")
    gold = load_gold(nli, DEMO_BENCHMARK)
    first, second = gold.rows[0]["guid"], gold.rows[1]["guid"]
    lines = [{"guid": first, "label": "neutral"}, {"label": "neutral"}, {"guid": first, "label": "neutral"},
             {"guid": second, "label": "no such label"}, {"guid": second, "label": "neutral"}]
    result = evaluate_bytes(nli, gold, jsonl(lines), "p.jsonl")
    problems = [(p.line, p.guid, p.file, p.message) for p in result.problems]
    assert problems[0] == (2, None, "p.jsonl", "missing 'guid' (or 'id')")
    assert problems[1] == (3, first, "p.jsonl", "duplicate guid, already given on line 1; this line is left out")
    assert problems[2][:3] == (4, second, "p.jsonl")  # the unusable label, in the task's own words
    assert problems[3] == (5, second, "p.jsonl", "duplicate guid, already given on line 4, which could not be used either; this line is left out")
    assert len(problems) == 4 and result.coverage.n_invalid == 2 and result.coverage.n_scored == 1  # no guid, the unusable label
    assert any(note.startswith("2 duplicate line(s)") for note in result.notes)


def test_guid_numbers_match_positional_gold_and_a_record_without_a_guid_is_only_listed():
    def loader(path, name, split):
        return [{"sentence": "철수", "tokens": ["철", "수"], "ner_tags": [6, 7]}, {"sentence": "영희", "tokens": ["영", "희"], "ner_tags": [6, 7]}]

    ner = get_task("ner")
    gold = load_hf(ner, loader=loader)  # guids made from positions: klue-ner-v1_dev_00000, ..._00001
    lines = [{"guid": "klue-ner-v1_dev_00001-nsmc", "tags": ["B-PS", "I-PS"]}, {"tags": ["O", "O"]}]
    result = evaluate_bytes(ner, gold, jsonl(lines), "p.jsonl")
    assert (result.coverage.n_scored, result.coverage.n_invalid) == (1, 1)
    assert [(p.line, p.message) for p in result.problems] == [(2, "missing 'guid' (or 'id')")]


def test_guids_not_in_the_gold_are_named_five_at_most_and_a_file_of_them_only_is_refused_with_an_example():
    nli = get_task("nli")
    gold = load_gold(nli, DEMO_BENCHMARK)
    right = {"guid": gold.rows[0]["guid"], "label": "neutral"}
    for count, shown in [(5, "x0, x1, x2, x3, x4"), (6, "x0, x1, x2, x3, x4, ...")]:
        result = evaluate_bytes(nli, gold, jsonl([right] + [{"guid": f"x{k}", "label": "neutral"} for k in range(count)]), "p.jsonl")
        assert result.notes == [f"{count} guid(s) not in the gold were ignored: {shown}"]
    with pytest.raises(InputError) as info:
        evaluate_bytes(nli, gold, jsonl([{"guid": "x0", "label": "neutral"}, {"guid": "x1", "label": "neutral"}]), "p.jsonl")
    assert str(info.value) == "p.jsonl: no prediction could be scored: none of its 2 guids is in the gold (e.g. x0)"


def test_a_file_of_another_task_is_named_in_capitals_and_unusable_records_of_the_right_task_are_not():
    nli = get_task("nli")
    gold = load_gold(nli, DEMO_BENCHMARK)
    ynat_run = next(demo_runs("ynat"))
    with pytest.raises(InputError) as info:
        evaluate_bytes(nli, gold, ynat_run.read_bytes(), "p.jsonl")
    assert str(info.value) == "p.jsonl: this looks like a YNAT file, not NLI (no guid matches the NLI gold)"
    with pytest.raises(InputError) as info:
        evaluate_bytes(nli, gold, jsonl([{"guid": gold.rows[0]["guid"], "label": "no such label"}]), "p.jsonl")
    assert str(info.value).startswith(f"p.jsonl: no prediction could be scored: p.jsonl, line 1, guid {gold.rows[0]['guid']}: ")


# ---- gold files: one JSON document or JSON lines -------------------------------------------------------

HF_NLI = [{"guid": f"klue-nli-v1_dev_0000{k}", "source": "airbnb", "premise": "전제", "hypothesis": "가설", "label": k} for k in range(3)]


def lines(records) -> bytes:
    return "\n".join(json.dumps(r, ensure_ascii=False) for r in records).encode("utf-8")


def test_json_lines_gold_is_read_line_by_line_whatever_its_file_is_named():
    nli = get_task("nli")
    for name in ("export.jsonl", "export.json"):
        assert [r["gold"] for r in gold_from_bytes(nli, lines(HF_NLI), name).rows] == ["entailment", "neutral", "contradiction"]
    # One record on one line is still JSON lines when the name says so (not an official JSON document).
    assert [r["gold"] for r in gold_from_bytes(nli, lines(HF_NLI[:1]), "one.jsonl").rows] == ["entailment"]


def test_an_official_json_gold_list_is_read_as_one_document():
    official = [{"guid": f"klue-nli-v1_dev_0000{k}", "source": "airbnb", "premise": "전제", "hypothesis": "가설", "gold_label": label}
                for k, label in enumerate(["neutral", "entailment"])]
    gold = gold_from_bytes(get_task("nli"), json.dumps(official, ensure_ascii=False, indent=1).encode("utf-8"), "klue-nli-v1.1_dev.json")
    assert [(r["guid"], r["gold"]) for r in gold.rows] == [("klue-nli-v1_dev_00000", "neutral"), ("klue-nli-v1_dev_00001", "entailment")]
    assert gold.problems == []


def test_a_broken_json_gold_list_is_an_error_naming_the_file():
    with pytest.raises(InputError) as info:
        gold_from_bytes(get_task("nli"), b'[{"guid": "a",', "broken-gold.json")
    assert str(info.value).startswith("broken-gold.json")


# ---- gold from the hub ---------------------------------------------------------------------------------


def test_hub_gold_is_the_validation_split_named_dev_by_default():
    calls = []

    def loader(path, name, split):
        calls.append((path, name, split))
        return [{"sentence": "철수", "tokens": ["철", "수"], "ner_tags": [6, 7]}]  # B-PS I-PS in klue/klue's label order

    gold = load_hf(get_task("ner"), loader=loader)
    assert calls == [("klue/klue", "ner", "validation")]
    assert [r["guid"] for r in gold.rows] == ["klue-ner-v1_dev_00000"] and gold.positional
    assert gold.source == "hf:klue/klue/ner:validation"
    assert [r["guid"] for r in load_hf(get_task("ner"), "train", loader=loader).rows] == ["klue-ner-v1_train_00000"]


def test_hub_gold_lists_a_guid_given_twice():
    gold = load_hf(get_task("nli"), loader=lambda path, name, split: HF_NLI + HF_NLI[:1])
    assert len(gold.rows) == 3
    (problem,) = gold.problems
    assert problem.guid == HF_NLI[0]["guid"] and "duplicate gold guid" in problem.message


def test_an_unreachable_hub_names_the_first_line_of_its_error_and_the_offline_switch(monkeypatch):
    def failing(message, kind=ConnectionError):
        def loader(path, name, split):
            raise kind(message)
        return loader

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(InputError) as info:
        load_hf(get_task("ynat"), loader=failing("x" * 200 + "\nsecond line"))
    assert f"from the Hugging Face hub (HF_HUB_OFFLINE is set): {'x' * 160}. Use a local copy" in str(info.value)
    monkeypatch.delenv("HF_HUB_OFFLINE")
    with pytest.raises(InputError) as info:
        load_hf(get_task("ynat"), loader=failing("", TimeoutError))
    assert "from the Hugging Face hub: TimeoutError. Use a local copy instead: --gold path/to/ynat-v1.1_dev.json" in str(info.value)


# ---- the official layout --------------------------------------------------------------------------------


class UnreadableFirst(type(Path())):
    """A folder whose first glob (the task folder) fails as an unreadable sub-folder does."""

    def glob(self, pattern):
        if pattern.startswith("klue-sts-v1.1/"):
            raise PermissionError(13, "Permission denied", pattern)
        return super().glob(pattern)


def test_an_unreadable_task_folder_does_not_end_the_search(tmp_path):
    (tmp_path / "klue-sts-v1.1_dev.json").write_text("[]")
    assert official_file(get_task("sts"), UnreadableFirst(tmp_path)) == tmp_path / "klue-sts-v1.1_dev.json"


def test_without_a_loader_the_hub_is_read_through_datasets(monkeypatch):
    calls = []
    monkeypatch.setattr(datasets, "load_dataset", lambda path, name, split: calls.append((path, name, split)) or HF_NLI)
    assert len(load_hf(get_task("nli"), "validation").rows) == 3 and calls == [("klue/klue", "nli", "validation")]
