"""The Behaviour section of a task page: a behavioural test suite (klue_viz.probes) and the runs on it, as a
runs × tests table of failure rates; a cell lists its failing pairs, the source example above the perturbed one.

A suite is added like a gold: a folder that `klue-viz probe make` wrote under KLUE_VIZ_DATA_DIR (told by its manifest,
not its name), a zip of it, or a suite kept in the store with the runs on it (`klue-viz runs add --probes DIR PRED...`,
klue_viz.store.probe_runs), whose runs are shown without an upload. An uploaded zip is stored as `runs add --probes`
stores it, and so is each run uploaded on a stored suite once it is scored, so a reload finds them; when the database
cannot store them they are read in this session only, and the section says so, as the prediction uploads do. A run's
predictions on the source examples come from the same file when it holds them, else from the page's run of the same
name (its dev-set predictions), else from the run the page inspects.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import streamlit as st
from streamlit.runtime.uploaded_file_manager import UploadedFile

from klue_viz.core.problems import InputError
from klue_viz.drawing import markup as mk
from klue_viz.probes.make import MANIFEST
from klue_viz.probes.score import (
    ProbeSet,
    RunBehaviour,
    holds_suite,
    pair_frames,
    probe_set_from_files,
    probe_set_from_zip,
    read_probe_set,
    score_run,
    suite_files_from_zip,
    suite_paths,
)
from klue_viz.reading.gold_folders import allowed_gold_file, gold_roots
from klue_viz.reading.uploads import limit_megabytes
from klue_viz.scoring.evaluate import RunResult
from klue_viz.store.annotations import StoreError
from klue_viz.store.probe_runs import SuiteStore
from klue_viz.tasks.base import Task
from klue_viz.ui.common import database_notice, problem_table
from klue_viz.ui.state import GoldChoice, run_store, run_store_or_none, runs_for

#: How many failing pairs a cell lists at once.
SHOWN_PAIRS = 20
#: How deep under the data folder suites are looked for.
SEARCH_DEPTH = 3
SELECTED = "behaviour_cell"
#: How a stored suite is named among the suite folders of the picker.
STORED = "stored suite: "
#: Session key: what became of each suite zip and run uploaded in the section (stored under a name, or why not).
KEPT_UPLOADS = "behaviour_kept"
EDIT_STYLE = "<style>.kv-edit del{background:#ffebe9}.kv-edit ins{background:#dafbe1;text-decoration:none}</style>"


def suite_folders(task: Task) -> list[Path]:
    """Folders under the allowed data folders holding a suite of this task: a manifest with the documented fields whose
    cases are the task's tests, beside the task's gold file (klue_viz.probes.score.holds_suite); not told by a name."""
    if task.probe is None:
        return []
    found = []
    for root in gold_roots():
        for depth in range(SEARCH_DEPTH + 1):
            for manifest in sorted(root.glob("/".join(["*"] * depth + [MANIFEST]))):
                try:
                    allowed_gold_file(manifest)  # a link inside the data folder to somewhere outside it is not followed
                except InputError:
                    continue
                if manifest.parent not in found and holds_suite(task, manifest.parent):
                    found.append(manifest.parent)
    return found


@st.cache_resource(max_entries=8, show_spinner="Reading the suite…")
def _suite_from_zip(digest: str, _task: Task, _data: bytes, name: str) -> ProbeSet:
    return probe_set_from_zip(_task, _data, name)


@st.cache_resource(max_entries=8, show_spinner="Reading the suite…")
def _suite_from_folder(path: str, modified: float, _task: Task) -> ProbeSet:
    return read_probe_set(_task, path)


@st.cache_resource(max_entries=32, show_spinner="Scoring the run on the suite…")
def _behaviour(suite_key: str, run_key: str, _suite: ProbeSet, run: str, _data: bytes, name: str, _source: bytes | None) -> RunBehaviour:
    return score_run(_suite, run, _data, name, _source, "dev predictions")


def suite_store() -> SuiteStore | None:
    """The suites kept in the page's store; None without a store."""
    runs = run_store_or_none()
    return None if runs is None else SuiteStore(runs.store)


def stored_suites(task: Task) -> dict[str, str]:
    """The suites of this task kept in the store, by name: when each was stored (none when the database is away, said once)."""
    suites = suite_store()
    try:
        return {entry.name: entry.created_at for entry in suites.entries(task.facts.name)} if suites is not None else {}
    except StoreError as err:
        database_notice(str(err))
        return {}


@st.cache_resource(max_entries=8, show_spinner="Reading the suite…")
def _suite_from_store(location: str, task_name: str, name: str, created_at: str, _suites: SuiteStore, _task: Task) -> ProbeSet:
    """A stored suite read once per server: a stored suite is never changed (storing other files gives another name),
    and one removed and stored again under its name is another `created_at`."""
    paths = suite_paths(_task)
    found = _suites.suite(task_name, name, paths["perturbed"], paths["sources"])
    if found is None:
        raise InputError(f"the stored suite {name} was not found (removed meanwhile?)")
    return probe_set_from_files(_task, found.files, f"stored suite {name}")


def _stored_runs(task: Task, name: str) -> list[GivenRun]:
    """The runs kept on a stored suite."""
    suites = suite_store()
    if suites is None:
        return []
    return [GivenRun(run.name, suites.data(run.sha256), run.file_name, run.sha256) for run in suites.runs(task.facts.name, name)]


@dataclass(frozen=True)
class GivenRun:
    """A run on the suite to score: kept on a stored suite, or uploaded (then `upload` is its uploader's file id)."""

    run: str
    data: bytes
    file_name: str
    sha256: str
    upload: str = ""


@dataclass(frozen=True)
class PickedSuite:
    """The suite the section shows: its cache key, the suite, the stored suite it is (None when it is not stored: a
    folder, or an upload the database could not keep) and the runs kept on that."""

    key: str
    suite: ProbeSet
    stored: str | None
    kept: list[GivenRun]
    #: Why the runs uploaded on it are not stored, when it is not a stored suite.
    why_not: str = ""


def _ident(upload: UploadedFile) -> str:
    """One uploaded file (a new upload of the same file is another)."""
    return str(getattr(upload, "file_id", "") or f"{upload.name}:{upload.size}")


def _uploader() -> str:
    return str(st.session_state.get("annotator_name", ""))


def _keep(ident: tuple, store: Callable[[SuiteStore], str]) -> tuple[str | None, str]:
    """Keep an upload in the store once per uploaded file: (the name it is stored under, "") or (None, why it is held in
    this session only). A new upload of the same file tries again, as a prediction file's does."""
    kept = st.session_state.setdefault(KEPT_UPLOADS, {})
    if ident not in kept:
        try:
            kept[ident] = (store(SuiteStore(run_store().store)), "")
        except (StoreError, InputError) as err:
            kept[ident] = (None, str(err))
    return kept[ident]


def _keep_suite(task: Task, upload: UploadedFile, data: bytes) -> str | None:
    """Store an uploaded suite zip (its name: the zip's, without .zip) and say where it went; the stored suite's name, or
    None when it is read in this session only."""
    def store(suites: SuiteStore) -> str:
        files = suite_files_from_zip(data, upload.name, task)[1]
        paths = suite_paths(task)
        return suites.add_suite(task.facts.name, Path(upload.name).stem, files[MANIFEST].decode("utf-8"),
                                (paths["perturbed"], files[paths["perturbed"]]), (paths["sources"], files[paths["sources"]]),
                                files.get("README.md", b"").decode("utf-8", errors="replace"), uploader=_uploader())

    name, why = _keep(("suite", task.facts.name, _ident(upload)), store)
    if name is None:
        st.warning(mk.md(f"{upload.name} is read in this session only, not stored: {why}"))
    else:
        st.caption(mk.md(f"{upload.name}: stored as the suite {name}; a reload offers it as «{STORED}{name}» with the runs kept on it"))
    return name


def _choose_suite(task: Task) -> PickedSuite | None:
    """The suite picked (a folder, a stored suite or an uploaded zip, which is stored), with the runs kept on it when stored."""
    folders = suite_folders(task)
    stored = stored_suites(task)
    options = ["(none)"] + [str(f) for f in folders] + [STORED + name for name in stored]
    label = "Suite (a folder under KLUE_VIZ_DATA_DIR, or one kept with `klue-viz runs add --probes` or uploaded below)"
    folder = st.selectbox(label, options, key=f"behaviour_folder_{task.facts.name}") if len(options) > 1 else "(none)"
    upload = st.file_uploader("…or a zip of a suite folder (`klue-viz probe make --out DIR`, zipped); it is stored, with the runs uploaded on it",
                              type=["zip"], key=f"behaviour_zip_{task.facts.name}", max_upload_size=limit_megabytes())
    try:
        if upload is not None:
            data = upload.getvalue()
            digest = hashlib.sha256(data).hexdigest()
            suite = _suite_from_zip(digest, task, data, upload.name)  # read and checked before anything is stored
            name = _keep_suite(task, upload, data)
            return PickedSuite(digest, suite, name, _stored_runs(task, name) if name is not None else [], "its suite could not be stored")
        if folder.startswith(STORED):
            name, suites = folder[len(STORED):], suite_store()
            if suites is not None and name in stored:
                suite = _suite_from_store(suites.store.location, task.facts.name, name, stored[name], suites, task)
                return PickedSuite(f"stored:{name}:{stored[name]}", suite, name, _stored_runs(task, name))
        elif folder != "(none)":
            manifest = Path(folder) / MANIFEST
            return PickedSuite(folder, _suite_from_folder(folder, manifest.stat().st_mtime, task), None, [],
                               "its suite is a folder, not a stored suite (`klue-viz runs add --probes DIR RUN` keeps both)")
    except (InputError, OSError, UnicodeDecodeError, StoreError) as err:
        st.error(mk.md(str(err)))
    return None


def _source_bytes(task: Task, choice: GoldChoice, name: str, inspected: str) -> tuple[bytes | None, str]:
    """The dev-set predictions of the page's run named `name` (else the inspected run's), and which run gave them."""
    sources = runs_for(task, choice)
    chosen = name if name in sources else inspected
    if chosen not in sources:
        return None, ""
    return sources[chosen].read(run_store_or_none()), chosen


def _keep_run(task: Task, picked: PickedSuite, given: GivenRun) -> str:
    """Store a run uploaded on a stored suite (once per uploaded file) and say so; the name it is shown under. On a suite
    that is not stored, or when the database cannot store it, the run is scored in this session only, and that is said."""
    if picked.stored is None:
        st.warning(mk.md(f"{given.file_name} is scored in this session only, not stored: {picked.why_not}"))
        return given.run
    suite = picked.stored

    def store(suites: SuiteStore) -> str:
        return suites.add_run(task.facts.name, suite, given.file_name, given.data, uploader=_uploader()).name

    name, why = _keep(("run", task.facts.name, suite, given.upload), store)
    if name is None:
        st.warning(mk.md(f"{given.file_name} is scored in this session only, not stored: {why}"))
        return given.run
    return name


def behaviour_section(task: Task, choice: GoldChoice, results: dict[str, RunResult], inspected: str) -> None:
    """The section (nothing for a task without behavioural tests)."""
    if task.probe is None:
        return
    st.subheader("Behaviour")
    st.caption("What a run does when the name, the spacing, a typo, the speech level or a number changes (INV: the answer must not "
               "change; DIR: it must move as expected). Make a suite with `klue-viz probe make`, run the model on its gold file, "
               "and add both here. A cell is the share of a test's cases that fail, of how many, and its 95% interval in brackets: "
               "click it for the failing pairs.")
    picked = _choose_suite(task)
    if picked is None:
        return
    suite, kept = picked.suite, picked.kept
    st.caption(mk.md(f"{len(suite.manifest):,} cases in {suite.folder} · tests: {', '.join(suite.tests)}"
                     + (f" · {len(kept)} run(s) kept on it" if kept else "")))
    if suite.problems:
        with st.expander(f"{len(suite.problems)} problem(s) in the suite's files"):
            problem_table(suite.problems)
    files = st.file_uploader("Runs on this suite (prediction files on its gold file; each may hold the dev predictions too)"
                             + ("; they are stored on the suite" if picked.stored is not None else ""),
                             accept_multiple_files=True, key=f"behaviour_runs_{task.facts.name}", max_upload_size=limit_megabytes())
    stored = {run.sha256 for run in kept}
    uploaded = [GivenRun(Path(file.name).stem, file.getvalue(), file.name, hashlib.sha256(file.getvalue()).hexdigest(), _ident(file))
                for file in files or []]
    runs: list[RunBehaviour] = []
    for given in kept + [run for run in uploaded if run.sha256 not in stored]:
        try:
            own = suite.sources.rows and any(row["guid"].encode() in given.data for row in suite.sources.rows[:50])  # cheap, on every rerun
            source, source_run = (None, "") if own else _source_bytes(task, choice, given.run, inspected)
            run_key = hashlib.sha256(given.sha256.encode() + (source or b"")).hexdigest()
            behaviour = _behaviour(picked.key, run_key, suite, given.run, given.data, given.file_name, source)
        except InputError as err:
            st.error(mk.md(str(err)))
            continue
        if given.upload:  # scored, so a file that is no run on this suite is never stored
            behaviour = replace(behaviour, run=_keep_run(task, picked, given))
        runs.append(behaviour)
        if source_run:
            st.caption(mk.md(f"{behaviour.run}: the source examples' predictions come from the page's run {source_run}"))
    if not runs:
        st.info("Upload a run's predictions on the suite (or keep them with `klue-viz runs add --probes`) to see its behaviour.")
        return
    problems = [p for run in runs for p in run.problems]
    if problems:
        with st.expander(f"{len(problems)} problem(s) in these runs' files"):
            problem_table(problems)
    _table(task, runs)
    selected: tuple[str, str] | None = st.session_state.get(SELECTED)
    if selected is not None:
        chosen = next((r for r in runs if r.run == selected[0]), None)
        if chosen is not None:
            _pairs(task, suite, chosen, selected[1])


def _table(task: Task, runs: list[RunBehaviour]) -> None:
    """Runs × tests: each cell a button (failure rate, cases, 95% interval in brackets) that lists the cell's failing pairs."""
    tests = list(dict.fromkeys(t.test for r in runs for t in r.tests))
    head = st.columns([2] + [2] * len(tests))
    head[0].markdown("**run**")
    for column, test in zip(head[1:], tests):
        kind = next(t.type for r in runs for t in r.tests if t.test == test)
        column.markdown(f"**{mk.md(test)}** ({kind})")
    for r in runs:
        cells = st.columns([2] + [2] * len(tests))
        cells[0].markdown(mk.md(r.run))
        by_test = {t.test: t for t in r.tests}
        for column, test in zip(cells[1:], tests):
            t = by_test.get(test)
            if t is None or t.failure_rate is None:
                column.markdown("n/a")
                continue
            label = t.rate_text()
            help_text = (f"{t.failures} of {t.n} cases fail, in percent with its 95% interval (Wilson) in brackets; "
                         f"{t.skipped} skipped when made, {t.unpredicted} without a prediction; "
                         f"{task.facts.metrics[0].key}: sources {_value(t.metric_source)}, perturbed {_value(t.metric_perturbed)}")
            if column.button(label, key=f"behaviour-{r.run}-{test}", help=help_text):
                st.session_state[SELECTED] = (r.run, test)


def _value(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"


def edit_line(edits: list[dict]) -> str:
    """The manifest's edits as escaped HTML: each field, the text removed and the text put in its place."""
    parts = [f"{mk.esc(e['field'])}: <del>{mk.esc(e['before']) or '∅'}</del> → <ins>{mk.esc(e['after']) or '∅'}</ins>" for e in edits]
    return "<div class='kv-edit'>" + " · ".join(parts) + "</div>"


def _pairs(task: Task, suite: ProbeSet, run: RunBehaviour, test: str) -> None:
    result = next((t for t in run.tests if t.test == test), None)
    if result is None:
        return
    st.markdown(f"#### {mk.md(run.run)} · {mk.md(test)}: {result.failures} failing pair(s)")
    if not result.failing:
        st.caption("No case of this test fails for this run.")
        return
    lines = {line["guid"]: line for line in suite.manifest}
    st.markdown(EDIT_STYLE, unsafe_allow_html=True)
    for guid in result.failing[:SHOWN_PAIRS]:
        line = lines[guid]
        source = pair_frames(task, suite.sources, line["source_guid"], run.sources)
        perturbed = pair_frames(task, suite.perturbed, guid, run.perturbed)
        if source is None or perturbed is None:
            continue
        expect = f" · expected: {mk.esc(line['expect'])}" if line.get("expect") else ""
        body = (f"<div class='kv-pair' data-guid='{mk.esc_attr(guid)}'><b>original</b> {task.render_card(*source)}"
                f"<b>perturbed</b>{expect} {edit_line(line.get('edits') or [])} {task.render_card(*perturbed)}</div>")
        st.markdown(body, unsafe_allow_html=True)
    if len(result.failing) > SHOWN_PAIRS:
        st.caption(f"… and {len(result.failing) - SHOWN_PAIRS} more (`klue-viz probe score --out` lists them all).")
