"""The page of one KLUE task: metrics, confusion matrix, slices, filters and the examples themselves.

Every page in pages/ is one call to `task_page(name)`; what is drawn comes from the task module.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from klue_viz.bootstrap import compare_runs, confidence_intervals
from klue_viz.charts import OTHER, confusion_counts, confusion_figure, slice_figure, sts_scatter, top_confusions
from klue_viz.evaluate import RunResult
from klue_viz.markup import esc, md
from klue_viz.filtering import ExampleFilter, FilterError, apply_filter, error_type_options, export_frame
from klue_viz.slicing import slice_table
from klue_viz.tasks import get_task
from klue_viz.tasks.base import Task
from klue_viz.ui.annotate import annotations_by_example, bulk_tagger, editor, run_tags, tag_views, tagged_guids, task_remarks
from klue_viz.ui.discovery import compact_view, discovery_panel, order_control
from klue_viz.ui.common import guarded, metric_text, problem_table, setup_page
from klue_viz.ui.state import add_run, evaluate_runs, gold_for

FILTER_KEYS = ("f_status", "f_gold", "f_pred", "f_errors", "f_slice_values", "f_text", "f_regex", "f_guids", "f_tags", "page_no")


def task_page(name: str) -> None:
    task = get_task(name)
    setup_page(task.name.upper())
    guarded(lambda: _body(task))


def _body(task: Task) -> None:
    st.title(task.title)
    choice = gold_for(task)
    st.caption(f"{md(choice.note)} · {len(choice.gold.rows):,} gold {task.unit}s")
    if choice.gold.problems:
        with st.expander(f"{len(choice.gold.problems)} problem(s) in the gold file"):
            problem_table(choice.gold.problems)

    uploads = st.file_uploader(f"Add {task.name.upper()} prediction files (JSONL, JSON, CSV, TSV)", accept_multiple_files=True, key="pred_upload")
    for upload in uploads or []:
        add_run(task.name, upload.name, upload.getvalue())

    results, failures = evaluate_runs(task, choice)
    for run, reason in failures.items():
        st.error(md(f"{run}: {reason}"))
    if not results:
        st.info(f"No {task.name.upper()} run to show yet: upload a prediction file above or on the home page.")
        return

    _metrics(task, results)
    names = list(results)
    run = st.selectbox("Run to inspect", names, key="run") if len(names) > 1 else names[0]
    result = results[run]
    if len(names) == 1:
        st.caption(f"Inspecting run **{md(run)}**")
    pairs = task.confusion(result.frames)
    _confusion(task, result, pairs)
    _slices(task, result)
    discovery_panel(task, result, results)
    st.subheader("Error tags")
    tag_views(task, result, results)
    _examples(task, result, pairs, results)


UI_RESAMPLES = 200


@st.cache_resource(max_entries=128, show_spinner="Resampling…")
def _intervals(result_key: str, _task: Task, _result: RunResult):
    return confidence_intervals(_task, _result.frames, samples=UI_RESAMPLES)


@st.cache_resource(max_entries=64, show_spinner="Resampling both runs…")
def _paired(first_key: str, second_key: str, _task: Task, _first: RunResult, _second: RunResult) -> pd.DataFrame:
    rows = compare_runs(_task, _first.frames, _second.frames, samples=UI_RESAMPLES)
    return pd.DataFrame([{"metric": c.metric, "difference": c.difference, "95% low": c.low, "95% high": c.high,
                          f"{_first.run} higher in": f"{100 * c.first_better:.0f}% of resamples"} for c in rows])


def _metrics(task: Task, results: dict[str, RunResult]) -> None:
    st.subheader("Official metrics")
    show_ci = st.toggle(f"95% confidence intervals (bootstrap, {UI_RESAMPLES} resamples of the examples)", key="show_ci")
    for run, result in results.items():
        st.markdown(f"<b>{esc(run)}</b> <span class='kv-kv'>({esc(result.file)})</span>", unsafe_allow_html=True)
        columns = st.columns(len(task.metrics) + 1)
        for column, metric in zip(columns, task.metrics):
            value = result.scores.values.get(metric.key)
            column.metric(metric.label, metric_text(value), help=result.scores.reasons.get(metric.key) or f"{metric.key}, 0..100")
        c = result.coverage
        columns[-1].metric("Gold scored", f"{c.n_scored}/{c.n_gold}", help=f"missing {c.n_missing} · extra {c.n_extra} · unreadable {c.n_invalid}")
        details = [f"missing {c.n_missing}", f"extra {c.n_extra}", f"unreadable {c.n_invalid}"] + result.notes
        if show_ci:
            spans = _intervals(result.key, task, result)
            details.insert(0, "95% CI " + ", ".join(f"{k} [{v[0]:.2f}, {v[1]:.2f}]" for k, v in spans.items() if v))
        st.caption(md(" · ".join(details)))
        if result.problems:
            with st.expander(f"{len(result.problems)} problem(s) in {md(result.file)}"):
                problem_table(result.problems)


def _select_cell() -> None:
    """A click on a confusion cell becomes the gold/predicted label filters."""
    event = st.session_state.get("confusion")
    points = (event or {}).get("selection", {}).get("points", []) if isinstance(event, dict) else getattr(getattr(event, "selection", None), "points", [])
    if not points:
        return
    point = points[0]
    gold, pred = str(point.get("y")), str(point.get("x"))
    st.session_state["f_gold"] = [] if gold == OTHER else [gold]
    st.session_state["f_pred"] = [] if pred == OTHER else [pred]
    st.session_state["f_status"] = "all"
    st.session_state["page_no"] = 1


def _select_points() -> None:
    event = st.session_state.get("scatter")
    points = event["selection"]["points"] if event else []
    st.session_state["f_guids"] = [p["customdata"] for p in points] if points else []
    st.session_state["page_no"] = 1


def _confusion(task: Task, result: RunResult, pairs: pd.DataFrame | None) -> None:
    if pairs is None or pairs.empty:
        return
    st.subheader("Confusion matrix")
    left, right = st.columns([3, 2])
    with right:
        hide = ()
        if task.name == "re":
            hide = ("no_relation",) if st.toggle("Leave out no_relation", value=True, key="hide_no_relation") else ()
        max_labels = st.slider("Labels shown (the rest are pooled as (other))", 5, 40, 15, key="max_labels") if pairs["gold"].nunique() > 15 else 40
        st.caption(f"Rows: gold {task.confusion_label}; columns: predicted. Click a cell to list its examples below.")
        figure, top = _confusion_view(result.key, max_labels, hide, task, pairs)
        if not top.empty:
            st.markdown("**Most frequent confusions**")
            st.dataframe(top, hide_index=True, width="stretch")
    with left:
        st.plotly_chart(figure, key="confusion", on_select=_select_cell,
                        selection_mode="points", config={"displayModeBar": False})
    if task.name == "sts":
        st.markdown("**Gold against predicted similarity** — select points (box or lasso) to list them below")
        st.plotly_chart(sts_scatter(result.frames.examples), key="scatter", on_select=_select_points, selection_mode=("box", "lasso"))


@st.cache_resource(max_entries=256, show_spinner=False)
def _slice_table(result_key: str, slice_key: str, _task: Task, _result: RunResult, _spec) -> pd.DataFrame:
    return slice_table(_task, _result.frames, _spec)


@st.cache_resource(max_entries=128, show_spinner=False)
def _confusion_view(result_key: str, max_labels: int, hide: tuple[str, ...], _task: Task, _pairs: pd.DataFrame):
    counts = confusion_counts(_pairs, max_labels=max_labels, hide=hide)
    return confusion_figure(counts, _task.confusion_label), top_confusions(_pairs)


@st.cache_resource(max_entries=128, show_spinner=False)
def _labels(result_key: str, _pairs: pd.DataFrame) -> list[str]:
    """Every gold or predicted label of the confusion pairs, for the label filters."""
    return sorted(set(_pairs["gold"].astype(str)) | set(_pairs["pred"].astype(str)))


def _slices(task: Task, result: RunResult) -> None:
    st.subheader("Metrics per slice")
    labels = {spec.label: spec for spec in task.slices}
    chosen = labels[st.selectbox("Slice by", list(labels), key="slice_by")]
    table = _slice_table(result.key, f"{chosen.level}:{chosen.key}", task, result, chosen)
    metric_columns = [c for c in table.columns if c not in ("value", "n", "errors", "error_rate")]
    metric = "f1" if "f1" in metric_columns else (metric_columns[0] if metric_columns else "error_rate")
    left, right = st.columns([3, 2])
    left.dataframe(table, hide_index=True, width="stretch", column_config={c: st.column_config.NumberColumn(format="%.2f") for c in metric_columns + ["error_rate"]})
    right.plotly_chart(slice_figure(table, metric, chosen.label), key="slice_chart", config={"displayModeBar": False})


def _filters(task: Task, result: RunResult, pairs: pd.DataFrame | None, remarks: list) -> ExampleFilter:
    ex = result.frames.examples
    st.subheader("Examples")
    if st.button("Clear filters", key="clear_filters"):
        for key in FILTER_KEYS:
            st.session_state.pop(key, None)
    row1 = st.columns([1.2, 2, 2, 2])
    status = row1[0].radio("Show", ["all", "wrong", "correct"], horizontal=True, key="f_status")
    labels = _labels(result.key, pairs) if pairs is not None else []
    for key in ("f_gold", "f_pred"):
        if key in st.session_state:
            st.session_state[key] = [v for v in st.session_state[key] if v in labels]
    gold = row1[1].multiselect(f"Gold {task.confusion_label}", labels, key="f_gold")
    pred = row1[2].multiselect(f"Predicted {task.confusion_label}", labels, key="f_pred")
    errors = row1[3].multiselect("Error type", error_type_options(ex), key="f_errors")
    row2 = st.columns([2, 2, 2, 2, 1])
    slice_specs = {spec.label: spec for spec in task.slices}
    slice_label = row2[0].selectbox("Slice", ["(any)"] + list(slice_specs), key="f_slice")
    spec = slice_specs.get(slice_label)
    values = []
    if spec is not None:
        frame = ex if spec.level == "examples" else result.frames.details[spec.level]
        values = row2[1].multiselect("Slice values", sorted(frame[spec.key].dropna().astype(str).unique()), key="f_slice_values")
    tags = row2[2].multiselect("Tagged with", sorted(set(task.error_tags) | set(run_tags(task, result.run, remarks)["tag"])), key="f_tags")
    text = row2[3].text_input("Search the text", key="f_text", help="A substring, or a regular expression with 'regex' ticked")
    regex = row2[4].checkbox("regex", key="f_regex")
    guids = st.session_state.get("f_guids") or None
    if guids:
        st.caption(f"Restricted to the {len(guids)} points selected on the scatter plot.")
    return ExampleFilter(status, gold, pred, errors, spec, values, text, regex, frozenset(guids) if guids else None,
                         tagged_guids(task, result.run, tags, remarks))


@st.fragment
def _examples(task: Task, result: RunResult, pairs: pd.DataFrame | None, results: dict[str, RunResult]) -> None:
    """Filters and the example list; a fragment, so changing a filter redraws only this part of the page."""
    remarks = task_remarks(task)  # one read of the stored annotations for this part of the page
    chosen = _filters(task, result, pairs, remarks)
    try:
        shown = apply_filter(task, result.frames, pairs, chosen)
    except FilterError as err:
        st.error(str(err))
        return
    others = [r for r in results if r != result.run]
    other = st.selectbox("Compare with run", ["(none)"] + others, key="compare") if others else "(none)"
    if other != "(none)":
        shown = _comparison(result, results[other], shown)
    shown, page_size = order_control(task, result, results, shown)
    total = len(result.frames.examples)
    pages = max(1, -(-len(shown) // page_size))
    top = st.columns([1, 3, 2])
    if st.session_state.get("page_no", 1) > pages:
        st.session_state["page_no"] = pages
    page = int(top[0].number_input("Page", 1, pages, key="page_no")) if pages > 1 else 1
    first = (page - 1) * page_size
    top[1].markdown(f"<div class='kv-count' data-shown='{len(shown)}' data-total='{total}'>{len(shown):,} of {total:,} {task.unit}s match "
                    f"(showing {min(first + 1, len(shown))}–{min(first + page_size, len(shown))})</div>", unsafe_allow_html=True)
    top[2].download_button("Download the filtered table (CSV)", lambda: export_frame(shown).to_csv(index=False).encode("utf-8-sig"),
                           file_name=f"{task.name}-{result.run}-examples.csv", mime="text/csv", key="download", on_click="ignore")
    bulk_tagger(task, result, shown)
    by_example = annotations_by_example(task, result.run, remarks)
    if other == "(none)" and compact_view(task, result, shown.iloc[first:first + page_size], by_example):
        return
    for example in shown.iloc[first:first + page_size].to_dict("records"):
        guid = example["guid"]
        if other == "(none)":
            st.markdown(task.render(result.frames, guid), unsafe_allow_html=True)
            editor(task, result, example, by_example.get(guid, []))
        else:
            left, right = st.columns(2)
            left.caption(md(result.run))
            left.markdown(task.render(result.frames, guid), unsafe_allow_html=True)
            right.caption(md(other))
            right.markdown(task.render(results[other].frames, guid) if guid in set(results[other].frames.examples["guid"]) else "(not in this run)",
                           unsafe_allow_html=True)


def _comparison(first: RunResult, second: RunResult, shown: pd.DataFrame) -> pd.DataFrame:
    """Where two runs differ: counts of each agreement case, and the examples of the chosen case."""
    a = first.frames.examples.set_index("guid")["correct"]
    b = second.frames.examples.set_index("guid")["correct"].reindex(a.index)
    case = pd.Series("both wrong", index=a.index)
    case[a & b.fillna(False).astype(bool)] = "both right"
    case[a & ~b.fillna(False).astype(bool)] = f"only {first.run} right"
    case[~a & b.fillna(False).astype(bool)] = f"only {second.run} right"
    counts = case.value_counts()
    left, right = st.columns([2, 3])
    left.dataframe(counts.rename("examples").rename_axis("case").reset_index(), hide_index=True)
    if right.toggle("Is the difference real? (paired bootstrap)", key="paired"):
        right.dataframe(_paired(first.key, second.key, first.task, first, second), hide_index=True,
                        column_config={c: st.column_config.NumberColumn(format="%.2f") for c in ("difference", "95% low", "95% high")})
    options = ["where they differ", "all"] + list(counts.index)
    pick = st.radio("Show", options, horizontal=True, key="compare_case")
    if pick == "all":
        return shown
    keep = case[case.str.startswith("only")].index if pick == "where they differ" else case[case == pick].index
    return shown[shown["guid"].isin(set(keep))]
