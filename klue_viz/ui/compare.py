"""The "Compare runs" section of a task page: the ranking, the example x run matrix, changes, the sequence, complementarity.

Everything is computed by klue_viz.compare.ranking (pure) once per set of runs and kept for every session of the server;
this module lays it out. A click on a matrix cell draws that example with the task's own drawing, for that run first
and then for the other runs compared.
"""

from __future__ import annotations

from functools import partial

import pandas as pd
import streamlit as st

from klue_viz.compare.ranking import (
    MATRIX_ORDERS,
    Ranking,
    RunTable,
    change,
    compared_columns,
    complementarity,
    consecutive_changes,
    matrix_frame,
    order_runs,
    rank_runs,
    run_table,
    sequence_metrics,
)
from klue_viz.drawing.compare_charts import matrix_figure, sequence_figure
from klue_viz.drawing.markup import esc, esc_attr, md
from klue_viz.scoring.evaluate import RunResult
from klue_viz.store.kept_results import column_frames
from klue_viz.tasks.base import Task
from klue_viz.ui.common import METRIC_FORMAT, guard
from klue_viz.ui.links import example_params, query_string, view_params
from klue_viz.ui.state import kept_results_or_none, run_store_or_none, scored_runs
from klue_viz.ui.tables import show_table

RESAMPLES = 500
#: Rows of the matrix drawn (the first ones in the chosen order); the table below it holds them all.
MATRIX_ROWS = 60
#: Examples drawn side by side per change list.
DRAWN = 8
#: From this many runs the share of runs wrong is offered as an item-difficulty estimate (docs/compare.md).
DIFFICULTY_RUNS = 5
CELL = "cmp_cell"


@st.cache_resource(max_entries=16, show_spinner="Comparing the runs…")
def _compared(keys: tuple[str, ...], _results: tuple[RunResult, ...]) -> RunTable:
    """The runs side by side, once per server for these runs in this order. A kept run whose frames are not read yet is
    read for the columns the comparison needs only (its drawings read the rest when a cell is clicked)."""
    results = list(_results)
    columns = compared_columns(results[0].task)
    if columns is None:
        return run_table(results)
    return run_table(results, frames=column_frames(kept_results_or_none(), results, columns, scored_runs()))


@st.cache_resource(max_entries=16, show_spinner="Ranking the runs…")
def _ranked(keys: tuple[str, ...], metric: str, _table: RunTable) -> Ranking:
    """The ranking of these runs on one metric, once per server."""
    return rank_runs(_table, samples=RESAMPLES, metric=metric)


@st.cache_resource(max_entries=16, show_spinner="Scoring every slice of every run…")
def _sequence(keys: tuple[str, ...], _task: Task, _results: tuple[RunResult, ...]) -> pd.DataFrame:
    return sequence_metrics(_task, list(_results))


def compare_section(task: Task, results: dict[str, RunResult]) -> None:
    """The section itself: off until asked for (it resamples every run), then drawn as one fragment."""
    st.subheader("Compare runs")
    if len(results) < 2:
        st.caption(f"Comparing runs needs at least two {task.facts.name.upper()} runs; upload another prediction file above.")
        return
    if st.toggle(f"Compare the {len(results)} runs example by example (ranking, matrix, what changed)", key="cmp_on"):
        _compare(task, results)


def _upload_times(task: Task) -> dict[str, str]:
    runs = run_store_or_none()
    return {run.name: run.created_at for run in runs.list(task.facts.name)} if runs else {}


@st.fragment
@guard
def _compare(task: Task, results: dict[str, RunResult]) -> None:
    order = st.radio("Order the runs by", ["model name and step", "upload time"], horizontal=True, key="cmp_order",
                     help="Numbers in names are read as numbers: ckpt-2000 comes before ckpt-10000.")
    names = order_runs(list(results), "time" if order == "upload time" else "name", _upload_times(task) if order == "upload time" else None)
    if "cmp_runs" in st.session_state:
        st.session_state["cmp_runs"] = [n for n in st.session_state["cmp_runs"] if n in names]
    else:
        st.session_state["cmp_runs"] = names
    chosen_set = set(st.multiselect("Runs compared", names, key="cmp_runs"))
    chosen = [n for n in names if n in chosen_set]
    if len(chosen) < 2:
        st.info("Choose at least two runs to compare.")
        return
    picked = tuple(results[n] for n in chosen)
    keys = tuple(r.key or r.run for r in picked)
    table = _compared(keys, picked)
    if not len(table.shared):
        st.warning("These runs have no scored example in common: nothing can be compared.")
        return
    _ranking(task, table, keys)
    _matrix(task, table)
    _changes(task, table)
    _along(task, keys, picked, chosen)
    _complementarity(task, table)


def _ranking(task: Task, table: RunTable, keys: tuple[str, ...]) -> None:
    st.markdown("**Ranking**")
    labels = {m.key: m.label for m in task.facts.metrics}
    if st.session_state.get("cmp_rank_by") not in labels:
        st.session_state["cmp_rank_by"] = task.facts.metrics[0].key
    chosen = st.selectbox("Rank by", list(labels), format_func=labels.__getitem__, key="cmp_rank_by", disabled=len(labels) == 1,
                          help="The best run, the difference to it, p and the ties are computed on this metric.")
    ranking = _ranked(keys, chosen, table)
    difference = f"difference to best ({labels[ranking.metric]})"
    rows = []
    for run in sorted(ranking.runs, key=lambda r: (r.rank, r.run)):
        row: dict = {"rank": run.rank, "run": run.run}
        for metric in task.facts.metrics:
            row[metric.label] = run.metrics[metric.key]
            row[f"{metric.label} 95% CI"] = _interval(run.ci95[metric.key])
        row[difference] = run.difference[ranking.metric]
        row["difference 95% CI (paired)"] = _interval(run.difference_ci95[ranking.metric])
        row["p"] = run.p_value
        row["tied with best"] = run.tied_with_best
        rows.append(row)
    numbers = {m.label: st.column_config.NumberColumn(format=METRIC_FORMAT) for m in task.facts.metrics}
    numbers[difference] = st.column_config.NumberColumn(format="%+.2f")
    numbers["p"] = st.column_config.NumberColumn(format="%.3f")
    show_table(st, pd.DataFrame(rows), hide_index=True, width="stretch", column_config=numbers)
    st.caption(md(ranking.correction))


def _interval(ci: tuple[float, float] | None) -> str:
    return f"[{ci[0]:.2f}, {ci[1]:.2f}]" if ci else "n/a"


def _pick_cell(key: str) -> None:
    """A click on a matrix cell: remember (row, column) to draw that example."""
    event = st.session_state.get(key)
    points = (event or {}).get("selection", {}).get("points", []) if isinstance(event, dict) else getattr(getattr(event, "selection", None), "points", [])
    cells = [p.get("customdata") for p in points if isinstance(p.get("customdata"), (list, tuple))]
    if cells:
        st.session_state[CELL] = (int(cells[0][0]), int(cells[0][1]))


def _matrix(task: Task, table: RunTable) -> None:
    st.markdown("**Examples x runs**")
    left, right = st.columns([2, 1])
    how = left.selectbox("Sort the examples", MATRIX_ORDERS, key="cmp_sort")
    by_score = table.score is not None and right.toggle("Colour by the per-example score", key="cmp_by_score")
    frame = matrix_frame(table, how)
    if len(table.runs) >= DIFFICULTY_RUNS:
        st.caption(f"Difficulty: the share of the {len(table.runs)} runs that got the {task.facts.unit} wrong, an item-difficulty estimate "
                   "(every run weighed alike; docs/compare.md).")
    if frame.empty:
        st.info(f"No {task.facts.unit} is {md(how)}.")
        return
    rows = frame.index.to_numpy()[:MATRIX_ROWS]
    values = (table.score if by_score and table.score is not None else table.correct)[rows]
    st.caption(f"{len(frame):,} {task.facts.unit}s ({'first ' + str(len(rows)) + ' drawn' if len(frame) > len(rows) else 'all drawn'}); "
               "green right, red wrong, blank not scored. Click a cell to draw that example.")
    key = "cmp_matrix"
    st.plotly_chart(matrix_figure(table.runs, [table.label(int(r)) for r in rows], values, rows, by_score), key=key,
                    on_select=partial(_pick_cell, key), selection_mode="points", config={"displayModeBar": False})
    with st.expander(f"The {len(frame):,} {task.facts.unit}s as a table"):
        show_table(st, frame.reset_index(drop=True), hide_index=True, width="stretch",
                     column_config={"difficulty": st.column_config.NumberColumn(format="%.2f")})
    cell = st.session_state.get(CELL)
    if cell and cell[0] < len(table.guids) and cell[1] < len(table.runs):
        _draw_example(task, table, *cell)


def _drawing(task: Task, table: RunTable, run: str, guid: str) -> str:
    frames = table.results[table.column(run)].frames
    inner = task.render(frames, guid) if len(frames.positions(guid)) else "<div class='kv-kv'>(not in this run)</div>"
    return f"<div class='kv-compare-drawing' data-run='{esc_attr(run)}'><div class='kv-kv'>{esc(run)}</div>{inner}</div>"


def _link(table: RunTable, row: int, runs: list[str]) -> str:
    guid, turn = table.key(row)
    return query_string(example_params(view_params(runs, 1), guid, turn))


def _draw_example(task: Task, table: RunTable, row: int, column: int) -> None:
    """The clicked example: the clicked run first, then the other runs compared."""
    guid, clicked = table.guids[row], table.runs[column]
    others = [r for r in table.runs if r != clicked]
    head = (f"<div class='kv-head'>{esc(table.label(row))} <a class='kv-link' href='{esc_attr(_link(table, row, [clicked] + others[:1]))}' "
            f"target='_blank'>link</a></div>")
    st.markdown(head + _drawing(task, table, clicked, guid), unsafe_allow_html=True)
    if others:
        with st.expander(f"The same {task.facts.unit} in the other {len(others)} run(s)", expanded=len(others) <= 3):
            st.markdown("".join(_drawing(task, table, run, guid) for run in others), unsafe_allow_html=True)


def _changes(task: Task, table: RunTable) -> None:
    st.markdown("**What changed**")
    steps = consecutive_changes(table)
    show_table(st, pd.DataFrame([{"from": c.first, "to": c.second, "fixed": len(c.fixed), "broke": len(c.broke)} for c in steps]),
                 hide_index=True, width="stretch")
    pair = st.columns([2, 2, 2])
    for key, default in (("cmp_from", table.runs[0]), ("cmp_to", table.runs[1])):
        if st.session_state.get(key) not in table.runs:
            st.session_state[key] = default
    first = pair[0].selectbox("From run", table.runs, key="cmp_from")
    second = pair[1].selectbox("To run", table.runs, key="cmp_to")
    found = change(table, first, second)
    kind = pair[2].radio("Show", [f"fixed ({len(found.fixed)})", f"broken ({len(found.broke)})"], horizontal=True, key="cmp_kind")
    guids = found.fixed if kind.startswith("fixed") else found.broke
    if not guids:
        st.caption("None.")
        return
    position = {g: k for k, g in enumerate(table.guids)}
    st.caption(f"The first {min(DRAWN, len(guids))} of {len(guids)}, {md(first)} on the left, {md(second)} on the right.")
    for guid in guids[:DRAWN]:
        row = position[guid]
        st.markdown(f"<div class='kv-head'>{esc(table.label(row))} <a class='kv-link' href='{esc_attr(_link(table, row, [second, first]))}' "
                    "target='_blank'>link</a></div>", unsafe_allow_html=True)
        left, right = (st.container(), st.container()) if task.view.wide_drawing else st.columns(2)
        left.markdown(_drawing(task, table, first, guid), unsafe_allow_html=True)
        right.markdown(_drawing(task, table, second, guid), unsafe_allow_html=True)


def _along(task: Task, keys: tuple[str, ...], picked: tuple[RunResult, ...], runs: list[str]) -> None:
    st.markdown("**Along the sequence**")
    if not st.toggle("Each metric along the runs, overall and per slice", key="cmp_along"):
        return
    frame = _sequence(keys, task, picked)
    labels = ["overall"] + [s.label for s in task.facts.slices if s.label in set(frame["slice"])]
    left, right = st.columns(2)
    chosen = left.selectbox("Slice", labels, key="cmp_slice")
    slice_label = "" if chosen == "overall" else chosen
    metrics = list(dict.fromkeys(frame.loc[frame["slice"] == slice_label, "metric"]))
    if st.session_state.get("cmp_metric") not in metrics:
        st.session_state["cmp_metric"] = metrics[0]
    metric = right.selectbox("Metric", metrics, key="cmp_metric")
    st.plotly_chart(sequence_figure(frame, runs, metric, slice_label), key="cmp_sequence", config={"displayModeBar": False})


def _complementarity(task: Task, table: RunTable) -> None:
    st.markdown("**Complementarity**")
    found = complementarity(table)
    columns = st.columns(4)
    columns[0].metric("Oracle", f"{100 * found.oracle:.1f}%", help=f"share of the {found.n:,} shared {task.facts.unit}s that some run gets right")
    columns[1].metric("Best single run", f"{100 * found.best_single[1]:.1f}%", help=found.best_single[0])
    if found.best_pair:
        columns[2].metric("Best pair", f"{100 * found.best_pair[2]:.1f}%", help=f"{found.best_pair[0]} + {found.best_pair[1]}: right by either")
    columns[3].metric("Wrong for every run", f"{len(found.common_errors):,}")
    st.caption(md(f"Best single run: {found.best_single[0]}" + (f"; best pair: {found.best_pair[0]} + {found.best_pair[1]}" if found.best_pair else "")))
    if found.common_errors:
        with st.expander(f"The {len(found.common_errors):,} {task.facts.unit}s every run gets wrong"):
            show_table(st, pd.DataFrame({"guid": found.common_errors}), hide_index=True, width="stretch")
