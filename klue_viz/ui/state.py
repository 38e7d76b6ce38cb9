"""Session state and caches of the Streamlit app: which gold is used, which runs there are, their scores.

Runs live in the database (klue_viz/annotations/runs.py), so every session of a server sees the
same ones and they survive a restart. Parsed gold and scored runs are cached by content (path and
modification time, or a hash of the bytes), once per server, and never mutated by the pages; the
scored runs in a cache bounded in bytes and time (KLUE_VIZ_CACHE_MB, KLUE_VIZ_CACHE_TTL seconds).
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import streamlit as st

from klue_viz.annotations.runs import Run, RunConflict, RunStore
from klue_viz.annotations.store import Store, StoreError, database_url
from klue_viz.cache import BoundedCache, frame_bytes
from klue_viz.demo import DEMO_BENCHMARK, demo_runs
from klue_viz.evaluate import (
    Gold,
    RunResult,
    evaluate_bytes,
    gold_from_bytes,
    load_gold,
    load_hf,
    official_file,
)
from klue_viz.gold_folders import DATA_DIR_ENV, allowed_gold_folder
from klue_viz.io import read_records
from klue_viz.markup import md
from klue_viz.problems import InputError
from klue_viz.tasks import TASKS, Task, detect_task
from klue_viz.uploads import check_size
from klue_viz.workspace import prediction_files

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
    assert path is not None, f"the embedded demo has no {task.facts.name} file"  # shipped with the package
    return GoldChoice(_gold_from_path(task.facts.name, str(path), path.stat().st_mtime), f"demo:{path.stat().st_mtime}", note, True)


def gold_for(task: Task) -> GoldChoice:
    """The gold of a task under the session's chosen source; the demo stands in where that source has none."""
    state = st.session_state
    source = state["gold_source"]
    if source == "folder" and state["data_dir"]:
        try:
            folder = allowed_gold_folder(state["data_dir"])  # only under the folders the operator allowed
        except InputError as err:
            return _demo(task, f"{err}. Showing the embedded demo for {task.facts.name.upper()}.")
        found = official_file(task, folder)
        if found is not None:
            modified = found.stat().st_mtime
            try:
                gold = _gold_from_path(task.facts.name, str(found), modified)
            except InputError as err:  # a broken file stays this task's problem; the demo stands in
                return _demo(task, f"{err}. Showing the embedded demo for {task.facts.name.upper()}.")
            return GoldChoice(gold, f"file:{found}:{modified}", f"Gold: {found}", False)
        return _demo(task, f"No {task.facts.official_folder} dev file in {folder}: showing the embedded demo for {task.facts.name.upper()}.")
    if source == "upload" and task.facts.name in state["gold_uploads"]:
        name, data = state["gold_uploads"][task.facts.name]
        key = digest(data)
        try:
            gold = _gold_from_upload(task.facts.name, key, name, data)
        except InputError as err:
            return _demo(task, f"{err}. Showing the embedded demo for {task.facts.name.upper()}.")
        return GoldChoice(gold, f"upload:{key}", f"Gold: uploaded {name}", False)
    if source == "hf":
        loaded = _gold_from_hf(task.facts.name)
        if isinstance(loaded, Gold):
            return GoldChoice(loaded, f"hf:{task.facts.name}", f"Gold: {loaded.source}", False)
        return _demo(task, f"{loaded} Showing the embedded demo meanwhile.")
    if source == "upload":
        return _demo(task, f"No gold file uploaded for {task.facts.name.upper()} yet: showing the embedded demo.")
    return _demo(task, "Gold: the embedded demo set (our own sentences in the official KLUE format).")


def register_gold_upload(name: str, data: bytes) -> str:
    """Keep an uploaded official gold file under the task it belongs to; returns that task's name."""
    for task in TASKS.values():
        if task.facts.official_folder in name:
            st.session_state["gold_uploads"][task.facts.name] = (name, data)
            return task.facts.name
    for task in TASKS.values():
        try:
            gold_from_bytes(task, data, name)
        except Exception:  # noqa: BLE001 - trying each task's reader in turn; the failures are expected
            continue
        st.session_state["gold_uploads"][task.facts.name] = (name, data)
        return task.facts.name
    raise InputError(f"{name}: not an official gold file of any KLUE task")


# ---- runs ---------------------------------------------------------------------------------------

CACHE_MB_ENV = "KLUE_VIZ_CACHE_MB"
CACHE_TTL_ENV = "KLUE_VIZ_CACHE_TTL"


@dataclass(frozen=True)
class RunSource:
    """Where a run's bytes are: a stored run (read from the database when first scored) or a demo file."""

    name: str
    file_name: str
    digest: str
    model: str
    stored: Run | None = None
    path: Path | None = None

    def read(self, runs: RunStore | None) -> bytes:
        if self.path is not None:
            return self.path.read_bytes()
        assert runs is not None and self.stored is not None
        return runs.data(self.stored.sha256)


@dataclass
class UploadOutcome:
    file: str
    task: str = "?"
    run: str = ""
    model: str = ""
    error: str = ""


@st.cache_resource(show_spinner=False)
def _run_store(url: str) -> RunStore:
    return RunStore(Store(url))


def run_store() -> RunStore:
    """The server's run store (the annotation database); StoreError says why it cannot be opened."""
    return _run_store(database_url())


def run_store_or_none() -> RunStore | None:
    try:
        return run_store()
    except StoreError:
        return None


def add_run(task_name: str, name: str, data: bytes, model: str = "") -> str:
    """Store a prediction file as a run of a task (the same bytes give back their run); returns the run's name."""
    return run_store().add(task_name, name, data, model=model, uploader=st.session_state.get("annotator_name", "")).name


def receive_uploads(uploads, task: str | None = None, model: str = "") -> list[UploadOutcome]:
    """Store newly uploaded files (a zip: each member) as runs; files already received in this session are skipped.

    Each file is checked against the size limit before it is read, its task detected unless given, and
    stored in one transaction: a refused file leaves nothing behind.
    """
    seen = st.session_state.setdefault("received_uploads", set())
    outcomes = []
    for upload in uploads or []:
        ident = getattr(upload, "file_id", None) or (upload.name, upload.size)
        if ident in seen:
            continue
        seen.add(ident)
        try:
            check_size(upload.name, upload.size)
            files = prediction_files(upload.name, upload.getvalue())
        except InputError as err:
            outcomes.append(UploadOutcome(upload.name, error=str(err)))
            continue
        for file in files:
            outcome = UploadOutcome(file.name, model=model.strip() or file.model)
            try:
                outcome.task = task_of(file.name, file.data, task)
                outcome.run = add_run(outcome.task, file.name, file.data, outcome.model)
            except (InputError, StoreError, RunConflict) as err:
                outcome.error = str(err)
            outcomes.append(outcome)
    return outcomes


def task_of(name: str, data: bytes, page_task: str | None = None) -> str:
    """The task a file will be stored under, checked before anything is stored: a file with no readable
    record, or plainly another task's file given to one task's page, is refused with the reason."""
    records = read_records(data, name)
    if not records.records:
        raise InputError(f"{name}: no record could be read" + (f" ({records.problems[0]})" if records.problems else "") + "; nothing was stored")
    found = detect_task([r for _, r in records.records])
    if page_task is None:
        if found is None:
            raise InputError(f"{name}: cannot tell which KLUE task this file is for (no known guid prefix or field)")
        return found
    if found is not None and found != page_task:
        raise InputError(f"{name} looks like a {found.upper()} file, not {page_task.upper()}: nothing was stored. "
                         f"Drop it on the home page (each file goes to its task) or on the {found.upper()} page.")
    return page_task


def runs_for(task: Task, choice: GoldChoice) -> dict[str, RunSource]:
    """Stored runs of a task, plus the demo runs when the gold is the demo (a stored run wins a shared name)."""
    sources: dict[str, RunSource] = {}
    if choice.is_demo:
        for path in demo_runs(task.facts.name):
            sources[path.stem] = RunSource(path.stem, path.name, f"demo:{path.name}:{path.stat().st_mtime}", f"demo {path.stem}", path=path)
    runs = run_store_or_none()
    for run in runs.list(task.facts.name) if runs else []:
        sources[run.name] = RunSource(run.name, run.file_name, run.sha256, run.model or run.name, stored=run)
    return sources


def _result_bytes(outcome) -> int:
    if isinstance(outcome, str):
        return len(outcome)
    return frame_bytes(outcome.frames.examples) + sum(frame_bytes(f) for f in outcome.frames.details.values())


@st.cache_resource(show_spinner=False)
def scored_runs() -> BoundedCache:
    """One cache of scored runs per server (not per session), bounded in megabytes and by time since last use."""
    megabytes = float(os.environ.get(CACHE_MB_ENV, "") or 600)
    ttl = float(os.environ.get(CACHE_TTL_ENV, "") or 3600)
    return BoundedCache(int(megabytes * 1024 * 1024), ttl, _result_bytes)


def _score(task: Task, choice: GoldChoice, source: RunSource, strict: bool, runs: RunStore | None) -> RunResult | str:
    try:
        data = source.read(runs)
        result = evaluate_bytes(task, choice.gold, data, source.file_name, strict=strict, run=source.name)
    except (InputError, RunConflict) as err:
        return str(err)
    result.key = f"{task.facts.name}|{choice.key}|{source.digest}|{source.name}|{strict}"
    return result


def evaluate_runs(task: Task, choice: GoldChoice) -> tuple[dict[str, RunResult], dict[str, str]]:
    """Scored runs and, separately, the runs that could not be scored with the reason."""
    results, failures = {}, {}
    strict = bool(st.session_state.get("strict", False))
    cache = scored_runs()
    runs = run_store_or_none()
    for name, source in runs_for(task, choice).items():
        key = (task.facts.name, choice.key, source.digest, source.file_name, name, strict)
        with st.spinner(f"Scoring {md(name)}…"):  # drawn only when scoring takes a moment (a cached run returns at once)
            outcome = cache.get(key, partial(_score, task, choice, source, strict, runs))
        if isinstance(outcome, str):
            failures[name] = outcome
        else:
            results[name] = outcome
    return results, failures
