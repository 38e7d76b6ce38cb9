"""Your own columns on a task page (AppTest, on the demo): uploaded, kept on the server, offered as slices, filters and orders."""

from __future__ import annotations

from pathlib import Path

import pytest

from klue_viz.scoring.evaluate import load_gold, official_file
from klue_viz.tasks import get_task
from klue_viz.ui.home import PAGE_FILES
from tests.test_app import open_page, plain

DEMO = Path(__file__).resolve().parents[1] / "klue_viz" / "demo" / "klue_benchmark"


def demo_columns() -> tuple[bytes, list[str]]:
    task = get_task("nli")
    guids = [row["guid"] for row in load_gold(task, official_file(task, DEMO)).rows]
    text = "guid,tokens,domain\n" + "".join(f"{g},{k},{'even' if k % 2 else 'odd'}\n" for k, g in enumerate(guids)) + "not-a-guid,3,x\n"
    return text.encode(), guids


@pytest.mark.slow
def test_uploaded_columns_become_slices_filters_orders_and_stay_in_the_link():
    data, guids = demo_columns()
    at = open_page(PAGE_FILES["nli"])
    at.file_uploader(key="features_upload").set_value(("mine.csv", data, "text/csv")).run()
    assert not at.exception
    assert any("mine.csv: 24 examples" in plain(c.value) and "tokens: numeric, 4 bins" in plain(c.value) for c in at.caption)
    problems = [df.value for df in at.dataframe if "message" in df.value.columns and "not-a-guid" in set(df.value["guid"].astype(str))]
    assert problems and problems[0]["line"].tolist() == [len(guids) + 2]
    assert "domain (your column)" in at.selectbox(key="slice_by").options
    at.selectbox(key="slice_by").set_value("domain (your column)").run()
    table = next(df.value for df in at.dataframe if "value" in df.value.columns and "even" in set(df.value["value"]))
    assert dict(zip(table["value"], table["n"])) == {"even": len(guids) // 2, "odd": len(guids) - len(guids) // 2}
    assert "tokens (your column), high first" in at.selectbox(key="sort_by").options
    at.selectbox(key="f_slice").set_value("domain (your column)").run()
    at.multiselect(key="f_slice_values").set_value(["even"]).run()
    assert not at.exception
    digest = at.session_state["features_file"]
    assert at.query_params["features"] == digest and len(digest) == 12


@pytest.mark.slow
def test_a_link_naming_the_columns_opens_them_in_a_new_session():
    data, _ = demo_columns()
    at = open_page(PAGE_FILES["nli"])
    at.file_uploader(key="features_upload").set_value(("mine.csv", data, "text/csv")).run()
    digest = at.session_state["features_file"]
    fresh = open_page()
    fresh.switch_page(PAGE_FILES["nli"])
    fresh.query_params = {"features": digest}
    fresh.run()
    assert not fresh.exception
    assert "tokens (your column)" in fresh.selectbox(key="slice_by").options
