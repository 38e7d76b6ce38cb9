"""Error tags as slice conditions: one tag on two NER runs (issue 19, items 1 and 9).

A tag is a has-tag / has-not condition; a slice that covers no unit never ranks, and the two-run
report and `klue-viz report` are built whatever the tags are.
"""

from __future__ import annotations

import pytest

from klue_viz.cli.main import main
from klue_viz.discovery.slices import paired_slices, units, weak_slices
from klue_viz.outputs import report as report_module
from klue_viz.outputs.report import found_section
from klue_viz.reading.demo import DEMO_BENCHMARK, demo_runs
from klue_viz.scoring.evaluate import evaluate_file, load_gold
from klue_viz.store.annotations import Annotation, Store
from klue_viz.tasks import get_task


@pytest.fixture(scope="module")
def ner_runs():
    task = get_task("ner")
    gold = load_gold(task, DEMO_BENCHMARK)
    first, second = (evaluate_file(task, gold, path) for path in demo_runs("ner"))
    return task, gold, first, second


def test_one_tag_on_two_ner_runs_builds_the_reports_found_section(ner_runs):
    task, gold, first, second = ner_runs
    tagged = gold.rows[0]["guid"]
    html = found_section(task, [first, second], [Annotation("ner", tagged, first.run, "지민", tags=["missed"])])
    assert f"Where one run is worse: {first.run} vs {second.run}" in html or "Weak slices" in html
    assert "= nan" not in html


def test_no_slice_of_one_or_two_runs_is_empty_and_a_tag_has_a_yes_and_a_no(ner_runs):
    task, gold, first, second = ner_runs
    tags = {gold.rows[0]["guid"]: {"missed"}}
    found = weak_slices(task, first.frames, tags=tags, top=10) + paired_slices(task, first, second, tags=tags, top=10)
    assert found and all(item.size > 0 for item in found)
    for item in found:
        assert all(value != "nan" for value in item.conditions.values())
        if "tag: missed" in item.conditions:
            assert item.conditions["tag: missed"] in ("yes", "no")


def test_the_untagged_side_of_a_tag_is_a_slice(ner_runs):
    """With every error of one sentence tagged, 'not tagged' is the rest of the run: its size is counted by hand."""
    task, gold, first, _ = ner_runs
    tagged = gold.rows[0]["guid"]
    found = units(task, first.frames, {tagged: {"missed"}})
    column = found.features["tag: missed"].tolist()
    in_sentence = sum(1 for g in found.frame["guid"] if g == tagged)
    assert column.count("yes") == in_sentence and column.count("no") == len(column) - in_sentence


@pytest.mark.slow
def test_cli_report_with_a_stored_tag_on_two_ner_runs_writes_the_file(tmp_path, capsys):
    task, gold_rows = get_task("ner"), load_gold(get_task("ner"), DEMO_BENCHMARK).rows
    first, second = demo_runs("ner")
    Store().save(Annotation("ner", gold_rows[0]["guid"], first.stem, "지민", tags=["missed"]))
    out = tmp_path / "report.html"
    assert main(["report", "--task", task.facts.name, "--gold", str(DEMO_BENCHMARK), "--pred", str(first), "--pred", str(second),
                 "--out", str(out), "--bootstrap", "20", "--errors", "2"]) == 0
    assert out.exists() and "Traceback" not in capsys.readouterr().err


def test_cli_report_that_cannot_be_built_says_why_in_one_line(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(report_module, "build_report", lambda *a, **k: 100.0 * 1 / 0)
    first, second = demo_runs("ner")
    out = tmp_path / "report.html"
    assert main(["report", "--task", "ner", "--gold", str(DEMO_BENCHMARK), "--pred", str(first), "--pred", str(second),
                 "--out", str(out), "--bootstrap", "20"]) == 1
    err = capsys.readouterr().err
    assert err.strip() == "klue-viz: the report could not be built (ZeroDivisionError: float division by zero); nothing was written"
    assert not out.exists()
