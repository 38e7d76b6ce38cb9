"""Named gold versions kept in the annotation database: a base gold plus the corrections accepted at one moment.

A version is never changed once made (a new set of corrections makes a new version), so a score
"against dev + corrections, 17 records, 2026-12-03" means the same thing tomorrow. It keeps the
corrections themselves (unit, correction, who, why, when), not the corrected file: applying them to
the base gold gives that file again (`klue_viz.discovery.corrected`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa

from klue_viz.store.annotations import Store, StoreError, now
from klue_viz.store.schema import gold_versions


@dataclass(frozen=True)
class GoldVersion:
    """A stored gold version: `corrections` as dicts of `klue_viz.discovery.corrected.Correction`'s fields."""

    task: str
    name: str
    base: str
    records: int
    corrections: list[dict]
    created_by: str
    created_at: str


class GoldVersions:
    """Gold versions in the annotation database; adding one is one transaction."""

    def __init__(self, store: Store) -> None:
        self.store = store

    @staticmethod
    def _from_row(row: sa.Row) -> GoldVersion:
        return GoldVersion(row.task, row.name, row.base, row.records, json.loads(row.corrections), row.created_by, row.created_at)

    def for_task(self, task: str) -> list[GoldVersion]:
        """The versions of a task, newest first."""
        query = sa.select(gold_versions).where(gold_versions.c.task == task).order_by(gold_versions.c.id.desc())
        return self.store.read(lambda connection: [self._from_row(row) for row in connection.execute(query)])

    def get(self, task: str, name: str) -> GoldVersion | None:
        query = sa.select(gold_versions).where((gold_versions.c.task == task) & (gold_versions.c.name == name))
        row = self.store.read(lambda connection: connection.execute(query).first())
        return self._from_row(row) if row else None

    def add(self, task: str, name: str, base: str, records: int, corrections: list[dict[str, Any]],
            created_by: str = "") -> GoldVersion:
        """Keep a new version; a name already taken for the task gets a suffix (" (2)", ...)."""
        if not corrections:
            raise StoreError("a gold version needs at least one correction")
        text = json.dumps(corrections, ensure_ascii=False)

        def work(connection: sa.Connection) -> GoldVersion:
            taken = set(connection.execute(sa.select(gold_versions.c.name).where(gold_versions.c.task == task)).scalars())
            chosen, k = name[:190], 2
            while chosen in taken:
                chosen, k = f"{name[:190]} ({k})", k + 1
            created = now()
            connection.execute(gold_versions.insert().values(task=task, name=chosen, base=base, records=records, corrections=text,
                                                             created_by=created_by[:100], created_at=created))
            return GoldVersion(task, chosen, base, records, corrections, created_by[:100], created)

        return self.store.write(work, f"another writer kept taking the name of the gold version {name!r}")
