"""The home page: where the gold comes from, prediction files for any task, and every run at a glance."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from klue_viz.evaluate import DATA_DIR_ENV, GOLD_ROOTS_ENV, allowed_gold_folder, gold_roots
from klue_viz.markup import md
from klue_viz.problems import InputError, Problem
from klue_viz.tasks import TASKS
from klue_viz.ui.annotate import home_section
from klue_viz.ui.common import guarded, metric_text, problem_table, setup_page
from klue_viz.ui.links import enter_page, query_string, settings_params, write_url
from klue_viz.ui.state import SOURCES, add_run, evaluate_runs, gold_for, register_gold_upload, sniff_task

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
    _uploads()
    _overview()
    home_section()


def _gold_source() -> None:
    st.subheader("Gold")
    state = st.session_state
    choice = st.radio("Gold source", list(SOURCES), format_func=SOURCES.get, horizontal=True, key="gold_source_widget",
                      index=list(SOURCES).index(state["gold_source"]))
    state["gold_source"] = choice
    if choice == "folder":
        roots = gold_roots()
        state["data_dir"] = st.text_input("Folder laid out like klue_benchmark/", value=state["data_dir"], key="data_dir_widget",
                                          help=f"Allowed under: {', '.join(map(str, roots)) or 'nothing'} "
                                               f"({DATA_DIR_ENV} and {GOLD_ROOTS_ENV}, set by the server's operator)")
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


def _uploads() -> None:
    st.subheader("Prediction files")
    files = st.file_uploader("Prediction files for any task (JSONL, JSON, CSV, TSV); the task is detected from guids and fields",
                             accept_multiple_files=True, key="home_upload")
    found = []
    for upload in files or []:
        data = upload.getvalue()
        try:
            task = sniff_task(upload.name, data)
        except InputError as err:
            found.append({"file": upload.name, "task": "?", "run": "", "note": str(err)})
            continue
        run = add_run(task, upload.name, data)
        found.append({"file": upload.name, "task": task, "run": run, "note": f"{len(data):,} bytes, loaded as a {task.upper()} run"})
    if found:
        st.dataframe(pd.DataFrame(found), hide_index=True, width="stretch")


def _overview() -> None:
    st.subheader("Loaded runs")
    rows, problems = [], []
    for name, task in TASKS.items():
        choice = gold_for(task)
        results, failures = evaluate_runs(task, choice)
        for run, result in results.items():
            c = result.coverage
            metrics = " · ".join(f"{m.key} {metric_text(result.scores.values.get(m.key))}" for m in task.metrics)
            rows.append({"task": name, "page": f"/{name}" + query_string({**settings_params(), "run": [run]}), "run": run, "metrics": metrics, "scored": f"{c.n_scored}/{c.n_gold}",
                         "missing": c.n_missing, "extra": c.n_extra, "unreadable": c.n_invalid, "gold": "demo" if choice.is_demo else choice.note})
            problems += result.problems
        problems += [Problem(reason, file=f"{name}/{run}") for run, reason in failures.items()]
    if rows:
        st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch", height="content",
                     column_config={"page": st.column_config.LinkColumn("page", display_text="open")})
    cols = st.columns(4)
    for k, (name, path) in enumerate(PAGE_FILES.items()):
        cols[k % 4].page_link(path, label=f"{name.upper()} page", help=TASKS[name].title)
    if problems:
        with st.expander(f"{len(problems)} problem(s) found in files"):
            problem_table(problems)
