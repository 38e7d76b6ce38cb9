"""Prediction runs kept in the annotation database, so they outlive a session, a tab and a server.

A run is a named prediction file of one task: its bytes (content-addressed, the same bytes are
stored once however many runs point at them), the original file name, the model it belongs to,
who uploaded it and when. It uses the annotation `Store`'s engine and transactions: adding a run
writes its bytes and its row in one transaction, so no reader ever sees one without the other;
renaming and removing carry a version number, and a change made against an older version is
refused (`RunConflict`) instead of overwriting someone else's. Reads and writes go through the store's
`read` and `write`, so a busy or unreachable database is the store's StoreBusy / StoreUnavailable here too.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

import sqlalchemy as sa

from klue_viz.core.problems import InputError
from klue_viz.reading.uploads import check_size, clean_name
from klue_viz.store.annotations import Store, now
from klue_viz.store.schema import annotation_table, probe_runs, run_blobs, runs


class RunConflict(Exception):
    """The run was renamed or removed since it was read; the message says what happened."""


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass(frozen=True)
class Run:
    """A stored run without its bytes (read them with `RunStore.data`)."""

    task: str
    name: str
    file_name: str
    model: str
    uploader: str
    created_at: str
    sha256: str
    size: int
    version: int


class RunStore:
    """Runs in the annotation database; every change is one transaction."""

    def __init__(self, store: Store) -> None:
        self.store = store

    # ---- reading ---------------------------------------------------------------------------------
    def _query(self) -> sa.Select:
        return sa.select(runs, run_blobs.c.size).join(run_blobs, runs.c.sha256 == run_blobs.c.sha256)

    @staticmethod
    def _from_row(row: sa.Row) -> Run:
        return Run(row.task, row.name, row.file_name, row.model, row.uploader, row.created_at, row.sha256, row.size, row.version)

    def list(self, task: str | None = None) -> list[Run]:
        """Runs of a task (or all), oldest first."""
        query = self._query()
        if task is not None:
            query = query.where(runs.c.task == task)
        return self.store.read(lambda connection: [self._from_row(row) for row in connection.execute(query.order_by(runs.c.task, runs.c.id))])

    def get(self, task: str, name: str) -> Run | None:
        row = self.store.read(lambda connection: connection.execute(self._query().where((runs.c.task == task) & (runs.c.name == name))).first())
        return self._from_row(row) if row else None

    def data(self, digest: str) -> bytes:
        data = self.store.read(lambda connection: connection.execute(sa.select(run_blobs.c.data).where(run_blobs.c.sha256 == digest)).scalar())
        if data is None:
            raise RunConflict("this run's file was removed meanwhile")
        return bytes(data)

    # ---- writing ---------------------------------------------------------------------------------
    def add(self, task: str, file_name: str, data: bytes, model: str = "", uploader: str = "", name: str | None = None) -> Run:
        """Store a prediction file as a run of a task and return it.

        The same bytes already stored for this task give back that run (nothing new is written; a run
        stored without a model takes `model`, one of another model keeps its own). A new
        run is named after the file's stem (or `name`), with a suffix when that name is taken.
        """
        check_size(file_name, len(data))
        digest = sha256(data)
        wanted = clean_name(name or Path(file_name).stem) or "run"
        model = clean_name(model)

        def work(connection: sa.Connection) -> Run:
            existing = connection.execute(self._query().where((runs.c.task == task) & (runs.c.sha256 == digest)).with_for_update()).first()
            if existing is not None:
                if model and not existing.model:  # stored without a model, uploaded again under one: it is that model's
                    connection.execute(runs.update().where(runs.c.id == existing.id).values(model=model, version=existing.version + 1))
                    return Run(task, existing.name, existing.file_name, model, existing.uploader, existing.created_at, digest,
                               existing.size, existing.version + 1)
                return self._from_row(existing)
            if connection.execute(sa.select(run_blobs.c.sha256).where(run_blobs.c.sha256 == digest)).first() is None:
                connection.execute(run_blobs.insert().values(sha256=digest, size=len(data), data=data))
            taken = set(connection.execute(sa.select(runs.c.name).where(runs.c.task == task)).scalars())
            chosen, k = wanted, 2
            while chosen in taken:
                chosen, k = f"{wanted}-{k}", k + 1
            created = now()
            connection.execute(runs.insert().values(task=task, name=chosen, file_name=file_name[:1000], model=model,
                                                    uploader=uploader[:100], created_at=created, sha256=digest, version=1))
            return Run(task, chosen, file_name[:1000], model, uploader[:100], created, digest, len(data), 1)

        return self.store.write(work, "another upload kept taking this run's name")

    def rename(self, task: str, name: str, new_name: str, expected_version: int) -> Run:
        """Give a run a new name; its annotations follow it. Refused when the run changed since it was read."""
        new_name = clean_name(new_name)
        if not new_name:
            raise InputError("a run needs a name")

        def work(connection: sa.Connection) -> Run:
            row = self._locked(connection, task, name, expected_version)
            if new_name == name:
                return self._from_row(row)
            if connection.execute(sa.select(runs.c.id).where((runs.c.task == task) & (runs.c.name == new_name))).first():
                raise InputError(f"there is already a {task.upper()} run named {new_name}")
            clash = connection.execute(sa.select(sa.func.count()).select_from(annotation_table).where(
                (annotation_table.c.task == task) & (annotation_table.c.run == new_name))).scalar()
            if clash:
                raise InputError(f"{clash} annotation(s) kept from an earlier run named {new_name} would mix with this run's: choose another name")
            connection.execute(runs.update().where(runs.c.id == row.id).values(name=new_name, version=row.version + 1))
            connection.execute(annotation_table.update().where((annotation_table.c.task == task) & (annotation_table.c.run == name)).values(run=new_name))
            return Run(task, new_name, row.file_name, row.model, row.uploader, row.created_at, row.sha256, row.size, row.version + 1)

        return self.store.write(work, "another change kept renaming this run")

    def remove(self, task: str, name: str, expected_version: int, delete_annotations: bool = False) -> int:
        """Remove a run (its bytes too when no other run shares them); its annotations are kept unless asked.

        Returns the number of annotations deleted.
        """
        def work(connection: sa.Connection) -> int:
            row = self._locked(connection, task, name, expected_version)
            connection.execute(runs.delete().where(runs.c.id == row.id))
            if not connection.execute(sa.select(runs.c.id).where(runs.c.sha256 == row.sha256)).first() and \
                    not connection.execute(sa.select(probe_runs.c.id).where(probe_runs.c.sha256 == row.sha256)).first():
                connection.execute(run_blobs.delete().where(run_blobs.c.sha256 == row.sha256))  # no run, nor run on a suite, uses them
            if not delete_annotations:
                return 0
            return connection.execute(annotation_table.delete().where((annotation_table.c.task == task) & (annotation_table.c.run == name))).rowcount

        return self.store.write(work, "another change kept removing this run")

    def _locked(self, connection: sa.Connection, task: str, name: str, expected_version: int) -> sa.Row:
        row = connection.execute(self._query().where((runs.c.task == task) & (runs.c.name == name)).with_for_update(of=runs)).first()
        if row is None:
            raise RunConflict(f"the {task.upper()} run {name} was removed or renamed meanwhile")
        if row.version != expected_version:
            raise RunConflict(f"the {task.upper()} run {name} was changed meanwhile (version {row.version}, you had {expected_version}); reload to see it")
        return row
