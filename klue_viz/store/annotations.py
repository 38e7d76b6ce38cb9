"""The annotation store: error tags, notes and gold remarks, in SQLite (default) or PostgreSQL.

SQLAlchemy Core against either database. Every change is one transaction; SQLite runs in WAL mode
with full synchronisation, so what the UI acknowledged survives a killed process. Each record
carries a version number: a save made against an older version is refused with the newer record
(who changed it and when) instead of silently overwriting it.
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import sys
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from functools import partial
from pathlib import Path
from typing import TypeVar

import sqlalchemy as sa
from sqlalchemy.exc import DatabaseError, IntegrityError, OperationalError, ProgrammingError

from klue_viz.store.schema import (
    CACHE_TABLES,
    MIGRATIONS,
    NO_TURN,
    SCHEMA_VERSION,
    annotation_table,
    create_cache_tables,
    custom_tags,
    schema_version,
)
from klue_viz.tasks import TASKS

try:
    import fcntl
except ImportError:  # Windows: renaming a file another process has open fails there anyway
    fcntl = None  # type: ignore[assignment]  # the standard optional-import idiom; callers check for None

DB_ENV = "KLUE_VIZ_DB"
#: Seconds a PostgreSQL connection attempt may take before the server counts as unreachable.
CONNECT_TIMEOUT = 5
#: Words in a driver's error that mean the server cannot be reached (as opposed to busy or refused work).
UNREACHABLE = ("connection refused", "could not connect", "connection failed", "server closed the connection", "terminating connection",
               "no route to host", "timeout expired", "connection timed out", "could not translate host name", "the database system is")
log = logging.getLogger("klue_viz")
#: Seconds a database found unreachable is remembered: meanwhile a page's reads fail at once instead of each waiting
#: CONNECT_TIMEOUT for a server that does not answer; a save is still tried (the user pressed Save).
OUTAGE_SECONDS = 30.0
#: Seconds a SQLite connection waits for another writer before reporting the database busy.
BUSY_TIMEOUT = 10.0
#: How many times a write that found the database busy is tried again.
WRITE_ATTEMPTS = 5
#: Rows per executemany batch of an import.
IMPORT_BATCH = 5_000

T = TypeVar("T")


class StoreError(Exception):
    """The database cannot be used as it is; the message says what to do."""


class StoreBusy(StoreError):
    """Another connection holds the write lock (a long import, a save): wait and retry; nothing is wrong with the data."""


class StoreUnavailable(StoreError):
    """The database cannot be reached or written (no such folder, read-only file, server down); the data is not at fault."""


class StoreCorrupt(StoreError):
    """The file fails SQLite's integrity check: the only case in which it may be set aside for a new one."""


class InvalidRecord(ValueError):
    """A record that one of the databases would refuse (too long, NUL byte, lone surrogate, bad timestamp...)."""


class ConflictError(Exception):
    """Someone saved this record since it was read; `current` is their version."""

    def __init__(self, current: Annotation) -> None:
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


#: Longest value of each key column (the schema's String lengths; PostgreSQL enforces them, SQLite does not).
LIMITS = {"task": 16, "guid": 200, "run": 200, "annotator": 100}
MAX_TAG = 100
MAX_TEXT = 100_000
MAX_TURN = 2**31 - 1  # PostgreSQL INTEGER


def timestamp(value: str) -> str:
    """An ISO 8601 timestamp normalised to UTC with milliseconds (so that comparing the strings compares the times)."""
    try:
        moment = datetime.fromisoformat(str(value).strip())
    except ValueError:
        raise InvalidRecord(f"updated_at must be an ISO 8601 timestamp such as 2024-05-01T12:00:00+00:00, found {str(value)[:40]!r}") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    try:
        return moment.astimezone(timezone.utc).isoformat(timespec="milliseconds")
    except OverflowError:  # 0001-01-01T00:00+05:00 or 9999-12-31T23:59-05:00: no such moment in UTC
        raise InvalidRecord(f"updated_at {str(value)[:40]!r} is out of range: in UTC it falls before year 1 or after year 9999") from None


def _text(name: str, value: object, limit: int, required: bool = True) -> None:
    if not isinstance(value, str):
        raise InvalidRecord(f"{name} must be text, found {type(value).__name__}")
    if required and not value.strip():
        raise InvalidRecord(f"{name} is empty")
    if len(value) > limit:
        raise InvalidRecord(f"{name} is {len(value):,} characters long; at most {limit:,} are stored")
    if "\x00" in value:
        raise InvalidRecord(f"{name} contains a NUL character, which PostgreSQL cannot store")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidRecord(f"{name} contains a lone surrogate (not valid Unicode text)") from None


def validate(item: Annotation) -> None:
    """Refuse, on every backend alike, what one of SQLite and PostgreSQL would refuse or store differently."""
    for name, limit in LIMITS.items():
        _text(name, getattr(item, name), limit)
    if not isinstance(item.tags, list):
        raise InvalidRecord("tags must be a list of text")
    for tag in item.tags:
        _text("a tag", tag, MAX_TAG)
    _text("note", item.note, MAX_TEXT, required=False)
    if item.corrected_label is not None:
        _text("corrected_label", item.corrected_label, MAX_TEXT, required=False)
    if not isinstance(item.gold_wrong, bool):
        raise InvalidRecord(f"gold_wrong must be true or false, found {item.gold_wrong!r}")
    if item.turn is not None and (isinstance(item.turn, bool) or not isinstance(item.turn, int) or not 0 <= item.turn <= MAX_TURN):
        raise InvalidRecord(f"turn must be a whole number from 0 to {MAX_TURN}, found {item.turn!r}")
    if item.updated_at:
        item.updated_at = timestamp(item.updated_at)


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


def _sqlite_pragmas(dbapi_connection: sqlite3.Connection, _record: object) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=FULL")
    cursor.execute(f"PRAGMA busy_timeout={int(BUSY_TIMEOUT * 1000)}")
    cursor.close()


def _sqlite_begin(connection: sa.Connection) -> None:
    connection.exec_driver_sql("BEGIN IMMEDIATE" if connection.get_execution_options().get("immediate") else "BEGIN")


_outage_lock = threading.Lock()
_outages: dict[str, float] = {}  # database URL -> when it was last found unreachable (time.monotonic)
_trying = threading.local()  # `.write` set while a write runs: it connects even during a remembered outage


def remember_outage(url: str) -> None:
    """Remember that the database of `url` cannot be reached, so the next connections fail at once (`outage_left`)."""
    with _outage_lock:
        _outages[url] = time.monotonic()


def forget_outage(url: str | None = None) -> None:
    """The database answered (or, without a URL, forget every outage: tests, an operator's reload)."""
    with _outage_lock:
        if url is None:
            _outages.clear()
        else:
            _outages.pop(url, None)


def outage_left(url: str) -> float:
    """Seconds the outage of `url` is still remembered (0: none is, or it is time to try again)."""
    with _outage_lock:
        since = _outages.get(url)
    return 0.0 if since is None else max(0.0, OUTAGE_SECONDS - (time.monotonic() - since))


def unreachable_message(public_location: str) -> str:
    """What a page says while the database is unreachable: the same words for the first failure and for the ones
    remembered after it, so a page says it once."""
    return (f"the annotation database is unreachable ({public_location}); what needs no database still works. The app "
            f"tries it again every {OUTAGE_SECONDS:.0f} s and at once when you save (what you typed stays in the form)")


class Store:
    """Annotations and custom tags in one database, opened (and migrated) on construction."""

    def __init__(self, url: str | None = None) -> None:
        self.url = database_url(url)
        self.is_sqlite = self.url.startswith("sqlite")
        if self.is_sqlite:
            path = Path(self.url.removeprefix("sqlite:///"))
            self.path: Path | None = path
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as err:
                raise StoreUnavailable(f"cannot create the folder of the annotation database {path}: {err.strerror or err}") from None
            self.engine = sa.create_engine(self.url, connect_args={"timeout": BUSY_TIMEOUT, "isolation_level": None})
            sa.event.listen(self.engine, "connect", _sqlite_pragmas)
            # pysqlite in autocommit mode, SQLAlchemy issues BEGIN itself: IMMEDIATE for writes, so two
            # writers queue on the lock instead of failing when a read transaction turns into a write.
            sa.event.listen(self.engine, "begin", _sqlite_begin)
        else:
            self.path = None
            # A server that is down or unreachable is reported within seconds, not after the OS's TCP timeout.
            self.engine = sa.create_engine(self.url, pool_pre_ping=True, connect_args={"connect_timeout": CONNECT_TIMEOUT})
            # An outage is remembered for OUTAGE_SECONDS (as klue_viz.reading.hf_hub remembers the hub's): a server that
            # does not answer costs one page CONNECT_TIMEOUT, not every page and every store of it.
            sa.event.listen(self.engine, "do_connect", self._remembered_outage)
            sa.event.listen(self.engine, "connect", lambda *_: forget_outage(self.url))
        sa.event.listen(self.engine, "handle_error", self._unreachable)
        self.writer = self.engine.execution_options(immediate=True)
        self._open()

    @property
    def location(self) -> str:
        """Where the database is, for the operator (log, CLI): a PostgreSQL URL names its host and port."""
        return str(self.path) if self.path else self.engine.url.render_as_string(hide_password=True)

    @property
    def public_location(self) -> str:
        """Where the database is, for every user of the app: a SQLite file's path, never a server's address."""
        return str(self.path) if self.path else f"a PostgreSQL database (set by {DB_ENV})"

    def _remembered_outage(self, *_: object) -> None:
        """SQLAlchemy's connect hook: while an outage is remembered, a new connection fails at once (StoreUnavailable)
        instead of waiting CONNECT_TIMEOUT, unless a write asked for it (`write`: the user pressed Save)."""
        if outage_left(self.url) > 0 and not getattr(_trying, "write", False):
            raise StoreUnavailable(unreachable_message(self.public_location))

    def _unreachable(self, context: sa.engine.ExceptionContext) -> StoreError | None:
        """SQLAlchemy's error hook: a server that went away or a full disk becomes StoreUnavailable, whose message
        names no host or port (those go to the log); busy and conflicting writes stay as they are, to be retried."""
        detail = str(context.original_exception).strip().splitlines()[0] if str(context.original_exception).strip() else ""
        lowered = detail.lower()
        if "full" in lowered and ("disk" in lowered or "database" in lowered or "space" in lowered):
            log.error("annotation database %s: %s", self.location, detail)
            return StoreUnavailable(f"the disk holding the annotation database is full: nothing was saved ({self.public_location})")
        if context.is_disconnect or any(word in lowered for word in UNREACHABLE):
            log.error("annotation database %s unreachable: %s", self.location, detail)
            if not self.is_sqlite:
                remember_outage(self.url)
            return StoreUnavailable(unreachable_message(self.public_location))
        return None

    def _open(self) -> None:
        try:
            with self.engine.connect() as connection:
                if self.is_sqlite:
                    status = connection.exec_driver_sql("PRAGMA quick_check").scalar()
                    if status != "ok":
                        raise StoreCorrupt(self._corrupt_message(str(status)))
            self.migrate()
        except (DatabaseError, sqlite3.DatabaseError) as err:
            raise self._classify(err) from None

    def _classify(self, err: Exception) -> StoreError:
        """Busy, read-only and unreachable are told apart from unreadable: only the last is the file's fault."""
        detail = str(getattr(err, "orig", None) or err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        lowered = detail.lower()
        if "locked" in lowered or "busy" in lowered:
            return StoreBusy(f"the annotation database {self.location} is busy (another save or import is writing); "
                             "nothing is wrong with it: try again in a moment")
        if "readonly" in lowered or "read-only" in lowered or "permission" in lowered:
            return StoreUnavailable(f"the annotation database {self.location} is read-only here ({detail}); "
                                    f"annotations can be read but not saved. Set {DB_ENV} to a writable file")
        if not self.is_sqlite:
            log.error("annotation database %s: %s", self.location, detail)
            return StoreUnavailable(f"the annotation database is unreachable ({self.public_location}). Nothing was changed")
        if "unable to open" in lowered or "disk i/o" in lowered:
            return StoreUnavailable(f"cannot reach the annotation database {self.location} ({detail}). Nothing was changed")
        if "not a database" in lowered or "malformed" in lowered or "corrupt" in lowered:
            return StoreCorrupt(self._corrupt_message(detail))
        return StoreUnavailable(f"cannot use the annotation database {self.location} ({detail}). Nothing was changed")

    def _corrupt_message(self, detail: str) -> str:
        return (f"the annotation database {self.path} fails SQLite's integrity check ({detail}). Nothing was changed. "
                f"Set {DB_ENV} to another file, or start a new one and keep this file aside ('klue-viz annotations new-db').")

    def migrate(self) -> None:
        """Create or upgrade the schema, one recorded version at a time, each in its own transaction, and create the
        tables of data computed again on demand that are missing (klue_viz.store.schema says why those are apart).

        An up-to-date database is only read: opening it never waits for another writer's lock.
        """
        with self.engine.connect() as connection:
            present = set(sa.inspect(connection).get_table_names())
            current = connection.execute(sa.select(sa.func.max(schema_version.c.version))).scalar() or 0 if schema_version.name in present else 0
        if current > SCHEMA_VERSION:
            raise StoreError(f"the annotation database {self.location} was written by a newer klue-viz (schema {current})")
        for version in range(current + 1, SCHEMA_VERSION + 1):
            self.write(partial(_migrate_to, version), "another klue-viz kept upgrading the database")
        if any(table.name not in present for table in CACHE_TABLES):
            self.write(create_cache_tables, "another klue-viz kept creating the tables of kept results")

    def version(self) -> int:
        return self.read(lambda connection: connection.execute(sa.select(sa.func.max(schema_version.c.version))).scalar() or 0)

    # ---- reading ---------------------------------------------------------------------------------
    @staticmethod
    def _from_row(row: sa.Row) -> Annotation:
        return Annotation(
            task=row.task, guid=row.guid, run=row.run, annotator=row.annotator, tags=json.loads(row.tags), note=row.note,
            gold_wrong=bool(row.gold_wrong), corrected_label=row.corrected_label, turn=None if row.turn == NO_TURN else row.turn,
            updated_at=row.updated_at, version=row.version,
        )

    def _where(self, task: str | None = None, run: str | None = None, guid: str | None = None, turn: int | None = None,
               annotator: str | None = None, key_turn: bool = False) -> sa.ColumnElement[bool]:
        conditions = []
        for column, value in (("task", task), ("run", run), ("guid", guid), ("annotator", annotator)):
            if value is not None:
                conditions.append(annotation_table.c[column] == value)
        if key_turn:
            conditions.append(annotation_table.c.turn == (NO_TURN if turn is None else turn))
        return sa.and_(*conditions) if conditions else sa.true()

    def find(self, task: str | None = None, run: str | None = None, guid: str | None = None, annotator: str | None = None) -> list[Annotation]:
        query = sa.select(annotation_table).where(self._where(task, run, guid, annotator=annotator))
        query = query.order_by(annotation_table.c.task, annotation_table.c.guid, annotation_table.c.turn, annotation_table.c.run, annotation_table.c.annotator)
        return self.read(lambda connection: [self._from_row(row) for row in connection.execute(query)])

    def get(self, task: str, guid: str, run: str, annotator: str, turn: int | None = None) -> Annotation | None:
        query = sa.select(annotation_table).where(self._where(task, run, guid, turn, annotator, key_turn=True))
        row = self.read(lambda connection: connection.execute(query).first())
        return self._from_row(row) if row else None

    # ---- writing ---------------------------------------------------------------------------------
    def save(self, item: Annotation, expected_version: int | None = None) -> Annotation:
        """Insert or update one record in one transaction; with `expected_version`, refuse to overwrite a newer save."""
        validate(item)
        item.updated_at = now()
        values = {"tags": json.dumps(sorted(set(item.tags)), ensure_ascii=False), "note": item.note, "gold_wrong": item.gold_wrong,
                  "corrected_label": item.corrected_label or None, "updated_at": item.updated_at}
        where = self._where(item.task, item.run, item.guid, item.turn, item.annotator, key_turn=True)

        def work(connection: sa.Connection) -> Annotation:
            # FOR UPDATE holds the row until commit on PostgreSQL (SQLite's IMMEDIATE lock already does).
            row = connection.execute(sa.select(annotation_table).where(where).with_for_update()).first()
            if row is None:
                if expected_version not in (None, 0):
                    raise ConflictError(Annotation(item.task, item.guid, item.run, "(deleted)", turn=item.turn, updated_at="unknown"))
                connection.execute(annotation_table.insert().values(
                    task=item.task, guid=item.guid, turn=NO_TURN if item.turn is None else item.turn, run=item.run,
                    annotator=item.annotator, version=1, **values))
                item.version = 1
            else:
                if expected_version is not None and row.version != expected_version:
                    raise ConflictError(self._from_row(row))
                connection.execute(annotation_table.update().where(annotation_table.c.id == row.id).values(version=row.version + 1, **values))
                item.version = row.version + 1
            return item

        return self.write(work, "another writer kept changing this record")

    def change(self, task: str, guid: str, run: str, annotator: str, turn: int | None, edit: Callable[[Annotation], None]) -> Annotation:
        """Apply `edit` to the record as it is stored now (a new one when none is), in the transaction that writes it.

        For the write paths that change some fields of a record whatever else it holds (a review decision, a
        'gold looks wrong' mark, bulk tags): the record is read under the write lock (SQLite's IMMEDIATE
        transaction, PostgreSQL's FOR UPDATE), so a save confirmed a moment before is edited, never replaced by an
        older copy; and the record's version goes up, so an Annotate form opened before is refused as stale
        (ConflictError) instead of overwriting the change. `edit` may raise to write nothing.
        """
        def work(connection: sa.Connection) -> Annotation:
            row = connection.execute(sa.select(annotation_table).where(
                self._where(task, run, guid, turn, annotator, key_turn=True)).with_for_update()).first()
            item = self._from_row(row) if row is not None else Annotation(task, guid, run, annotator, turn=turn)
            edit(item)
            validate(item)
            item.updated_at = now()
            values = {"tags": json.dumps(sorted(set(item.tags)), ensure_ascii=False), "note": item.note, "gold_wrong": item.gold_wrong,
                      "corrected_label": item.corrected_label or None, "updated_at": item.updated_at}
            if row is None:
                connection.execute(annotation_table.insert().values(
                    task=task, guid=guid, turn=NO_TURN if turn is None else turn, run=run, annotator=annotator, version=1, **values))
                item.version = 1
            else:
                connection.execute(annotation_table.update().where(annotation_table.c.id == row.id).values(version=row.version + 1, **values))
                item.version = row.version + 1
            item.tags = sorted(set(item.tags))
            return item

        return self.write(work, "another writer kept changing this record")

    def write(self, work: Callable[[sa.Connection], T], clash: str) -> T:
        """The one write transaction of every store on this database: run `work` in it, again (up to WRITE_ATTEMPTS times,
        after 50, 100, 150... ms) when the failure is one of meeting another writer (`_transient`): two writers on a
        new key, SQLite busy past BUSY_TIMEOUT, a PostgreSQL deadlock or serialization failure, another process
        creating a table at the same moment. Anything else (a disk error, a server gone) is not tried again.

        Every failure leaves as a StoreError: StoreBusy ("try again in a moment"; `clash` says what kept changing when
        keys collided) or what `_classify` makes of the driver's error (busy, read-only, unreachable, corrupt); a server
        that went away is StoreUnavailable from the error hook. An exception of `work` itself passes through.
        """
        for attempt in range(WRITE_ATTEMPTS):
            try:
                _trying.write = True  # a write connects even while an outage is remembered: the user asked for it
                with self.writer.begin() as connection:
                    return work(connection)
            except (IntegrityError, OperationalError, ProgrammingError) as err:
                if not _transient(err):
                    raise self._classify(err) from None
                if attempt == WRITE_ATTEMPTS - 1:
                    raise self._classify(err) if isinstance(err, OperationalError) else StoreBusy(
                        f"could not save to {self.location}: {clash}") from None
                time.sleep(0.05 * (attempt + 1))
            except (DatabaseError, sqlite3.DatabaseError) as err:
                raise self._classify(err) from None
            finally:
                _trying.write = False
        raise StoreBusy(f"could not save to {self.location}: {clash}")

    def read(self, work: Callable[[sa.Connection], T]) -> T:
        """Run `work` on a reading connection; a database that cannot be read becomes a StoreError (busy, unavailable...)."""
        try:
            with self.engine.connect() as connection:
                return work(connection)
        except (DatabaseError, sqlite3.DatabaseError) as err:
            raise self._classify(err) from None

    def delete(self, item: Annotation) -> None:
        where = self._where(item.task, item.run, item.guid, item.turn, item.annotator, key_turn=True)
        self.write(lambda connection: connection.execute(annotation_table.delete().where(where)), "another writer kept changing this record")

    def add_tag(self, task: str, tag: str) -> None:
        tag = tag.strip()
        if not tag:
            return
        try:
            _text("a tag", tag, MAX_TAG)
        except InvalidRecord as err:
            raise StoreError(str(err)) from None

        def work(connection: sa.Connection) -> None:
            exists = connection.execute(sa.select(custom_tags).where((custom_tags.c.task == task) & (custom_tags.c.tag == tag))).first()
            if not exists:
                connection.execute(custom_tags.insert().values(task=task, tag=tag))

        self.write(work, "another writer kept adding this tag")

    def custom_tags(self, task: str) -> list[str]:
        query = sa.select(custom_tags.c.tag).where(custom_tags.c.task == task).order_by(custom_tags.c.tag)
        return self.read(lambda connection: [row.tag for row in connection.execute(query)])

    # ---- import ----------------------------------------------------------------------------------
    def plan_import(self, incoming: Iterable[Annotation]) -> ImportPlan:
        """What an import would do: records to add, to update (incoming is newer), in conflict (stored is newer), unchanged.

        Each planned record remembers the version of the stored one it was compared with, so that applying the plan
        can tell whether anyone saved in between.
        """
        incoming = list(incoming)
        for item in incoming:
            validate(item)
        incoming = newest_per_key(incoming)
        existing = {a.key: a for a in self.find()}
        plan = ImportPlan(incoming=incoming)
        for item in incoming:
            current = existing.get(item.key)
            plan.planned_version[id(item)] = current.version if current else 0
            if current is None:
                plan.added.append(item)
            elif current.content() == item.content():
                plan.unchanged.append(item)
            elif (item.updated_at or now()) >= current.updated_at:
                plan.updated.append(item)
            else:
                plan.conflicting.append((item, current))
        return plan

    def apply_import(self, plan: ImportPlan, overwrite_conflicts: bool = False, attempts: int = 5) -> int:
        """Write a planned import in one transaction, keeping each record's own updated_at; returns the records written.

        Every record is written with the same version check as a save: if a stored record changed since the plan
        (a save confirmed meanwhile, another import), nothing is written, the import is planned again against what
        is stored now and applied again. `plan` is updated in place to the plan finally applied.
        """
        for attempt in range(attempts):
            try:
                return self.write(partial(self._apply, plan, overwrite_conflicts), "another import kept adding the same records")
            except _StalePlan:
                # A save or another import got in between: plan again against what is stored now.
                if attempt == attempts - 1:
                    raise StoreBusy(f"the annotations in {self.location} kept changing during the import; nothing was "
                                    "imported, try again") from None
                fresh = self.plan_import(plan.incoming)
                plan.added, plan.updated, plan.conflicting, plan.unchanged = fresh.added, fresh.updated, fresh.conflicting, fresh.unchanged
                plan.planned_version = fresh.planned_version
                plan.replanned += 1
        return 0

    def _apply(self, plan: ImportPlan, overwrite_conflicts: bool, connection: sa.Connection) -> int:
        """Write the planned records in the transaction of `connection` (all or nothing), with batched statements.

        One SELECT reads the stored versions of the tasks involved (locked for update on PostgreSQL;
        SQLite's IMMEDIATE transaction holds the write lock), each planned record is checked against the
        version it was planned with, and the inserts and updates go out as executemany batches of
        IMPORT_BATCH rows. 200,000 records take a few seconds of lock instead of minutes, so a save that
        arrives meanwhile waits (BUSY_TIMEOUT) and gets through instead of failing as busy
        (bench/bench_import.py)."""
        items = plan.added + plan.updated + ([item for item, _ in plan.conflicting] if overwrite_conflicts else [])
        if not items:
            return 0
        table = annotation_table
        tasks = sorted({item.task for item in items})
        query = sa.select(table.c.id, table.c.task, table.c.guid, table.c.turn, table.c.run, table.c.annotator, table.c.version)
        stored = {(row.task, row.guid, None if row.turn == NO_TURN else row.turn, row.run, row.annotator): (row.id, row.version)
                  for row in connection.execute(query.where(table.c.task.in_(tasks)).with_for_update())}
        inserts, updates = [], []
        for item in items:
            row = stored.get(item.key)
            if (row[1] if row else 0) != plan.planned_version.get(id(item), 0):
                raise _StalePlan()  # leaving the block rolls the whole import back
            values = {"tags": json.dumps(sorted(set(item.tags)), ensure_ascii=False), "note": item.note, "gold_wrong": item.gold_wrong,
                      "corrected_label": item.corrected_label or None, "updated_at": item.updated_at or now()}
            if row is None:
                inserts.append({"task": item.task, "guid": item.guid, "turn": NO_TURN if item.turn is None else item.turn, "run": item.run,
                                "annotator": item.annotator, "version": 1, **values})
            else:
                updates.append({"row_id": row[0], "new_version": row[1] + 1, **{f"new_{k}": v for k, v in values.items()}})
        for start in range(0, len(inserts), IMPORT_BATCH):
            connection.execute(table.insert(), inserts[start:start + IMPORT_BATCH])
        update = table.update().where(table.c.id == sa.bindparam("row_id")).values(
            version=sa.bindparam("new_version"), **{k: sa.bindparam(f"new_{k}") for k in ("tags", "note", "gold_wrong", "corrected_label", "updated_at")})
        for start in range(0, len(updates), IMPORT_BATCH):
            connection.execute(update, updates[start:start + IMPORT_BATCH])
        self._add_imported_tags(connection, items)
        return len(items)

    def _add_imported_tags(self, connection: sa.Connection, items: list[Annotation]) -> None:
        """Tags an import brings that are neither the task's own nor on its list join the list (in the import's transaction)."""
        new = {(item.task, tag) for item in items for tag in item.tags}
        new -= {(task, tag) for task, tag in new if task in TASKS and tag in TASKS[task].facts.error_tags}
        if new:
            listed = {(row.task, row.tag) for row in connection.execute(sa.select(custom_tags).where(custom_tags.c.task.in_({t for t, _ in new})))}
            for task, tag in sorted(new - listed):
                connection.execute(custom_tags.insert().values(task=task, tag=tag))


#: Words of a driver's error that mean another writer got in the way: worth a second try.
TRANSIENT = ("locked", "busy", "deadlock", "could not serialize", "already exists")


def _transient(err: DatabaseError) -> bool:
    """Whether a failed write met another writer (a key inserted meanwhile, a lock, a table created meanwhile)."""
    return isinstance(err, IntegrityError) or any(word in str(err.orig).lower() for word in TRANSIENT)


def _migrate_to(version: int, connection: sa.Connection) -> None:
    """One step of MIGRATIONS and its record, unless another process took that step meanwhile."""
    schema_version.create(connection, checkfirst=True)
    if (connection.execute(sa.select(sa.func.max(schema_version.c.version))).scalar() or 0) >= version:
        return
    MIGRATIONS[version](connection)
    connection.execute(schema_version.insert().values(version=version))


def newest_per_key(items: list[Annotation]) -> list[Annotation]:
    """One record per key: the newer updated_at wins, and of equal times the later one (the rule README states)."""
    chosen: dict[tuple, int] = {}
    for index, item in enumerate(items):
        kept = chosen.get(item.key)
        if kept is None or (item.updated_at or "") >= (items[kept].updated_at or ""):
            chosen[item.key] = index
    return [items[index] for index in sorted(chosen.values())]


class _StalePlan(Exception):
    """A stored record changed between planning an import and applying it."""


@dataclass
class ImportPlan:
    incoming: list[Annotation] = field(default_factory=list)
    added: list[Annotation] = field(default_factory=list)
    updated: list[Annotation] = field(default_factory=list)
    conflicting: list[tuple[Annotation, Annotation]] = field(default_factory=list)
    unchanged: list[Annotation] = field(default_factory=list)
    #: id(incoming record) -> version of the stored record it was compared with (0: none was stored).
    planned_version: dict[int, int] = field(default_factory=dict)
    #: How many times the store changed under the import and it was planned again.
    replanned: int = 0

    def summary(self) -> str:
        return (f"{len(self.added)} to add, {len(self.updated)} to update, {len(self.conflicting)} in conflict "
                f"(the stored record is newer), {len(self.unchanged)} unchanged")


def set_aside(path: Path) -> Path:
    """Rename a SQLite file that fails the integrity check (and its WAL files) so a new one can be started.

    Refused for a healthy, busy or unreachable database, and while another process holds a lock on the file:
    renaming a database that is being written to hides its data from the app.
    """
    path = Path(path)
    if not path.exists():
        raise StoreError(f"{path}: no such file; nothing to set aside")
    _check_unreadable(path)
    with open(path, "rb+") as handle:
        try:
            if fcntl is not None:
                fcntl.lockf(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            raise StoreBusy(f"{path} is open in another process; close it (or wait for it to finish) before setting it aside") from None
        stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
        target = path.with_name(f"{path.name}.unreadable-{stamp}")
        path.rename(target)
        for suffix in ("-wal", "-shm"):
            side = path.with_name(path.name + suffix)
            if side.exists():
                side.rename(target.with_name(target.name + suffix))
    return target


def _check_unreadable(path: Path) -> None:
    """Raise unless the file fails SQLite's integrity check (a busy or healthy file is never set aside)."""
    try:
        connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=BUSY_TIMEOUT)
        try:
            status = connection.execute("PRAGMA quick_check").fetchone()[0]
        finally:
            connection.close()
    except sqlite3.OperationalError as err:
        if "locked" in str(err) or "busy" in str(err):
            raise StoreBusy(f"{path} is busy (another connection is writing to it); it is not set aside") from None
        if "unable to open" in str(err):
            raise StoreUnavailable(f"{path} cannot be opened ({err}); it is not set aside") from None
        return  # other errors: the file is unreadable
    except sqlite3.DatabaseError:
        return  # "file is not a database", "malformed": unreadable
    if status == "ok":
        raise StoreError(f"{path} passes SQLite's integrity check; it is not set aside")
