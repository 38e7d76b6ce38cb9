"""Session state and caches of the Streamlit app: which gold is used, which runs there are, their scores.

Runs live in the database (klue_viz/store/runs.py), so every session of a server sees the
same ones and they survive a restart. Parsed gold and scored runs are cached by content (path and
modification time, or a hash of the bytes), once per server, and never mutated by the pages; the
scored runs in a cache bounded in bytes and time (KLUE_VIZ_CACHE_MB, KLUE_VIZ_CACHE_TTL seconds).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path, PurePosixPath

import streamlit as st
from sqlalchemy.exc import SQLAlchemyError
from streamlit.runtime.uploaded_file_manager import UploadedFile

from klue_viz.core.cache import BoundedCache, frame_bytes
from klue_viz.core.problems import InputError
from klue_viz.core.results import Frames
from klue_viz.discovery.corrected import Correction
from klue_viz.discovery.corrected_gold import CorrectedGold
from klue_viz.drawing.markup import md
from klue_viz.reading.demo import demo_runs
from klue_viz.reading.gold_folders import DATA_DIR_ENV
from klue_viz.reading.harness.lm_eval import is_results_name
from klue_viz.reading.prediction_files import results_beside, task_hint
from klue_viz.reading.records import read_bytes, read_records
from klue_viz.reading.suite_files import MANIFEST, suite_folders_among
from klue_viz.reading.uploads import check_size, clean_name, max_upload_bytes
from klue_viz.scoring.benchmark import prediction_files
from klue_viz.scoring.evaluate import (
    Gold,
    RunResult,
    evaluate_bytes,
    gold_file,
    gold_from_bytes,
    load_hf,
)
from klue_viz.store.annotations import Store, StoreError, StoreUnavailable, database_url
from klue_viz.store.gold_choice import GoldChoice, GoldReaders, gold_choice
from klue_viz.store.gold_versions import GoldVersions
from klue_viz.store.golds import GoldStore, StoredGold, gold_digest
from klue_viz.store.kept_results import KeptResults
from klue_viz.store.kept_scoring import RunInput, results_for
from klue_viz.store.parsed_golds import ParsedGolds
from klue_viz.store.runs import Run, RunConflict, RunStore
from klue_viz.tasks import TASKS, Task, detect_task


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:20]


def init_state() -> None:
    state = st.session_state
    if "gold_source" not in state:
        state["gold_source"] = "folder" if os.environ.get(DATA_DIR_ENV) else "demo"
    state.setdefault("data_dir", os.environ.get(DATA_DIR_ENV, ""))
    state.setdefault("gold_uploads", {})  # task -> (file name, SHA-256 of the gold file stored on the server)
    state.setdefault("strict", False)


# ---- gold ---------------------------------------------------------------------------------------

@st.cache_resource(max_entries=32, show_spinner="Reading the gold file…")
def _gold_from_path(task_name: str, path: str, modified: float) -> Gold:
    task = TASKS[task_name]
    found = gold_file(task, Path(path))
    return _parsed_gold(task, read_bytes(found), str(found))


@st.cache_resource(max_entries=16, show_spinner="Reading the uploaded gold file…")
def _gold_from_upload(task_name: str, key: str, name: str, _data: bytes) -> Gold:
    return _parsed_gold(TASKS[task_name], _data, name)


@st.cache_resource(show_spinner=False)
def _parsed_golds(url: str) -> ParsedGolds:
    return ParsedGolds(run_store().store)


def _parsed_gold(task: Task, data: bytes, name: str) -> Gold:
    """A gold parsed once per file and code and read back from the database after (klue_viz/store/parsed_golds.py); parsed
    here when the database cannot be opened."""
    try:
        golds = _parsed_golds(database_url())
    except (StoreError, OSError, SQLAlchemyError):
        return gold_from_bytes(task, data, name)
    return golds.gold(task, data, name)


@st.cache_resource(max_entries=8, show_spinner="Loading klue/klue through datasets…")
def _loaded_from_hf(task_name: str) -> Gold:
    return load_hf(TASKS[task_name])


def _gold_from_hf(task_name: str) -> Gold | str:
    """The validation split, or the one-line reason it could not be loaded. A failure is not cached here, so the hub is
    tried again once it is back; klue_viz.reading.hf_hub remembers an unreachable hub for a while, so failing again is quick."""
    try:
        return _loaded_from_hf(task_name)
    except InputError as err:
        return str(err)


#: Session key: task name -> the gold version (kept in the database) its pages score against; absent: the gold as chosen.
GOLD_VERSIONS = "gold_versions"


def gold_for(task: Task) -> GoldChoice:
    """The gold of a task under the session's chosen source, with the gold version chosen for the task applied."""
    choice = chosen_gold(task)
    name = st.session_state.get(GOLD_VERSIONS, {}).get(task.facts.name)
    if not name:
        return choice
    base = base_text(task, choice)
    if base is None:
        return GoldChoice(choice.gold, choice.key, f"{choice.note} · the gold version {name} cannot be applied to this gold "
                          "(it needs the official file)", choice.is_demo)
    text, path = base
    try:
        corrected = _versioned_gold(task.facts.name, choice.key, name, path, text)
    except (InputError, StoreError) as err:
        return GoldChoice(choice.gold, choice.key, f"{choice.note} · gold version {name}: {err}", choice.is_demo)
    return GoldChoice(corrected.gold, f"{choice.key}|version:{name}", f"{choice.note} · scored against the gold version **{name}** "
                      f"({len(corrected.file.changed)} record(s) corrected)", choice.is_demo)


def base_text(task: Task, choice: GoldChoice) -> tuple[str, str] | None:
    """The official file's text of a gold choice, and its path or upload name (None for gold from the hub)."""
    upload = st.session_state.get("gold_uploads", {}).get(task.facts.name)
    stored = stored_gold(upload[1]) if upload and choice.key.startswith("upload:") else None
    if stored is not None and not choice.is_demo:
        return stored.data.decode("utf-8-sig"), stored.file_name
    path = Path(choice.gold.source)
    return (path.read_text(encoding="utf-8-sig"), str(path)) if path.is_file() else None


@st.cache_resource(max_entries=16, show_spinner="Applying the gold version…")
def _versioned_gold(task_name: str, choice_key: str, name: str, path: str, _text: str) -> CorrectedGold:
    version = GoldVersions(run_store().store).get(task_name, name)
    if version is None:
        raise InputError(f"no {task_name.upper()} gold version named {name!r} in the database")
    return CorrectedGold.from_text(TASKS[task_name], _text, path, path, [Correction(**c) for c in version.corrections], version.name)


def _stored_upload(task: Task, key: str, stored: StoredGold) -> Gold:
    return _gold_from_upload(task.facts.name, key, stored.file_name, stored.data)


#: How the app reads golds: once per server and file (Streamlit's resource cache), through the store's parsed golds.
READERS = GoldReaders(path=lambda task, path, modified: _gold_from_path(task.facts.name, path, modified), upload=_stored_upload,
                      hf=lambda task: _gold_from_hf(task.facts.name), stored=lambda key: stored_gold(key))


def chosen_gold(task: Task) -> GoldChoice:
    """The gold of a task under the session's chosen source (klue_viz.store.gold_choice decides; the demo stands in where
    that source has none)."""
    state = st.session_state
    upload = state["gold_uploads"].get(task.facts.name)
    return gold_choice(task, state["gold_source"], READERS, folder=state["data_dir"], upload_key=upload[1] if upload else None)


def register_gold_upload(name: str, data: bytes) -> str:
    """Keep an uploaded official gold file under the task it belongs to; returns that task's name.

    The file is stored on the server under its SHA-256 (klue_viz/store/golds.py), so a reload,
    a new tab and a `source=upload` link find it; while the database cannot store it, this session holds it."""
    task = _gold_task(name, data)
    key = gold_digest(data)
    try:
        GoldStore(run_store().store).add(task, name, data)
    except StoreError:
        st.session_state.setdefault(SESSION_GOLDS, {})[key] = StoredGold(task, name, key, data)
    st.session_state["gold_uploads"][task] = (name, key)
    return task


def _gold_task(name: str, data: bytes) -> str:
    for task in TASKS.values():
        if task.facts.official_folder in name:
            return task.facts.name
    for task in TASKS.values():
        try:
            gold_from_bytes(task, data, name)
        except Exception:  # noqa: BLE001 - trying each task's reader in turn; the failures are expected
            continue
        return task.facts.name
    raise InputError(f"{name}: not an official gold file of any KLUE task")


def stored_gold(key: str) -> StoredGold | None:
    """An uploaded gold file by its SHA-256: from this session (held while the database was down) or the server."""
    held = st.session_state.get(SESSION_GOLDS, {}).get(key)
    if held is not None:
        return held
    try:
        return GoldStore(run_store().store).get(key)
    except StoreError:
        return None


# ---- runs ---------------------------------------------------------------------------------------

CACHE_MB_ENV = "KLUE_VIZ_CACHE_MB"
CACHE_TTL_ENV = "KLUE_VIZ_CACHE_TTL"
#: Session key of files scored in this session only (uploaded while the database could not store them).
SESSION_RUNS = "session_runs"
#: Session key of gold files uploaded while the database could not store them.
SESSION_GOLDS = "session_golds"


@dataclass(frozen=True)
class RunSource:
    """Where a run's bytes are: a stored run (read from the database when first scored) or a demo file."""

    name: str
    file_name: str
    digest: str
    model: str
    stored: Run | None = None
    path: Path | None = None
    #: A file uploaded while the database could not store it: scored from this session's memory.
    data: bytes | None = None

    def read(self, runs: RunStore | None) -> bytes:
        if self.data is not None:
            return self.data
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
    #: Something the user should know about a file that was taken (kept in this session only, already stored).
    note: str = ""
    #: The database could not store it: scored from this session's memory.
    session_only: bool = False
    #: Not a prediction file (a task YAML, a script or a README of a dropped harness folder): left out, said in one note.
    skipped: bool = False


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


def add_run(task_name: str, name: str, data: bytes, model: str = "", run: str = "") -> Run:
    """Store a prediction file as a run of a task (the same bytes give back their run) and return the run; `run`: the
    name its place gives it (klue_viz.scoring.benchmark.run_and_model), else the file's stem."""
    return run_store().add(task_name, name, data, model=model, uploader=st.session_state.get("annotator_name", ""), name=run or None)


def reupload_note(file_name: str, model: str, run: Run) -> str:
    """What to tell the user when a file went to a run that keeps another model's name (the same bytes stored before)."""
    wanted = clean_name(model)
    if not wanted or wanted == run.model:
        return ""
    return (f"{file_name} is already stored as run {run.name} of model {run.model}; it was not stored again under {wanted} "
            "(rename or remove that run on the home page to change it)")


def receive_uploads(uploads: Sequence[UploadedFile] | None, task: str | None = None, model: str = "") -> list[UploadOutcome]:
    """Store newly uploaded files (a zip: each member) as runs; files already received in this session are skipped.

    Each file is checked against the size limit before it is read, its task detected unless given, and
    stored in one transaction: a refused file leaves nothing behind.
    """
    seen = st.session_state.setdefault("received_uploads", set())
    outcomes = []
    # lm-evaluation-harness's results files of an uploaded folder are read with the samples beside them
    siblings = results_beside([(upload.name, upload.getvalue) for upload in uploads or [] if upload.size <= max_upload_bytes()])
    suites = suite_folders_among([(upload.name, upload.getvalue) for upload in uploads or [] if upload.size <= max_upload_bytes()])
    for upload in uploads or []:
        ident = getattr(upload, "file_id", None) or (upload.name, upload.size)
        if ident in seen:
            continue
        seen.add(ident)
        suite = next((folder for folder in suites if PurePosixPath(upload.name).is_relative_to(folder)), None)
        if suite is not None:  # a suite's gold files are not runs; said once, on its manifest
            if PurePosixPath(upload.name) == PurePosixPath(suite, MANIFEST):
                outcomes.append(UploadOutcome(suite, error=f"{suite}/ is a behavioural test suite ({suite}/{MANIFEST}), not prediction files: "
                                                           "nothing of it was stored. Add it zipped in a task page's Behaviour section, "
                                                           "or with `klue-viz runs add --probes`"))
            continue
        if str(PurePosixPath(upload.name).parent) in siblings and is_results_name(upload.name):
            continue
        try:
            check_size(upload.name, upload.size)
            files = prediction_files(upload.name, upload.getvalue(), siblings.get(str(PurePosixPath(upload.name).parent)))
        except InputError as err:
            outcomes.append(UploadOutcome(upload.name, error=str(err)))
            continue
        if not files:  # a folder's file that is no prediction file (prediction_files leaves those out)
            outcomes.append(UploadOutcome(upload.name, skipped=True))
            continue
        for file in files:
            outcome = UploadOutcome(file.name, model=model.strip() or file.model)
            try:
                outcome.task = task_of(file.name, file.data, task)
                stored = add_run(outcome.task, file.name, file.data, outcome.model, file.run)
                outcome.run, outcome.note, outcome.model = stored.name, reupload_note(file.name, outcome.model, stored), stored.model
            except StoreUnavailable as err:
                outcome.run = keep_in_session(outcome.task, file.name, file.data, outcome.model, file.run)
                outcome.note, outcome.session_only = f"{file.name} is scored in this session only, not stored: {err}", True
            except (InputError, StoreError, RunConflict) as err:
                outcome.error = str(err)
            outcomes.append(outcome)
    return outcomes


def keep_in_session(task_name: str, file_name: str, data: bytes, model: str = "", run: str = "") -> str:
    """Hold a file the database could not store in this session, so its metrics still show; returns its run name (`run`,
    the name its place gives it, else the file's stem)."""
    held = st.session_state.setdefault(SESSION_RUNS, {})
    stem = name = run or Path(file_name).stem
    suffix = 2
    while (task_name, name) in held and held[(task_name, name)][1] != data:  # another file of the same stem
        name, suffix = f"{stem}-{suffix}", suffix + 1
    held[(task_name, name)] = (file_name, data, model)
    return name


def task_of(name: str, data: bytes, page_task: str | None = None) -> str:
    """The task a file will be stored under, checked before anything is stored: a file with no readable
    record, or plainly another task's file given to one task's page, is refused with the reason."""
    records = read_records(data, name)
    if not records.records:
        raise InputError(f"{name}: no record could be read" + (f" ({records.problems[0]})" if records.problems else "") + "; nothing was stored")
    found = detect_task([r for _, r in records.records]) or task_hint([r for _, r in records.records], list(TASKS))
    if page_task is None:
        if found is None:
            raise InputError(f"{name}: cannot tell which KLUE task this file is for (no known guid prefix or field)")
        return found
    if found is not None and found != page_task:
        raise InputError(f"{name} looks like a {found.upper()} file, not {page_task.upper()}: nothing was stored. "
                         f"Drop it on the home page (each file goes to its task) or on the {found.upper()} page.")
    return page_task


def model_label(run: Run) -> str:
    """The model row a stored run belongs to on the home table: its model, else its own name and task (two files of
    different tasks that share a stem, pred_adversarial.jsonl, are not one model)."""
    return run.model or f"{run.name} ({run.task.upper()})"


def runs_for(task: Task, choice: GoldChoice) -> dict[str, RunSource]:
    """Stored runs of a task, plus the demo runs when the gold is the demo (a stored run wins a shared name)."""
    sources: dict[str, RunSource] = {}
    if choice.is_demo:
        for path in demo_runs(task.facts.name):
            sources[path.stem] = RunSource(path.stem, path.name, _file_sha256(str(path), path.stat().st_mtime), f"demo {path.stem}", path=path)
    runs = run_store_or_none()
    try:
        stored = runs.list(task.facts.name) if runs else []
    except StoreError:  # the database went away: the demo runs and this session's files still show
        stored = []
    for run in stored:
        sources[run.name] = RunSource(run.name, run.file_name, run.sha256, model_label(run), stored=run)
    for (held_task, name), (file_name, data, model) in st.session_state.get(SESSION_RUNS, {}).items():
        if held_task == task.facts.name and name not in sources:
            sources[name] = RunSource(name, file_name, f"session:{digest(data)}", model or name, data=data)
    return sources


@st.cache_resource(max_entries=256, show_spinner=False)
def _file_sha256(path: str, modified: float) -> str:
    """sha256 of a demo run's bytes, what its kept results are keyed by (read again when the file changes)."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


@st.cache_resource(show_spinner=False)
def _kept_results(url: str) -> KeptResults:
    return KeptResults(run_store().store)


def kept_results() -> KeptResults:
    """The server's kept results, in (and beside) the run store's database; StoreError says why it cannot be opened."""
    return _kept_results(database_url())


def kept_results_or_none() -> KeptResults | None:
    try:
        return kept_results()
    except (StoreError, OSError, SQLAlchemyError):
        return None


@st.cache_resource(show_spinner=False)
def _unscorable() -> dict[tuple, str]:
    """Why a run could not be scored against a gold, by (task, gold sha256, run sha256, strict): not tried again on every page."""
    return {}


def _result_bytes(outcome: str | Frames | RunResult) -> int:
    """Bytes of what the cache holds: a reason, a run scored in memory, or a kept run's frames."""
    if isinstance(outcome, str):
        return len(outcome)
    frames = outcome if isinstance(outcome, Frames) else outcome.frames
    return frame_bytes(frames.examples) + sum(frame_bytes(f) for f in frames.details.values())


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
    """Scored runs and, separately, the runs that could not be scored with the reason.

    A run scored once against this gold is read back from its kept result (klue_viz/store/kept_results.py): only its scores
    until a view needs its frames, which are then read into the server's bounded cache. Without a database
    (it cannot be opened) runs are scored in memory as before.
    """
    strict = bool(st.session_state.get("strict", False))
    runs = run_store_or_none()
    try:
        kept = kept_results() if runs is not None and choice.gold.sha256 else None
    except (StoreError, OSError, SQLAlchemyError):  # the kept tables cannot be made: scored in memory instead
        kept = None
    if kept is None:
        return _evaluate_in_memory(task, choice, strict, runs)
    sources = runs_for(task, choice)
    known = _unscorable()
    failures = {name: known[(task.facts.name, choice.gold.sha256, s.digest, strict)] for name, s in sources.items()
                if (task.facts.name, choice.gold.sha256, s.digest, strict) in known}
    inputs = [RunInput(name, s.digest, s.file_name, partial(_read, s, runs)) for name, s in sources.items() if name not in failures]
    bar = None

    def progress(done: int, total: int, name: str) -> None:
        nonlocal bar
        if total > 1:
            bar = bar or st.progress(0.0)
            bar.progress(done / total, text=f"Scoring {md(name)} ({done + 1} of {total}); each run is scored once and kept")

    with st.spinner(f"Reading {task.facts.name.upper()} runs…"):
        try:
            results, new_failures = results_for(kept, task, choice.gold, inputs, strict, progress, frames_cache=scored_runs())
        except (SQLAlchemyError, StoreError):  # the database went away meanwhile (StoreUnavailable: the store's error hook)
            return _evaluate_in_memory(task, choice, strict, runs)
    if bar is not None:
        bar.empty()
    for name, reason in new_failures.items():
        if not reason.endswith(GONE):  # the file says why it cannot be scored: not read again; a run removed meanwhile may come back
            known[(task.facts.name, choice.gold.sha256, sources[name].digest, strict)] = reason
    failures.update(new_failures)
    return {name: results[name] for name in sources if name in results}, failures


GONE = "(removed by another session meanwhile)"


def _read(source: RunSource, runs: RunStore | None) -> bytes:
    """A run's bytes; a run removed by another session since it was listed is a reason it cannot be scored, not a crash."""
    try:
        return source.read(runs)
    except RunConflict as err:
        raise InputError(f"{source.name}: {err} {GONE}") from None


def _evaluate_in_memory(task: Task, choice: GoldChoice, strict: bool, runs: RunStore | None) -> tuple[dict[str, RunResult], dict[str, str]]:
    results, failures = {}, {}
    cache = scored_runs()
    for name, source in runs_for(task, choice).items():
        key = (task.facts.name, choice.key, source.digest, source.file_name, name, strict)
        with st.spinner(f"Scoring {md(name)}…"):  # drawn only when scoring takes a moment (a cached run returns at once)
            outcome = cache.get(key, partial(_score, task, choice, source, strict, runs))
        if isinstance(outcome, str):
            failures[name] = outcome
        else:
            results[name] = outcome
    return results, failures
