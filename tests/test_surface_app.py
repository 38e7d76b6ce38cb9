"""Errors by surface form on a task page (AppTest, demo runs) and in the report: a row opens its examples."""

from __future__ import annotations

from pathlib import Path

import pytest

from klue_viz.drawing.markup import esc
from klue_viz.outputs.report import build_report
from klue_viz.scoring.evaluate import evaluate_file, load_gold, official_file
from klue_viz.tasks import get_task
from klue_viz.ui.home import PAGE_FILES
from tests.test_app import open_page, shown_count

REPO = Path(__file__).resolve().parents[1]
DEMO = REPO / "klue_viz" / "demo" / "klue_benchmark"


def ner_run(name: str):
    task = get_task("ner")
    return task, evaluate_file(task, load_gold(task, official_file(task, DEMO)), REPO / "klue_viz" / "demo" / "runs" / "ner" / f"{name}.jsonl")


@pytest.mark.slow
def test_a_selected_row_lists_its_examples():
    task, result = ner_run("bert-crf")
    ents = result.frames.details["entities"]
    missed = ents[(ents["side"] == "gold") & (ents["error_type"] == "missed")]
    at = open_page(PAGE_FILES["ner"])
    at.selectbox(key="run").set_value("bert-crf").run()
    table = next(df.value for df in at.dataframe if {"form", "error", "count"} <= set(df.value.columns))
    k = next(i for i, e in enumerate(table["error"]) if e == "missed")
    form = table["form"].iloc[k]
    at.session_state["surface_table"] = {"selection": {"rows": [k], "columns": [], "cells": []}}
    at.run()
    at.button(key="surface_show").click().run()
    assert not at.exception
    expected = set(missed.loc[missed["text"] == form, "guid"])
    assert set(at.session_state["f_guids"]) == expected and shown_count(at)[0] == len(expected)


@pytest.mark.slow
def test_the_side_by_side_table_counts_both_runs():
    at = open_page(PAGE_FILES["ner"])
    at.selectbox(key="run").set_value("bert-crf").run()
    at.selectbox(key="surface_against").set_value("char-bilstm").run()
    assert not at.exception
    table = next(df.value for df in at.dataframe if "count: char-bilstm" in df.value.columns)
    _, other = ner_run("char-bilstm")
    ents = other.frames.details["entities"]
    errors = int((~ents.loc[ents["side"] == "gold", "correct"]).sum() + (ents["error_type"] == "spurious").sum())
    assert table["count: char-bilstm"].sum() == errors


def test_the_report_has_the_surface_table():
    task, result = ner_run("bert-crf")
    html = build_report(task, [result], samples=10, errors=1)
    ents = result.frames.details["entities"]
    first = ents[(ents["side"] == "gold") & ~ents["correct"]].iloc[0]
    assert "<h2>Errors by surface form</h2>" in html and f"<td>{esc(first['text'])}</td>" in html
