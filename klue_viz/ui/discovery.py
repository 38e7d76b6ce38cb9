"""The 'Find the errors' panel of a task page: calibration, weak slices and likely gold errors.

Thin: every number comes from `klue_viz.discovery`, cached per run (and pair of runs) by RunResult.key,
and only the view the user picked is computed.
"""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import streamlit as st

from klue_viz.core.problems import InputError
from klue_viz.discovery.calibration import Calibration, coverage_curve, predicted_confidence, run_calibration
from klue_viz.discovery.features import training_features, with_training
from klue_viz.discovery.patch import corrections_from, make_patch
from klue_viz.discovery.slices import FoundSlice, PairedSlice, WeakSlice, error_tags, paired_slices, slice_guids, slice_name, slices_header, units, weak_slices
from klue_viz.discovery.sorting import (
    SUSPECT_RANK,
    sort_examples,
    sort_keys,
    suspect_ranks,
)
from klue_viz.discovery.suspects import evidence_details, evidence_frame, queue_frame
from klue_viz.drawing.charts import coverage_figure, reliability_figure
from klue_viz.drawing.markup import esc, md
from klue_viz.reading.gold_folders import allowed_gold_file, allowed_gold_folder
from klue_viz.reading.uploads import limit_megabytes, limit_text
from klue_viz.scoring.bootstrap import compare_runs, confidence_intervals
from klue_viz.scoring.evaluate import Gold, RunResult, gold_from_bytes, load_gold, official_file
from klue_viz.scoring.filtering import export_frame
from klue_viz.scoring.slicing import slice_table
from klue_viz.store.gold_marks import mark_gold_wrong
from klue_viz.store.kept_scoring import kept_view
from klue_viz.tasks import get_task
from klue_viz.tasks.base import Task
from klue_viz.tasks.kit import Suspect
from klue_viz.ui.annotate import annotator, editor, store, task_remarks
from klue_viz.ui.common import UI_RESAMPLES
from klue_viz.ui.links import SELECTED_GUIDS, WEAK_SLICE, WEAK_SLICE_WANTED, clear_filters
from klue_viz.ui.review import review_panel, suspect_queue
from klue_viz.ui.state import base_text, digest, gold_for, kept_results_or_none
from klue_viz.ui.tables import show_table

CALIBRATION = "Calibration"
SLICES = "Weak slices"
SUSPECTS = "Likely gold errors"
REVIEW = "Review the gold"
PAGE_SIZES = (10, 25, 50, 100)
ERROR_RATE_COLUMN = st.column_config.NumberColumn("error rate", format="%.1f%%")
COMPACT_COLUMNS = ("gold", "pred", "correct", "confidence", "abs_error")


def discovery_panel(task: Task, result: RunResult, results: dict[str, RunResult]) -> None:
    """What to look at first, for the inspected run (and the other runs of the page)."""
    st.subheader("Find the errors")
    _linked_slice(task, result)
    views = [SLICES, SUSPECTS, REVIEW]
    if _calibration_of(result.key, task, result)[0] is not None:
        views.append(CALIBRATION)
    elif task.labels is not None:
        st.caption(calibration_hint(result.run))
    view = st.segmented_control("View", views, default=views[0], key="discovery_view", label_visibility="collapsed")
    if view == CALIBRATION:
        _calibration(task, result, results)
    elif view == SLICES:
        _weak_slices(task, result, results)
    elif view == SUSPECTS:
        _suspects(task, results)
    elif view == REVIEW:
        review_panel(task, result, results, gold_for(task).gold)


def _tags(task: Task, run: str) -> tuple[str, dict[str, set[str]]]:
    """The error tags of a run by example guid, and a key that changes when they do (for the caches)."""
    tags = error_tags(task, run, task_remarks(task))
    return str(sorted((g, sorted(t)) for g, t in tags.items())), tags


@st.cache_resource(max_entries=64, show_spinner="Searching slices…")
def _found(result_key: str, tags_key: str, train_key: str, _task: Task, _result: RunResult, _tags: dict, _train: Gold | None) -> list[WeakSlice]:
    """The run's weak slices, kept beside its kept result (computed once, not on every server start)."""
    found: list[WeakSlice] = kept_view(kept_results_or_none(), [_result], "weak_slices", f"{tags_key}|{train_key}|top=10",
                                       lambda: weak_slices(_task, _result.frames, tags=_tags, extra=_extra(train_key, _task, _result, _train), top=10),
                                       types=[WeakSlice])
    return found


@st.cache_resource(max_entries=32, show_spinner="Searching where the runs differ…")
def _found_paired(first_key: str, second_key: str, tags_key: str, train_key: str, _task: Task, _first: RunResult, _second: RunResult,
                  _tags: dict, _train: Gold | None) -> list[PairedSlice]:
    found: list[PairedSlice] = kept_view(kept_results_or_none(), [_first, _second], "paired_slices", f"{tags_key}|{train_key}|top=10",
                                         lambda: paired_slices(_task, _first, _second, tags=_tags, extra=_extra(train_key, _task, _first, _train),
                                                               top=10),
                                         types=[PairedSlice])
    return found


def _extra(train_key: str, task: Task, result: RunResult, train: Gold | None) -> pd.DataFrame | None:
    return training_features(task, result.frames, train) if train is not None else None


@st.cache_resource(max_entries=8, show_spinner="Reading the training file…")
def _train_gold(task_name: str, key: str, name: str, _data: bytes) -> Gold:
    return gold_from_bytes(get_task(task_name), _data, name)


@st.cache_resource(max_entries=8, show_spinner="Reading the training file…")
def _train_from_folder(task_name: str, path: str, modified: float) -> Gold:
    return load_gold(get_task(task_name), path)


def _folder_training(task: Task) -> Path | None:
    """The task's `_train` file beside the gold, when the gold comes from an allowed klue_benchmark/ folder."""
    state = st.session_state
    if state.get("gold_source") != "folder" or not state.get("data_dir"):
        return None
    try:
        found = official_file(task, allowed_gold_folder(state["data_dir"]), split="train")
        return allowed_gold_file(found) if found is not None else None
    except InputError:
        return None


def _training(task: Task) -> tuple[str, Gold | None]:
    """The training gold of this task, from the gold folder or uploaded (kept for the session), and its cache key."""
    if task.training is None:
        return "", None
    beside = _folder_training(task)
    if beside is not None and st.toggle(f"Seen in training: use {md(beside.name)} from the gold folder", key="train_from_folder"):
        modified = beside.stat().st_mtime
        try:
            train = _train_from_folder(task.facts.name, str(beside), modified)
        except InputError as err:
            st.error(md(err))
            return "", None
        st.caption(md(f"Training file {beside}: {len(train.rows):,} records") + (f" ({len(train.problems)} skipped)" if train.problems else ""))
        return f"file:{beside}:{modified}", train
    upload = st.file_uploader(f"{task.facts.name.upper()} training file, official format (optional: adds 'seen in training' slices; {md(limit_text())})",
                              key="train_upload", max_upload_size=limit_megabytes())
    if upload is not None:
        st.session_state.setdefault("train_files", {})[task.facts.name] = (upload.name, upload.getvalue())
    kept = st.session_state.get("train_files", {}).get(task.facts.name)
    if kept is None:
        return "", None
    name, data = kept
    key = digest(data)
    try:
        train = _train_gold(task.facts.name, key, name, data)
    except InputError as err:
        st.error(md(err))
        return "", None
    st.caption(md(f"Training file {name}: {len(train.rows):,} records") + (f" ({len(train.problems)} skipped)" if train.problems else ""))
    return key, train


@st.cache_resource(max_entries=128, show_spinner="Resampling the slice…")
def _slice_intervals(result_key: str, guids_key: str, _task: Task, _result: RunResult, _guids: list[str]) -> dict[str, tuple[float, float] | None]:
    return confidence_intervals(_task, _result.frames.subset(_guids), samples=UI_RESAMPLES)


@st.cache_resource(max_entries=128, show_spinner="Resampling both runs on the slice…")
def _paired_slice_intervals(better_key: str, worse_key: str, guids_key: str, _task: Task, _better: RunResult, _worse: RunResult,
                            _guids: list[str]) -> dict[str, tuple[float, float]]:
    """The 95% interval of (better - worse) on each official metric over the slice's examples, as `klue-viz slices` gives."""
    rows = compare_runs(_task, _better.frames.subset(_guids), _worse.frames.subset(_guids), samples=UI_RESAMPLES)
    return {c.metric: (c.low, c.high) for c in rows if c.low is not None and c.high is not None}


def _condition_text(item: FoundSlice) -> str:
    return slice_name(item)  # the CLI's name too


def _apply(guids: list[str], conditions: dict[str, str]) -> None:
    """A found slice becomes the example filter (a guid restriction, as a chart selection is), in place of the filters set before;
    its conditions go into the URL (`wslice=`)."""
    clear_filters()
    st.session_state[SELECTED_GUIDS] = guids
    st.session_state[WEAK_SLICE] = (dict(conditions), list(guids))


#: Characters of a slice name one line of its 260 px cell holds (Korean and Latin mixed), and the most lines a row grows to.
LINE_CHARS, MAX_LINES = 34, 4


def slice_row_height(names: list[str]) -> int | None:
    """Rows tall enough for the longest slice name to wrap whole in its cell (a grid cuts a long one short:
    `Particle attached to the entity (경찰+은) = anoth…`); None (the grid's own height) when every name fits one line."""
    lines = min(MAX_LINES, max((math.ceil(len(name) / LINE_CHARS) for name in names), default=1))
    return None if lines <= 1 else 10 + 20 * lines


def _slice_columns(task: Task, table: pd.DataFrame) -> dict:
    """Widths in pixels that fit the page's column at 1400 px (about 940 px) with two runs' columns (the slice name wraps
    over more lines of a taller row beyond 260 px: `slice_row_height`); error rate a share as in the slice table, metrics with two decimals."""
    small, medium = 60, 100
    columns: dict = {
        "slice": st.column_config.TextColumn("slice", width=260),
        "size": st.column_config.NumberColumn("size", width=small),
        "unit": st.column_config.TextColumn("unit", width=70),
        "errors": st.column_config.NumberColumn("errors", width=small),
        "error rate": st.column_config.NumberColumn("error rate", format="%.1f%%", width=75),
        "worse run": st.column_config.TextColumn("worse run", width=110),
        "difference": st.column_config.NumberColumn("difference", format="%.2f", width=80),
    }
    for metric in task.facts.metrics:
        columns[metric.key] = st.column_config.NumberColumn(metric.key, format="%.2f", width=medium, help=metric.label)
    return {name: config for name, config in columns.items() if name in table}


def _linked_slice(task: Task, result: RunResult) -> None:
    """A link's weak slice (`wslice=`), recomputed on the inspected run and applied; a feature this page lacks is named in a warning."""
    conditions = st.session_state.pop(WEAK_SLICE_WANTED, None)
    if not conditions:
        return
    _, tags = _tags(task, result.run)
    found = units(task, result.frames, tags)
    unknown = [name for name in conditions if name not in found.features.columns]
    if unknown:
        st.warning(md(f"The link's wslice names {', '.join(unknown)}, not a slice feature of this page "
                      "(a training feature needs its training file first): the slice is ignored."))
        return
    guids = slice_guids(task, result.frames, conditions, tags)
    st.session_state[SELECTED_GUIDS] = guids  # the link's other filters stay as it gives them
    st.session_state[WEAK_SLICE] = (dict(conditions), list(guids))


def _weak_slices(task: Task, result: RunResult, results: dict[str, RunResult]) -> None:
    tags_key, tags = _tags(task, result.run)
    train_key, train = _training(task)
    if train is not None:
        frames, spec = with_training(task, result.frames, train.rows)
        st.markdown(f"**{md(spec.label)}**")
        show_table(st, slice_table(task, frames, spec), hide_index=True, width="stretch")
    others = [name for name in results if name != result.run]
    other = st.selectbox("Slices where", [None, *others], key="discovery_against",
                         format_func=lambda o: f"{result.run} fails most" if o is None else f"{result.run} and {o} differ most") if others else None
    found: list[WeakSlice] | list[PairedSlice]
    if other is None:
        found = _found(result.key, tags_key, train_key, task, result, tags, train)
    else:
        found = _found_paired(result.key, results[other].key, tags_key, train_key, task, result, results[other], tags, train)
    if not found:
        st.caption("No slice of at least 1% of the units is worse than the whole run.")
        return
    metric_keys = [m.key for m in task.facts.metrics]
    st.markdown(f"**{md(slices_header(task, [result.run] + ([other] if other else []), found[0].unit))}**")
    rows = []
    for item in found:
        row = {"slice": _condition_text(item), "size": item.size, "unit": item.unit, "errors": item.errors, "error rate": item.error_rate}
        if isinstance(item, PairedSlice):
            row.update({"worse run": item.worse, "difference": item.difference})
        row.update({k: item.metrics.get(k) for k in metric_keys})
        rows.append(row)
    st.caption(md("Conjunctions of up to 3 conditions over the slice features and your error tags, ranked by how much worse than "
                  "the whole run they are, weighted by size (SliceLine's score). Select a row for its 95% interval and its examples."))
    table = pd.DataFrame(rows)
    event = show_table(st, table, hide_index=True, width="stretch", on_select="rerun", selection_mode="single-row", key="weak_slice_table",
                         column_config=_slice_columns(task, table), row_height=slice_row_height(list(table["slice"])))
    chosen = event.selection.rows if event is not None else []
    if not chosen:
        return
    item = found[chosen[0]]
    conditions = item.conditions
    if isinstance(item, PairedSlice) and item.unit == "entities":
        conditions = {**conditions, "side": "gold"}  # two runs are compared on the gold entities they share
    guids = slice_guids(task, result.frames, conditions, tags, _extra(train_key, task, result, train))
    guids_key = digest("\n".join(guids).encode())  # the slice's examples now (tags stored since change a tag slice)
    if isinstance(item, PairedSlice):
        better, worse = results[item.better], results[item.worse]
        spans = _paired_slice_intervals(better.key, worse.key, guids_key, task, better, worse, guids)
        st.caption(md(f"{_condition_text(item)}: {len(guids)} {task.facts.unit}s; {better.run} − {worse.run}, 95% interval (paired bootstrap, "
                      f"{UI_RESAMPLES} resamples) " + ", ".join(f"{k} [{v[0]:.2f}, {v[1]:.2f}]" for k, v in spans.items())))
    else:
        defined = _slice_intervals(result.key, guids_key, task, result, guids)  # None where a metric is undefined on every resample
        st.caption(md(f"{_condition_text(item)}: {len(guids)} {task.facts.unit}s; 95% interval ({UI_RESAMPLES} resamples) "
                      + ", ".join(f"{k} [{v[0]:.2f}, {v[1]:.2f}]" for k, v in defined.items() if v)))
    st.button(f"Show these {len(guids)} {task.facts.unit}s below", key="apply_weak_slice", on_click=_apply, args=(guids, conditions))


def calibration_hint(run: str) -> str:
    """Where the Calibration view is when the inspected run gave no class probabilities: it is offered for a run that did
    (finding which would read every run's frames on each page load, so the hint names the way instead)."""
    return md(f"Calibration: {run} gave no class probabilities (a `probs` field), so there is no Calibration view for it. "
              "Inspect a run that gave them (the run picker above) and the view appears here, beside Weak slices.")


@st.cache_resource(max_entries=64, show_spinner=False)
def _calibration_of(result_key: str, _task: Task, _result: RunResult) -> tuple[Calibration | None, pd.DataFrame | None]:
    cal = run_calibration(_task, _result.frames.examples)
    curve = coverage_curve(*predicted_confidence(_result.frames.examples, _task.labels)) if cal and _task.labels is not None else None
    return cal, curve


def _calibration(task: Task, result: RunResult, results: dict[str, RunResult]) -> None:
    cal, _ = _calibration_of(result.key, task, result)
    if cal is None:  # discovery_panel offers this view only for a run with class probabilities
        return
    left, right = st.columns(2)
    with left:
        st.markdown(f"**Reliability of {md(result.run)}** — ECE {cal.ece:.2f} · MCE {cal.mce:.2f} "
                    f"<span class='kv-kv'>(10 equal-width bins, 0..100; {cal.n:,} {esc(task.facts.unit)}s with probabilities)</span>",
                    unsafe_allow_html=True)
        st.plotly_chart(reliability_figure(cal.bins, result.run), key="reliability", config={"displayModeBar": False})
    curves = {}
    for name, other in results.items():
        found, curve = _calibration_of(other.key, task, other)
        if found is not None:
            curves[name] = curve
    with right:
        st.markdown("**Accuracy when the least confident are set aside**")
        st.plotly_chart(coverage_figure(curves), key="coverage", config={"displayModeBar": False})
    table = pd.DataFrame(cal.bins).rename(columns={"low": "from", "high": "to"})
    show_table(st, table, hide_index=True, width="stretch",
                 column_config={c: st.column_config.NumberColumn(format="%.2f") for c in ("accuracy", "confidence")})
    st.caption(md("Confidence is also a slice (Metrics per slice, filters) and a sort key of the example list."))


def _queue(task: Task, runs: list[RunResult]) -> list[Suspect]:
    """The page's suspect queue (cached with the review's, klue_viz.ui.review)."""
    return suspect_queue(tuple(r.key for r in runs), task, runs, gold_for(task).gold)


def official_source(task: Task) -> tuple[str, str] | None:
    """The text and name of the gold file in use, for the patch (None for gold from the Hugging Face hub)."""
    return base_text(task, gold_for(task))


def _suspects(task: Task, results: dict[str, RunResult]) -> None:
    runs = list(results.values())
    found = _queue(task, runs)
    st.caption(md(f"Units whose gold every run ({len(runs)}) disagrees with in the same way; more runs and more confident runs rank "
                  "higher, and cleanlab's label quality adds in where runs give probabilities. Ties are broken by the runs' mean "
                  "confidence in the proposal (higher first), then by cleanlab's label quality (lower first). "
                  "Load more runs for a sharper queue."))
    if not found:
        st.caption("No unit where the runs agree against the gold.")
        return
    table = queue_frame(found)
    event = show_table(st, table, hide_index=True, width="stretch", on_select="rerun", selection_mode="single-row", key="suspect_table",
                         column_config={**{c: st.column_config.NumberColumn(format="%.3f") for c in ("score", "confidence", "label quality")},
                                        "text": st.column_config.TextColumn(width="large")})
    chosen = event.selection.rows if event is not None else []
    if chosen:
        suspect = found[chosen[0]]
        guid = task.example_guid(suspect.guid, suspect.turn)
        first = runs[0]
        if guid in set(first.frames.examples["guid"]):
            st.markdown(task.render(first.frames, guid), unsafe_allow_html=True)
        st.markdown(f"**Evidence**: gold {md(suspect.gold)} → proposed {md(suspect.proposed)}")
        show_table(st, export_frame(evidence_frame(suspect)), hide_index=True, width="stretch",
                     column_config={c: st.column_config.NumberColumn(format="%.3f") for c in ("confidence", "p(gold)", "p(proposed)")})
        details = evidence_details(suspect)
        if not details.empty:
            show_table(st, export_frame(details), hide_index=True, width="stretch")
        st.button(f"Gold looks wrong: propose {md(suspect.proposed)}", key="mark_suspect", on_click=_mark, args=(task, suspect),
                  disabled=not annotator(), help=None if annotator() else "Set your name in the sidebar to annotate.")
    _patch(task)


def _mark(task: Task, suspect: Suspect) -> None:
    db = store()
    if db is None:
        return
    mark_gold_wrong(db, task, suspect, annotator())
    st.toast(md(f"Marked {suspect.guid}: gold looks wrong, proposed {suspect.proposed}"))


def _patch(task: Task) -> None:
    """The marked corrections as a patch in the official format (corrected records only)."""
    corrections = corrections_from([a for a in task_remarks(task) if a.run == "gold"], task)
    if not corrections:
        return
    source = official_source(task)
    if source is None:
        st.caption("A patch needs the official gold file; gold from the Hugging Face hub has none.")
        return
    text, name = source[0], Path(source[1]).name
    try:
        patch = make_patch(task, text, name, corrections)
    except InputError as err:
        st.error(md(err))
        return
    stem, _, ext = name.rpartition(".")
    st.download_button(f"Download the {patch.records} corrected record(s) as a patch ({md(name)} format)", patch.text.encode("utf-8"),
                       file_name=f"{stem}.corrections.{ext}", key="download_patch", on_click="ignore")
    if patch.problems:
        st.caption(f"{len(patch.problems)} correction(s) could not be read and are left out of the patch.")


def order_control(task: Task, result: RunResult, results: dict[str, RunResult], shown: pd.DataFrame) -> tuple[pd.DataFrame, int]:
    """The example list's order (what matters first) and page size, as the user chose them."""
    left, right = st.columns([3, 1])
    keys = [*sort_keys(task, result.frames), SUSPECT_RANK]
    key = left.selectbox("Sort by", keys, key="sort_by")
    size = right.selectbox("Per page", PAGE_SIZES, key="page_size")
    ranks = None
    if key == SUSPECT_RANK:
        runs = list(results.values())
        ranks = suspect_ranks(task, _queue(task, runs))
    return sort_examples(task, result.frames, shown, key, ranks), int(size)


def compact_view(task: Task, result: RunResult, rows: pd.DataFrame, by_example: dict) -> bool:
    """YNAT, NLI, STS: one table row per example, the full drawing of the chosen one below; False when not used."""
    if not task.view.compact_table or not st.toggle("Compact table (one row per example)", key="compact"):
        return False
    columns = ["guid", *task.facts.text_columns, *(c for c in COMPACT_COLUMNS if c in rows)]
    event = show_table(st, export_frame(rows[columns]), hide_index=True, width="stretch", on_select="rerun",
                         selection_mode="single-row", key="compact_table",
                         column_config={c: st.column_config.NumberColumn(format="%.3f") for c in ("confidence", "abs_error")})
    chosen = event.selection.rows if event is not None else []
    if chosen:
        example = rows.iloc[chosen[0]].to_dict()
        st.markdown(task.render(result.frames, example["guid"]), unsafe_allow_html=True)
        editor(task, result, example, by_example.get(example["guid"], []))
    else:
        st.caption("Select a row for its full drawing.")
    return True
