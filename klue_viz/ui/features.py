"""'Your own columns' on a task page: upload a guid-keyed file, pick one kept on the server, see how it was read.

The chosen file's columns go onto every run's frames (klue_viz.scoring.user_features), so the slice table,
the filters, the example orders and the weak slices offer them like the task's own features. The
files are kept in the annotation database (klue_viz.store.feature_files) and the URL names
the chosen one by its address (`features=`), so a link opens the same columns.
"""

from __future__ import annotations

import streamlit as st
from sqlalchemy.exc import SQLAlchemyError

from klue_viz.core.problems import InputError, Problem
from klue_viz.drawing.markup import md
from klue_viz.reading.uploads import limit_megabytes
from klue_viz.scoring.evaluate import Gold, RunResult
from klue_viz.scoring.user_features import QUANTILE_BINS, TOP_CATEGORIES, UserFeatures, read_features, summary, with_features
from klue_viz.store.annotations import Store, StoreError, database_url
from klue_viz.store.feature_files import FeatureFile, FeatureFileStore
from klue_viz.tasks import get_task
from klue_viz.tasks.base import Task
from klue_viz.ui.common import problem_table
from klue_viz.ui.links import FEATURES
from klue_viz.ui.state import GoldChoice

NONE = "(none)"
#: Characters of a file's address a link carries (enough to tell the files of a task apart).
LINK_DIGITS = 12
HOW = (f"A CSV, TSV or JSONL file with a `guid` column (plus `turn` for WoS; `start` and `end` make NER columns entity-level) "
       f"and any columns of yours. Numbers are binned into {QUANTILE_BINS} quantile bins (quartiles, closed on the right; a column "
       f"with at most {QUANTILE_BINS} distinct numbers keeps its values), text keeps its {TOP_CATEGORIES} most frequent values "
       f"and pools the rest as `other`. Each column becomes a slice, a filter, a weak-slice feature and (numbers) an example order.")


@st.cache_resource(show_spinner=False)
def _files(url: str) -> FeatureFileStore:
    return FeatureFileStore(Store(url))


@st.cache_resource(max_entries=16, show_spinner="Reading your columns…")
def _read(task_name: str, gold_key: str, digest: str, name: str, _data: bytes, _gold: Gold) -> tuple[UserFeatures, list[Problem]] | str:
    try:
        return read_features(_data, name, get_task(task_name), _gold.rows)
    except InputError as err:
        return str(err)


@st.cache_resource(max_entries=64, show_spinner=False)
def _featured(result_key: str, digest: str, _result: RunResult, _features: UserFeatures) -> RunResult:
    return with_features(_result, _features)


def features_panel(task: Task, choice: GoldChoice, results: dict[str, RunResult]) -> dict[str, RunResult]:
    """The panel, and the runs with the chosen file's columns on their frames (the runs as they are without one)."""
    try:
        files = _files(database_url())
        stored = files.list(task.facts.name)
    except (StoreError, SQLAlchemyError) as err:
        st.caption(md(f"Your own columns are unavailable: the database cannot be read ({err})."))
        return results
    state = st.session_state
    wanted = state.get(FEATURES)
    chosen = next((f for f in stored if wanted and f.sha256.startswith(wanted)), None)
    with st.expander("Your own columns" + (f": {chosen.file_name}" if chosen else ""), expanded=bool(wanted and chosen is None)):
        st.caption(HOW)
        upload = st.file_uploader("Add a file of your columns", type=["csv", "tsv", "jsonl", "json", "txt"], key="features_upload",
                                  max_upload_size=limit_megabytes())
        if upload is not None and state.get("features_received") != (upload.file_id, task.facts.name):
            state["features_received"] = (upload.file_id, task.facts.name)
            try:
                added = files.add(task.facts.name, upload.name, upload.getvalue(), uploader=state.get("annotator_name", ""))
            except (InputError, StoreError, SQLAlchemyError) as err:
                st.error(md(f"{upload.name}: not kept: {err}"))
            else:
                stored = files.list(task.facts.name)
                chosen = added
                state[FEATURES] = added.sha256[:LINK_DIGITS]
        if wanted and chosen is None:
            st.warning(md(f"The link names a columns file ({wanted}) this server does not have for {task.facts.name.upper()}."))
        options = [NONE] + [f.sha256 for f in stored]
        names = {f.sha256: _name(f) for f in stored}
        state["features_pick"] = chosen.sha256 if chosen else NONE
        st.selectbox("Columns in use", options, key="features_pick", format_func=lambda s: names.get(s, s),
                     on_change=_picked)
        if chosen is None:
            return results
        data = files.data(task.facts.name, chosen.sha256)
        if data is None:
            st.warning("That columns file was removed meanwhile.")
            return results
        read = _read(task.facts.name, choice.key, chosen.sha256, chosen.file_name, data, choice.gold)
        if isinstance(read, str):
            st.error(md(read))
            return results
        features, problems = read
        st.caption(md(summary(features, problems)))
        if problems:
            with st.expander(f"{len(problems)} row(s) of {md(chosen.file_name)} left out or cells left empty"):
                problem_table(problems)
    return {run: _featured(result.key, chosen.sha256, result, features) for run, result in results.items()}


def _name(item: FeatureFile) -> str:
    return f"{item.file_name} · {item.sha256[:8]} · {item.created_at[:16]}" + (f" · {item.uploader}" if item.uploader else "")


def _picked() -> None:
    pick = st.session_state.get("features_pick")
    st.session_state[FEATURES] = None if pick in (None, NONE) else pick[:LINK_DIGITS]
