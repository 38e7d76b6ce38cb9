"""The weak-slice table fits the page's column at 1400 px (issue 19, item 23): no metric column (NER's character F1)
lies beyond the right edge."""

from __future__ import annotations

import json

import pytest

from klue_viz.tasks import TASKS
from klue_viz.ui.home import PAGE_FILES
from tests.test_app import open_page

pytestmark = pytest.mark.slow  # whole pages in AppTest

#: The main column's width in a 1400 px Chromium window, measured on the home page's table (380 to 1320 px).
COLUMN = 940


def _widths(at) -> dict[str, int]:
    table = next(df for df in at.dataframe if "slice" in df.value.columns and "unit" in df.value.columns)
    config = json.loads(table.proto.columns)
    widths = {}
    for column in table.value.columns:
        width = config.get(column, {}).get("width")
        assert isinstance(width, int), f"column {column!r} has no width in pixels: {config.get(column)}"
        widths[column] = width
    return widths


def test_the_ner_weak_slice_table_fits_the_column_for_one_run_and_two():
    at = open_page(PAGE_FILES["ner"])
    at.segmented_control(key="discovery_view").set_value("Weak slices").run()
    assert not at.exception
    one = _widths(at)
    assert {m.key for m in TASKS["ner"].facts.metrics} <= set(one)  # character_macro_f1 among them
    assert sum(one.values()) <= COLUMN, one
    options = at.selectbox(key="discovery_against").options  # "A fails most", then "A and B differ most"
    other = options[1].split(" and ", 1)[1].removesuffix(" differ most")
    at.selectbox(key="discovery_against").set_value(other).run()
    assert not at.exception
    two = _widths(at)
    assert "worse run" in two and sum(two.values()) <= COLUMN, two
