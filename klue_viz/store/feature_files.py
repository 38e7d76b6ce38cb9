"""The researchers' own column files (klue_viz.scoring.user_features) kept in the annotation database, beside the runs.

A file is stored once per task by its content (sha256): uploading the same bytes again gives back
the stored file, so a link naming a file's address opens the same columns in any session of the
server, after a restart too. One transaction per upload, as for runs.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import sqlalchemy as sa

from klue_viz.reading.uploads import check_size
from klue_viz.store.annotations import Store, now
from klue_viz.store.schema import feature_files


@dataclass(frozen=True)
class FeatureFile:
    """A stored column file without its bytes."""

    task: str
    sha256: str
    file_name: str
    uploader: str
    created_at: str
    size: int


class FeatureFileStore:
    """Column files of every task in the annotation database."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def list(self, task: str) -> list[FeatureFile]:
        """The task's column files, oldest first."""
        query = sa.select(feature_files.c.task, feature_files.c.sha256, feature_files.c.file_name, feature_files.c.uploader,
                          feature_files.c.created_at, feature_files.c.size).where(feature_files.c.task == task)
        query = query.order_by(feature_files.c.created_at, feature_files.c.sha256)
        return self.store.read(lambda connection: [FeatureFile(*row) for row in connection.execute(query)])

    def data(self, task: str, sha256: str) -> bytes | None:
        """The bytes of a stored file (None when there is none with that address)."""
        query = sa.select(feature_files.c.data).where((feature_files.c.task == task) & (feature_files.c.sha256 == sha256))
        found = self.store.read(lambda connection: connection.execute(query).scalar())
        return None if found is None else bytes(found)

    def find(self, task: str, prefix: str) -> FeatureFile | None:
        """The stored file whose address starts with `prefix` (as a link carries it), if exactly one does."""
        matches = [f for f in self.list(task) if prefix and f.sha256.startswith(prefix)]
        return matches[0] if len(matches) == 1 else None

    def add(self, task: str, file_name: str, data: bytes, uploader: str = "") -> FeatureFile:
        """Store a column file (the same bytes already stored for the task give back that file)."""
        check_size(file_name, len(data))
        digest = hashlib.sha256(data).hexdigest()  # as klue_viz.scoring.user_features.digest_of: the address links carry
        stored = FeatureFile(task, digest, file_name[:1000], uploader[:100], now(), len(data))

        def work(connection: sa.Connection) -> None:  # a second try after another session stored the same bytes finds them
            exists = connection.execute(sa.select(feature_files.c.sha256).where(
                (feature_files.c.task == task) & (feature_files.c.sha256 == digest))).first()
            if exists is None:
                connection.execute(feature_files.insert().values(task=task, sha256=digest, file_name=stored.file_name,
                                                                 uploader=stored.uploader, created_at=stored.created_at,
                                                                 size=len(data), data=data))

        self.store.write(work, "another session kept storing this column file")
        return next(f for f in self.list(task) if f.sha256 == digest)
