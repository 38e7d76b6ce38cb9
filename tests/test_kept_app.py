"""The app on kept results (klue_viz/ui/state.py): a stored run removed while a page reads it is a message, not a crash."""

from __future__ import annotations

import os

import pytest
from streamlit.testing.v1 import AppTest

from klue_viz.reading.demo import demo_runs
from klue_viz.store.annotations import Store
from klue_viz.store.runs import RunConflict, RunStore
from klue_viz.ui.home import PAGE_FILES
from tests.conftest import REPO


@pytest.mark.slow
def test_a_run_removed_between_the_list_and_the_read_is_named_not_a_traceback(monkeypatch):
    store = Store(os.environ["KLUE_VIZ_DB"])
    path = next(iter(demo_runs("ner")))
    RunStore(store).add("ner", "vanished.jsonl", path.read_bytes().replace(b"\n", b"\n\n"))  # other bytes: a run of its own

    def gone(self, digest: str) -> bytes:  # another session removed it after this page listed it
        raise RunConflict("this run's file was removed meanwhile")
    real = RunStore.data
    monkeypatch.setattr(RunStore, "data", gone)
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=120).run()
    at.switch_page(PAGE_FILES["ner"]).run()
    assert not at.exception
    assert any("vanished" in e.value and "removed" in e.value for e in at.error)
    assert "bert-crf" in at.selectbox(key="run").options  # the other runs are shown
    monkeypatch.setattr(RunStore, "data", real)  # the file is back (the same bytes stored again): it is scored, not remembered as failed
    at.run()
    assert not at.exception and "vanished" in at.selectbox(key="run").options
