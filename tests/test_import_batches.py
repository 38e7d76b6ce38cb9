"""A large import goes out in batches inside one transaction (issue 19, item 18): all or nothing for the file."""

from __future__ import annotations

import sqlite3

import pytest
import sqlalchemy as sa

from klue_viz.store import annotations as store_module
from klue_viz.store.annotations import Annotation, Store


def records(n: int, note: str = "") -> list[Annotation]:
    return [Annotation("ynat", f"g{k:06d}", "run", "지민", tags=["ambiguous"], note=note, updated_at="2026-03-01T00:00:00+00:00") for k in range(n)]


def test_a_failure_in_the_last_batch_leaves_nothing_of_the_file(tmp_path):
    db = Store(str(tmp_path / "batches.sqlite3"))
    n = 2 * store_module.IMPORT_BATCH + 7
    batches = []

    def fail_third(conn, cursor, statement, parameters, context, executemany):
        if executemany and statement.startswith("INSERT INTO annotations"):
            batches.append(len(parameters))
            if len(batches) == 3:
                raise sqlite3.OperationalError("disk I/O error")

    sa.event.listen(db.engine, "before_cursor_execute", fail_third)
    try:
        with pytest.raises(store_module.StoreError):
            db.apply_import(db.plan_import(records(n)))
    finally:
        sa.event.remove(db.engine, "before_cursor_execute", fail_third)
    assert batches == [store_module.IMPORT_BATCH, store_module.IMPORT_BATCH, 7]
    assert db.find() == []


def test_batched_updates_write_every_value_and_bump_each_version(tmp_path):
    db = Store(str(tmp_path / "updates.sqlite3"))
    n = store_module.IMPORT_BATCH + 3
    assert db.apply_import(db.plan_import(records(n, note="첫 메모"))) == n
    newer = [Annotation(**{**a.__dict__, "note": f"고친 메모 {k}", "tags": ["negation"], "updated_at": "2026-04-01T00:00:00+00:00"})
             for k, a in enumerate(records(n))]
    plan = db.plan_import(newer)
    assert len(plan.updated) == n
    assert db.apply_import(plan) == n
    stored = db.find()
    assert [(a.note, a.tags, a.version) for a in stored[:2]] == [("고친 메모 0", ["negation"], 2), ("고친 메모 1", ["negation"], 2)]
    assert all(a.version == 2 and a.updated_at.startswith("2026-04-01") for a in stored) and len(stored) == n
