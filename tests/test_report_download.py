"""The task page's report (AppTest): built on the page, then downloaded; a build that fails says why on the page."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

import klue_viz.ui.report_download as report_download
from klue_viz.ui.home import PAGE_FILES
from tests.conftest import REPO
from tests.test_app import plain


def nli_page() -> AppTest:
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=120).run()
    at.switch_page(PAGE_FILES["nli"]).run()
    assert not at.exception
    return at


def build_button(at: AppTest):
    return next(b for b in at.button if b.label.startswith("Build a report of"))


@pytest.mark.slow
def test_a_report_that_fails_to_build_says_why_on_the_page(monkeypatch):
    def broken(*args, **kwargs):
        return 100.0 * 1 / 0

    monkeypatch.setattr(report_download, "build_report", broken)
    at = nli_page()
    build_button(at).click().run()
    assert not at.exception
    assert any("The report could not be built (ZeroDivisionError: float division by zero)" in plain(e.value) for e in at.error), [e.value for e in at.error]
    assert not [b for b in at.get("download_button") if b.proto.label.startswith("Download the report")]


@pytest.mark.slow
def test_a_built_report_is_offered_for_download():
    at = nli_page()
    build_button(at).click().run()
    assert not at.exception and not at.error
    assert [b for b in at.get("download_button") if b.proto.label.startswith("Download the report of")]
