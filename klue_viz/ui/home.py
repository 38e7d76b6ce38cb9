"""The home page: where the gold comes from, prediction files for any task, and every run at a glance."""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd
import streamlit as st

from klue_viz.core.problems import InputError, Problem
from klue_viz.drawing.markup import md
from klue_viz.reading.gold_folders import DATA_DIR_ENV, GOLD_ROOTS_ENV, allowed_gold_folder, gold_roots
from klue_viz.reading.uploads import limit_megabytes, limit_text
from klue_viz.scoring.benchmark import PICKS, ModelRun, html_table
from klue_viz.scoring.evaluate import RunResult
from klue_viz.store.annotations import StoreError
from klue_viz.store.gold_choice import SOURCES
from klue_viz.store.kept_scoring import intervals, remove_run
from klue_viz.store.probe_runs import SuiteStore
from klue_viz.store.runs import RunConflict
from klue_viz.tasks import TASKS
from klue_viz.tasks.base import Task
from klue_viz.ui.annotate import home_section
from klue_viz.ui.annotate import store as annotation_store
from klue_viz.ui.common import UI_RESAMPLES, WARNING_ICON, database_notice, guarded, problem_table, setup_page
from klue_viz.ui.links import enter_page, settings_params, write_url
from klue_viz.ui.state import evaluate_runs, gold_for, kept_results, kept_results_or_none, receive_uploads, register_gold_upload, run_store, runs_for
from klue_viz.ui.tables import show_table
from klue_viz.ui.warmup import warm_elements

PAGE_FILES = {name: f"pages/{k}_{name}.py" for k, name in enumerate(TASKS, 1)}


def home_page() -> None:
    setup_page("Home")
    enter_page("home")
    guarded(_body)
    write_url(settings_params())


def _body() -> None:
    st.title("klue-viz")
    st.markdown("Official KLUE metrics, confusion matrices, slices and error inspection for the eight KLUE tasks. "
                "Pick where the gold comes from, drop prediction files below, then open a task page.")
    _gold_source()
    if "run_change" in st.session_state:
        st.success(md(st.session_state.pop("run_change")))
    _uploads()
    _overview()
    home_section()
    warm_elements()  # the task pages opened from here draw their charts and filters without grey placeholders


def _gold_source() -> None:
    st.subheader("Gold")
    state = st.session_state
    choice = st.radio("Gold source", list(SOURCES), format_func=SOURCES.get, horizontal=True, key="gold_source_widget",
                      index=list(SOURCES).index(state["gold_source"]))
    state["gold_source"] = choice
    if choice == "folder":
        roots = gold_roots()
        state["data_dir"] = st.text_input("Folder laid out like klue_benchmark/", value=state["data_dir"], key="data_dir_widget",
                                          help=f"Only folders the server's operator allows ({DATA_DIR_ENV} and {GOLD_ROOTS_ENV}; "
                                               f"{'none is set' if not roots else 'the server log lists them'})")
        if state["data_dir"].strip():
            try:
                allowed_gold_folder(state["data_dir"])
            except InputError as err:
                st.warning(md(err))
    elif choice == "upload":
        files = st.file_uploader("Official gold files (e.g. klue-ner-v1.1_dev.tsv, ynat-v1.1_dev.json)", accept_multiple_files=True, key="gold_upload")
        for upload in files or []:
            try:
                task = register_gold_upload(upload.name, upload.getvalue())
                st.caption(f"{md(upload.name)}: {task.upper()} gold")
            except InputError as err:
                st.error(md(err))
    elif choice == "hf":
        st.caption("Loads `klue/klue` through `datasets`. Without access to the Hugging Face hub each task says so and shows the demo instead.")
    # The setting lives in its own key: a widget's key is dropped when its page is left.
    state["strict"] = st.checkbox("Strict: count gold examples without a prediction as wrong", value=state["strict"], key="strict_widget")


#: What else a harness's output or task folder holds: accepted by the folder uploader, then skipped with a note.
FOLDER_EXTRAS = ("yaml", "yml", "py", "txt", "md", "log")


def _uploads() -> None:
    st.subheader("Prediction files")
    model = st.text_input("Model name (optional; when left empty an uploaded folder, or a zip or the folder inside it, names the model)", key="upload_model")
    files = st.file_uploader(f"Prediction files for any task (JSONL, JSON, CSV, TSV), evaluation-harness logs (lm-evaluation-harness "
                             f"samples .jsonl/.jsonl.gz, Inspect AI .json/.eval, Every Eval Ever .jsonl, lighteval .parquet), or a zip "
                             f"of one model's files; each file's task is detected from guids and fields ({md(limit_text())}).",
                             type=["json", "jsonl", "csv", "tsv", "zip", "gz", "eval", "parquet"], accept_multiple_files=True,
                             key="home_upload", max_upload_size=limit_megabytes())
    # A harness's output folder also holds task YAMLs, scripts and notes: taken here and skipped with one note, since a
    # type the uploader refuses shows a red "not allowed" error for each of them.
    folder = st.file_uploader("Or a folder of one model's prediction files or harness logs (the folder names the model)",
                              type=["json", "jsonl", "csv", "tsv", "gz", "eval", "parquet", *FOLDER_EXTRAS],
                              accept_multiple_files="directory", key="home_folder_upload", max_upload_size=limit_megabytes())
    outcomes = receive_uploads([*(files or []), *(folder or [])], model=model)
    skipped = [o.file for o in outcomes if o.skipped]
    outcomes = [o for o in outcomes if not o.skipped]
    if skipped:
        st.info(md(f"Skipped {len(skipped)} file(s) of the folder that hold no predictions (task YAMLs, scripts, notes): "
                   + ", ".join(skipped[:10]) + (" …" if len(skipped) > 10 else "")))
    for outcome in outcomes:
        if outcome.error:
            st.error(md(outcome.error))
        elif outcome.note:
            st.warning(md(outcome.note))
    if outcomes:
        show_table(st, pd.DataFrame([{"file": o.file, "task": o.task, "run": o.run, "model": o.model,
                                    "stored": "no" if o.error else ("this session only" if o.session_only else "yes")}
                                   for o in outcomes]), hide_index=True, width="stretch")


@st.cache_resource(max_entries=256, show_spinner="Resampling…")
def _intervals(result_key: str, _task: Task, _result: RunResult) -> dict[str, tuple[float, float] | None]:
    return intervals(kept_results_or_none(), _result, UI_RESAMPLES)


def _overview() -> None:
    st.subheader("Models across the benchmark")
    left, right = st.columns([2, 3])
    show_ci = left.toggle(f"95% confidence intervals (bootstrap, {UI_RESAMPLES} resamples)", key="home_ci")
    pick = right.radio("A model with several runs of a task shows", list(PICKS), format_func=PICKS.get, horizontal=True, key="home_pick",
                       help="The latest step: the run whose name carries the largest checkpoint step (ckpt-25000). "
                            "The best: the run best on the task's first official metric. Each cell says which; its other runs are one click away.")
    model_runs, rows, problems = [], [], []
    for name, task in TASKS.items():
        choice = gold_for(task)
        sources = runs_for(task, choice)
        results, failures = evaluate_runs(task, choice)
        for run, result in results.items():
            if result.wrong_gold:
                st.warning(md(f"{name.upper()} {run}: {result.wrong_gold}."), icon=WARNING_ICON)
            model_runs.append(ModelRun(sources[run].model, result, _intervals(result.key, task, result) if show_ci else None,
                                       demo=sources[run].path is not None))
            c = result.coverage
            stored = sources[run].stored
            rows.append({"task": name, "run": run, "model": sources[run].model, "file": result.file, "scored": f"{c.n_scored}/{c.n_gold}",
                         "missing": c.n_missing, "extra": c.n_extra, "records left out": c.n_invalid, "unreadable answers": c.unreadable_answers,
                         "uploaded by": stored.uploader if stored else "", "uploaded at": stored.created_at[:19] if stored else "(demo)"})
            problems += result.problems
        problems += [Problem(reason, file=f"{name}/{run}") for run, reason in failures.items()]
    if model_runs:
        st.markdown(html_table(model_runs, settings_params(), pick), unsafe_allow_html=True)
        st.caption(f"Each cell: the task's official metrics (in the column's order), the run and how many gold examples it covers; "
                   f"with several runs, {PICKS[pick]} of them, said under it, and the others in a fold. Click a run to open its page. "
                   "The embedded demo's models come last, marked.")
    cols = st.columns(4)
    for k, (name, path) in enumerate(PAGE_FILES.items()):
        cols[k % 4].page_link(path, label=f"{name.upper()} page", help=TASKS[name].facts.title)
    if rows:
        st.subheader("Runs")
        show_table(st, pd.DataFrame(rows), hide_index=True, width="stretch", height="content")
    _manage_runs()
    _manage_suites()
    if problems:
        with st.expander(f"{len(problems)} problem(s) found in files"):
            problem_table(problems)


def _manage_runs() -> None:
    """Rename or remove a stored run; removing its annotations too is a separate, explicit choice."""
    try:
        runs = run_store()
        stored = {f"{run.task.upper()} · {run.name}": run for run in runs.list()}
    except StoreError as err:
        database_notice(str(err))
        return
    if not stored:
        return
    with st.expander(f"Rename or remove a stored run ({len(stored)} stored)"):
        label = st.selectbox("Run", list(stored), key="manage_run")
        run = stored[label]
        st.caption(md(f"{run.file_name} · model {run.model or '(none)'} · {run.size:,} bytes · uploaded {run.created_at[:19]}"
                      f"{' by ' + run.uploader if run.uploader else ''}"))
        left, right = st.columns(2)
        new_name = left.text_input("New name", value=run.name, key=f"rename_{run.task}_{run.version}_{run.name}")
        if left.button("Rename", key="rename_run"):
            _change(lambda: runs.rename(run.task, run.name, new_name, expected_version=run.version), f"Renamed to {new_name}.")
        notes = annotation_store()
        kept = len(notes.find(task=run.task, run=run.name)) if notes else 0
        also = right.checkbox(f"Also delete its {kept} annotation(s)", key="remove_annotations", disabled=not kept,
                              help="Left unticked, the annotations are kept and come back if a run of that name is stored again.")
        if right.button("Remove this run", key="remove_run", type="primary"):
            _change(lambda: remove_run(kept_results(), runs, run.task, run.name, run.version, delete_annotations=also),
                    f"Removed {run.name}" + (f" and its {kept} annotation(s)." if also else "; its annotations are kept."))


def _manage_suites() -> None:
    """Remove a stored behavioural test suite and the runs kept on it (`klue-viz runs remove --probes SUITE --whole-suite`)."""
    try:
        suites = SuiteStore(run_store().store)
        stored = {f"{entry.task.upper()} · {entry.name}": entry for entry in suites.entries()}
    except StoreError as err:
        database_notice(str(err))
        return
    if not stored:
        return
    with st.expander(f"Remove a stored suite ({len(stored)} stored)"):
        label = st.selectbox("Suite", list(stored), key="manage_suite")
        entry = stored[label]
        st.caption(md(f"{entry.runs} run(s) kept on it · stored {entry.created_at[:19]}{' by ' + entry.uploader if entry.uploader else ''}; "
                      "its gold files stay, as uploaded golds do"))
        if st.button("Remove this suite and its runs", key="remove_suite", type="primary"):
            _change(lambda: _remove_suite(suites, entry.task, entry.name), f"Removed the suite {entry.name} and its {entry.runs} run(s).")


def _remove_suite(suites: SuiteStore, task: str, name: str) -> None:
    if suites.remove_suite(task, name) is None:
        raise InputError(f"the {task.upper()} suite {name} was removed meanwhile")


def _change(action: Callable[[], object], done: str) -> None:
    try:
        action()
    except (RunConflict, InputError, StoreError) as err:
        st.error(md(err))
        return
    st.session_state["run_change"] = done
    st.rerun()
