"""The annotator's name survives a reload (issue 19, item 6): it rides in the address bar as annotator=."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from klue_viz.ui.home import PAGE_FILES
from tests.conftest import REPO
from tests.test_annotations_app import open_as


@pytest.mark.slow
def test_a_name_set_once_is_in_the_url_and_a_reload_of_that_url_keeps_it():
    at = open_as("김지민", PAGE_FILES["nli"])
    at.run()
    assert at.query_params.get("annotator") in (["김지민"], "김지민")
    reloaded = AppTest.from_file(str(REPO / "app.py"), default_timeout=120)
    reloaded.query_params["annotator"] = "김지민"
    reloaded.run()
    assert not reloaded.exception and not reloaded.warning
    assert reloaded.sidebar.text_input(key="annotator_widget").value == "김지민"
    reloaded.run()
    assert reloaded.session_state["annotator_name"] == "김지민"

