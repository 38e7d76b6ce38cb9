"""The task page's report: the same HTML file `klue-viz report` writes, built on the page, then downloaded.

It is built in the page run (a button, then a download button) rather than in a deferred download:
a deferred build that fails only reaches the server log, and the user waits for a file that never
comes. Built here, a failure is a message on the page saying why.
"""

from __future__ import annotations

import logging
import re

import streamlit as st

from klue_viz.drawing.markup import md
from klue_viz.outputs.report import DEFAULT_ERRORS, build_report
from klue_viz.scoring.evaluate import RunResult
from klue_viz.tasks.base import Task
from klue_viz.ui.annotate import store
from klue_viz.ui.state import gold_for

REPORT_RESAMPLES = 200
BUILT = "report_built"
log = logging.getLogger("klue_viz")


def report_button(task: Task, results: list[RunResult]) -> None:
    """Offer the report of the inspected run (and the compared one): built when asked, then one click to download."""
    left, right = st.columns([1, 3])
    count = int(left.number_input("Errors drawn in the report", 1, 1000, DEFAULT_ERRORS, key="report_errors"))
    choice = gold_for(task)
    gold_note, gold_rows = choice.note, choice.gold.rows
    shown = " vs ".join(r.run for r in results)
    signature = (task.facts.name, tuple((r.run, r.key) for r in results), gold_note, count)
    if right.button(f"Build a report of {md(shown)} (one HTML file that opens offline)", key="report_build"):
        st.session_state.pop(BUILT, None)
        with st.spinner("Building the report… (bootstrap intervals, weak slices, the errors drawn)"):
            try:
                db = store()
                remarks = db.find(task=task.facts.name) if db else []
                st.session_state[BUILT] = (signature, build_report(task, results, gold_note, remarks, errors=count, samples=REPORT_RESAMPLES,
                                                                   gold_rows=gold_rows).encode("utf-8"))
            except Exception as err:  # noqa: BLE001 - the page says why instead of a download that never comes
                log.exception("building the %s report of %s failed", task.facts.name, shown)
                right.error(f"The report could not be built ({md(type(err).__name__)}: {md(first_line(err))}). "
                            "The details are in the server log; the rest of the page still works.")
    built = st.session_state.get(BUILT)
    if built is not None and built[0] == signature:
        names = re.sub(r"[^\w.-]+", "_", "-vs-".join(r.run for r in results))[:120]
        right.download_button(f"Download the report of {md(shown)}", built[1], file_name=f"{task.facts.name}-{names}-report.html",
                              mime="text/html", key="report_download", on_click="ignore")


def first_line(err: BaseException) -> str:
    """An exception's first line, short: enough to say why, without a database's connection details below it."""
    text = str(err).strip().splitlines()[0] if str(err).strip() else ""
    return text[:200]
