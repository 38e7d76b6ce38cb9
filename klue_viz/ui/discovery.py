"""The 'Find the errors' panel of a task page: calibration, weak slices and likely gold errors.

Thin: every number comes from `klue_viz.discovery`, cached per run (and pair of runs) by RunResult.key,
and only the view the user picked is computed.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from klue_viz.discovery.calibration import coverage_curve, coverage_figure, predicted_confidence, reliability_figure, run_calibration
from klue_viz.evaluate import RunResult
from klue_viz.markup import esc, md
from klue_viz.tasks.base import Task

CALIBRATION = "Calibration"


def discovery_panel(task: Task, result: RunResult, results: dict[str, RunResult]) -> None:
    """What to look at first, for the inspected run (and the other runs of the page)."""
    st.subheader("Find the errors")
    views = []
    if _calibration_of(result.key, task, result)[0] is not None:
        views.append(CALIBRATION)
    if not views:
        return
    view = st.segmented_control("View", views, default=views[0], key="discovery_view", label_visibility="collapsed")
    if view == CALIBRATION:
        _calibration(task, result, results)


@st.cache_resource(max_entries=64, show_spinner=False)
def _calibration_of(result_key: str, _task: Task, _result: RunResult):
    cal = run_calibration(_task, _result.frames.examples)
    curve = coverage_curve(*predicted_confidence(_result.frames.examples, _task.labels)) if cal else None
    return cal, curve


def _calibration(task: Task, result: RunResult, results: dict[str, RunResult]) -> None:
    cal, _ = _calibration_of(result.key, task, result)
    left, right = st.columns(2)
    with left:
        st.markdown(f"**Reliability of {esc(result.run)}** — ECE {cal.ece:.2f} · MCE {cal.mce:.2f} "
                    f"<span class='kv-kv'>(10 equal-width bins, 0..100; {cal.n:,} {esc(task.unit)}s with probabilities)</span>",
                    unsafe_allow_html=True)
        st.plotly_chart(reliability_figure(cal, result.run), key="reliability", config={"displayModeBar": False})
    curves = {}
    for name, other in results.items():
        found, curve = _calibration_of(other.key, task, other)
        if found is not None:
            curves[name] = curve
    with right:
        st.markdown("**Accuracy when the least confident are set aside**")
        st.plotly_chart(coverage_figure(curves), key="coverage", config={"displayModeBar": False})
    table = pd.DataFrame(cal.bins).rename(columns={"low": "from", "high": "to"})
    st.dataframe(table, hide_index=True, width="stretch",
                 column_config={c: st.column_config.NumberColumn(format="%.2f") for c in ("accuracy", "confidence")})
    st.caption(md("Confidence is also a slice (Metrics per slice, filters) and a sort key of the example list."))
