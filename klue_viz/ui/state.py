"""Session state and caches of the Streamlit app: which gold is used, which runs are loaded, their scores.

Parsed gold and scored runs are cached by content (path and modification time, or a hash of the
uploaded bytes), shared across sessions and never mutated by the pages.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

import streamlit as st

from klue_viz.demo import DEMO_BENCHMARK, demo_runs
from klue_viz.evaluate import (
    DATA_DIR_ENV, Gold, RunResult, allowed_gold_folder, evaluate_bytes, gold_from_bytes, load_gold, load_hf, official_file,
)
from klue_viz.io import read_records
from klue_viz.problems import InputError
from klue_viz.tasks import TASKS, Task, detect_task

SOURCES = {
    "demo": "Embedded demo",
    "folder": "A folder laid out like klue_benchmark/",
    "upload": "Uploaded official gold files",
    "hf": "Hugging Face klue/klue (validation split)",
}


@dataclass(frozen=True)
class GoldChoice:
    """The gold a page scores against, with a sentence for the user about where it came from."""

    gold: Gold
    key: str
    note: str
    is_demo: bool


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:20]


def init_state() -> None:
    state = st.session_state
    if "gold_source" not in state:
        state["gold_source"] = "folder" if os.environ.get(DATA_DIR_ENV) else "demo"
    state.setdefault("data_dir", os.environ.get(DATA_DIR_ENV, ""))
    state.setdefault("gold_uploads", {})  # task -> (name, bytes)
    state.setdefault("runs", {})  # task -> {run name: (file name, bytes)}
    state.setdefault("strict", False)


# ---- gold ---------------------------------------------------------------------------------------

@st.cache_resource(max_entries=32, show_spinner="Reading the gold file…")
def _gold_from_path(task_name: str, path: str, modified: float) -> Gold:
    return load_gold(TASKS[task_name], path)


@st.cache_resource(max_entries=16, show_spinner="Reading the uploaded gold file…")
def _gold_from_upload(task_name: str, key: str, name: str, _data: bytes) -> Gold:
    return gold_from_bytes(TASKS[task_name], _data, name)


@st.cache_resource(max_entries=8, show_spinner="Loading klue/klue through datasets…")
def _gold_from_hf(task_name: str) -> Gold | str:
    """The validation split, or the one-line reason it could not be loaded (cached too: the hub is slow to fail)."""
    try:
        return load_hf(TASKS[task_name])
    except InputError as err:
        return str(err)


def _demo(task: Task, note: str) -> GoldChoice:
    path = official_file(task, DEMO_BENCHMARK)
    return GoldChoice(_gold_from_path(task.name, str(path), path.stat().st_mtime), f"demo:{path.stat().st_mtime}", note, True)


def gold_for(task: Task) -> GoldChoice:
    """The gold of a task under the session's chosen source; the demo stands in where that source has none."""
    state = st.session_state
    source = state["gold_source"]
    if source == "folder" and state["data_dir"]:
        try:
            folder = allowed_gold_folder(state["data_dir"])  # only under the folders the operator allowed
        except InputError as err:
            return _demo(task, f"{err}. Showing the embedded demo for {task.name.upper()}.")
        found = official_file(task, folder)
        if found is not None:
            modified = found.stat().st_mtime
            try:
                gold = _gold_from_path(task.name, str(found), modified)
            except InputError as err:  # a broken file stays this task's problem; the demo stands in
                return _demo(task, f"{err}. Showing the embedded demo for {task.name.upper()}.")
            return GoldChoice(gold, f"file:{found}:{modified}", f"Gold: {found}", False)
        return _demo(task, f"No {task.official_folder} dev file in {folder}: showing the embedded demo for {task.name.upper()}.")
    if source == "upload" and task.name in state["gold_uploads"]:
        name, data = state["gold_uploads"][task.name]
        key = digest(data)
        try:
            gold = _gold_from_upload(task.name, key, name, data)
        except InputError as err:
            return _demo(task, f"{err}. Showing the embedded demo for {task.name.upper()}.")
        return GoldChoice(gold, f"upload:{key}", f"Gold: uploaded {name}", False)
    if source == "hf":
        loaded = _gold_from_hf(task.name)
        if isinstance(loaded, Gold):
            return GoldChoice(loaded, f"hf:{task.name}", f"Gold: {loaded.source}", False)
        return _demo(task, f"{loaded} Showing the embedded demo meanwhile.")
    if source == "upload":
        return _demo(task, f"No gold file uploaded for {task.name.upper()} yet: showing the embedded demo.")
    return _demo(task, "Gold: the embedded demo set (our own sentences in the official KLUE format).")


def register_gold_upload(name: str, data: bytes) -> str:
    """Keep an uploaded official gold file under the task it belongs to; returns that task's name."""
    for task in TASKS.values():
        if task.official_folder in name:
            st.session_state["gold_uploads"][task.name] = (name, data)
            return task.name
    for task in TASKS.values():
        try:
            gold_from_bytes(task, data, name)
        except Exception:  # noqa: BLE001 - trying each task's reader in turn; the failures are expected
            continue
        st.session_state["gold_uploads"][task.name] = (name, data)
        return task.name
    raise InputError(f"{name}: not an official gold file of any KLUE task")


# ---- runs ---------------------------------------------------------------------------------------

def sniff_task(name: str, data: bytes) -> str:
    """The task a prediction file is for, from its guids and fields."""
    records = read_records(data, name).records
    found = detect_task([r for _, r in records])
    if found is None:
        raise InputError(f"{name}: cannot tell which KLUE task this file is for (no known guid prefix or field)")
    return found


def add_run(task_name: str, name: str, data: bytes) -> str:
    """Load a prediction file as a run of a task; a second file with the same name gets a suffix."""
    runs = st.session_state["runs"].setdefault(task_name, {})
    run = Path(name).stem
    for existing, (_, existing_data) in runs.items():
        if digest(existing_data) == digest(data):
            return existing
    base, k = run, 2
    while run in runs:
        run, k = f"{base}-{k}", k + 1
    runs[run] = (name, data)
    return run


def runs_for(task: Task, choice: GoldChoice) -> dict[str, tuple[str, bytes]]:
    """Uploaded runs of a task, plus the demo runs when the gold is the demo."""
    runs: dict[str, tuple[str, bytes]] = {}
    if choice.is_demo:
        for path in demo_runs(task.name):
            runs[path.stem] = (path.name, path.read_bytes())
    runs.update(st.session_state["runs"].get(task.name, {}))
    return runs


@st.cache_resource(max_entries=64, show_spinner="Scoring…")
def _evaluate(task_name: str, gold_key: str, run_key: str, name: str, run: str, strict: bool, _gold: Gold, _data: bytes) -> RunResult | str:
    try:
        result = evaluate_bytes(TASKS[task_name], _gold, _data, name, strict=strict, run=run)
    except InputError as err:
        return str(err)
    result.key = f"{task_name}|{gold_key}|{run_key}|{run}|{strict}"
    return result


def evaluate_runs(task: Task, choice: GoldChoice) -> tuple[dict[str, RunResult], dict[str, str]]:
    """Scored runs and, separately, the runs that could not be scored with the reason."""
    results, failures = {}, {}
    strict = bool(st.session_state.get("strict", False))
    for run, (name, data) in runs_for(task, choice).items():
        outcome = _evaluate(task.name, choice.key, digest(data), name, run, strict, choice.gold, data)
        if isinstance(outcome, str):
            failures[run] = outcome
        else:
            results[run] = outcome
    return results, failures
