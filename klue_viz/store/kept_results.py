"""Kept results: a run scored once against one gold, read back instead of scored again.

A run's result is kept under the sha256 of the run's bytes, the sha256 of the gold's bytes and
`strict`, with the layout it was written in (`layout()`): the headline scores, coverage, problems
and notes in a small database row (`kept_scores`, which is all the home page reads), and the
per-example and per-unit frames the views filter (`Frames.examples` and `Frames.details`) as one
Parquet file per frame. Beside a SQLite database the Parquet files live in a folder next to it
(`<database>.kept/`), each result's folder written in full under a temporary name and then
renamed, so a crash never leaves half a result; with PostgreSQL the same Parquet bytes are rows of
`kept_frames`, written in the same transaction as their scores row, so every app replica on that
database reads them (docs/runs-storage.md says why).

A kept result is used only when everything matches: the layout (which changes with the code that
scores, see `layout`), the size of each file, and, when its frames are read, the sha256 of each
file's bytes. Anything else is `None` (or `KeptUnreadable` for frames), and the caller scores the
run again and keeps the new result in place of the old one.

The Statistics of a run are not kept apart: they are `task.statistics(frames)` of the kept frames
(the aggregate of RE's AUPRC closes over the probability matrix, which the frames hold), and the
tests hold them equal to a fresh scoring's.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, fields, is_dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa
from sqlalchemy.exc import IntegrityError, OperationalError

from klue_viz.core.cache import BoundedCache
from klue_viz.core.exact_json import decode, decoder, encode, exact, untagged
from klue_viz.core.lazy import lazy_module
from klue_viz.core.problems import InputError, Problem
from klue_viz.core.results import Coverage, Frames, Scores
from klue_viz.reading.records import RecordFile
from klue_viz.scoring.bootstrap import confidence_intervals
from klue_viz.scoring.evaluate import Gold, RunResult, evaluate_with_frames
from klue_viz.store.annotations import Store, now
from klue_viz.store.runs import RunStore, sha256
from klue_viz.tasks.base import Task

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa
    import pyarrow.parquet as pq
else:
    pd = lazy_module("pandas")
    pa = lazy_module("pyarrow")
    pq = lazy_module("pyarrow.parquet")

#: Bumped by hand when what is kept changes shape; `layout()` also changes with the scoring code itself.
LAYOUT = 1
#: The code whose output is kept: a change to any of these files makes every kept result stale (scored again, once).
SCORING_SOURCES = ("scoring/evaluate.py", "metrics", "reading/records.py", "core", "tasks", "store/kept_results.py", "scoring/bootstrap.py")
#: A frame's object columns (lists, dicts, strings mixed with None) are kept as JSON text, decoded on reading.
JSON_COLUMNS = b"klue_viz.json_columns"
LAYOUT_KEY = b"klue_viz.layout"

metadata = sa.MetaData()
kept_scores = sa.Table(
    "kept_scores", metadata,
    sa.Column("key", sa.String(64), primary_key=True),
    sa.Column("task", sa.String(16), nullable=False),
    sa.Column("run_sha256", sa.String(64), nullable=False),
    sa.Column("gold_sha256", sa.String(64), nullable=False),
    sa.Column("strict", sa.Boolean, nullable=False),
    sa.Column("layout", sa.String(40), nullable=False),
    sa.Column("file_name", sa.Text, nullable=False),
    #: JSON: scores, reasons, coverage, problems, notes, extra guids.
    sa.Column("summary", sa.Text, nullable=False),
    #: JSON: level -> [sha256, size] of its Parquet bytes.
    sa.Column("levels", sa.Text, nullable=False),
    sa.Column("created_at", sa.String(40), nullable=False),
)
sa.Index("kept_by_run", kept_scores.c.run_sha256)
#: Heavy views of a kept result computed once (bootstrap intervals): JSON by (result key, view name).
kept_views = sa.Table(
    "kept_views", metadata,
    sa.Column("key", sa.String(64), primary_key=True),
    sa.Column("view", sa.String(100), primary_key=True),
    sa.Column("data", sa.Text, nullable=False),
)
kept_frames = sa.Table(
    "kept_frames", metadata,
    sa.Column("key", sa.String(64), primary_key=True),
    sa.Column("level", sa.String(32), primary_key=True),
    sa.Column("data", sa.LargeBinary, nullable=False),
)


class KeptUnreadable(Exception):
    """A kept result's frames are missing, damaged or of another layout: score the run again."""


def _code_fingerprint(prefix: str, sources: tuple[str, ...]) -> str:
    """`prefix` and a hash of it and of the package's `sources` (files, or folders of .py files): what a kept thing
    was written by, so that anything kept by other code is never read."""
    package = Path(__file__).resolve().parent.parent
    digest = hashlib.sha256(prefix.encode())
    for name in sources:
        path = package / name
        for file in sorted(path.rglob("*.py")) if path.is_dir() else [path]:
            digest.update(file.relative_to(package).as_posix().encode())
            digest.update(file.read_bytes())
    return f"{prefix}.{digest.hexdigest()[:16]}"


_LAYOUT = _code_fingerprint(str(LAYOUT), SCORING_SOURCES)


def layout() -> str:
    """The layout kept results are written in: LAYOUT and a hash of the scoring code, so results kept by other code are never read."""
    return _LAYOUT


def result_key(run_sha256: str, gold_sha256: str, strict: bool) -> str:
    """The name of the kept result of a run (its bytes' sha256) scored against a gold (its bytes' sha256), strict or not."""
    return sha256(f"{run_sha256}|{gold_sha256}|{int(bool(strict))}".encode())


@dataclass(frozen=True)
class Summary:
    """A kept result's database row: all the home page needs of a run, without its frames."""

    key: str
    task: str
    run_sha256: str
    gold_sha256: str
    strict: bool
    file_name: str
    scores: Scores
    coverage: Coverage
    problems: list[Problem]
    notes: list[str]
    extra_guids: list[str]
    levels: dict[str, tuple[str, int]]


# ---- frames as Parquet --------------------------------------------------------------------------

def json_cells(values: Iterable[Any]) -> list[str]:
    """Each value as one JSON text, `encode(exact(value))`: None is `null` and a list of strings
    (NLI's votes, repeated across a column) is encoded once per distinct list, so a column costs far less than a
    `json.dumps` per cell; TypeError for a value `exact` refuses."""
    out = []
    lists: dict[tuple[str, ...], str] = {}
    for value in values:
        if value is None:
            out.append("null")
        elif type(value) is list and all(type(item) is str for item in value):
            key = tuple(value)
            text = lists.get(key)
            if text is None:
                text = lists[key] = encode(value)
            out.append(text)
        else:
            out.append(encode(exact(value)))
    return out


def parquet_bytes(frame: pd.DataFrame, kept_layout: str | None = None) -> bytes:
    """A frame as Parquet bytes (zstd): object columns as JSON text, every other column as it is (pandas metadata keeps its dtype).

    TypeError when an object column holds a value JSON cannot give back as it was (a numpy scalar, a set).
    """
    table = frame.copy(deep=False)
    encoded = [str(c) for c in frame.columns if frame[c].dtype == object]
    for column in encoded:
        table[column] = pd.array(json_cells(frame[column]), dtype="string")
    arrow = pa.Table.from_pandas(table, preserve_index=None)
    extra = {JSON_COLUMNS: json.dumps(encoded).encode(), LAYOUT_KEY: (kept_layout or layout()).encode()}
    arrow = arrow.replace_schema_metadata({**(arrow.schema.metadata or {}), **extra})
    sink = io.BytesIO()
    pq.write_table(arrow, sink, compression="zstd", write_statistics=False)  # min/max per column: nothing reads them
    return sink.getvalue()


def read_frame(data: bytes, kept_layout: str | None = None) -> pd.DataFrame:
    """The frame `parquet_bytes` wrote; KeptUnreadable when the bytes are damaged or of another layout."""
    try:
        table = pq.read_table(io.BytesIO(data))
    except (pa.ArrowException, OSError, ValueError) as err:
        raise KeptUnreadable(f"unreadable Parquet ({err})") from None
    meta = table.schema.metadata or {}
    if meta.get(LAYOUT_KEY, b"").decode() != (kept_layout or layout()):
        raise KeptUnreadable(f"written in layout {meta.get(LAYOUT_KEY, b'?').decode()!r}, not {kept_layout or layout()!r}")
    frame = table.to_pandas()
    _decode_json_columns(frame, json.loads(meta.get(JSON_COLUMNS, b"[]")))
    return frame


def _decode_json_columns(frame: pd.DataFrame, columns: Iterable[str]) -> None:
    """Decode, in place, the frame's columns `parquet_bytes` wrote as JSON text."""
    for column in columns:
        cells = frame[column].tolist()
        if all(isinstance(v, str) for v in cells):  # each cell one JSON text (parquet_bytes): the column is read as one array
            values = decode("[" + ",".join(cells) + "]")
            if len(values) != len(cells):
                raise KeptUnreadable(f"column {column!r}: {len(values)} values for {len(cells)} cells")
        else:
            values = [decode(v) for v in cells]  # raises for a cell that is not text, as before
        frame[column] = pd.Series(values, index=frame.index, dtype=object)


def read_columns(data: bytes, columns: Sequence[str], kept_layout: str | None = None) -> pd.DataFrame:
    """`read_frame(data)[columns]` without reading the other columns: the same values and dtypes, in the order asked, a
    name the frame has not left out. Only the JSON columns asked for are decoded, and the file is read in this thread
    (pyarrow's pool costs more CPU than it saves on a frame this size). KeptUnreadable as `read_frame`."""
    try:
        source = pq.ParquetFile(pa.BufferReader(data))
        meta = source.schema_arrow.metadata or {}
        if meta.get(LAYOUT_KEY, b"").decode() != (kept_layout or layout()):
            raise KeptUnreadable(f"written in layout {meta.get(LAYOUT_KEY, b'?').decode()!r}, not {kept_layout or layout()!r}")
        present = set(source.schema_arrow.names)
        wanted = [c for c in dict.fromkeys(columns) if c in present]
        table = source.read(columns=wanted, use_threads=False)
    except (pa.ArrowException, OSError, ValueError) as err:
        raise KeptUnreadable(f"unreadable Parquet ({err})") from None
    frame = table.to_pandas(use_threads=False)
    _decode_json_columns(frame, [c for c in json.loads(meta.get(JSON_COLUMNS, b"[]")) if c in wanted])
    return frame


# ---- the store ----------------------------------------------------------------------------------

class KeptResults:
    """Kept results in the database of a `Store` (scores) and beside it (frames: a folder for SQLite, a table for PostgreSQL)."""

    def __init__(self, store: Store, folder: Path | None = None) -> None:
        self.store = store
        if store.path is not None:
            self.folder: Path | None = folder or store.path.with_name(store.path.name + ".kept")
        else:
            self.folder = folder
        self._create_tables()

    def _create_tables(self) -> None:
        tables = [kept_scores, kept_views] + ([] if self.folder is not None else [kept_frames])
        for attempt in range(5):
            try:
                with self.store.writer.begin() as connection:
                    metadata.create_all(connection, tables=tables, checkfirst=True)
                return
            except (IntegrityError, OperationalError, sa.exc.ProgrammingError):  # another process created them meanwhile
                if attempt == 4:
                    raise
                time.sleep(0.05 * (attempt + 1))

    # ---- writing ---------------------------------------------------------------------------------
    def keep(self, result: RunResult, run_sha256: str, gold_sha256: str, strict: bool) -> Summary:
        """Keep a scored run (its frames are built if they were not yet); replaces what was kept under the same key."""
        key = result_key(run_sha256, gold_sha256, strict)
        kept_layout = layout()
        frames = result.frames
        blobs = {"examples": parquet_bytes(frames.examples, kept_layout)}
        for level, frame in frames.details.items():
            blobs[level] = parquet_bytes(frame, kept_layout)
        levels = {level: (sha256(data), len(data)) for level, data in blobs.items()}
        summary = Summary(key, result.task.facts.name, run_sha256, gold_sha256, bool(strict), result.file, result.scores, result.coverage,
                          list(result.problems), list(result.notes), list(result.extra_guids), levels)
        if self.folder is not None:
            self._write_folder(key, blobs)
        row = {"key": key, "task": summary.task, "run_sha256": run_sha256, "gold_sha256": gold_sha256, "strict": bool(strict),
               "layout": kept_layout, "file_name": summary.file_name, "summary": json.dumps(_summary_json(summary), ensure_ascii=False),
               "levels": json.dumps(levels), "created_at": now()}

        def work(connection: sa.Connection) -> None:
            connection.execute(kept_views.delete().where(kept_views.c.key == key))
            connection.execute(kept_scores.delete().where(kept_scores.c.key == key))
            connection.execute(kept_scores.insert().values(**row))
            if self.folder is None:
                connection.execute(kept_frames.delete().where(kept_frames.c.key == key))
                connection.execute(kept_frames.insert(), [{"key": key, "level": level, "data": data} for level, data in blobs.items()])

        self._retrying(work)
        return summary

    def _write_folder(self, key: str, blobs: dict[str, bytes]) -> None:
        assert self.folder is not None
        self.folder.mkdir(parents=True, exist_ok=True)
        target = self.folder / key
        staging = Path(tempfile.mkdtemp(prefix=f".{key[:12]}-", dir=self.folder))
        try:
            for level, data in blobs.items():
                with open(staging / f"{level}.parquet", "wb") as out:
                    out.write(data)
                    out.flush()
                    os.fsync(out.fileno())
            if target.exists():
                old = Path(tempfile.mkdtemp(prefix=f".{key[:12]}-old-", dir=self.folder))
                os.replace(target, old / "result")
                shutil.rmtree(old, ignore_errors=True)
            os.replace(staging, target)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise

    def _retrying(self, work: Callable[[Any], Any]) -> Any:
        for attempt in range(6):
            try:
                with self.store.writer.begin() as connection:
                    return work(connection)
            except (IntegrityError, OperationalError):
                if attempt == 5:
                    raise
                time.sleep(0.05 * (attempt + 1))
        raise AssertionError("unreachable")

    def forget(self, run_sha256: str, task: str | None = None) -> int:
        """Remove every kept result of a run's bytes (of one task, or all): its run was removed. Returns how many there were."""
        where = kept_scores.c.run_sha256 == run_sha256
        if task is not None:
            where = where & (kept_scores.c.task == task)
        with self.store.writer.begin() as connection:
            keys = list(connection.execute(sa.select(kept_scores.c.key).where(where)).scalars())
            connection.execute(kept_scores.delete().where(where))
            if keys:
                connection.execute(kept_views.delete().where(kept_views.c.key.in_(keys)))
            if self.folder is None and keys:
                connection.execute(kept_frames.delete().where(kept_frames.c.key.in_(keys)))
        if self.folder is not None:
            for key in keys:
                shutil.rmtree(self.folder / key, ignore_errors=True)
        return len(keys)

    # ---- reading ---------------------------------------------------------------------------------
    def summaries(self, task: str, run_sha256s: Iterable[str], gold_sha256: str, strict: bool) -> dict[str, Summary]:
        """The usable kept results of these runs for this gold, by run sha256 (one query); stale or damaged ones are left out."""
        wanted = sorted(set(run_sha256s))
        found: dict[str, Summary] = {}
        if not wanted:
            return found
        query = sa.select(kept_scores).where((kept_scores.c.task == task) & (kept_scores.c.gold_sha256 == gold_sha256)
                                             & (kept_scores.c.strict == bool(strict)) & (kept_scores.c.layout == layout()))
        with self.store.engine.connect() as connection:
            for start in range(0, len(wanted), 500):
                chunk = wanted[start:start + 500]
                for row in connection.execute(query.where(kept_scores.c.run_sha256.in_(chunk))):
                    try:
                        summary = _summary_from_row(row)
                    except (ValueError, KeyError, TypeError):
                        continue  # a damaged row is scored again
                    if self._files_look_whole(summary):
                        found[summary.run_sha256] = summary
        return found

    def summary(self, task: str, run_sha256: str, gold_sha256: str, strict: bool) -> Summary | None:
        return self.summaries(task, [run_sha256], gold_sha256, strict).get(run_sha256)

    def _files_look_whole(self, summary: Summary) -> bool:
        if self.folder is None:
            return True  # rows of one transaction; their bytes are checked when read
        for level, (_, size) in summary.levels.items():
            try:
                if (self.folder / summary.key / f"{level}.parquet").stat().st_size != size:
                    return False
            except OSError:
                return False
        return True

    def frames(self, summary: Summary) -> Frames:
        """The kept frames of a result; KeptUnreadable when a file is missing, damaged or from another layout."""
        blobs = self._read_blobs(summary)
        decoded = {}
        for level, (digest, size) in summary.levels.items():
            data = blobs.get(level)
            if data is None or len(data) != size or sha256(data) != digest:
                raise KeptUnreadable(f"the kept {level} of {summary.file_name} is missing or damaged")
            decoded[level] = read_frame(data)
        examples = decoded.pop("examples")
        return Frames(examples, decoded)

    def frame_columns(self, summary: Summary, columns: Mapping[str, Sequence[str]]) -> Frames:
        """Only these columns of a result's kept frames, by level ("examples" and detail levels; the other levels are not
        read): what `frames` gives, cut to them (`read_columns`), with the same checks of each file's size and sha256."""
        levels = ["examples"] + [level for level in columns if level != "examples" and level in summary.levels]
        blobs = self._read_blobs(summary, levels)
        decoded = {}
        for level in levels:
            digest, size = summary.levels[level]
            data = blobs.get(level)
            if data is None or len(data) != size or sha256(data) != digest:
                raise KeptUnreadable(f"the kept {level} of {summary.file_name} is missing or damaged")
            decoded[level] = read_columns(data, columns.get(level, ()))
        examples = decoded.pop("examples")
        return Frames(examples, decoded)

    def summaries_by_key(self, keys: Iterable[str]) -> dict[str, Summary]:
        """The kept results of these keys (`result_key`) written in this layout, by key (one query per 500 keys)."""
        wanted = sorted(set(keys))
        found: dict[str, Summary] = {}
        with self.store.engine.connect() as connection:
            for start in range(0, len(wanted), 500):
                query = sa.select(kept_scores).where(kept_scores.c.key.in_(wanted[start:start + 500]) & (kept_scores.c.layout == layout()))
                for row in connection.execute(query):
                    try:
                        found[row.key] = _summary_from_row(row)
                    except (ValueError, KeyError, TypeError):
                        continue  # a damaged row: its run is read whole (and scored again) instead
        return found

    def _read_blobs(self, summary: Summary, levels: Iterable[str] | None = None) -> dict[str, bytes]:
        wanted = list(summary.levels if levels is None else levels)
        if self.folder is not None:
            blobs = {}
            for level in wanted:
                try:
                    blobs[level] = (self.folder / summary.key / f"{level}.parquet").read_bytes()
                except OSError:
                    continue
            return blobs
        with self.store.engine.connect() as connection:
            rows = connection.execute(sa.select(kept_frames.c.level, kept_frames.c.data)
                                      .where((kept_frames.c.key == summary.key) & kept_frames.c.level.in_(wanted)))
            return {row.level: bytes(row.data) for row in rows}

    def view(self, key: str, view: str) -> Any | None:
        """A view kept for a result (its JSON value), or None."""
        with self.store.engine.connect() as connection:
            data = connection.execute(sa.select(kept_views.c.data).where((kept_views.c.key == key) & (kept_views.c.view == view))).scalar()
        return None if data is None else json.loads(data)

    def keep_view(self, key: str, view: str, value: Any) -> None:
        """Keep a view of a kept result (a JSON value); it goes with the result when that is replaced or removed."""
        def work(connection: sa.Connection) -> None:
            if connection.execute(sa.select(kept_scores.c.key).where(kept_scores.c.key == key)).first() is None:
                return  # the result was replaced or removed meanwhile
            connection.execute(kept_views.delete().where((kept_views.c.key == key) & (kept_views.c.view == view)))
            connection.execute(kept_views.insert().values(key=key, view=view, data=json.dumps(value)))
        self._retrying(work)

    def disk_bytes(self, summary: Summary) -> int:
        """What a kept result's frames take (their Parquet bytes)."""
        return sum(size for _, size in summary.levels.values())


def _summary_json(summary: Summary) -> dict:
    return {"scores": summary.scores.values, "reasons": summary.scores.reasons, "coverage": asdict(summary.coverage),
            "problems": [p.to_dict() for p in summary.problems], "notes": summary.notes, "extra": summary.extra_guids}


def _summary_from_row(row: Any) -> Summary:
    data = json.loads(row.summary)
    levels = {level: (str(digest), int(size)) for level, (digest, size) in json.loads(row.levels).items()}
    if "examples" not in levels:
        raise ValueError("no example frame")
    return Summary(row.key, row.task, row.run_sha256, row.gold_sha256, bool(row.strict), row.file_name,
                   Scores(dict(data["scores"]), dict(data["reasons"])), Coverage(**data["coverage"]),
                   [Problem(**p) for p in data["problems"]], list(data["notes"]), list(data["extra"]), levels)


# ---- the pure API -------------------------------------------------------------------------------

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
            found = kept.view(key, view)
        except sa.exc.SQLAlchemyError:
            found = None
        if isinstance(found, dict):
            return {k: None if v is None else (float(v[0]), float(v[1])) for k, v in found.items()}
    value = confidence_intervals(result.task, result.frames, samples=samples)
    if kept is not None and key is not None:
        try:
            kept.keep_view(key, view, value)
        except sa.exc.SQLAlchemyError:
            pass  # shown now, computed again next time
    return value


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
    except (TypeError, OSError, sa.exc.SQLAlchemyError):
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

#: The code whose output a kept view is, besides the scoring code (`layout`): a change to any of these makes every kept
#: view stale (computed again, once, and replaced).
VIEW_SOURCES = ("discovery", "scoring/slicing.py")
#: How a dataclass instance is written in a kept view's JSON: {DATACLASS: class name, "fields": {...}}.
DATACLASS = "\u0000dataclass"


_VIEW_LAYOUT = _code_fingerprint(layout(), VIEW_SOURCES)


def view_layout() -> str:
    """The layout kept views are written in: the results' layout and a hash of the code that computes the views."""
    return _VIEW_LAYOUT


def _view_kinds(types: dict[str, type]) -> Callable[[Any], Any]:
    """`exact`'s conversion for kept views: a dataclass of `types` tagged with its class name, a numpy scalar as the
    Python number it equals; TypeError for a dataclass of another type, or an object using the dataclass tag."""

    def convert(value: Any) -> Any:
        if is_dataclass(value) and not isinstance(value, type):
            name = type(value).__name__
            if types.get(name) is not type(value):
                raise TypeError(f"a {name} cannot be kept (not one of the view's types)")
            return {DATACLASS: name, "fields": {f.name: getattr(value, f.name) for f in fields(value)}}
        if isinstance(value, dict) and DATACLASS in value:
            raise TypeError("a dict with the dataclass tag as a key cannot be kept exactly")
        if type(value).__module__ == "numpy" and hasattr(value, "item") and getattr(value, "ndim", None) == 0:
            return value.item()  # np.int64(3) -> 3, np.bool_ -> bool
        return value
    return convert


def view_json(value: Any, types: Iterable[type] = ()) -> str:
    """A view's value as the JSON text a kept view holds: `exact` with dataclasses of `types` and numpy scalars
    converted (`_view_kinds`); TypeError when it cannot be kept exactly."""
    text: str = encode(exact(value, _view_kinds({t.__name__: t for t in types})))
    return text


def view_from_json(text: str, types: Iterable[type] = ()) -> Any:
    """The value `view_json` wrote; ValueError (or KeyError, TypeError) when the text is not one."""
    known = {t.__name__: t for t in types}

    def hook(item: dict) -> Any:
        if DATACLASS in item:
            return known[item[DATACLASS]](**item["fields"])
        return untagged(item)

    return decoder(hook)(text)


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
    except sa.exc.SQLAlchemyError:
        found = None
    if isinstance(found, dict) and found.get("stamp") == stamp and isinstance(found.get("value"), str):
        try:
            return view_from_json(found["value"], types)
        except (ValueError, KeyError, TypeError):
            pass  # damaged: computed again and replaced
    value = compute()
    try:
        kept.keep_view(anchor, view, {"stamp": stamp, "value": view_json(value, types)})
    except (TypeError, sa.exc.SQLAlchemyError):
        pass  # shown now, computed again next time
    return value
