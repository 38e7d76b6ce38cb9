"""A busy database during a run upload is reported as the store's "busy" error, as an annotation save is."""

from __future__ import annotations

import sqlite3

import pytest

from klue_viz.store import annotations as store_module
from klue_viz.store.annotations import Store, StoreBusy
from klue_viz.store.runs import RunStore


def test_a_run_upload_into_a_locked_database_is_busy_not_a_raw_sqlalchemy_error(tmp_path, monkeypatch):
    path = tmp_path / "annotations.sqlite3"
    Store(str(path))  # created and migrated before another process takes the lock
    monkeypatch.setattr(store_module, "BUSY_TIMEOUT", 0.2)
    monkeypatch.setattr(store_module, "WRITE_ATTEMPTS", 2)
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")  # a long import holding the write lock
    try:
        runs = RunStore(Store(str(path)))
        with pytest.raises(StoreBusy, match="busy .*try again in a moment"):
            runs.add("nli", "roberta.jsonl", b'{"guid": "klue-nli-v1_dev_00000", "label": "entailment"}\n')
        assert runs.list() == []  # WAL: reading goes on while another connection writes
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert RunStore(Store(str(path))).list() == []
