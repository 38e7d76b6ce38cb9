"""The 'Find the errors' panel of a task page: calibration, weak slices and likely gold errors.

Thin: every number comes from `klue_viz.discovery`, cached per run (and pair of runs) by RunResult.key,
and only the view the user picked is computed.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from klue_viz.bootstrap import confidence_intervals
from klue_viz.discovery.calibration import (
    coverage_curve,
    coverage_figure,
    predicted_confidence,
    reliability_figure,
    run_calibration,
)
from klue_viz.discovery.slices import paired_slices, slice_guids, weak_slices
from klue_viz.evaluate import RunResult
from klue_viz.markup import esc, md
from klue_viz.tasks.base import Task
from klue_viz.ui.annotate import run_tags, task_remarks

CALIBRATION = "Calibration"
SLICES = "Weak slices"
UI_RESAMPLES = 200


def discovery_panel(task: Task, result: RunResult, results: dict[str, RunResult]) -> None:
    """What to look at first, for the inspected run (and the other runs of the page)."""
    st.subheader("Find the errors")
    views = [SLICES]
    if _calibration_of(result.key, task, result)[0] is not None:
        views.append(CALIBRATION)
    view = st.segmented_control("View", views, default=views[0], key="discovery_view", label_visibility="collapsed")
    if view == CALIBRATION:
        _calibration(task, result, results)
    elif view == SLICES:
        _weak_slices(task, result, results)


def _tags(task: Task, run: str) -> tuple[str, dict[str, set[str]]]:
    """The error tags of a run by example guid, and a key that changes when they do (for the caches)."""
    rows = run_tags(task, run, task_remarks(task))
    tags: dict[str, set[str]] = {}
    for guid, tag in zip(rows["guid"], rows["tag"]):
        tags.setdefault(str(guid), set()).add(str(tag))
    return str(sorted((g, sorted(t)) for g, t in tags.items())), tags


@st.cache_resource(max_entries=64, show_spinner="Searching slices…")
def _found(result_key: str, tags_key: str, _task: Task, _result: RunResult, _tags: dict) -> list[dict]:
    return weak_slices(_task, _result.frames, tags=_tags, top=10)


@st.cache_resource(max_entries=32, show_spinner="Searching where the runs differ…")
def _found_paired(first_key: str, second_key: str, tags_key: str, _task: Task, _first: RunResult, _second: RunResult, _tags: dict) -> list[dict]:
    return paired_slices(_task, _first, _second, tags=_tags, top=10)


@st.cache_resource(max_entries=128, show_spinner="Resampling the slice…")
def _slice_intervals(result_key: str, conditions: str, _task: Task, _result: RunResult, _guids: list[str]):
    return confidence_intervals(_task, _result.frames.subset(_guids), samples=UI_RESAMPLES)


def _condition_text(item: dict) -> str:
    return " & ".join(f"{item['labels'].get(k, k)} = {v}" for k, v in item["conditions"].items())


def _apply(guids: list[str]) -> None:
    """A found slice becomes the example filter (a guid restriction, as a chart selection is)."""
    st.session_state["f_guids"] = guids
    st.session_state["f_status"] = "all"
    st.session_state["page_no"] = 1


def _weak_slices(task: Task, result: RunResult, results: dict[str, RunResult]) -> None:
    tags_key, tags = _tags(task, result.run)
    others = [name for name in results if name != result.run]
    other = st.selectbox("Slices where", [None] + others, key="discovery_against",
                         format_func=lambda o: f"{result.run} fails most" if o is None else f"{result.run} and {o} differ most") if others else None
    if other is None:
        found = _found(result.key, tags_key, task, result, tags)
    else:
        found = _found_paired(result.key, results[other].key, tags_key, task, result, results[other], tags)
    if not found:
        st.caption("No slice of at least 1% of the units is worse than the whole run.")
        return
    metric_keys = [m.key for m in task.metrics]
    rows = []
    for item in found:
        row = {"slice": _condition_text(item), "size": item["size"], "unit": item["unit"], "errors": item["errors"], "error rate": item["error_rate"]}
        if "worse" in item:
            row.update({"worse run": item["worse"], "difference": item["difference"]})
        row.update({k: item["metrics"].get(k) for k in metric_keys})
        rows.append(row)
    st.caption(md("Conjunctions of up to 3 conditions over the slice features and your error tags, ranked by how much worse than "
                  "the whole run they are, weighted by size (SliceLine's score). Select a row for its 95% interval and its examples."))
    table = pd.DataFrame(rows)
    event = st.dataframe(table, hide_index=True, width="stretch", on_select="rerun", selection_mode="single-row", key="weak_slice_table",
                         column_config={c: st.column_config.NumberColumn(format="%.2f") for c in ["error rate", "difference", *metric_keys] if c in table})
    chosen = event.selection.rows if event is not None else []
    if not chosen:
        return
    item = found[chosen[0]]
    guids = slice_guids(task, result.frames, item["conditions"], tags)
    spans = _slice_intervals(result.key, repr(item["conditions"]), task, result, guids)
    st.caption(md(f"{_condition_text(item)}: {len(guids)} {task.unit}s; 95% interval ({UI_RESAMPLES} resamples) "
                  + ", ".join(f"{k} [{v[0]:.2f}, {v[1]:.2f}]" for k, v in spans.items() if v)))
    st.button(f"Show these {len(guids)} {task.unit}s below", key="apply_weak_slice", on_click=_apply, args=(guids,))


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
