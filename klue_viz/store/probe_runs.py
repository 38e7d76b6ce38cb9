"""Behavioural test suites (`klue-viz probe make`) and the runs on them, kept in the database, so the Behaviour section
and `klue-viz probe score --suite` read them back instead of a re-upload.

A suite is stored under a name (by default its folder's name) with its task: its perturbed examples' gold file and its
sources' gold file as uploaded golds are (`gold_files`, content-addressed: the gold of a suite can be opened like any
stored gold), its manifest and its README as text. A run on a suite is a prediction file whose bytes are kept in
`run_blobs` as an ordinary run's are, tied to its suite by name. Storing the same suite again (the same four files)
gives back the stored one; another suite under a taken name gets a suffix, as a run does. Removing a suite removes the
runs on it (and their bytes no other run shares); its gold files stay, as every uploaded gold does. This module holds bytes
only: klue_viz.probes reads them into a ProbeSet (a sibling floor: the store does not import it).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import sqlalchemy as sa

from klue_viz.core.problems import InputError
from klue_viz.reading.uploads import check_size, clean_name
from klue_viz.store.annotations import Store, now
from klue_viz.store.golds import GoldStore
from klue_viz.store.runs import sha256
from klue_viz.store.schema import gold_files, probe_runs, probe_suites, run_blobs, runs


@dataclass(frozen=True)
class StoredSuite:
    """A stored suite: its files' bytes by their path in the suite's folder (as `klue-viz probe make` wrote them)."""

    task: str
    name: str
    files: dict[str, bytes]
    uploader: str
    created_at: str


@dataclass(frozen=True)
class SuiteEntry:
    """A stored suite as listed: its task and name, who stored it and when, and how many runs it holds."""

    task: str
    name: str
    uploader: str
    created_at: str
    runs: int


@dataclass(frozen=True)
class SuiteRun:
    """A run stored on a suite, without its bytes (read them with `SuiteStore.data`)."""

    task: str
    suite: str
    name: str
    file_name: str
    model: str
    uploader: str
    created_at: str
    sha256: str
    size: int


class SuiteStore:
    """Suites and the runs on them in the annotation database; every change is one transaction."""

    def __init__(self, store: Store) -> None:
        self.store = store

    # ---- suites ----------------------------------------------------------------------------------------
    def add_suite(self, task: str, name: str, manifest: str, gold: tuple[str, bytes], sources: tuple[str, bytes], readme: str = "",
                  uploader: str = "") -> str:
        """Store a suite (`gold`, `sources`: the two gold files' paths in the suite folder and their bytes); the name it
        is stored under: `name` (cleaned), the stored suite's when the same files are stored already, else `name` with a
        suffix when another suite took it."""
        golds = GoldStore(self.store)
        stored_gold, stored_sources = golds.add(task, gold[0], gold[1]), golds.add(task, sources[0], sources[1])
        wanted = clean_name(name) or "suite"

        def work(connection: sa.Connection) -> str:
            rows = connection.execute(sa.select(probe_suites).where(probe_suites.c.task == task)).all()
            for row in rows:
                if (row.gold_sha256, row.sources_sha256, row.manifest, row.readme) == (stored_gold.sha256, stored_sources.sha256, manifest, readme):
                    return str(row.name)
            taken = {row.name for row in rows}
            chosen, k = wanted, 2
            while chosen in taken:
                chosen, k = f"{wanted}-{k}", k + 1
            connection.execute(probe_suites.insert().values(task=task, name=chosen, gold_sha256=stored_gold.sha256,
                                                            sources_sha256=stored_sources.sha256, manifest=manifest, readme=readme,
                                                            uploader=uploader[:100], created_at=now()))
            return chosen

        return self.store.write(work, "another session kept storing a suite under this name")

    def suites(self, task: str | None = None) -> list[str]:
        """The names of the stored suites of a task (or all, as `task/name`), oldest first."""
        query = sa.select(probe_suites.c.task, probe_suites.c.name).order_by(probe_suites.c.task, probe_suites.c.created_at, probe_suites.c.name)
        if task is not None:
            query = query.where(probe_suites.c.task == task)
        found = self.store.read(lambda connection: connection.execute(query).all())
        return [row.name if task is not None else f"{row.task}/{row.name}" for row in found]

    def entries(self, task: str | None = None) -> list[SuiteEntry]:
        """The stored suites (of a task, or all) with who stored them, when, and how many runs they hold; oldest first."""
        counted = sa.select(probe_runs.c.task, probe_runs.c.suite, sa.func.count().label("runs")).group_by(probe_runs.c.task, probe_runs.c.suite).subquery()
        query = (sa.select(probe_suites.c.task, probe_suites.c.name, probe_suites.c.uploader, probe_suites.c.created_at,
                           sa.func.coalesce(counted.c.runs, 0).label("runs"))
                 .outerjoin(counted, (counted.c.task == probe_suites.c.task) & (counted.c.suite == probe_suites.c.name))
                 .order_by(probe_suites.c.task, probe_suites.c.created_at, probe_suites.c.name))
        if task is not None:
            query = query.where(probe_suites.c.task == task)
        rows = self.store.read(lambda connection: connection.execute(query).all())
        return [SuiteEntry(row.task, row.name, row.uploader, row.created_at, int(row.runs)) for row in rows]

    def remove_suite(self, task: str, name: str) -> int | None:
        """Remove a stored suite and every run on it (a run's bytes too when no other run, on a suite or not, shares them),
        in one transaction; the number of runs removed, None when there was no such suite. Its two gold files stay, as
        every uploaded gold does: a link may name them, and storing the suite again finds them."""
        def work(connection: sa.Connection) -> int | None:
            where = (probe_suites.c.task == task) & (probe_suites.c.name == name)
            if connection.execute(sa.select(probe_suites.c.name).where(where).with_for_update()).first() is None:
                return None
            on_suite = (probe_runs.c.task == task) & (probe_runs.c.suite == name)
            digests = set(connection.execute(sa.select(probe_runs.c.sha256).where(on_suite)).scalars())
            removed = connection.execute(probe_runs.delete().where(on_suite)).rowcount
            connection.execute(probe_suites.delete().where(where))
            for digest in digests:
                _drop_unused_blob(connection, digest)
            return removed

        return self.store.write(work, "another change kept removing this suite")

    def suite(self, task: str, name: str, gold_path: str, sources_path: str) -> StoredSuite | None:
        """A stored suite's files under the paths a suite folder gives them (`gold_path`, `sources_path`: the task's);
        None when there is no such suite."""
        gold, sources = gold_files.alias("gold"), gold_files.alias("sources")
        query = (sa.select(probe_suites, gold.c.data.label("gold_data"), sources.c.data.label("sources_data"))
                 .join(gold, gold.c.sha256 == probe_suites.c.gold_sha256).join(sources, sources.c.sha256 == probe_suites.c.sources_sha256)
                 .where((probe_suites.c.task == task) & (probe_suites.c.name == name)))
        row = self.store.read(lambda connection: connection.execute(query).first())
        if row is None:
            return None
        files = {"manifest.jsonl": row.manifest.encode("utf-8"), gold_path: bytes(row.gold_data), sources_path: bytes(row.sources_data)}
        if row.readme:
            files["README.md"] = row.readme.encode("utf-8")
        return StoredSuite(task, name, files, row.uploader, row.created_at)

    # ---- runs on a suite ---------------------------------------------------------------------------------
    def add_run(self, task: str, suite: str, file_name: str, data: bytes, model: str = "", uploader: str = "", name: str | None = None) -> SuiteRun:
        """Store a prediction file as a run on a stored suite. The same bytes already stored on this suite give back that
        run; a new run is named after the file's stem (or `name`), with a suffix when that name is taken on the suite."""
        check_size(file_name, len(data))
        digest = sha256(data)
        wanted = clean_name(name or Path(file_name).stem) or "run"
        model = clean_name(model)

        def work(connection: sa.Connection) -> SuiteRun:
            # the suite's row locked (PostgreSQL) until this run is in, so a removal of the suite meanwhile takes it too
            suite_row = sa.select(probe_suites.c.name).where((probe_suites.c.task == task) & (probe_suites.c.name == suite)).with_for_update()
            if connection.execute(suite_row).first() is None:
                raise InputError(f"there is no stored {task.upper()} suite named {suite}")
            on_suite = (probe_runs.c.task == task) & (probe_runs.c.suite == suite)
            existing = connection.execute(self._query().where(on_suite & (probe_runs.c.sha256 == digest))).first()
            if existing is not None:
                return self._from_row(existing)
            if connection.execute(sa.select(run_blobs.c.sha256).where(run_blobs.c.sha256 == digest)).first() is None:
                connection.execute(run_blobs.insert().values(sha256=digest, size=len(data), data=data))
            taken = set(connection.execute(sa.select(probe_runs.c.name).where(on_suite)).scalars())
            chosen, k = wanted, 2
            while chosen in taken:
                chosen, k = f"{wanted}-{k}", k + 1
            created = now()
            connection.execute(probe_runs.insert().values(task=task, suite=suite, name=chosen, file_name=file_name[:1000], model=model,
                                                          uploader=uploader[:100], created_at=created, sha256=digest))
            return SuiteRun(task, suite, chosen, file_name[:1000], model, uploader[:100], created, digest, len(data))

        return self.store.write(work, "another upload kept taking this run's name")

    def _query(self) -> sa.Select:
        return sa.select(probe_runs, run_blobs.c.size).join(run_blobs, probe_runs.c.sha256 == run_blobs.c.sha256)

    @staticmethod
    def _from_row(row: sa.Row) -> SuiteRun:
        return SuiteRun(row.task, row.suite, row.name, row.file_name, row.model, row.uploader, row.created_at, row.sha256, row.size)

    def runs(self, task: str | None = None, suite: str | None = None) -> list[SuiteRun]:
        """The runs on a suite (or on every suite of a task, or on all), oldest first."""
        query = self._query()
        if task is not None:
            query = query.where(probe_runs.c.task == task)
        if suite is not None:
            query = query.where(probe_runs.c.suite == suite)
        query = query.order_by(probe_runs.c.task, probe_runs.c.suite, probe_runs.c.id)
        return self.store.read(lambda connection: [self._from_row(row) for row in connection.execute(query)])

    def remove_run(self, task: str, suite: str, name: str) -> bool:
        """Remove a run from a suite (its bytes too when no run, on a suite or not, shares them); False when there was none."""
        def work(connection: sa.Connection) -> bool:
            where = (probe_runs.c.task == task) & (probe_runs.c.suite == suite) & (probe_runs.c.name == name)
            digest = connection.execute(sa.select(probe_runs.c.sha256).where(where)).scalar()
            if digest is None:
                return False
            connection.execute(probe_runs.delete().where(where))
            _drop_unused_blob(connection, digest)
            return True

        return self.store.write(work, "another change kept removing this run")

    def data(self, digest: str) -> bytes:
        found = self.store.read(lambda connection: connection.execute(sa.select(run_blobs.c.data).where(run_blobs.c.sha256 == digest)).scalar())
        if found is None:
            raise InputError("this run's file was removed meanwhile")
        return bytes(found)


def _drop_unused_blob(connection: sa.Connection, digest: str) -> None:
    """Delete a run's bytes when no run, on a suite or not, points at them any more."""
    if not connection.execute(sa.select(runs.c.id).where(runs.c.sha256 == digest)).first() and \
            not connection.execute(sa.select(probe_runs.c.id).where(probe_runs.c.sha256 == digest)).first():
        connection.execute(run_blobs.delete().where(run_blobs.c.sha256 == digest))
