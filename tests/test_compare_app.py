"""The "Compare runs" section of every task page through AppTest: ranking, matrix, a picked cell drawn, the sequence."""

from __future__ import annotations

import pytest

from klue_viz.reading.demo import demo_runs
from klue_viz.tasks import TASKS
from klue_viz.ui.compare import CELL, SEQUENCE_ORDER, is_sequence
from klue_viz.ui.home import PAGE_FILES
from tests.test_app import open_page


@pytest.mark.slow
@pytest.mark.parametrize("task_name", list(TASKS))
def test_each_task_page_compares_its_demo_runs_and_draws_a_picked_cell(task_name):
    at = open_page(PAGE_FILES[task_name])
    at.toggle(key="cmp_on").set_value(True).run()
    assert not at.exception
    ranking = next(df.value for df in at.dataframe if "tied with best" in df.value.columns)
    assert sorted(ranking["run"]) == sorted(p.stem for p in demo_runs(task_name))
    assert ranking["rank"].min() == 1
    assert any("Holm" in c.value for c in at.caption)
    at.session_state[CELL] = (0, 1)  # what a click on the first row's second cell stores
    at.toggle(key="cmp_along").set_value(True).run()
    assert not at.exception
    drawings = [m.value for m in at.markdown if "kv-compare-drawing" in m.value]
    assert drawings and "data-run=" in drawings[0]


def test_a_sequence_of_checkpoints_is_told_apart_from_a_set_of_models():
    assert is_sequence(["ckpt-500", "ckpt-1000", "ckpt-1500"])
    assert is_sequence(["ckpt-500", "ckpt-1000", "ckpt-1500", "bert-base", "roberta-large"])
    assert not is_sequence(["ckpt-500", "ckpt-1000", "bert-base", "roberta-large"])  # two steps beside two models
    assert not is_sequence(["bert-base", "roberta-large", "klue-bert-v1"])
    assert not is_sequence(["epoch-1", "epoch-2"])


@pytest.mark.slow
def test_the_matrix_of_a_sequence_opens_on_solved_late_or_forgotten(monkeypatch, tmp_path):
    """Issue 28, item 6: three checkpoints of one model open the examples x runs matrix on "solved late / forgotten"; the
    demo's models (not a sequence) open on difficulty."""
    monkeypatch.setenv("KLUE_VIZ_DB", str(tmp_path / "runs.sqlite3"))
    at = open_page(PAGE_FILES["nli"])
    at.toggle(key="cmp_on").set_value(True).run()
    assert at.selectbox(key="cmp_sort").value == "difficulty"
    lines = next(demo_runs("nli")).read_text(encoding="utf-8").splitlines()
    files = [(f"ckpt-{step}.jsonl", "\n".join(lines[:len(lines) - k]).encode(), "application/json") for k, step in enumerate((500, 1000, 1500))]
    at = open_page(PAGE_FILES["nli"])
    at.file_uploader(key="pred_upload").set_value(files).run()
    at.toggle(key="cmp_on").set_value(True).run()
    at.multiselect(key="cmp_runs").set_value(["ckpt-500", "ckpt-1000", "ckpt-1500"]).run()
    assert not at.exception
    assert at.selectbox(key="cmp_sort").value == SEQUENCE_ORDER
