"""Uploaded gold is kept on the server, content-addressed (issue 19, item 5): a reload, a new tab and a link find it."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from klue_viz.reading.demo import DEMO_BENCHMARK
from klue_viz.scoring.evaluate import official_file
from klue_viz.store.annotations import Store
from klue_viz.store.golds import GoldStore, gold_digest
from klue_viz.tasks import get_task
from klue_viz.ui.home import PAGE_FILES
from tests.conftest import REPO
from tests.test_app import plain


def nli_gold() -> tuple[str, bytes]:
    path = official_file(get_task("nli"), DEMO_BENCHMARK)
    return path.name, path.read_bytes()


def test_the_same_gold_bytes_are_stored_once_under_their_sha256(tmp_path):
    golds = GoldStore(Store(str(tmp_path / "g.sqlite3")))
    name, data = nli_gold()
    first = golds.add("nli", name, data)
    again = golds.add("nli", "renamed.json", data)
    assert first.sha256 == again.sha256 == gold_digest(data) and len(first.sha256) == 64
    assert golds.get(first.sha256).data == data and golds.get(first.sha256).file_name == name
    assert golds.get("0" * 64) is None


def linked_page(query: dict[str, str]) -> AppTest:
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=120)
    for key, value in query.items():
        at.query_params[key] = value
    at.run()
    at.switch_page(PAGE_FILES["nli"]).run()
    assert not at.exception
    return at


@pytest.mark.slow
def test_a_source_upload_link_opens_the_stored_gold_in_a_new_session(monkeypatch, tmp_path):
    monkeypatch.setenv("KLUE_VIZ_DB", str(tmp_path / "link.sqlite3"))
    name, data = nli_gold()
    stored = GoldStore(Store(str(tmp_path / "link.sqlite3"))).add("nli", "uploaded-nli-dev.json", data)
    at = linked_page({"source": "upload", "gold": f"nli:{stored.sha256}"})
    captions = [plain(c.value) for c in at.caption]
    assert any("Gold: uploaded uploaded-nli-dev.json" in c for c in captions), captions
    assert not any("this server does not have" in plain(w.value) for w in at.warning)
    assert at.query_params.get("gold") in ([f"nli:{stored.sha256}"], f"nli:{stored.sha256}")


@pytest.mark.slow
def test_a_link_naming_gold_this_server_lacks_says_so(monkeypatch, tmp_path):
    monkeypatch.setenv("KLUE_VIZ_DB", str(tmp_path / "lacks.sqlite3"))
    at = linked_page({"source": "upload", "gold": "nli:" + "ab" * 32})
    warnings = [plain(w.value) for w in at.warning]
    assert any("this server does not have" in w and "NLI" in w for w in warnings), warnings
