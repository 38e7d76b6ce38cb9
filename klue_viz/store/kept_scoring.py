"""Scoring what is not kept: runs read back from kept results, or scored once and kept (klue_viz.store.kept_results).

`results_for` gives the pages and `runs add` every run's result against a gold: the kept ones read back with one
query, the others scored (klue_viz.scoring.evaluate) and kept. A kept result's frames are read when first needed, and
a damaged file scores the run again then (`as_result`); `column_frames` reads only the columns a view needs;
`intervals` and `kept_view` compute heavy views once and keep them beside the result. A database that fails meanwhile
(a StoreError from the store's transaction helper) costs only the keeping: what was scored is still shown.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

from klue_viz.core.cache import BoundedCache
from klue_viz.core.lazy import lazy_module
from klue_viz.core.problems import InputError
from klue_viz.core.results import Frames
from klue_viz.reading.records import RecordFile
from klue_viz.scoring.bootstrap import confidence_intervals
from klue_viz.scoring.evaluate import Gold, RunResult, evaluate_with_frames
from klue_viz.store.annotations import StoreError
from klue_viz.store.kept_format import KeptUnreadable, Summary, result_key, sha256, view_from_json, view_json, view_layout
from klue_viz.store.kept_results import KeptResults
from klue_viz.store.runs import RunStore
from klue_viz.tasks.base import Task

if TYPE_CHECKING:
    import pandas as pd
else:
    pd = lazy_module("pandas")


def remove_run(kept: KeptResults, runs: RunStore, task: str, name: str, expected_version: int, delete_annotations: bool = False) -> int:
    """Remove a stored run (RunStore.remove) and, once no run of its task keeps its bytes, its kept results.

    Returns the number of annotations deleted."""
    run = runs.get(task, name)
    deleted = runs.remove(task, name, expected_version=expected_version, delete_annotations=delete_annotations)
    if run is not None and not any(other.sha256 == run.sha256 for other in runs.list(task)):
        kept.forget(run.sha256, task)
    return deleted


def keep(kept: KeptResults, result: RunResult, run_sha256: str, gold_sha256: str, strict: bool) -> Summary:
    """Keep a scored run (see `KeptResults.keep`)."""
    return kept.keep(result, run_sha256, gold_sha256, strict)


def as_result(kept: KeptResults, task: Task, summary: Summary, run: str, rescore: Callable[[], Frames] | None = None,
              frames_cache: BoundedCache | None = None, file_name: str | None = None) -> RunResult:
    """A kept result as the RunResult a fresh scoring gives: its frames are read from the kept files the first time they are
    needed (through `frames_cache`, shared by the sessions of a server, when given); when they turn out unreadable,
    `rescore` builds them again (without it, KeptUnreadable). `file_name`: the run's own file name, which the kept result
    (shared by every run of the same bytes) may not have: it keeps the name of the file it was first scored from."""
    def read() -> Frames:
        try:
            return kept.frames(summary)
        except KeptUnreadable:
            if rescore is None:
                raise
            return rescore()

    def frames_builder() -> Frames:
        return read() if frames_cache is None else frames_cache.get(summary.key, read)

    return RunResult(task, run, file_name or summary.file_name, summary.scores, summary.coverage, frames_builder, list(summary.problems),
                     list(summary.notes), list(summary.extra_guids), key=f"{task.facts.name}|{KEPT_PREFIX}{summary.key}|{run}")


#: The part of a RunResult's key that names the kept result it was read from (see `kept_key`).
KEPT_PREFIX = "kept:"


def kept_key(result: RunResult) -> str | None:
    """The key of the kept result a RunResult was read from (`as_result`), or None for a run scored in memory."""
    parts = result.key.split("|", 2)
    return parts[1][len(KEPT_PREFIX):] if len(parts) == 3 and parts[1].startswith(KEPT_PREFIX) else None


def intervals(kept: KeptResults | None, result: RunResult, samples: int) -> dict[str, tuple[float, float] | None]:
    """Bootstrap 95% intervals of a run's official metrics (klue_viz.scoring.bootstrap, seed 0), computed once per kept result and kept
    beside it, so a server start or another replica reads them back instead of resampling again."""
    key = kept_key(result) if kept is not None else None
    view = f"ci95:{samples}:seed0"
    if kept is not None and key is not None:
        try:
            found = _intervals_of(kept.view(key, view))
        except StoreError:
            found = None
        if found is not None:
            return found
    value = confidence_intervals(result.task, result.frames, samples=samples)
    if kept is not None and key is not None:
        try:
            kept.keep_view(key, view, value)
        except StoreError:
            pass  # shown now, computed again next time
    return value


def _intervals_of(found: Any) -> dict[str, tuple[float, float] | None] | None:
    """Kept intervals as `confidence_intervals` gives them, or None when the kept value is not that shape."""
    if not isinstance(found, dict):
        return None
    out: dict[str, tuple[float, float] | None] = {}
    for metric, pair in found.items():
        if pair is None:
            out[metric] = None
        elif isinstance(pair, list) and len(pair) == 2 and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in pair):
            out[metric] = (float(pair[0]), float(pair[1]))
        else:
            return None
    return out


def cut_frames(frames: Frames, columns: Mapping[str, Sequence[str]]) -> Frames:
    """`frames` holding only these columns, by level ("examples" and the detail levels named; a column a frame has not is
    left out): the frames `KeptResults.frame_columns` reads, from frames already in memory."""
    def cut(frame: pd.DataFrame, wanted: Sequence[str]) -> pd.DataFrame:
        return frame[[c for c in dict.fromkeys(wanted) if c in frame.columns]]
    details = {level: cut(frames.details[level], wanted) for level, wanted in columns.items() if level in frames.details}
    return Frames(cut(frames.examples, columns.get("examples", ())), details)


def column_frames(kept: KeptResults | None, results: Sequence[RunResult], columns: Mapping[str, Sequence[str]],
                  frames_cache: BoundedCache | None = None) -> list[Frames]:
    """Each run's frames cut to `columns` (see `cut_frames`), reading as little as it can: a run read from a kept result
    whose frames are neither built nor in `frames_cache` reads only these columns of its kept files (one query for the
    results of all runs); any other run is cut from its frames. Its whole frames are read (or scored again, through the
    run's own `rescore`) when its kept files turn out unreadable."""
    spec = tuple((level, tuple(wanted)) for level, wanted in columns.items())
    keys = [None if "frames" in r.__dict__ else kept_key(r) for r in results]
    found = kept.summaries_by_key(k for k in keys if k is not None) if kept is not None else {}

    def read(summary: Summary, result: RunResult) -> Frames:
        if frames_cache is not None and summary.key in frames_cache:
            return cut_frames(frames_cache.get(summary.key, lambda: result.frames), columns)
        assert kept is not None
        try:
            return kept.frame_columns(summary, columns)
        except KeptUnreadable:
            return cut_frames(result.frames, columns)

    out = []
    for result, key in zip(results, keys):
        summary = found.get(key) if key is not None else None
        if summary is None:
            out.append(cut_frames(result.frames, columns))
        elif frames_cache is None:
            out.append(read(summary, result))
        else:
            out.append(frames_cache.get((summary.key, spec), partial(read, summary, result)))
    return out


def load(kept: KeptResults, task: Task, run_sha256: str, gold_sha256: str, strict: bool, run: str,
         rescore: Callable[[], Frames] | None = None) -> RunResult | None:
    """The kept result of a run for this gold, or None when there is none usable (none kept, another layout, a damaged file)."""
    summary = kept.summary(task.facts.name, run_sha256, gold_sha256, strict)
    return None if summary is None else as_result(kept, task, summary, run, rescore)


@dataclass(frozen=True)
class RunInput:
    """A run to show: its name, its bytes' sha256 and file name, and how to read its bytes (only when it must be scored)."""

    name: str
    run_sha256: str
    file_name: str
    read: Callable[[], bytes]
    #: The records of those bytes, when the caller already read them without normalising (to tell the run's task).
    records: RecordFile | None = None


def score_and_keep(kept: KeptResults, task: Task, gold: Gold, run: RunInput, strict: bool) -> tuple[Summary | None, RunResult]:
    """Score a run from its bytes and keep the result; (None, result) when it could not be kept (the result is still good).

    InputError when the file cannot be scored against this gold."""
    result = evaluate_with_frames(task, gold, run.read(), run.file_name, strict=strict, run=run.name, read=run.records)
    try:
        return kept.keep(result, run.run_sha256, gold.sha256, strict), result
    except (TypeError, OSError, StoreError):
        return None, result  # a full disk or a database gone: shown now, scored again next time


def results_for(kept: KeptResults, task: Task, gold: Gold, runs: Iterable[RunInput], strict: bool,
                progress: Callable[[int, int, str], None] | None = None,
                frames_cache: BoundedCache | None = None) -> tuple[dict[str, RunResult], dict[str, str]]:
    """Results of runs against a gold: kept ones read back (one query for all), the others scored once and kept.

    Returns the results by run name and, separately, the reasons of the runs that could not be scored.
    `progress(done, total, name)` is called before each run that has to be scored.
    """
    runs = list(runs)
    found = kept.summaries(task.facts.name, [r.run_sha256 for r in runs], gold.sha256, strict)
    missing = [r for r in runs if r.run_sha256 not in found]
    results: dict[str, RunResult] = {}
    failures: dict[str, str] = {}
    scored: dict[str, RunResult] = {}
    for k, run in enumerate(missing):
        if progress is not None:
            progress(k, len(missing), run.name)
        try:
            summary, fresh = score_and_keep(kept, task, gold, run, strict)
        except InputError as err:
            failures[run.name] = str(err)
            continue
        if summary is None:
            fresh.key = f"{task.facts.name}|{result_key(run.run_sha256, gold.sha256, strict)}|{run.name}"
            scored[run.name] = fresh
        else:
            found[run.run_sha256] = summary
    for run in runs:
        if run.name in scored:
            results[run.name] = scored[run.name]
        elif run.run_sha256 in found:
            results[run.name] = as_result(kept, task, found[run.run_sha256], run.name,
                                          rescore=_rescorer(kept, task, gold, run, strict), frames_cache=frames_cache,
                                          file_name=run.file_name)
    return results, failures


def _rescorer(kept: KeptResults, task: Task, gold: Gold, run: RunInput, strict: bool) -> Callable[[], Frames]:
    def rescore() -> Frames:
        _, result = score_and_keep(kept, task, gold, run, strict)
        return result.frames
    return rescore


# ---- heavy views of kept results (weak slices, suspects) ----------------------------------------

def kept_view(kept: KeptResults | None, results: list[RunResult], view: str, inputs: str, compute: Callable[[], Any],
              types: Iterable[type] = ()) -> Any:
    """A heavy view of one or more kept runs (weak slices of a run, the suspect queue of a page's runs), computed once and
    kept beside the first run's kept result, so a server start or another replica reads it back instead of computing it.

    It is used only when it was computed from the same runs (their kept keys, in order: so the same run bytes, gold and
    strict), the same `inputs` (what else it depends on: tags, a training file, options) and the same code
    (`view_layout`); otherwise it is computed again and replaces the one kept. It goes when the first run's kept result is
    replaced or removed. A run not read from a kept result, or no kept results at all: computed, not kept.
    `types`: the dataclasses the value holds (kept as JSON, rebuilt on reading)."""
    keys = [kept_key(r) for r in results]
    if kept is None or not keys or any(k is None for k in keys):
        return compute()
    anchor = keys[0]
    assert anchor is not None
    stamp = sha256("\n".join([view_layout(), inputs, *map(str, keys)]).encode())
    try:
        found = kept.view(anchor, view)
    except StoreError:
        found = None
    if isinstance(found, dict) and found.get("stamp") == stamp and isinstance(found.get("value"), str):
        try:
            return view_from_json(found["value"], types)
        except (ValueError, KeyError, TypeError):
            pass  # damaged: computed again and replaced
    value = compute()
    try:
        kept.keep_view(anchor, view, {"stamp": stamp, "value": view_json(value, types)})
    except (TypeError, StoreError):
        pass  # shown now, computed again next time
    return value
