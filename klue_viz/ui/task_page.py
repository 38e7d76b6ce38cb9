"""The page of one KLUE task: metrics, confusion matrix, slices, filters and the examples themselves.

Every page in pages/ is one call to `task_page(name)`; what is drawn, and the task's own parts of the
page (labels to leave out of the confusion matrix, charts whose selection filters), come from the
task module. The URL carries what is on screen (`klue_viz.ui.links`).
"""

from __future__ import annotations

import html
import os
import sys
from functools import partial

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from klue_viz.core.cache import BoundedCache
from klue_viz.drawing.charts import OTHER, confusion_counts, confusion_figure, slice_figure, top_confusions
from klue_viz.drawing.markup import esc, esc_attr, md
from klue_viz.outputs.answer_card import card_with_answers
from klue_viz.reading.uploads import limit_megabytes, limit_text
from klue_viz.scoring.bootstrap import compare_runs
from klue_viz.scoring.evaluate import RunResult
from klue_viz.scoring.filtering import ExampleFilter, FilterError, apply_filter, error_type_options, export_frame
from klue_viz.scoring.llm_outputs import run_slices
from klue_viz.scoring.slicing import slice_table
from klue_viz.scoring.user_features import user_slices
from klue_viz.store.kept_scoring import intervals
from klue_viz.tasks import get_task
from klue_viz.tasks.base import Slice, Task
from klue_viz.ui.annotate import annotations_by_example, bulk_tagger, editor, run_tags, tag_views, tagged_guids, task_remarks
from klue_viz.ui.behaviour import behaviour_section
from klue_viz.ui.common import METRIC_FORMAT, UI_RESAMPLES, WARNING_ICON, guard, guarded, metric_text, problem_table, setup_page
from klue_viz.ui.compare import compare_section
from klue_viz.ui.crowd import crowd_panel, vote_cross_entropy
from klue_viz.ui.discovery import ERROR_RATE_COLUMN, compact_view, discovery_panel, order_control
from klue_viz.ui.features import features_panel
from klue_viz.ui.keyboard import MOVES, card_keys, keyboard_bar
from klue_viz.ui.links import (
    CURSOR,
    FOCUS,
    PAGE_KEY,
    RUNS_WANTED,
    SELECTED_GUIDS,
    apply_task_url,
    clear_filters,
    enter_page,
    example_params,
    query_string,
    view_params,
    write_url,
)
from klue_viz.ui.paper import svg_download
from klue_viz.ui.report_download import report_button
from klue_viz.ui.review import REVIEW_LIST
from klue_viz.ui.run_picker import MANY_RUNS, latest_run, pick_runs
from klue_viz.ui.state import CACHE_TTL_ENV, evaluate_runs, gold_for, kept_results_or_none, receive_uploads, runs_for
from klue_viz.ui.surface import surface_panel
from klue_viz.ui.tables import show_table
from klue_viz.ui.warmup import warm_elements

NO_COMPARISON = "(none)"
STATUSES = ["all", "wrong", "correct"]
CARD_STYLE = """<style>
.kv-head{font-size:.8rem;color:#57606a;margin-top:.6rem}
.kv-guid{user-select:all;font-size:.8rem}
.kv-link{margin-left:.5rem}
.kv-turn{scroll-margin-top:4.5rem}
.kv-turn[data-selected=true]{background:#fff8c5;outline:2px solid #bf8700;border-radius:.2rem}
.kv-slot[data-change]{background:#eef6ff}
</style>"""


def task_page(name: str) -> None:
    task = get_task(name)
    setup_page(task.facts.name.upper())
    guarded(lambda: _body(task))


def _body(task: Task) -> None:
    url = enter_page(task.facts.name)
    if url is not None:
        apply_task_url(url)
    st.markdown(CARD_STYLE, unsafe_allow_html=True)
    st.title(task.facts.title)
    choice = gold_for(task)
    strict = " · strict: missing predictions count as wrong" if st.session_state.get("strict") else ""
    if choice.warning:
        st.warning(md(choice.warning))
    st.caption(f"{md(choice.note)} · {len(choice.gold.rows):,} gold {task.facts.unit}s{strict}")
    if choice.gold.problems:
        with st.expander(f"{len(choice.gold.problems)} problem(s) in the gold file"):
            problem_table(choice.gold.problems)

    uploads = st.file_uploader(f"Add {task.facts.name.upper()} prediction files (JSONL, JSON, CSV, TSV; {md(limit_text())})", accept_multiple_files=True,
                               key="pred_upload", max_upload_size=limit_megabytes())
    for outcome in receive_uploads(uploads, task=task.facts.name):
        if outcome.error:
            st.error(md(outcome.error))
        elif outcome.note:
            st.warning(md(outcome.note))

    results, failures = evaluate_runs(task, choice)
    results = features_panel(task, choice, results)  # the user's own columns on every run's frames
    for run, reason in failures.items():
        st.error(md(f"{run}: {reason}"))
    if not results:
        st.info(f"No {task.facts.name.upper()} run to show yet: upload a prediction file above or on the home page.")
        warm_elements()  # so that the first upload's charts and filters are not grey placeholders once it is scored
        return

    models = {name: source.model for name, source in runs_for(task, choice).items()}
    shown = pick_runs(list(results), models)
    # the gold keeps its annotators' labels (YNAT, NLI): each run's distance to them joins its metrics
    votes = task.labels is not None and any(row.get("votes") for row in choice.gold.rows[:50])
    _metrics(task, {name: results[name] for name in shown}, models, votes)
    result = results[_inspected_run(shown, set(models))]
    crowd_panel(task, choice.gold, choice.key, result, results)
    pairs = _pairs(result.key, task, result)
    _confusion(task, result, pairs)
    _selection_charts(task, result)
    _slices(task, result)
    discovery_panel(task, result, results)
    surface_panel(task, result, results)
    compare_section(task, results)
    behaviour_section(task, choice, results, result.run)
    st.subheader("Error tags")
    tag_views(task, result, results)
    _examples(task, result, pairs, results)


def _inspected_run(names: list[str], stored: set[str]) -> str:
    """The run the page inspects: the URL's first `run` when it is loaded, else the one chosen (or the only one). A run
    chosen before and no longer among the `stored` runs (removed by another tab or server meanwhile) is said to be gone."""
    state = st.session_state
    wanted = state.pop(RUNS_WANTED, None) or []
    missing = [name for name in wanted if name not in names]
    if missing:
        st.warning(md(f"The link names run(s) this server does not have for this gold: {', '.join(missing)} (removed or renamed since, "
                      f"or a demo run while the gold is not the demo). Showing the runs it has."))
    if wanted[1:] and wanted[1] in names:
        state["compare"] = wanted[1]
    viewed = state.get("run")
    if viewed is not None and viewed not in stored and not wanted:  # removed meanwhile, in another tab or on another server
        st.warning(md(f"The run you were viewing, {viewed}, is no longer stored (removed in another tab or by another "
                      f"server of this app); showing {names[0] if len(names) == 1 else 'the runs there are'} instead."))
        del state["run"]
    if len(names) == 1:
        st.caption(f"Inspecting run **{md(names[0])}**")
        return names[0]
    if wanted and wanted[0] in names:
        state["run"] = wanted[0]
    elif state.get("run") not in names:
        state["run"] = latest_run(names)
    return st.selectbox("Run to inspect", names, key="run", help="The run with the latest step in its name is inspected first")


VOTE_CROSS_ENTROPY = "vote cross-entropy"


@st.cache_resource(max_entries=128, show_spinner="Resampling…")
def _intervals(result_key: str, _task: Task, _result: RunResult) -> dict[str, tuple[float, float] | None]:
    return intervals(kept_results_or_none(), _result, UI_RESAMPLES)


@st.cache_resource(max_entries=64, show_spinner="Resampling both runs…")
def _paired(first_key: str, second_key: str, _task: Task, _first: RunResult, _second: RunResult) -> pd.DataFrame:
    rows = compare_runs(_task, _first.frames, _second.frames, samples=UI_RESAMPLES)
    return pd.DataFrame([{"metric": c.metric, "difference": c.difference, "95% low": c.low, "95% high": c.high,
                          f"{_first.run} higher in": f"{100 * c.first_better:.0f}% of resamples"} for c in rows])


def _metrics(task: Task, results: dict[str, RunResult], models: dict[str, str], votes: bool = False) -> None:
    st.subheader("Official metrics")
    show_ci = st.toggle(f"95% confidence intervals (bootstrap, {UI_RESAMPLES} resamples of the examples)", key="show_ci")
    if len(results) >= MANY_RUNS:
        _metrics_table(task, results, models, show_ci, votes)
        return
    for run, result in results.items():
        if result.wrong_gold:
            st.warning(md(f"{run}: {result.wrong_gold}."), icon=WARNING_ICON)
        st.markdown(f"<b>{esc(run)}</b> <span class='kv-kv'>({esc(result.file)})</span>", unsafe_allow_html=True)
        columns = st.columns(len(task.facts.metrics) + 1)
        for column, metric in zip(columns, task.facts.metrics):
            value = result.scores.values.get(metric.key)
            column.metric(metric.label, metric_text(value), help=result.scores.reasons.get(metric.key) or f"{metric.key}, 0..100")
        c = result.coverage
        # A share, not "2000/2000": five metric columns leave too little room for the counts, which the caption gives.
        columns[-1].metric("Gold scored", f"{100 * c.n_scored / c.n_gold:.1f}%" if c.n_gold else "n/a",
                           help=f"{c.n_scored:,} of {c.n_gold:,} gold examples scored")
        details = [f"{c.n_scored:,} of {c.n_gold:,} gold scored", f"missing {c.n_missing}", f"extra {c.n_extra}",
                   f"records left out {c.n_invalid}"] + ([f"unreadable answers {c.unreadable_answers} (scored as wrong)"]
                                                   if c.unreadable_answers else []) + result.notes
        found = vote_cross_entropy(task, result) if votes else None
        if found is not None:
            details.append(f"vote cross-entropy {found['value']:.4f} over {found['n']:,} {task.facts.unit}s (its probabilities against "
                           "the annotators' votes; lower is closer)")
        if show_ci:
            spans = _intervals(result.key, task, result)
            details.insert(0, "95% CI " + ", ".join(f"{k} [{v[0]:.2f}, {v[1]:.2f}]" for k, v in spans.items() if v))
        st.caption(md(" · ".join(details)))
        if result.problems:
            with st.expander(f"{len(result.problems)} problem(s) in {md(result.file)}"):
                problem_table(result.problems)


def _metrics_table(task: Task, results: dict[str, RunResult], models: dict[str, str], show_ci: bool, votes: bool = False) -> None:
    """Many runs: one row each (the scores come from their kept results; intervals read a run's frames, so only when asked;
    with `votes`, each run's vote cross-entropy, blank for a run without probabilities)."""
    rows = []
    for run, result in results.items():
        c = result.coverage
        row = {"run": run, "model": models.get(run, ""), **{m.key: result.scores.values.get(m.key) for m in task.facts.metrics},
               "scored": f"{c.n_scored}/{c.n_gold}", "missing": c.n_missing, "extra": c.n_extra, "records left out": c.n_invalid,
               "unreadable answers": c.unreadable_answers, "problems": len(result.problems)}
        if votes:
            found = vote_cross_entropy(task, result)
            row[VOTE_CROSS_ENTROPY] = None if found is None else found["value"]
        if show_ci:
            spans = _intervals(result.key, task, result)
            row["95% CI"] = ", ".join(f"{k} [{v[0]:.2f}, {v[1]:.2f}]" for k, v in spans.items() if v)
        rows.append(row)
    config = {m.key: st.column_config.NumberColumn(m.label, format="%.2f") for m in task.facts.metrics}
    config[VOTE_CROSS_ENTROPY] = st.column_config.NumberColumn(format="%.4f", help="The run's probabilities against the annotators' votes, "
                                                               "mean over the examples (lower is closer); blank: the run gave no probabilities")
    show_table(st, pd.DataFrame(rows), hide_index=True, width="stretch", column_config=config)
    problems = [p for result in results.values() for p in result.problems]
    if problems:
        with st.expander(f"{len(problems)} problem(s) in these runs' files"):
            problem_table(problems)


def _chart_key(name: str) -> str:
    """Chart keys change when the filters are cleared, so a chart's selection is dropped with them."""
    return f"{name}-{st.session_state.get('chart_epoch', 0)}"


def _select_cell(key: str) -> None:
    """A click on a confusion cell becomes the gold/predicted label filters."""
    event = st.session_state.get(key)
    points = (event or {}).get("selection", {}).get("points", []) if isinstance(event, dict) else getattr(getattr(event, "selection", None), "points", [])
    if not points:
        return
    point = points[0]
    gold, pred = html.unescape(str(point.get("y"))), html.unescape(str(point.get("x")))  # chart labels are escaped
    st.session_state["f_gold"] = [] if gold == OTHER else [gold]
    st.session_state["f_pred"] = [] if pred == OTHER else [pred]
    st.session_state["f_status"] = "all"
    st.session_state[PAGE_KEY] = 1
    st.session_state[FOCUS] = None


def _select_points(key: str) -> None:
    event = st.session_state.get(key)
    points = event["selection"]["points"] if event else []
    st.session_state[SELECTED_GUIDS] = [p["customdata"] for p in points] if points else []
    st.session_state[PAGE_KEY] = 1
    st.session_state[FOCUS] = None


def _confusion(task: Task, result: RunResult, pairs: pd.DataFrame | None) -> None:
    if pairs is None or pairs.empty:
        return
    st.subheader("Confusion matrix")
    if pairs["gold"].nunique() > 12:  # many labels: controls first, then the matrix over the whole width
        right, left = st.container(), st.container()
    else:
        left, right = st.columns([3, 2])
    with right:
        hide = tuple(label for label in task.view.hideable_labels if st.toggle(f"Leave out {label}", value=True, key=f"hide|{label}"))
        max_labels = st.slider("Labels shown (the rest are pooled as (other))", 5, 40, 15, key="max_labels") if pairs["gold"].nunique() > 15 else 40
        outcomes = "".join(f" Column **{md(o)}**: the right {task.facts.confusion_label} but not a success; the diagonal counts exact successes only."
                           for o in task.view.outcome_columns)
        st.caption(f"Rows: gold {task.facts.confusion_label}; columns: predicted.{outcomes} Click a cell to list its examples below.")
        figure, top = _confusion_view(result.key, max_labels, hide, task, pairs)
        if not top.empty:
            st.markdown("**Most frequent confusions**")
            show_table(st, top, hide_index=True, width="stretch")
    with left:
        key = _chart_key("confusion")
        st.plotly_chart(figure, key=key, on_select=partial(_select_cell, key), selection_mode="points", config={"displayModeBar": False})


def _selection_charts(task: Task, result: RunResult) -> None:
    """The task's own charts (STS's scatter): selecting points lists those examples below."""
    for k, (title, figure) in enumerate(task.selection_charts(result.frames)):
        st.markdown(f"**{md(title)}**")
        key = _chart_key(f"selection{k}")
        st.plotly_chart(figure, key=key, on_select=partial(_select_points, key), selection_mode=("box", "lasso"))


@st.cache_resource(max_entries=32, show_spinner=False)
def _pairs(result_key: str, _task: Task, _result: RunResult) -> pd.DataFrame | None:
    """The run's confusion pairs, made once per run instead of on every page run of every session."""
    return _task.confusion(_result.frames)


@st.cache_resource(max_entries=256, show_spinner=False)
def _slice_view(result_key: str, slice_key: str, _task: Task, _result: RunResult, _spec: Slice) -> tuple[pd.DataFrame, go.Figure]:
    """The slice table as shown and its chart, made once per run and slicing (the plotly figure alone took ~20 ms)."""
    table = slice_table(_task, _result.frames, _spec)
    metric_columns = [c for c in table.columns if c not in ("value", "n", "errors", "error_rate")]
    metric = "f1" if "f1" in metric_columns else (metric_columns[0] if metric_columns else "error_rate")
    return slice_display(_task, _result, _spec, table, metric_columns), slice_figure(table, metric, _spec.label)


@st.cache_resource(max_entries=128, show_spinner=False)
def _confusion_view(result_key: str, max_labels: int, hide: tuple[str, ...], _task: Task, _pairs: pd.DataFrame) -> tuple[go.Figure, pd.DataFrame]:
    counts = confusion_counts(_pairs, max_labels=max_labels, hide=hide, outcomes=_task.view.outcome_columns)
    return confusion_figure(counts, _task.facts.confusion_label), top_confusions(_pairs)


@st.cache_resource(max_entries=128, show_spinner=False)
def _labels(result_key: str, _pairs: pd.DataFrame) -> list[str]:
    """Every gold or predicted label of the confusion pairs, for the label filters."""
    return sorted(set(_pairs["gold"].astype(str)) | set(_pairs["pred"].astype(str)))


#: Why a detail-level slice metric is undefined (the detail scores return None without a reason).
DETAIL_REASONS = {"precision": "nothing predicted in this slice", "recall": "nothing in the gold of this slice",
                  "f1": "nothing in gold or prediction in this slice"}


def _slices(task: Task, result: RunResult) -> None:
    st.subheader("Metrics per slice")
    labels = {spec.label: spec for spec in (*run_slices(task, result.frames), *user_slices(result.frames))}
    if st.session_state.get("slice_by") not in (None, *labels):
        st.session_state["slice_by"] = next(iter(labels))
    chosen = labels[st.selectbox("Slice by", list(labels), key="slice_by")]
    shown, figure = _slice_view(result.key, f"{chosen.level}:{chosen.key}", task, result, chosen)
    left, right = st.columns([3, 2])
    show_table(left, shown, hide_index=True, width="stretch",
                   column_config={"error_rate": ERROR_RATE_COLUMN})
    right.plotly_chart(figure, key="slice_chart", config={"displayModeBar": False})


def slice_display(task: Task, result: RunResult, spec: Slice, table: pd.DataFrame, metric_columns: list[str]) -> pd.DataFrame:
    """The slice table as shown: metrics with two decimals, an undefined one as 'n/a' with its reason beside it."""
    shown = table.copy()
    reasons = []
    for row in table.to_dict("records"):
        undefined = [m for m in metric_columns if pd.isna(row[m])]
        if not undefined:
            reasons.append("")
            continue
        if spec.level == "examples":
            frame = result.frames.examples
            values = frame[spec.key]
            mask = values.isna() if row["value"] == "(missing)" else values.astype(str) == row["value"]
            why = task.score(result.frames.subset(frame.loc[mask, "guid"])).reasons
        else:
            why = DETAIL_REASONS
        reasons.append("; ".join(f"{m}: {why.get(m, 'undefined on this slice')}" for m in undefined))
    for column in metric_columns:
        shown[column] = [metric_text(None if pd.isna(v) else float(v)) for v in table[column]]
    if any(reasons):
        shown["n/a because"] = reasons
    return shown


def _filters(task: Task, result: RunResult, pairs: pd.DataFrame | None, remarks: list) -> ExampleFilter:
    ex = result.frames.examples
    st.subheader("Examples")
    if st.button("Clear filters", key="clear_filters", on_click=clear_filters):
        st.rerun()  # the whole page, so the charts drop their selection too
    row1 = st.columns([1.2, 2, 2, 2])
    if st.session_state.get("f_status") not in (None, *STATUSES):
        st.session_state["f_status"] = "all"
    status = row1[0].radio("Examples to show", STATUSES, horizontal=True, key="f_status")
    labels = _labels(result.key, pairs) if pairs is not None else []
    for key in ("f_gold", "f_pred"):
        if key in st.session_state:
            st.session_state[key] = [v for v in st.session_state[key] if v in labels]
    gold = row1[1].multiselect(f"Gold {task.facts.confusion_label}", labels, key="f_gold")
    pred = row1[2].multiselect(f"Predicted {task.facts.confusion_label}", labels, key="f_pred")
    error_types = error_type_options(ex)
    _keep_known("f_errors", error_types)
    errors = row1[3].multiselect("Error type", error_types, key="f_errors")
    row2 = st.columns([2, 2, 2, 2, 1])
    slice_specs = {spec.label: spec for spec in (*run_slices(task, result.frames), *user_slices(result.frames))}
    if st.session_state.get("f_slice") not in (None, "(any)", *slice_specs):
        st.session_state["f_slice"] = "(any)"
    slice_label = row2[0].selectbox("Slice", ["(any)"] + list(slice_specs), key="f_slice")
    spec = slice_specs.get(slice_label)
    values = []
    if spec is not None:
        frame = ex if spec.level == "examples" else result.frames.details[spec.level]
        options = sorted(frame[spec.key].dropna().astype(str).unique())
        _keep_known("f_slice_values", options)
        values = row2[1].multiselect("Slice values", options, key="f_slice_values")
    tag_options = sorted(set(task.facts.error_tags) | set(run_tags(task, result.run, remarks)["tag"]))
    _keep_known("f_tags", tag_options)
    tags = row2[2].multiselect("Tagged with", tag_options, key="f_tags")
    text = row2[3].text_input("Search the text", key="f_text", help="A substring, or a regular expression with 'regex' ticked")
    regex = row2[4].checkbox("regex", key="f_regex")
    guids = st.session_state.get(SELECTED_GUIDS) or None
    if guids:
        st.caption(f"Restricted to the {len(guids)} {task.facts.unit}s selected above (points on a chart, or a found slice).")
    return ExampleFilter(status, gold, pred, errors, spec, values, text, regex, frozenset(guids) if guids else None,
                         tagged_guids(task, result.run, tags, remarks))


def _keep_known(key: str, options: list[str]) -> None:
    """Values from a link that are not options here are dropped (a widget refuses unknown values)."""
    if key in st.session_state:
        st.session_state[key] = [v for v in st.session_state[key] if v in options]


@st.fragment
@guard
def _examples(task: Task, result: RunResult, pairs: pd.DataFrame | None, results: dict[str, RunResult]) -> None:
    """Filters and the example list; a fragment, so changing a filter redraws only this part of the page."""
    remarks = task_remarks(task)  # one read of the stored annotations for this part of the page
    chosen = _filters(task, result, pairs, remarks)
    try:
        shown = apply_filter(task, result.frames, pairs, chosen)
    except FilterError as err:
        st.error(md(err))
        return
    others = [r for r in results if r != result.run]
    if st.session_state.get("compare") not in (None, NO_COMPARISON, *others):
        st.session_state["compare"] = NO_COMPARISON
    other = st.selectbox("Compare with run", [NO_COMPARISON] + others, key="compare") if others else NO_COMPARISON
    second = results.get(other)
    if second is not None:
        shown = _comparison(result, second, shown)
    shown = _focus(task, result, shown)
    shown, page_size = order_control(task, result, results, shown)
    st.session_state[f"{REVIEW_LIST}|{task.facts.name}"] = (result.run, shown["guid"].tolist())  # the review view can go through them
    cards = _cards(task, shown)  # row positions in `shown`; only the page's rows become records
    keyboard_bar(task, result.run, *card_keys(shown["guid"].tolist(), shown["correct"].astype(bool).tolist(), cards), page_size)
    total = len(result.frames.examples)
    pages = max(1, -(-len(cards) // page_size))
    top = st.columns([1, 3, 2])
    if st.session_state.get(PAGE_KEY, 1) > pages:
        st.session_state[PAGE_KEY] = pages
    page = int(top[0].number_input("Page", 1, pages, key=PAGE_KEY)) if pages > 1 else 1
    first = (page - 1) * page_size
    grouped = f" in {len(cards):,} {task.view.card_column}s" if task.view.card_column else ""
    top[1].markdown(f"<div class='kv-count' data-shown='{len(shown)}' data-total='{total}' data-cards='{len(cards)}'>{len(shown):,} of {total:,} "
                    f"{task.facts.unit}s match{grouped} (showing {min(first + 1, len(cards))}–{min(first + page_size, len(cards))})</div>",
                    unsafe_allow_html=True)
    top[2].download_button("Download the filtered table (CSV)", lambda: export_frame(shown).to_csv(index=False).encode("utf-8-sig"),
                           file_name=f"{task.facts.name}-{result.run}-examples.csv", mime="text/csv", key="download", on_click="ignore")
    report_button(task, [result] + ([second] if second is not None else []))
    bulk_tagger(task, result, shown)
    view = view_params([result.run] + ([other] if second is not None else []), page)
    focus = st.session_state.get(FOCUS)
    write_url(example_params(view, *focus) if focus else view)
    by_example = annotations_by_example(task, result.run, remarks)
    if second is None and not task.view.card_column and compact_view(task, result, shown.iloc[first:first + page_size], by_example):
        return
    for rows in _page_records(shown, cards[first:first + page_size]):
        _card(task, result, second, rows, view, by_example)


def _focus(task: Task, result: RunResult, shown: pd.DataFrame) -> pd.DataFrame:
    """A link to one example shows that example alone (whatever the filters), until the user asks for the list."""
    focus = st.session_state.get(FOCUS)
    if not focus:
        return shown
    guid = task.example_guid(*focus)
    examples = result.frames.examples
    linked = examples[examples["guid"] == guid]
    if linked.empty:
        st.warning(md(f"The linked example {guid} is not in run {result.run}; showing the filtered list."))
        st.session_state[FOCUS] = None
        return shown
    left, right = st.columns([3, 1])
    left.info(md(f"Showing the linked example {guid}."))
    right.button("Show every matching example", key="unfocus", on_click=lambda: st.session_state.update({FOCUS: None}))
    return linked


def _cards(task: Task, shown: pd.DataFrame) -> list[list[int]]:
    """The examples grouped into cards in their order, as row positions in `shown`: one card per example, or per
    `task.view.card_column` (a WoS dialogue). Positions, not records: turning every matching row into a dict on each
    rerun cost more than drawing the page."""
    if not task.view.card_column:
        return [[k] for k in range(len(shown))]
    cards: dict[str, list[int]] = {}
    for k, value in enumerate(shown[task.view.card_column].tolist()):
        cards.setdefault(value, []).append(k)
    return list(cards.values())


def _page_records(shown: pd.DataFrame, cards: list[list[int]]) -> list[list[dict]]:
    """The rows of the cards on the page as records (one take of `shown` for the whole page)."""
    records = iter(shown.iloc[[k for card in cards for k in card]].to_dict("records"))
    return [[next(records) for _ in card] for card in cards]


def _card(task: Task, result: RunResult, second: RunResult | None, rows: list[dict], view: dict, by_example: dict) -> None:
    """One card: its id (selectable) and link, the drawing (beside the second run's when comparing), the annotation boxes."""
    guids = [r["guid"] for r in rows]
    key, turn = task.annotation_key(rows[0])
    link = query_string(example_params(view, key, turn))
    # the keyboard's focused example, with the number of the move that focused it (what the scroll script waits for)
    focused = (f' data-cursor="true" data-cursor-move="{int(st.session_state.get(MOVES, 0))}"' if st.session_state.get(CURSOR) in guids else "")
    head = (f'<div class="kv-head"{focused}>{"id" if turn is None else "dialogue"} <code class="kv-guid">{esc(key)}</code>'
            f'{"" if turn is None else f" turn {turn}"}<a class="kv-link" href="{esc_attr(link)}" target="_blank">link</a></div>')
    if second is None:
        st.markdown(head + _drawing(task, result, guids), unsafe_allow_html=True)
    else:
        present = [g for g in guids if len(second.frames.positions(g))]
        ours = head + f"<div class='kv-kv'>{esc(result.run)}</div>" + _drawing(task, result, guids)
        theirs = f"<div class='kv-kv'>{esc(second.run)}</div>" + (_drawing(task, second, present) if present else "(not in this run)")
        if task.view.wide_drawing:  # side by side, each half would shrink the drawing until its words are unreadable
            st.markdown(ours + theirs, unsafe_allow_html=True)
        else:
            left, right = st.columns(2)
            left.markdown(ours, unsafe_allow_html=True)
            right.markdown("<div class='kv-head'>&nbsp;</div>" + theirs, unsafe_allow_html=True)
    with st.popover("Copy link", icon=":material/link:", type="tertiary"):
        st.code(_absolute(link), language=None, wrap_lines=True)  # st.code has the one-click copy button
    svg_download(task, result, guids)
    for row in rows:
        if len(rows) > 1:
            st.caption(f"{task.facts.unit} {row.get('turn', row['guid'])}")
        editor(task, result, row, by_example.get(row["guid"], []))


def _absolute(link: str) -> str:
    """A view's query string as the full address of this page, as a colleague would paste it."""
    page = (st.context.url or "").split("?", 1)[0]
    return page + link


#: Budget of the card drawings kept for every session (KLUE_VIZ_CARD_CACHE_MB); a real NER card is a few kilobytes.
CARD_CACHE_MB_ENV = "KLUE_VIZ_CARD_CACHE_MB"


@st.cache_resource(show_spinner=False)
def drawn_cards() -> BoundedCache:
    """Card drawings shared by every session, by run and examples: a redrawn list (another filter, a page back, another
    session on the same run) reuses them instead of drawing again. Bounded in bytes, and by time like the scored runs."""
    megabytes = float(os.environ.get(CARD_CACHE_MB_ENV, "") or 32)
    ttl = float(os.environ.get(CACHE_TTL_ENV, "") or 3600)
    return BoundedCache(int(megabytes * 1024 * 1024), ttl, sys.getsizeof)


def _drawing(task: Task, result: RunResult, guids: list[str]) -> str:
    """The drawing of one card of a run; a drawing depends on the run's frames and the card's examples only."""
    if not result.key:  # a run scored outside the app's cache has no identity to keep its drawings under
        return card_with_answers(task, result.frames, guids)
    return drawn_cards().get((result.key, tuple(guids)), partial(card_with_answers, task, result.frames, guids))


def _comparison(first: RunResult, second: RunResult, shown: pd.DataFrame) -> pd.DataFrame:
    """Where two runs differ among the filtered examples: counts of each agreement case, and the examples of the chosen case."""
    a = first.frames.examples.set_index("guid")["correct"].reindex(shown["guid"])
    b = second.frames.examples.set_index("guid")["correct"].reindex(a.index).fillna(False).astype(bool)
    case = pd.Series("both wrong", index=a.index)
    case[a & b] = "both right"
    case[a & ~b] = f"only {first.run} right"
    case[~a & b] = f"only {second.run} right"
    counts = case.value_counts()
    left, right = st.columns([2, 3])
    show_table(left, counts.rename("examples").rename_axis("case (filtered examples)").reset_index(), hide_index=True)
    if right.toggle("Is the difference real? (paired bootstrap)", key="paired"):
        show_table(right, _paired(first.key, second.key, first.task, first, second), hide_index=True,
                        column_config={c: st.column_config.NumberColumn(format=METRIC_FORMAT) for c in ("difference", "95% low", "95% high")})
    options = ["where they differ", "all"] + list(counts.index)
    if st.session_state.get("compare_case") not in (None, *options):
        st.session_state["compare_case"] = "where they differ"
    pick = st.radio("Where the two runs agree", options, horizontal=True, key="compare_case", format_func=md)
    if pick == "all":
        return shown
    keep = case[case.str.startswith("only")].index if pick == "where they differ" else case[case == pick].index
    return shown[shown["guid"].isin(set(keep))]
