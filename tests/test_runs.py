"""Runs kept in the annotation database, for real, on SQLite and on PostgreSQL (KLUE_VIZ_TEST_PG)."""

from __future__ import annotations

import multiprocessing
import sqlite3

import pytest
import sqlalchemy as sa

from klue_viz.core.problems import InputError
from klue_viz.reading.demo import demo_runs
from klue_viz.reading.uploads import MAX_UPLOAD_ENV, RunTooLarge
from klue_viz.store import annotations as store_module
from klue_viz.store import schema
from klue_viz.store.annotations import Annotation, Store, StoreError
from klue_viz.store.runs import RunConflict, RunStore
from tests.conftest import PG_URL, REPO, reset

V1_DUMP = REPO / "tests" / "data" / "annotations-schema-v1.sql"


def ner_file(k: int = 0) -> tuple[str, bytes]:
    path = list(demo_runs("ner"))[k]
    return path.name, path.read_bytes()


def test_a_run_is_stored_once_per_content_and_read_back_by_another_store(db_url):
    first = RunStore(Store(db_url))
    name, data = ner_file()
    run = first.add("ner", name, data, model="KLUE-BERT", uploader="지민")
    assert (run.name, run.file_name, run.model, run.uploader, run.version) == ("bert-crf", name, "KLUE-BERT", "지민", 1)
    assert first.add("ner", "copy.jsonl", data).name == "bert-crf"  # same bytes: the same run
    other = first.add("ner", name, data + b"\n")  # other bytes, same file name: a suffixed name
    assert other.name == "bert-crf-2"
    second = RunStore(Store(db_url))  # another session or a restarted server
    assert [(r.name, r.model, r.size) for r in second.list("ner")] == [("bert-crf", "KLUE-BERT", len(data)), ("bert-crf-2", "", len(data) + 1)]
    assert second.data(run.sha256) == data
    with second.store.engine.connect() as connection:
        assert connection.execute(sa.select(sa.func.count()).select_from(schema.run_blobs)).scalar() == 2


def test_the_same_bytes_under_two_tasks_are_stored_once(db_url):
    runs = RunStore(Store(db_url))
    name, data = ner_file()
    runs.add("ner", name, data)
    runs.add("dp", name, data)
    with runs.store.engine.connect() as connection:
        assert connection.execute(sa.select(sa.func.count()).select_from(schema.run_blobs)).scalar() == 1
    runs.remove("ner", "bert-crf", expected_version=1)
    assert runs.data(runs.get("dp", "bert-crf").sha256) == data  # still used by the DP run


def test_rename_carries_the_annotations_and_remove_keeps_them_unless_asked(db_url):
    store = Store(db_url)
    runs = RunStore(store)
    name, data = ner_file()
    runs.add("ner", name, data)
    store.save(Annotation("ner", "g1", "bert-crf", "지민", tags=["boundary"]))
    renamed = runs.rename("ner", "bert-crf", "KLUE BERT + CRF", expected_version=1)
    assert renamed.version == 2 and [a.run for a in store.find(task="ner")] == ["KLUE BERT + CRF"]
    with pytest.raises(RunConflict, match="changed meanwhile"):
        runs.rename("ner", "KLUE BERT + CRF", "other", expected_version=1)
    assert runs.remove("ner", "KLUE BERT + CRF", expected_version=2) == 0
    assert runs.list() == [] and [a.run for a in store.find(task="ner")] == ["KLUE BERT + CRF"]
    with store.engine.connect() as connection:  # the bytes went with the last run that used them
        assert connection.execute(sa.select(sa.func.count()).select_from(schema.run_blobs)).scalar() == 0
    again = runs.add("ner", name, data)
    with pytest.raises(InputError, match="would mix"):  # kept annotations of a removed run are not merged silently
        runs.rename("ner", again.name, "KLUE BERT + CRF", expected_version=1)
    runs.rename("ner", again.name, "KLUE BERT + CRF v2", expected_version=1)
    assert runs.remove("ner", "KLUE BERT + CRF v2", expected_version=2, delete_annotations=True) == 0
    store.save(Annotation("ner", "g2", "kept", "지민"))
    kept = runs.add("ner", "kept.jsonl", data)
    assert runs.remove("ner", kept.name, expected_version=1, delete_annotations=True) == 1
    assert [a.run for a in store.find(task="ner")] == ["KLUE BERT + CRF"]
    with pytest.raises(RunConflict, match="removed or renamed"):
        runs.remove("ner", kept.name, expected_version=1)


def test_a_file_over_the_limit_is_refused_before_anything_is_stored(db_url, monkeypatch):
    monkeypatch.setenv(MAX_UPLOAD_ENV, "0.001")  # about 1 KB
    runs = RunStore(Store(db_url))
    name, data = ner_file()
    assert len(data) > 1100
    with pytest.raises(RunTooLarge) as info:
        runs.add("ner", "<b>big</b>.jsonl", data)
    message = str(info.value)
    assert "over the 1.0 KB limit" in message and "&lt;" not in message and "KLUE_VIZ_MAX_UPLOAD_MB" in message and "nothing was stored" in message
    assert runs.list() == []
    monkeypatch.setenv(MAX_UPLOAD_ENV, "1")
    assert runs.add("ner", name, data).name == "bert-crf"


def _run_worker(url: str, worker: int, count: int, renamed) -> None:
    """Adds and removes its own runs, and races the others to rename the shared one."""
    runs = RunStore(Store(url))
    for k in range(count):
        mine = runs.add("nli", f"w{worker}-{k}.jsonl", f"{worker}-{k}".encode(), model=f"m{worker}")
        if k % 2:
            runs.remove("nli", mine.name, expected_version=mine.version)
        runs.add("nli", "shared.jsonl", b"shared bytes")  # everyone uploads the same file: stored once
        for run in runs.list("nli"):
            try:
                assert len(runs.data(run.sha256)) == run.size  # a listed run always has all its bytes
            except RunConflict:
                continue  # removed between the listing and the read: gone as a whole
            if run.name.startswith("shared"):
                try:
                    runs.rename("nli", run.name, f"shared-{worker}-{k}", expected_version=run.version)
                except RunConflict:
                    continue
                with renamed.get_lock():
                    renamed.value += 1


@pytest.mark.slow
def test_concurrent_uploads_renames_and_removes_lose_nothing(db_url):
    Store(db_url)
    context = multiprocessing.get_context("spawn")
    renamed = context.Value("i", 0)
    workers = [context.Process(target=_run_worker, args=(db_url, w, 8, renamed)) for w in range(4)]
    for process in workers:
        process.start()
    for process in workers:
        process.join(timeout=240)
        assert process.exitcode == 0
    runs = RunStore(Store(db_url))
    stored = runs.list("nli")
    own = [r for r in stored if not r.name.startswith("shared")]
    assert sorted(r.name for r in own) == sorted(f"w{w}-{k}" for w in range(4) for k in range(0, 8, 2))
    assert all(runs.data(r.sha256) == r.name[1:].encode() for r in own)
    shared = [r for r in stored if r.name.startswith("shared")]
    assert len(shared) == 1 and runs.data(shared[0].sha256) == b"shared bytes"
    assert renamed.value > 0 and shared[0].version == 1 + renamed.value  # no rename was lost or applied twice


def test_a_database_written_by_schema_1_is_migrated_and_keeps_its_annotations(tmp_path):
    path = tmp_path / "annotations.sqlite3"
    connection = sqlite3.connect(path)
    connection.executescript(V1_DUMP.read_text(encoding="utf-8"))
    connection.close()
    store = Store(str(path))
    assert store.version() == schema.SCHEMA_VERSION == 6  # runs (2), gold versions (3), column files (4), uploaded gold (5), suites (6)
    assert [(a.task, a.run, a.tags, a.turn) for a in store.find()] == [("ner", "bert-crf", ["boundary"], None), ("wos", "trade", ["missed update"], 2)]
    assert store.custom_tags("ner") == ["my tag"]
    runs = RunStore(store)
    name, data = ner_file()
    runs.add("ner", name, data)
    assert [r.name for r in RunStore(Store(str(path))).list()] == ["bert-crf"]
    with store.engine.begin() as connection:
        connection.execute(schema.schema_version.insert().values(version=schema.SCHEMA_VERSION + 1))
    with pytest.raises(StoreError, match="newer klue-viz"):
        Store(str(path))


@pytest.mark.skipif(not PG_URL, reason="set KLUE_VIZ_TEST_PG")
def test_a_postgresql_database_at_schema_1_is_migrated():
    reset(PG_URL)
    engine = sa.create_engine(store_module.database_url(PG_URL))
    with engine.begin() as connection:  # what version 1 created: its two migrations' tables and the version row
        schema.schema_version.create(connection)
        schema.MIGRATIONS[1](connection)
        connection.execute(schema.schema_version.insert().values(version=1))
        connection.execute(schema.annotation_table.insert().values(task="re", guid="g", turn=-1, run="r", annotator="a", updated_at="t"))
    engine.dispose()
    store = Store(PG_URL)
    assert store.version() == schema.SCHEMA_VERSION and [a.guid for a in store.find()] == ["g"]
    RunStore(store).add("re", "r.jsonl", b"{}")
    assert [r.name for r in RunStore(Store(PG_URL)).list("re")] == ["r"]
