"""Uploaded gold files kept in the annotation database, content-addressed like the runs' bytes.

A gold file uploaded on the home page used to live in one session only, so a reload, a new tab or
a `source=upload` link fell back to the demo while the runs stayed. It is stored here under the
SHA-256 of its bytes (the same bytes are stored once), with its task and file name; a link names
it as `gold=<task>:<sha256>`, and any session of the server can read it back.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import sqlalchemy as sa

from klue_viz.reading.uploads import check_size
from klue_viz.store.annotations import Store, now
from klue_viz.store.schema import gold_files


@dataclass(frozen=True)
class StoredGold:
    """An uploaded gold file as stored: its task, original name, bytes and their SHA-256."""

    task: str
    file_name: str
    sha256: str
    data: bytes


def gold_digest(data: bytes) -> str:
    """The key a gold file is stored and linked under."""
    return hashlib.sha256(data).hexdigest()


class GoldStore:
    """Uploaded gold files in the annotation database; adding one is one transaction."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def add(self, task: str, file_name: str, data: bytes) -> StoredGold:
        """Store a gold file of a task (the same bytes are stored once) and return it."""
        check_size(file_name, len(data))
        digest = gold_digest(data)

        def work(connection: sa.Connection) -> None:  # a second try after another session stored the same bytes finds them
            if connection.execute(sa.select(gold_files.c.sha256).where(gold_files.c.sha256 == digest)).first() is None:
                connection.execute(gold_files.insert().values(sha256=digest, task=task, file_name=file_name[:1000], size=len(data),
                                                              created_at=now(), data=data))

        self.store.write(work, "another session kept storing this gold file")
        return StoredGold(task, file_name[:1000], digest, data)

    def get(self, digest: str) -> StoredGold | None:
        """The stored gold file with this SHA-256, or None when this server has none."""
        row = self.store.read(lambda connection: connection.execute(sa.select(gold_files).where(gold_files.c.sha256 == digest)).first())
        return StoredGold(row.task, row.file_name, row.sha256, bytes(row.data)) if row else None
