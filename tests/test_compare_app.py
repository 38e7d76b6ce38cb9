"""The "Compare runs" section of every task page through AppTest: ranking, matrix, a picked cell drawn, the sequence."""

from __future__ import annotations

import pytest

from klue_viz.reading.demo import demo_runs
from klue_viz.tasks import TASKS
from klue_viz.ui.compare import CELL
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
