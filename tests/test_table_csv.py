"""The table toolbar's "Download as CSV" writes what a table holds (issue 29 item 12): every table the app shows goes
through klue_viz.ui.tables.show_table, whose formula-like text cells carry a leading `'` as every CSV klue-viz writes."""

from __future__ import annotations

import ast
import io
import zipfile

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from klue_viz.reading.demo import demo_runs
from klue_viz.ui.tables import neutralised
from tests.conftest import REPO

FORMULAS = ["=HYPERLINK(\"http://x.example\",\"click\")", "+cmd|' /C calc'!A0", "-2+3+cmd|' /C calc'!A0", "@SUM(1,1)"]


def test_formula_cells_and_names_get_a_leading_quote_and_the_rest_is_kept():
    frame = pd.DataFrame({"run": FORMULAS + ["plain", "-0.5"], "score": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0],
                          "=cmd|'/C calc'!A0": ["a", "b", "c", "d", "e", "f"]})
    shown = neutralised(frame)
    assert list(shown["run"]) == ["'" + f for f in FORMULAS] + ["plain", "-0.5"]  # by hand: OWASP's leading quote; a number stays
    assert list(shown["score"]) == [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    assert list(shown.columns) == ["run", "score", "'=cmd|'/C calc'!A0"]
    assert list(frame["run"])[0] == FORMULAS[0], "the caller's frame is not changed"


def test_a_table_without_formula_cells_is_shown_as_it_is():
    frame = pd.DataFrame({"guid": ["klue-nli-v1_dev_00000"], "accuracy": [93.5]})
    assert neutralised(frame) is frame


def test_every_table_of_the_app_goes_through_show_table():
    """No `<anything>.dataframe(...)` call in the app's code but the one in klue_viz/ui/tables.py."""
    found = []
    for path in [*sorted((REPO / "klue_viz").rglob("*.py")), *sorted((REPO / "pages").glob("*.py")), REPO / "app.py", REPO / "Home.py"]:
        if path == REPO / "klue_viz" / "ui" / "tables.py" or not path.exists():
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("dataframe", "data_editor"):
                found.append(f"{path.relative_to(REPO)}:{node.lineno}")
    assert found == []


@pytest.mark.slow
def test_a_model_named_like_a_formula_is_neutralised_in_the_home_table(tmp_path, monkeypatch):
    monkeypatch.setenv("KLUE_VIZ_DB", str(tmp_path / "runs.sqlite3"))
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("=HYPERLINK(x)/ynat.jsonl", sorted(demo_runs("ynat"))[0].read_bytes())
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=120).run()
    at.file_uploader(key="home_upload").set_value([("model.zip", buffer.getvalue(), "application/zip")]).run()
    assert not at.exception and not at.error
    assert at.dataframe[0].value["model"].tolist() == ["'=HYPERLINK(x)"]
