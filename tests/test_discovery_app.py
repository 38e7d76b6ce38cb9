"""The 'Find the errors' panel through Streamlit's AppTest, on the demo runs."""

from __future__ import annotations

from tests.test_app import open_page, plain
from klue_viz.ui.home import PAGE_FILES


def test_calibration_view_shows_ece_for_a_run_with_probabilities():
    at = open_page(PAGE_FILES["ynat"])
    assert not at.exception
    assert any("ECE" in m.value and "MCE" in m.value for m in at.markdown)
    assert any(list(df.value.columns)[:3] == ["from", "to", "n"] for df in at.dataframe)
