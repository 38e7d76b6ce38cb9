"""The "Compare runs" section of a task page: the ranking, the example x run matrix, changes, the sequence, complementarity.

Everything is computed by klue_viz.compare.ranking (pure) once per set of runs and kept for every session of the server;
this module lays it out. A click on a matrix cell draws that example with the task's own drawing, for that run first
and then for the other runs compared.
"""

from __future__ import annotations

import re
from functools import partial

import pandas as pd
import streamlit as st

from klue_viz.compare.ranking import (
    MATRIX_ORDERS,
    Ranking,
    RunSequence,
    RunTable,
    change,
    compared_columns,
    complementarity,
    consecutive_changes,
    matrix_frame,
    order_runs,
    p_text,
    rank_runs,
    run_sequence,
    run_table,
    sequence_columns,
)
from klue_viz.drawing.compare_charts import matrix_figure, sequence_figure
from klue_viz.drawing.markup import esc, esc_attr, md
from klue_viz.scoring.evaluate import RunResult
from klue_viz.store.kept_scoring import column_frames
from klue_viz.tasks.base import Task
from klue_viz.ui.common import METRIC_FORMAT, guard
from klue_viz.ui.links import example_params, query_string, view_params
from klue_viz.ui.state import gold_for, kept_results_or_none, run_store_or_none, runs_for, scored_runs
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
def _sequence(keys: tuple[str, ...], _task: Task, _results: tuple[RunResult, ...]) -> RunSequence:
    """The runs' metrics along the sequence, once per server. A kept run is read for the columns the slices and the
    task's statistics need only, not its texts, and its frames are not kept afterwards: 32 whole NER runs held 805 MB."""
    results = list(_results)
    columns = sequence_columns(results[0].task)
    if columns is None:
        return run_sequence(_task, results)
    return run_sequence(_task, results, column_frames(kept_results_or_none(), results, columns))


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


def _models(task: Task) -> dict[str, str]:
    """Each run's model as the page names it (a demo run's is "demo <run>")."""
    return {name: source.model for name, source in runs_for(task, gold_for(task)).items()}


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
    frame = ranking_frame(task, ranking)
    ranked_by = labels[ranking.metric]
    # Pixel widths and short header labels: the nine columns the ranking is about take about 910 px, so they fit the
    # page at 1400 px (the main area is about 940 px wide beside the sidebar); the intervals of every metric follow.
    config = {m.label: st.column_config.NumberColumn(format=METRIC_FORMAT, width=110) for m in task.facts.metrics}
    config.update({m.label + " 95% CI": st.column_config.TextColumn(width=130) for m in task.facts.metrics})
    config.update({
        "rank": st.column_config.NumberColumn(width=48, pinned=True),
        "rank 95% CI": st.column_config.TextColumn("rank 95%", width=80, help="The ranks this run may hold with 95% confidence"),
        "run": st.column_config.TextColumn(width=170, pinned=True),
        f"difference to best ({ranked_by})": st.column_config.NumberColumn(
            "difference", format="%+.2f", width=90, help=f"This run minus the best on {ranked_by}, on the same examples"),
        "difference 95% CI (paired)": st.column_config.TextColumn("difference 95% CI", width=130, help="Paired bootstrap interval"),
        "p": st.column_config.TextColumn(width=65, help="Two-sided p of no difference to the best (paired)"),
        "tied with best": st.column_config.CheckboxColumn(width=105, help="Not different from the best after Holm's correction"),
        "could be best": st.column_config.CheckboxColumn(width=100, help="In the 95% confidence set for the best run"),
    })
    show_table(st, frame, hide_index=True, width="stretch", column_config=config)
    st.caption(md(f"95% confidence set for the best: {', '.join(ranking.best_set)}. {ranking.correction}"))


def ranking_frame(task: Task, ranking: Ranking) -> pd.DataFrame:
    """The ranking table, best first, with the columns the ranking is about first (rank and its interval, the run, the
    metric ranked by, the paired difference to the best and its interval, p, tied, could be best) so they fit a
    1400 px page, then the intervals of the metric ranked by and the other metrics."""
    labels = {m.key: m.label for m in task.facts.metrics}
    ranked_by = labels[ranking.metric]
    rows = []
    for run in sorted(ranking.runs, key=lambda r: (r.rank, r.run)):
        low, high = run.rank_ci95
        row: dict = {"rank": run.rank, "rank 95% CI": f"{low}-{high}" if low != high else str(low), "run": run.run,
                     ranked_by: run.metrics[ranking.metric], f"difference to best ({ranked_by})": run.difference[ranking.metric],
                     "difference 95% CI (paired)": _interval(run.difference_ci95[ranking.metric]), "p": p_text(run.p_value),
                     "tied with best": run.tied_with_best, "could be best": run.could_be_best,
                     f"{ranked_by} 95% CI": _interval(run.ci95[ranking.metric])}
        for metric in task.facts.metrics:
            if metric.key != ranking.metric:
                row[metric.label] = run.metrics[metric.key]
                row[f"{metric.label} 95% CI"] = _interval(run.ci95[metric.key])
        rows.append(row)
    return pd.DataFrame(rows)


def _interval(ci: tuple[float, float] | None) -> str:
    return f"[{ci[0]:.2f}, {ci[1]:.2f}]" if ci else "n/a"


def _pick_cell(key: str) -> None:
    """A click on a matrix cell: remember (row, column) to draw that example."""
    event = st.session_state.get(key)
    points = (event or {}).get("selection", {}).get("points", []) if isinstance(event, dict) else getattr(getattr(event, "selection", None), "points", [])
    cells = [p.get("customdata") for p in points if isinstance(p.get("customdata"), (list, tuple))]
    if cells:
        st.session_state[CELL] = (int(cells[0][0]), int(cells[0][1]))


#: The matrix order a sequence of checkpoints opens on: where a run solved an example late or forgot it; difficulty puts
#: first the examples every run gets wrong (rows all red, the same for every checkpoint).
SEQUENCE_ORDER = "solved late / forgotten"


def is_sequence(names: list[str]) -> bool:
    """Whether the compared runs are mostly one model's steps (checkpoints, epochs): at least three runs, at least half of
    them, whose names differ only in their numbers (ckpt-500, ckpt-1000 ...)."""
    stems: dict[str, int] = {}
    for name in names:
        if re.search(r"\d", name):
            stem = re.sub(r"\d+", "#", name)
            stems[stem] = stems.get(stem, 0) + 1
    most = max(stems.values(), default=0)
    return most >= 3 and 2 * most >= len(names)


def _matrix(task: Task, table: RunTable) -> None:
    st.markdown("**Examples x runs**")
    left, right = st.columns([2, 1])
    default = MATRIX_ORDERS.index(SEQUENCE_ORDER if is_sequence(list(table.runs)) else MATRIX_ORDERS[0])
    how = left.selectbox("Sort the examples", MATRIX_ORDERS, index=default, key="cmp_sort")
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
    sequence = _sequence(keys, task, picked)
    options = {"overall": ""} | {label: key for key, label in sequence.labels.items()}
    left, right = st.columns(2)
    chosen = options[left.selectbox("Slice", list(options), key="cmp_slice")]
    if chosen:
        series, counts = sequence.slices[chosen], sequence.counts[chosen]
        metrics = list(dict.fromkeys(metric for values in series.values() for metric in values))
    else:
        metrics = list(sequence.overall)
    if st.session_state.get("cmp_metric") not in metrics:
        st.session_state["cmp_metric"] = metrics[0]
    metric = right.selectbox("Metric", metrics, key="cmp_metric")
    if chosen:
        lines = {value: found.get(metric, [None] * len(runs)) for value, found in series.items()}
    else:
        lines, counts = {"overall": sequence.overall[metric]}, {"overall": sequence.overall_n}
    owners = _models(task)
    models = [owners.get(run, "") for run in runs]
    figure = sequence_figure(runs, models, lines, counts, metric, "overall" if not chosen else sequence.labels[chosen])
    st.plotly_chart(figure, key="cmp_sequence", config={"displayModeBar": False})
    shown = len(set(models))
    st.caption(("One line per model: " + ", ".join(md(m or "(no model)") for m in dict.fromkeys(models)) + ". " if shown > 1 else "")
               + ("The x axis is the step in each run's name." if figure.layout.xaxis.type == "linear" else
                  "The x axis is the runs in order (not every run's name has a step)."))


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
