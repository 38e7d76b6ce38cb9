"""The interval switch is in the URL (issue 19, item 20): a link opens with the 95% intervals on."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from klue_viz.ui.home import PAGE_FILES
from tests.conftest import REPO


@pytest.mark.slow
def test_the_interval_switch_is_written_to_the_url_and_read_back():
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=120).run()
    at.switch_page(PAGE_FILES["nli"]).run()
    next(t for t in at.toggle if t.key == "show_ci").set_value(True).run()
    assert at.query_params.get("ci") in (["1"], "1")
    linked = AppTest.from_file(str(REPO / "app.py"), default_timeout=120)
    linked.run()
    linked.query_params["ci"] = "1"
    linked.switch_page(PAGE_FILES["nli"]).run()
    assert not linked.exception
    assert next(t for t in linked.toggle if t.key == "show_ci").value is True
