"""The annotation store: error tags, notes and gold remarks, in SQLite (default) or PostgreSQL.

SQLAlchemy Core against either database. Every change is one transaction; SQLite runs in WAL mode
with full synchronisation, so what the UI acknowledged survives a killed process. Each record
carries a version number: a save made against an older version is refused with the newer record
(who changed it and when) instead of silently overwriting it.
"""

from __future__ import annotations

import json
import os
import sqlite3
import sys
import time
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterable

import sqlalchemy as sa
from sqlalchemy.exc import DatabaseError, IntegrityError, OperationalError

DB_ENV = "KLUE_VIZ_DB"
SCHEMA_VERSION = 2
NO_TURN = -1  # stored instead of NULL so that the unique key holds on every database

metadata = sa.MetaData()
schema_version = sa.Table("schema_version", metadata, sa.Column("version", sa.Integer, nullable=False))
annotations = sa.Table(
    "annotations", metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("task", sa.String(16), nullable=False),
    sa.Column("guid", sa.String(200), nullable=False),
    sa.Column("turn", sa.Integer, nullable=False, server_default=str(NO_TURN)),
    sa.Column("run", sa.String(200), nullable=False),
    sa.Column("annotator", sa.String(100), nullable=False),
    sa.Column("tags", sa.Text, nullable=False, server_default="[]"),
    sa.Column("note", sa.Text, nullable=False, server_default=""),
    sa.Column("gold_wrong", sa.Boolean, nullable=False, server_default=sa.false()),
    sa.Column("corrected_label", sa.Text, nullable=True),
    sa.Column("updated_at", sa.String(40), nullable=False),
    sa.Column("version", sa.Integer, nullable=False, server_default="1"),
    sa.UniqueConstraint("task", "guid", "turn", "run", "annotator", name="one_record_per_key"),
)
sa.Index("annotations_by_task_run", annotations.c.task, annotations.c.run)
custom_tags = sa.Table(
    "custom_tags", metadata,
    sa.Column("task", sa.String(16), primary_key=True),
    sa.Column("tag", sa.String(100), primary_key=True),
)

#: Schema version -> what it adds; a database is brought up to SCHEMA_VERSION one step at a time.
MIGRATIONS = {
    1: lambda connection: metadata.create_all(connection, tables=[annotations, custom_tags]),
    2: lambda connection: _runs_module().create_tables(connection),  # stored prediction runs (klue_viz/annotations/runs.py)
}


def _runs_module():
    from klue_viz.annotations import runs  # defines its tables on this module's metadata

    return runs


class StoreError(Exception):
    """The database cannot be used as it is; the message says what to do."""


class ConflictError(Exception):
    """Someone saved this record since it was read; `current` is their version."""

    def __init__(self, current: "Annotation") -> None:
        super().__init__(f"changed by {current.annotator} at {current.updated_at}")
        self.current = current


@dataclass
class Annotation:
    """One person's remark on one example of one run (or on the gold, run = "gold")."""

    task: str
    guid: str
    run: str
    annotator: str
    tags: list[str] = field(default_factory=list)
    note: str = ""
    gold_wrong: bool = False
    corrected_label: str | None = None
    turn: int | None = None
    updated_at: str = ""
    version: int = 0

    @property
    def key(self) -> tuple:
        return (self.task, self.guid, self.turn, self.run, self.annotator)

    def content(self) -> tuple:
        return (sorted(self.tags), self.note, self.gold_wrong, self.corrected_label)

    def to_record(self) -> dict:
        """The JSONL export form (no version: it is the store's own bookkeeping)."""
        out = asdict(self)
        out.pop("version")
        return {k: out[k] for k in ("task", "guid", "turn", "run", "tags", "note", "gold_wrong", "corrected_label", "annotator", "updated_at")}


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


def default_location() -> Path:
    """The user's data folder: %APPDATA%, ~/Library/Application Support, or $XDG_DATA_HOME."""
    if sys.platform == "win32":
        base = Path(os.environ.get("APPDATA", Path.home() / "AppData" / "Roaming"))
    elif sys.platform == "darwin":
        base = Path.home() / "Library" / "Application Support"
    else:
        base = Path(os.environ.get("XDG_DATA_HOME", Path.home() / ".local" / "share"))
    return base / "klue-viz" / "annotations.sqlite3"


def database_url(value: str | None = None) -> str:
    """KLUE_VIZ_DB as a SQLAlchemy URL: a file path, a sqlite:/// URL, or a postgresql:// URL."""
    value = value if value is not None else os.environ.get(DB_ENV, "")
    if not value:
        return f"sqlite:///{default_location()}"
    if value.startswith(("postgresql://", "postgres://")):
        return "postgresql+psycopg://" + value.split("://", 1)[1]
    if "://" in value:
        return value
    return f"sqlite:///{Path(value).expanduser()}"


def _sqlite_pragmas(dbapi_connection, _record) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=FULL")
    cursor.execute("PRAGMA busy_timeout=10000")
    cursor.close()


def _sqlite_begin(connection) -> None:
    connection.exec_driver_sql("BEGIN IMMEDIATE" if connection.get_execution_options().get("immediate") else "BEGIN")


class Store:
    """Annotations and custom tags in one database, opened (and migrated) on construction."""

    def __init__(self, url: str | None = None) -> None:
        self.url = database_url(url)
        self.is_sqlite = self.url.startswith("sqlite")
        if self.is_sqlite:
            path = Path(self.url.removeprefix("sqlite:///"))
            self.path: Path | None = path
            path.parent.mkdir(parents=True, exist_ok=True)
            self.engine = sa.create_engine(self.url, connect_args={"timeout": 10, "isolation_level": None})
            sa.event.listen(self.engine, "connect", _sqlite_pragmas)
            # pysqlite in autocommit mode, SQLAlchemy issues BEGIN itself: IMMEDIATE for writes, so two
            # writers queue on the lock instead of failing when a read transaction turns into a write.
            sa.event.listen(self.engine, "begin", _sqlite_begin)
        else:
            self.path = None
            self.engine = sa.create_engine(self.url, pool_pre_ping=True)
        self.writer = self.engine.execution_options(immediate=True)
        self._open()

    @property
    def location(self) -> str:
        return str(self.path) if self.path else self.engine.url.render_as_string(hide_password=True)

    def _open(self) -> None:
        try:
            with self.engine.connect() as connection:
                if self.is_sqlite:
                    status = connection.exec_driver_sql("PRAGMA quick_check").scalar()
                    if status != "ok":
                        raise StoreError(self._corrupt_message(status))
            self.migrate()
        except (DatabaseError, sqlite3.DatabaseError) as err:
            if self.is_sqlite:
                raise StoreError(self._corrupt_message(str(err.orig if hasattr(err, "orig") else err))) from None
            raise StoreError(f"cannot open the annotation database {self.location}: {err}") from None

    def _corrupt_message(self, detail: str) -> str:
        return (f"the annotation database {self.path} cannot be read ({detail}). Nothing was changed. "
                f"Set {DB_ENV} to another file, or start a new one and keep this file aside ('klue-viz annotations new-db').")

    def migrate(self) -> None:
        """Create or upgrade the schema, one recorded version at a time, each in its own transaction."""
        with self.writer.begin() as connection:
            schema_version.create(connection, checkfirst=True)
            current = connection.execute(sa.select(sa.func.max(schema_version.c.version))).scalar() or 0
        if current > SCHEMA_VERSION:
            raise StoreError(f"the annotation database {self.location} was written by a newer klue-viz (schema {current})")
        for version in range(current + 1, SCHEMA_VERSION + 1):
            with self.writer.begin() as connection:
                MIGRATIONS[version](connection)
                connection.execute(schema_version.insert().values(version=version))

    def version(self) -> int:
        with self.engine.connect() as connection:
            return connection.execute(sa.select(sa.func.max(schema_version.c.version))).scalar() or 0

    # ---- reading ---------------------------------------------------------------------------------
    @staticmethod
    def _from_row(row) -> Annotation:
        return Annotation(
            task=row.task, guid=row.guid, run=row.run, annotator=row.annotator, tags=json.loads(row.tags), note=row.note,
            gold_wrong=bool(row.gold_wrong), corrected_label=row.corrected_label, turn=None if row.turn == NO_TURN else row.turn,
            updated_at=row.updated_at, version=row.version,
        )

    def _where(self, task=None, run=None, guid=None, turn=None, annotator=None, key_turn: bool = False):
        conditions = []
        for column, value in (("task", task), ("run", run), ("guid", guid), ("annotator", annotator)):
            if value is not None:
                conditions.append(annotations.c[column] == value)
        if key_turn:
            conditions.append(annotations.c.turn == (NO_TURN if turn is None else turn))
        return sa.and_(*conditions) if conditions else sa.true()

    def find(self, task: str | None = None, run: str | None = None, guid: str | None = None, annotator: str | None = None) -> list[Annotation]:
        query = sa.select(annotations).where(self._where(task, run, guid, annotator=annotator))
        query = query.order_by(annotations.c.task, annotations.c.guid, annotations.c.turn, annotations.c.run, annotations.c.annotator)
        with self.engine.connect() as connection:
            return [self._from_row(row) for row in connection.execute(query)]

    def get(self, task: str, guid: str, run: str, annotator: str, turn: int | None = None) -> Annotation | None:
        query = sa.select(annotations).where(self._where(task, run, guid, turn, annotator, key_turn=True))
        with self.engine.connect() as connection:
            row = connection.execute(query).first()
        return self._from_row(row) if row else None

    # ---- writing ---------------------------------------------------------------------------------
    def save(self, item: Annotation, expected_version: int | None = None) -> Annotation:
        """Insert or update one record in one transaction; with `expected_version`, refuse to overwrite a newer save."""
        item.updated_at = now()
        values = {"tags": json.dumps(sorted(set(item.tags)), ensure_ascii=False), "note": item.note, "gold_wrong": item.gold_wrong,
                  "corrected_label": item.corrected_label or None, "updated_at": item.updated_at}
        where = self._where(item.task, item.run, item.guid, item.turn, item.annotator, key_turn=True)
        for attempt in range(5):
            try:
                with self.writer.begin() as connection:
                    # FOR UPDATE holds the row until commit on PostgreSQL (SQLite's IMMEDIATE lock already does).
                    row = connection.execute(sa.select(annotations).where(where).with_for_update()).first()
                    if row is None:
                        if expected_version not in (None, 0):
                            raise ConflictError(Annotation(item.task, item.guid, item.run, "(deleted)", turn=item.turn, updated_at="unknown"))
                        connection.execute(annotations.insert().values(
                            task=item.task, guid=item.guid, turn=NO_TURN if item.turn is None else item.turn, run=item.run,
                            annotator=item.annotator, version=1, **values))
                        item.version = 1
                    else:
                        if expected_version is not None and row.version != expected_version:
                            raise ConflictError(self._from_row(row))
                        connection.execute(annotations.update().where(annotations.c.id == row.id).values(version=row.version + 1, **values))
                        item.version = row.version + 1
                return item
            except (IntegrityError, OperationalError):
                # Two writers inserted the same new key, or SQLite stayed busy: read again and retry.
                if attempt == 4:
                    raise
                time.sleep(0.05 * (attempt + 1))
        return item

    def delete(self, item: Annotation) -> None:
        with self.writer.begin() as connection:
            connection.execute(annotations.delete().where(self._where(item.task, item.run, item.guid, item.turn, item.annotator, key_turn=True)))

    def add_tag(self, task: str, tag: str) -> None:
        tag = tag.strip()
        if not tag:
            return
        with self.writer.begin() as connection:
            exists = connection.execute(sa.select(custom_tags).where((custom_tags.c.task == task) & (custom_tags.c.tag == tag))).first()
            if not exists:
                connection.execute(custom_tags.insert().values(task=task, tag=tag))

    def custom_tags(self, task: str) -> list[str]:
        with self.engine.connect() as connection:
            return [row.tag for row in connection.execute(sa.select(custom_tags.c.tag).where(custom_tags.c.task == task).order_by(custom_tags.c.tag))]

    # ---- import ----------------------------------------------------------------------------------
    def plan_import(self, incoming: Iterable[Annotation]) -> "ImportPlan":
        """What an import would do: records to add, to update (incoming is newer), in conflict (stored is newer), unchanged."""
        existing = {a.key: a for a in self.find()}
        plan = ImportPlan()
        for item in incoming:
            current = existing.get(item.key)
            if current is None:
                plan.added.append(item)
            elif current.content() == item.content():
                plan.unchanged.append(item)
            elif item.updated_at >= current.updated_at:
                plan.updated.append(item)
            else:
                plan.conflicting.append((item, current))
        return plan

    def apply_import(self, plan: "ImportPlan", overwrite_conflicts: bool = False) -> int:
        """Write a planned import in one transaction, keeping each record's own updated_at; returns the records written."""
        items = plan.added + plan.updated + ([item for item, _ in plan.conflicting] if overwrite_conflicts else [])
        with self.writer.begin() as connection:
            for item in items:
                where = self._where(item.task, item.run, item.guid, item.turn, item.annotator, key_turn=True)
                values = {"tags": json.dumps(sorted(set(item.tags)), ensure_ascii=False), "note": item.note, "gold_wrong": item.gold_wrong,
                          "corrected_label": item.corrected_label or None, "updated_at": item.updated_at or now()}
                row = connection.execute(sa.select(annotations.c.id, annotations.c.version).where(where).with_for_update()).first()
                if row is None:
                    connection.execute(annotations.insert().values(
                        task=item.task, guid=item.guid, turn=NO_TURN if item.turn is None else item.turn, run=item.run,
                        annotator=item.annotator, version=1, **values))
                else:
                    connection.execute(annotations.update().where(annotations.c.id == row.id).values(version=row.version + 1, **values))
        return len(items)


@dataclass
class ImportPlan:
    added: list[Annotation] = field(default_factory=list)
    updated: list[Annotation] = field(default_factory=list)
    conflicting: list[tuple[Annotation, Annotation]] = field(default_factory=list)
    unchanged: list[Annotation] = field(default_factory=list)

    def summary(self) -> str:
        return (f"{len(self.added)} to add, {len(self.updated)} to update, {len(self.conflicting)} in conflict "
                f"(the stored record is newer), {len(self.unchanged)} unchanged")


def set_aside(path: Path) -> Path:
    """Rename an unreadable database (and its WAL files) so a new one can be started; returns the new name."""
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    target = path.with_name(f"{path.name}.unreadable-{stamp}")
    path.rename(target)
    for suffix in ("-wal", "-shm"):
        side = path.with_name(path.name + suffix)
        if side.exists():
            side.rename(target.with_name(target.name + suffix))
    return target
