"""A lone surrogate escape (`\\ud800` in JSON: half of a UTF-16 pair, no character) is read as U+FFFD and reported,
instead of crashing every step that writes the text as UTF-8 (pandas, pyarrow, the report, the browser)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from klue_viz.cli.main import main
from klue_viz.reading.demo import DEMO_BENCHMARK, demo_runs
from klue_viz.reading.records import load_json, read_records
from klue_viz.scoring.evaluate import evaluate_bytes, load_gold
from klue_viz.tasks import TASKS

NOTE = "lone surrogate escape(s) (such as \\ud800: half of a UTF-16 pair, not a character) read as U+FFFD"


def test_a_json_lines_record_keeps_its_other_fields_and_the_file_says_how_many_were_replaced() -> None:
    data = b'{"guid": "g1", "text": "\\ud800ab\\udc00"}\n{"guid": "g2", "text": "ok \\ud83d\\ude00"}\n'  # two lone, one valid pair
    read = read_records(data, "preds.jsonl")
    assert read.records == [(1, {"guid": "g1", "text": "\ufffdab\ufffd"}), (2, {"guid": "g2", "text": "ok \U0001f600"})]
    assert [p.message for p in read.problems] == [f"2 {NOTE} (\ufffd)"] and read.problems[0].file == "preds.jsonl"
    assert read.unreadable == 0


def test_a_valid_pair_or_a_literal_backslash_is_left_alone_and_not_reported() -> None:
    data = b'[{"guid": "g1", "text": "\\ud83d\\ude00"}, {"guid": "g2", "text": "\\\\ud800"}]'  # an emoji; the six characters \ud800
    read = read_records(data, "preds.json")
    assert [r for _, r in read.records] == [{"guid": "g1", "text": "\U0001f600"}, {"guid": "g2", "text": "\\ud800"}]
    assert read.problems == []


def test_keys_nested_values_and_a_guid_mapping_are_scrubbed() -> None:
    data = b'{"g\\ud800": {"label": ["a\\udfff"]}, "g2": {"label": ["b"]}}'
    read = read_records(data, "preds.json")
    assert [r for _, r in read.records] == [{"label": ["a\ufffd"], "guid": "g\ufffd"}, {"label": ["b"], "guid": "g2"}]
    assert read.problems[0].message.startswith("2 lone surrogate")
    assert load_json('{"k\\ud800": ["\\udc00"]}', "gold.json") == {"k\ufffd": ["\ufffd"]}


def test_a_gold_with_a_lone_surrogate_is_scored_sliced_and_reported(tmp_path, capsys) -> None:
    gold_root = tmp_path / "gold"
    shutil.copytree(DEMO_BENCHMARK / "klue-nli-v1.1", gold_root / "klue-nli-v1.1")
    path = gold_root / "klue-nli-v1.1" / "klue-nli-v1.1_dev.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    data[0]["hypothesis"] += "\ud800"
    path.write_text(json.dumps(data, ensure_ascii=True), encoding="utf-8")  # written as the escape \ud800
    run = str(next(p for p in demo_runs("nli") if p.name == "roberta-base.jsonl"))
    for command in ("slices", "suspects"):
        assert main([command, "--task", "nli", "--gold", str(gold_root), "--pred", run]) == 0, command
    out = tmp_path / "report.html"
    assert main(["report", "--task", "nli", "--gold", str(gold_root), "--pred", run, "--out", str(out)]) == 0
    assert "roberta-base" in out.read_text(encoding="utf-8")


def test_a_harness_log_with_a_lone_surrogate_in_a_prompt_is_read_and_scored() -> None:
    """A prompt of an Every Eval Ever log (tests/data/harness) given a `\\ud800` escape: the log is re-encoded as JSON
    lines inside klue_viz.reading.harness, where such a string has no UTF-8 form."""
    fixture = Path(__file__).parent / "data" / "harness" / "eee_nli_mc.jsonl"
    lines = fixture.read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0])
    first["input"]["raw"] += "\ud800"
    data = ("\n".join([json.dumps(first), *lines[1:]]) + "\n").encode("utf-8")  # ensure_ascii: the escape \ud800
    gold = load_gold(TASKS["nli"], DEMO_BENCHMARK)
    clean = evaluate_bytes(TASKS["nli"], gold, fixture.read_bytes(), fixture.name)
    result = evaluate_bytes(TASKS["nli"], gold, data, fixture.name)
    assert result.scores.values == clean.scores.values and result.coverage.n_scored == clean.coverage.n_scored == len(lines)
