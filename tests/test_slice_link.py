"""The applied weak slice is in the URL (issue 19, item 20): a link re-applies it and lists the same examples."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from klue_viz.ui.home import PAGE_FILES
from tests.conftest import REPO
from tests.test_app import shown_count

pytestmark = pytest.mark.slow  # whole pages in AppTest


def _params(at: AppTest) -> dict[str, list[str]]:
    """The page's URL parameters, each as a list of values."""
    out = {}
    for name in at.query_params:
        value = at.query_params[name]
        out[name] = [value] if isinstance(value, str) else list(value)
    return out


def _open(params: dict[str, list[str]]) -> AppTest:
    linked = AppTest.from_file(str(REPO / "app.py"), default_timeout=120)
    linked.run()
    for name, values in params.items():
        linked.query_params[name] = values
    linked.switch_page(PAGE_FILES["nli"]).run()
    assert not linked.exception
    return linked


def test_an_applied_slice_is_in_the_link_and_the_link_lists_the_same_examples():
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=120).run()
    at.switch_page(PAGE_FILES["nli"]).run()
    at.segmented_control(key="discovery_view").set_value("Weak slices").run()
    at.session_state["weak_slice_table"] = {"selection": {"rows": [0], "columns": [], "cells": []}}
    at.run()
    at.button(key="apply_weak_slice").click().run()
    assert not at.exception
    guids = list(at.session_state["f_guids"])
    shown = shown_count(at)
    params = _params(at)
    assert params.get("wslice"), params
    assert all("=" in item for item in params["wslice"])
    linked = _open(params)
    assert list(linked.session_state["f_guids"]) == guids
    assert shown_count(linked) == shown
    assert shown[0] < shown[1]


def test_a_link_naming_an_unknown_slice_feature_warns_and_lists_everything():
    linked = _open({"wslice": ["no_such_feature=x"]})
    assert any("wslice" in w.value and "ignored" in w.value for w in linked.warning)
    shown, total = shown_count(linked)
    assert shown == total
