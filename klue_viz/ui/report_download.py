"""The task page's "Download a report" button: the same HTML file `klue-viz report` writes."""

from __future__ import annotations

import re

import streamlit as st

from klue_viz.evaluate import RunResult
from klue_viz.markup import md
from klue_viz.report import DEFAULT_ERRORS, build_report
from klue_viz.tasks.base import Task
from klue_viz.ui.annotate import store
from klue_viz.ui.state import gold_for

REPORT_RESAMPLES = 200


def report_button(task: Task, results: list[RunResult]) -> None:
    """Offer the report of the inspected run (and the compared one), built only when the button is clicked."""
    left, right = st.columns([1, 3])
    count = int(left.number_input("Errors drawn in the report", 1, 1000, DEFAULT_ERRORS, key="report_errors"))

    gold_note, db = gold_for(task).note, store()  # read here: the file is built later, outside this page run

    def html() -> bytes:
        remarks = db.find(task=task.facts.name) if db else []
        return build_report(task, results, gold_note, remarks, errors=count, samples=REPORT_RESAMPLES).encode("utf-8")

    names = re.sub(r"[^\w.-]+", "_", "-vs-".join(r.run for r in results))[:120]
    right.download_button(f"Download a report of {md(' vs '.join(r.run for r in results))} (one HTML file that opens offline)", html,
                          file_name=f"{task.facts.name}-{names}-report.html", mime="text/html", key="report_download", on_click="ignore")
