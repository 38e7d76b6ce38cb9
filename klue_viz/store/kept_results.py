"""Kept results: a run scored once against one gold, stored to be read back instead of scored again.

A run's result is kept under `result_key` (the sha256 of the run's bytes, of the gold's bytes, `strict` and the
layout): the headline scores, coverage, problems and notes in a small database row (`kept_scores`, which is all the
home page reads), and the per-example and per-unit frames the views filter (`Frames.examples` and `Frames.details`) as
one Parquet file per frame. Beside a SQLite database the Parquet files live in a folder next to it
(`<database>.kept/`), each result's folder written in full under a temporary name and then renamed, so a crash never
leaves half a result; with PostgreSQL the same Parquet bytes are rows of `kept_frames`, written in the same
transaction as their scores row, so every app replica on that database reads them (docs/runs-storage.md says why).

The tables are in klue_viz/store/schema.py, the format of rows and files (layouts, checksums, Parquet, view JSON) in
klue_viz/store/kept_format.py, and scoring what is not kept in klue_viz/store/kept_scoring.py. Every query goes
through the store's one transaction helper (`Store.read`, `Store.write`), so a busy or unreachable database is a
StoreError here too. A kept result is used only when everything matches: its layout, its row's checksum and types,
the size of each file, and, when its frames are read, the sha256 of each file's bytes. Anything else is `None` (or
`KeptUnreadable` for frames), and the caller scores the run again and keeps the new result in place of the old one.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from klue_viz.core.results import Frames
from klue_viz.scoring.evaluate import RunResult
from klue_viz.store.annotations import Store, StoreError, now
from klue_viz.store.kept_format import (
    KeptUnreadable,
    Summary,
    Unsealed,
    layout,
    parquet_bytes,
    read_columns,
    read_frame,
    result_key,
    seal,
    sha256,
    summary_from_row,
    summary_row,
    unseal,
)
from klue_viz.store.schema import kept_frames, kept_scores, kept_views


class KeptResults:
    """Kept results in the database of a `Store` (scores) and beside it (frames: a folder for SQLite, a table for PostgreSQL)."""

    def __init__(self, store: Store, folder: Path | None = None) -> None:
        self.store = store
        if store.path is not None:
            self.folder: Path | None = folder or store.path.with_name(store.path.name + ".kept")
        else:
            self.folder = folder

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
        row = summary_row(summary, kept_layout, now())

        def work(connection: sa.Connection) -> None:
            connection.execute(kept_views.delete().where(kept_views.c.key == key))
            connection.execute(kept_scores.delete().where(kept_scores.c.key == key))
            connection.execute(kept_scores.insert().values(**row))
            if self.folder is None:
                connection.execute(kept_frames.delete().where(kept_frames.c.key == key))
                connection.execute(kept_frames.insert(), [{"key": key, "level": level, "data": data} for level, data in blobs.items()])

        self.store.write(work, "another process kept writing this kept result")
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

    def forget(self, run_sha256: str, task: str | None = None) -> int:
        """Remove every kept result of a run's bytes (of one task, or all; of every layout): its run was removed. Returns how
        many there were."""
        where = kept_scores.c.run_sha256 == run_sha256
        if task is not None:
            where = where & (kept_scores.c.task == task)

        def work(connection: sa.Connection) -> list[str]:
            keys = list(connection.execute(sa.select(kept_scores.c.key).where(where)).scalars())
            connection.execute(kept_scores.delete().where(where))
            if keys:
                connection.execute(kept_views.delete().where(kept_views.c.key.in_(keys)))
                connection.execute(kept_frames.delete().where(kept_frames.c.key.in_(keys)))
            return keys

        keys = self.store.write(work, "another process kept changing the kept results of this run")
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
        rows = self.store.read(lambda connection: [row for start in range(0, len(wanted), 500)
                                                   for row in connection.execute(query.where(kept_scores.c.run_sha256.in_(wanted[start:start + 500])))])
        for row in rows:
            summary = _usable(row)
            if summary is not None and self._files_look_whole(summary):
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
        query = sa.select(kept_scores).where(kept_scores.c.layout == layout())
        rows = self.store.read(lambda connection: [row for start in range(0, len(wanted), 500)
                                                   for row in connection.execute(query.where(kept_scores.c.key.in_(wanted[start:start + 500])))])
        found: dict[str, Summary] = {}
        for row in rows:
            summary = _usable(row)  # a damaged row: its run is read whole (and scored again) instead
            if summary is not None:
                found[row.key] = summary
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
        query = sa.select(kept_frames.c.level, kept_frames.c.data).where((kept_frames.c.key == summary.key) & kept_frames.c.level.in_(wanted))
        try:
            return self.store.read(lambda connection: {row.level: bytes(row.data) for row in connection.execute(query)})
        except StoreError:
            return {}  # read as missing: the run is scored again (and its result kept again when the database is back)

    def view(self, key: str, view: str) -> Any | None:
        """A view kept for a result (its JSON value), or None when there is none or its row is damaged (its checksum fails,
        or it is no JSON): it is computed again and replaces the row (`keep_view`)."""
        query = sa.select(kept_views.c.data).where((kept_views.c.key == key) & (kept_views.c.view == view))
        data = self.store.read(lambda connection: connection.execute(query).scalar())
        if data is None:
            return None
        try:
            return json.loads(unseal(data, key, view))
        except ValueError:  # Unsealed and JSONDecodeError are ValueErrors
            return None

    def keep_view(self, key: str, view: str, value: Any) -> None:
        """Keep a view of a kept result (a JSON value); it goes with the result when that is replaced or removed."""
        def work(connection: sa.Connection) -> None:
            if connection.execute(sa.select(kept_scores.c.key).where(kept_scores.c.key == key)).first() is None:
                return  # the result was replaced or removed meanwhile
            connection.execute(kept_views.delete().where((kept_views.c.key == key) & (kept_views.c.view == view)))
            connection.execute(kept_views.insert().values(key=key, view=view, data=seal(json.dumps(value), key, view)))
        self.store.write(work, "another process kept writing this view")

    def disk_bytes(self, summary: Summary) -> int:
        """What a kept result's frames take (their Parquet bytes)."""
        return sum(size for _, size in summary.levels.values())


def _usable(row: Any) -> Summary | None:
    """The summary of a kept row, or None when the row is damaged (checksum, types): its run is scored again."""
    try:
        return summary_from_row(row)
    except (Unsealed, ValueError, KeyError, TypeError):
        return None
