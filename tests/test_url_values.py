"""Bad URL values fall back with a warning (issue 19, item 15): page=², a 5,000-digit page or turn."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from klue_viz.ui.home import PAGE_FILES
from tests.conftest import REPO
from tests.test_app import plain


@pytest.mark.parametrize("query", [{"page": "²"}, {"page": "9" * 5000}, {"guid": "wos-v1_dev_00001-demo", "turn": "²"},
                                   {"guid": "wos-v1_dev_00001-demo", "turn": "7" * 5000}])
@pytest.mark.slow
def test_a_bad_page_or_turn_falls_back_with_a_warning(query):
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=120)
    at.run()
    for key, value in query.items():
        at.query_params[key] = value
    at.switch_page(PAGE_FILES["wos"]).run()
    assert not at.exception
    assert not any("Something went wrong" in e.value for e in at.error)
    name = "page" if "page" in query else "turn"
    assert any(f"{name}=" in plain(w.value) and "not a" in plain(w.value) for w in at.warning), [w.value for w in at.warning]
