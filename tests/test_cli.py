"""`klue-viz evaluate` as a script or CI job would call it."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from klue_viz.cli.main import main
from klue_viz.reading.demo import DEMO_BENCHMARK, demo_runs


def test_one_run_prints_metrics_and_writes_json(tmp_path, capsys):
    run = next(demo_runs("ner"))
    out = tmp_path / "metrics.json"
    assert main(["evaluate", "--task", "ner", "--gold", str(DEMO_BENCHMARK), "--pred", str(run), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "entity_macro_f1" in printed and "coverage: 24/24 gold scored" in printed
    payload = json.loads(out.read_text(encoding="utf-8"))
    assert payload["task"] == "ner" and payload["runs"][0]["run"] == run.stem
    assert set(payload["runs"][0]["coverage"]) == {"n_gold", "n_scored", "n_missing", "n_extra", "n_invalid", "unreadable_answers"}
    assert payload["metrics"] == payload["runs"][0]["metrics"]


def test_bootstrap_intervals_are_printed_and_written(tmp_path, capsys):
    out = tmp_path / "nli.json"
    assert main(["evaluate", "--task", "nli", "--gold", str(DEMO_BENCHMARK), "--pred", str(next(demo_runs("nli"))), "--bootstrap", "200", "--out", str(out)]) == 0
    low, high = json.loads(out.read_text(encoding="utf-8"))["runs"][0]["ci95"]["accuracy"]
    assert low < 70.84 < high and f"[{low:.2f}, {high:.2f}]" in capsys.readouterr().out


def test_several_runs_and_a_guessed_task(tmp_path):
    runs = list(demo_runs("wos"))
    out = tmp_path / "wos.json"
    assert main(["evaluate", "--gold", str(DEMO_BENCHMARK), *sum((["--pred", str(r)] for r in runs), []), "--out", str(out)]) == 0
    payload = json.loads(out.read_text(encoding="utf-8"))
    assert payload["task"] == "wos" and len(payload["runs"]) == 2 and "metrics" not in payload


def test_failures_exit_non_zero_with_one_line(tmp_path, capsys):
    assert main(["evaluate", "--task", "nli", "--gold", str(tmp_path / "missing.json"), "--pred", "x.jsonl"]) == 2
    assert capsys.readouterr().err.strip().count("\n") == 0
    ner_run = next(demo_runs("ner"))
    assert main(["evaluate", "--task", "ynat", "--gold", str(DEMO_BENCHMARK), "--pred", str(ner_run)]) == 1
    assert "looks like a NER file" in capsys.readouterr().err


@pytest.mark.slow
def test_installed_console_script_runs(tmp_path):
    run = next(demo_runs("sts"))
    done = subprocess.run([sys.executable, "-m", "klue_viz.cli.main", "evaluate", "--task", "sts", "--gold", str(DEMO_BENCHMARK), "--pred", str(run)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "pearsonr" in done.stdout
