"""A task page whose viewed run was removed meanwhile by another tab or another server of the app (issue 29 item 14)
says so, instead of switching to another run without a word."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from klue_viz.reading.demo import demo_runs
from klue_viz.store.annotations import Store
from klue_viz.store.runs import RunStore
from klue_viz.ui.home import PAGE_FILES
from tests.conftest import REPO


@pytest.mark.slow
def test_the_viewed_run_removed_by_another_server_is_said_to_be_gone(tmp_path, monkeypatch):
    database = str(tmp_path / "runs.sqlite3")
    monkeypatch.setenv("KLUE_VIZ_DB", database)
    runs = RunStore(Store(database))
    data = sorted(demo_runs("nli"))[0].read_bytes()
    runs.add("nli", "first.jsonl", data)
    runs.add("nli", "second.jsonl", data.replace(b'"neutral"', b'"entailment"', 1))
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=120).run()
    at.switch_page(PAGE_FILES["nli"]).run()
    at.selectbox(key="run").set_value("second").run()
    assert not at.exception and not at.warning
    other = RunStore(Store(database))  # another server of the app, on the same database
    gone = next(r for r in other.list("nli") if r.name == "second")
    other.remove("nli", "second", gone.version)
    at.run()
    assert not at.exception
    warnings = " ".join(w.value for w in at.warning).replace("\\", "")
    assert "The run you were viewing, second, is no longer stored" in warnings
    assert "second" not in at.selectbox(key="run").options
