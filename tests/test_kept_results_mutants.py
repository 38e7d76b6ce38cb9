"""klue_viz/store/kept_results.py case by case (issue 31, mutation testing): what lands in the database and the folder,
read back with sqlalchemy, hashlib and pyarrow directly, and each way a kept result is left out or refused."""

from __future__ import annotations

import hashlib
import io
import json
import os
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import pyarrow.parquet as pq
import pytest
import sqlalchemy as sa

from klue_viz.reading.demo import DEMO_BENCHMARK, demo_runs
from klue_viz.scoring.evaluate import evaluate_bytes, load_gold
from klue_viz.store import kept_format, kept_results, schema
from klue_viz.store.annotations import Store, StoreError
from klue_viz.tasks import get_task

RUN = "a" * 64
GOLD = "b" * 64


def demo_result(task_name: str):
    """The task's first demo run scored once, its frames built here rather than inside each test."""
    task = get_task(task_name)
    gold = load_gold(task, DEMO_BENCHMARK)
    path = next(iter(demo_runs(task_name)))
    result = evaluate_bytes(task, gold, path.read_bytes(), path.name, run=path.stem)
    result.frames  # noqa: B018
    return result


@pytest.fixture(scope="module")
def ner():
    """A demo NER run: examples and the `entities` level."""
    return demo_result("ner")


@pytest.fixture(scope="module")
def nli():
    return demo_result("nli")


@pytest.fixture
def store(tmp_path) -> kept_results.KeptResults:
    return kept_results.KeptResults(Store(str(tmp_path / "db.sqlite3")))


@pytest.fixture
def table_store(tmp_path) -> kept_results.KeptResults:
    """Frames kept as rows of `kept_frames` (what a PostgreSQL store does), here on SQLite, which has the table too."""
    results = kept_results.KeptResults(Store(str(tmp_path / "db.sqlite3")))
    results.folder = None
    return results


def rows(results: kept_results.KeptResults, table: sa.Table) -> list:
    with results.store.engine.connect() as connection:
        return list(connection.execute(sa.select(table)))


def parquet_levels(data_by_level: dict[str, bytes]) -> dict[str, tuple[str, int]]:
    return {level: (hashlib.sha256(data).hexdigest(), len(data)) for level, data in data_by_level.items()}


# ---- where the frames go ---------------------------------------------------------------------------------------------
def test_the_folder_is_the_database_name_with_kept_beside_it(tmp_path):
    assert kept_results.KeptResults(Store(str(tmp_path / "db.sqlite3"))).folder == tmp_path / "db.sqlite3.kept"
    assert kept_results.KeptResults(Store(str(tmp_path / "x" / "a.db"))).folder == tmp_path / "x" / "a.db.kept"
    assert kept_results.KeptResults(Store(str(tmp_path / "db.sqlite3")), tmp_path / "elsewhere").folder == tmp_path / "elsewhere"


def test_keep_writes_one_row_and_one_file_per_level(store, ner):
    summary = store.keep(ner, RUN, GOLD, True)
    assert summary.key == kept_format.result_key(RUN, GOLD, True)
    (row,) = rows(store, schema.kept_scores)
    assert (row.key, row.task, row.run_sha256, row.gold_sha256, row.strict, row.layout, row.file_name) == (
        summary.key, "ner", RUN, GOLD, True, kept_format.layout(), ner.file)
    assert sorted(os.listdir(store.folder)) == [summary.key]  # no staging folder left
    files = {path.name.removesuffix(".parquet"): path.read_bytes() for path in (store.folder / summary.key).iterdir()}
    assert sorted(files) == ["entities", "examples"]
    assert summary.levels == parquet_levels(files)
    assert json.loads(row.levels) == {level: list(value) for level, value in parquet_levels(files).items()}
    examples = pq.read_table(io.BytesIO(files["examples"]))
    assert examples.num_rows == len(ner.frames.examples) and examples.schema.metadata[b"klue_viz.layout"].decode() == kept_format.layout()
    assert pq.read_table(io.BytesIO(files["entities"])).num_rows == len(ner.frames.details["entities"])
    assert (summary.task, summary.run_sha256, summary.gold_sha256, summary.strict, summary.file_name) == ("ner", RUN, GOLD, True, ner.file)
    assert summary.scores == ner.scores and summary.coverage == ner.coverage
    assert store.disk_bytes(summary) == sum(len(data) for data in files.values())
    assert rows(store, schema.kept_frames) == []


def test_keep_again_replaces_the_row_the_files_and_drops_the_views(store, ner):
    first = store.keep(ner, RUN, GOLD, False)
    store.keep_view(first.key, "v", {"a": 1})
    target = store.folder / first.key / "examples.parquet"
    target.write_bytes(b"damaged")
    (store.folder / first.key / "stray.parquet").write_bytes(b"x")
    second = store.keep(ner, RUN, GOLD, False)
    assert [row.key for row in rows(store, schema.kept_scores)] == [second.key]
    assert rows(store, schema.kept_views) == []
    assert sorted(os.listdir(store.folder)) == [second.key]  # the old folder is removed, not left under a hidden name
    assert sorted(os.listdir(store.folder / second.key)) == ["entities.parquet", "examples.parquet"]
    assert hashlib.sha256(target.read_bytes()).hexdigest() == second.levels["examples"][0]


def test_a_failed_write_leaves_no_staging_folder(store, ner, monkeypatch):
    def refuse(*_):
        raise OSError("disk full")
    monkeypatch.setattr(kept_results.os, "replace", refuse)
    with pytest.raises(OSError, match="disk full"):
        store.keep(ner, RUN, GOLD, False)
    assert os.listdir(store.folder) == []
    assert rows(store, schema.kept_scores) == []


def test_the_staging_folder_is_hidden_and_named_after_the_key(store, ner, monkeypatch):
    moves = []
    real = os.replace
    monkeypatch.setattr(kept_results.os, "replace", lambda a, b: moves.append((Path(a), Path(b))) or real(a, b))
    summary = store.keep(ner, RUN, GOLD, False)
    ((staging, target),) = moves
    assert target == store.folder / summary.key and staging.parent == store.folder
    assert staging.name.startswith("." + summary.key[:12] + "-")
    moves.clear()
    store.keep(ner, RUN, GOLD, False)
    (old, _), (staging, target) = moves
    assert old == store.folder / summary.key and _.parent.parent == store.folder and _.name == "result"
    assert _.parent.name.startswith("." + summary.key[:12] + "-old-")


def test_frames_in_the_table_when_there_is_no_folder(table_store, ner):
    summary = table_store.keep(ner, RUN, GOLD, False)
    kept = {row.level: bytes(row.data) for row in rows(table_store, schema.kept_frames)}
    assert all(row.key == summary.key for row in rows(table_store, schema.kept_frames))
    assert sorted(kept) == ["entities", "examples"] and summary.levels == parquet_levels(kept)
    assert table_store.keep(ner, RUN, GOLD, False) == summary
    assert table_store.summary("ner", RUN, GOLD, False) == summary  # no files to look at: the rows are whole
    assert len(rows(table_store, schema.kept_frames)) == 2  # replaced, not added to
    frames = table_store.frames(summary)
    assert len(frames.examples) == len(ner.frames.examples) and list(frames.details) == ["entities"]
    assert len(frames.details["entities"]) == len(ner.frames.details["entities"])
    cut = table_store.frame_columns(summary, {"examples": ["guid"], "entities": ["guid"], "nope": ["x"]})
    assert list(cut.examples.columns) == ["guid"] and list(cut.details) == ["entities"]
    assert list(cut.details["entities"].columns) == ["guid"]


def test_a_missing_level_row_is_unreadable(table_store, ner):
    summary = table_store.keep(ner, RUN, GOLD, False)
    with table_store.store.engine.begin() as connection:
        connection.execute(schema.kept_frames.delete().where(schema.kept_frames.c.level == "entities"))
    with pytest.raises(kept_format.KeptUnreadable, match=rf"^the kept entities of {ner.file} is missing or damaged$"):
        table_store.frames(summary)
    assert list(table_store.frame_columns(summary, {"examples": ["guid"]}).examples.columns) == ["guid"]  # entities not read


def test_a_store_error_reading_the_table_is_unreadable(table_store, ner, monkeypatch):
    summary = table_store.keep(ner, RUN, GOLD, False)

    def broken(_):
        raise StoreError("gone")
    monkeypatch.setattr(table_store.store, "read", broken)
    with pytest.raises(kept_format.KeptUnreadable, match="the kept examples of"):
        table_store.frames(summary)


# ---- forgetting ------------------------------------------------------------------------------------------------------
def test_forget_one_task_or_all(store, ner, nli):
    ner_kept = store.keep(ner, RUN, GOLD, False)
    nli_kept = store.keep(nli, RUN, "c" * 64, False)
    other = store.keep(nli, "d" * 64, "c" * 64, False)
    for summary in (ner_kept, nli_kept, other):
        store.keep_view(summary.key, "v", 1)
    assert store.forget(RUN, "nli") == 1
    assert sorted(row.key for row in rows(store, schema.kept_scores)) == sorted([ner_kept.key, other.key])
    assert sorted(row.key for row in rows(store, schema.kept_views)) == sorted([ner_kept.key, other.key])
    assert sorted(os.listdir(store.folder)) == sorted([ner_kept.key, other.key])
    assert store.forget(RUN, "nli") == 0
    assert store.forget(RUN) == 1
    assert [row.key for row in rows(store, schema.kept_scores)] == [other.key]
    assert [row.key for row in rows(store, schema.kept_views)] == [other.key]
    assert os.listdir(store.folder) == [other.key]


def test_forget_removes_the_table_rows(table_store, ner):
    kept = table_store.keep(ner, RUN, GOLD, False)
    other = table_store.keep(ner, "d" * 64, GOLD, False)
    assert table_store.forget(RUN) == 1
    assert {row.key for row in rows(table_store, schema.kept_frames)} == {other.key}
    assert kept.key != other.key


# ---- reading ---------------------------------------------------------------------------------------------------------
def test_summaries_match_task_gold_strict_and_layout(store, ner, monkeypatch):
    kept = store.keep(ner, RUN, GOLD, False)
    assert store.summaries("ner", [], GOLD, False) == {}
    assert store.summaries("ner", [RUN, RUN], GOLD, False) == {RUN: kept}
    assert store.summary("ner", RUN, GOLD, False) == kept
    assert store.summary("nli", RUN, GOLD, False) is None
    assert store.summary("ner", RUN, "c" * 64, False) is None
    assert store.summary("ner", RUN, GOLD, True) is None
    assert store.summary("ner", "d" * 64, GOLD, False) is None
    monkeypatch.setattr(kept_format, "_LAYOUT", "0.planted")
    assert store.summary("ner", RUN, GOLD, False) is None
    assert store.summaries_by_key([kept.key]) == {}


def test_summaries_past_the_first_five_hundred(store, ner):
    last = "f" * 64
    kept = store.keep(ner, last, GOLD, False)
    first = store.keep(ner, "0" * 64, GOLD, False)
    wanted = [f"{n:064x}" for n in range(1, 1001)] + [last, "0" * 64]
    assert store.summaries("ner", wanted, GOLD, False) == {last: kept, "0" * 64: first}
    keys = [f"{n:064x}" for n in range(1, 1001)] + [kept.key, first.key]
    assert store.summaries_by_key(keys) == {kept.key: kept, first.key: first}


def test_a_file_of_another_size_or_missing_leaves_the_summary_out(store, ner):
    kept = store.keep(ner, RUN, GOLD, False)
    path = store.folder / kept.key / "entities.parquet"
    path.write_bytes(path.read_bytes() + b"x")
    assert store.summaries("ner", [RUN], GOLD, False) == {}
    path.unlink()
    assert store.summaries("ner", [RUN], GOLD, False) == {}
    assert store.summaries_by_key([kept.key]) == {kept.key: kept}  # by key, the files are checked when read
    with pytest.raises(kept_format.KeptUnreadable, match=rf"^the kept entities of {ner.file} is missing or damaged$"):
        store.frames(kept)


def test_a_damaged_row_is_left_out(store, ner):
    kept = store.keep(ner, RUN, GOLD, False)
    with store.store.engine.begin() as connection:
        connection.execute(schema.kept_scores.update().values(file_name="other.jsonl"))
    assert store.summaries("ner", [RUN], GOLD, False) == {}
    assert store.summaries_by_key([kept.key]) == {}


def test_frame_columns_checks_size_and_digest(store, ner):
    kept = store.keep(ner, RUN, GOLD, False)
    path = store.folder / kept.key / "examples.parquet"
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.raises(kept_format.KeptUnreadable, match=rf"^the kept examples of {ner.file} is missing or damaged$"):
        store.frame_columns(kept, {"examples": ["guid"]})
    path.write_bytes(bytes(data[:-1]))
    with pytest.raises(kept_format.KeptUnreadable, match="the kept examples of"):
        store.frame_columns(kept, {"examples": ["guid"]})


def test_frame_columns_reads_only_the_levels_asked(store, ner):
    kept = store.keep(ner, RUN, GOLD, False)
    cut = store.frame_columns(kept, {"entities": []})  # examples always, with no column asked
    assert list(cut.examples.columns) == [] and len(cut.examples) == len(ner.frames.examples)
    assert list(cut.details) == ["entities"] and list(cut.details["entities"].columns) == []
    (store.folder / kept.key / "entities.parquet").unlink()
    cut = store.frame_columns(kept, {"examples": ["guid", "correct"]})
    assert list(cut.examples.columns) == ["guid", "correct"] and cut.details == {}
    assert list(cut.examples["guid"]) == list(ner.frames.examples["guid"])
    with pytest.raises(kept_format.KeptUnreadable, match="the kept entities of"):
        store.frame_columns(kept, {"entities": ["guid"]})


# ---- views -----------------------------------------------------------------------------------------------------------
def test_views_are_kept_sealed_and_refused_when_damaged(store, ner):
    kept = store.keep(ner, RUN, GOLD, False)
    assert store.view(kept.key, "v") is None
    store.keep_view(kept.key, "v", {"b": [1, "둘"]})
    store.keep_view(kept.key, "w", 2)
    store.keep_view(kept.key, "v", {"b": [3]})
    assert store.view(kept.key, "v") == {"b": [3]} and store.view(kept.key, "w") == 2
    (v,), (w,) = ([r for r in rows(store, schema.kept_views) if r.view == name] for name in ("v", "w"))
    assert (v.key, w.key) == (kept.key, kept.key)
    assert v.data == kept_format.seal(json.dumps({"b": [3]}), kept.key, "v")
    assert store.view("c" * 64, "v") is None
    store.keep_view("c" * 64, "v", 1)  # no such result: nothing is kept
    assert [r.key for r in rows(store, schema.kept_views)] == [kept.key, kept.key]
    with store.store.engine.begin() as connection:
        connection.execute(schema.kept_views.update().where(schema.kept_views.c.view == "v").values(data=v.data.replace("3", "4")))
        connection.execute(schema.kept_views.update().where(schema.kept_views.c.view == "w")
                           .values(data=kept_format.seal("not json", kept.key, "w")))
    assert store.view(kept.key, "v") is None and store.view(kept.key, "w") is None


# ---- what is read, and how many queries --------------------------------------------------------------------------------
def test_frame_columns_reads_each_file_asked_once(store, ner, monkeypatch):
    kept = store.keep(ner, RUN, GOLD, False)
    read = []
    real = Path.read_bytes
    monkeypatch.setattr(Path, "read_bytes", lambda self: read.append(self.name) or real(self))
    store.frame_columns(kept, {"examples": ["guid"]})
    assert read == ["examples.parquet"]  # the entities file is not read
    read.clear()
    store.frame_columns(kept, {"entities": ["guid"], "examples": ["guid"]})
    assert sorted(read) == ["entities.parquet", "examples.parquet"]


def test_five_hundred_keys_a_query(store, ner):
    kept = store.keep(ner, "f" * 64, GOLD, False)
    sizes = []

    def count(conn, cursor, statement, parameters, context, executemany):
        if "kept_scores" in statement and statement.lstrip().upper().startswith("SELECT"):
            sizes.append(len(parameters))
    sa.event.listen(store.store.engine, "before_cursor_execute", count)
    wanted = [f"{n:064x}" for n in range(1, 1001)] + [kept.key]
    assert store.summaries_by_key(wanted) == {kept.key: kept}
    assert sizes == [501, 501, 2]  # 500 keys and the layout, twice, then the last key
    sizes.clear()
    assert store.summaries("ner", [f"{n:064x}" for n in range(1, 1001)] + ["f" * 64], GOLD, False) == {"f" * 64: kept}
    assert sizes == [503, 503, 4]  # task, gold, layout (strict is written as false) and 500 runs


def test_forget_of_a_folder_already_gone(store, ner):
    kept = store.keep(ner, RUN, GOLD, False)
    (store.folder / kept.key / "examples.parquet").unlink()
    (store.folder / kept.key / "entities.parquet").unlink()
    (store.folder / kept.key).rmdir()  # another process removed it first
    assert store.forget(RUN) == 1


def test_what_a_clash_says(store, ner, monkeypatch):
    kept = store.keep(ner, RUN, GOLD, False)
    clashes = []
    real = store.store.write
    monkeypatch.setattr(store.store, "write", lambda work, clash: clashes.append(clash) or real(work, clash))
    store.keep_view(kept.key, "v", 1)
    store.forget(RUN)
    store.keep(ner, RUN, GOLD, False)
    assert clashes == ["another process kept writing this view", "another process kept changing the kept results of this run",
                       "another process kept writing this kept result"]


def test_the_frames_of_one_result_only(table_store, ner, nli):
    first = table_store.keep(ner, RUN, GOLD, False)
    second = table_store.keep(nli, "d" * 64, GOLD, False)
    assert first.levels["examples"] != second.levels["examples"]
    # an examples level under two keys: each result reads its own bytes
    assert len(table_store.frames(first).examples) == len(ner.frames.examples)
    assert len(table_store.frames(second).examples) == len(nli.frames.examples)


def test_a_store_without_a_file_keeps_the_folder_given(tmp_path):
    """A PostgreSQL store has no path: its frames go to the table, unless a folder is given."""
    server = SimpleNamespace(path=None)
    assert kept_results.KeptResults(server, tmp_path).folder == tmp_path  # type: ignore[arg-type]
    assert kept_results.KeptResults(server).folder is None  # type: ignore[arg-type]


def test_a_folder_given_under_parents_not_made_yet_is_made_whole(tmp_path, ner):
    """Frames kept in a folder whose parents do not exist yet (`KeptResults(store, folder)`): the whole path is made
    (`_write_folder`'s mutants 2/4/6 drop `parents=True`)."""
    deep = tmp_path / "not" / "made" / "yet"
    results = kept_results.KeptResults(Store(str(tmp_path / "db.sqlite3")), deep)
    summary = results.keep(ner, RUN, GOLD, False)
    assert sorted(os.listdir(deep)) == [summary.key]
    assert sorted(os.listdir(deep / summary.key)) == ["entities.parquet", "examples.parquet"]


def test_a_folder_that_will_not_go_does_not_stop_the_keeping(store, ner, monkeypatch):
    """Removing a folder can fail (a file held open on a network share): the old folder of a result kept again is then
    left under its hidden name and the new result is kept all the same; a failed write raises its own error, not the
    removal's (`_write_folder`'s removals are asked to ignore errors)."""
    first = store.keep(ner, RUN, GOLD, False)
    real = kept_results.shutil.rmtree
    asked = []

    def stubborn(path, ignore_errors=False, **options):
        """rmtree of a folder that cannot be removed: it raises unless told to ignore errors, and removes nothing."""
        if Path(path).parent != store.folder:
            return real(path, ignore_errors, **options)
        asked.append(Path(path))
        if not ignore_errors:
            raise OSError(f"{path}: device or resource busy")
        return None
    monkeypatch.setattr(kept_results.shutil, "rmtree", stubborn)
    second = store.keep(ner, RUN, GOLD, False)
    assert second == first
    files = {path.name.removesuffix(".parquet"): path.read_bytes() for path in (store.folder / first.key).iterdir()}
    assert parquet_levels(files) == second.levels and store.summary("ner", RUN, GOLD, False) == second
    (old,) = asked
    assert old.name.startswith("." + first.key[:12] + "-old-") and os.listdir(old) == ["result"]
    asked.clear()

    def refuse(*_):
        raise OSError("disk full")
    monkeypatch.setattr(kept_results.os, "replace", refuse)
    with pytest.raises(OSError, match="^disk full$"):
        store.keep(ner, RUN, GOLD, False)
    (staging,) = asked
    assert staging.name.startswith("." + first.key[:12] + "-") and "-old-" not in staging.name


def test_disk_bytes_adds_the_sizes_of_every_level(store, ner):
    summary = store.keep(ner, RUN, GOLD, False)
    assert store.disk_bytes(replace(summary, levels={"examples": ("x", 10), "entities": ("y", 5)})) == 15
    assert store.disk_bytes(replace(summary, levels={})) == 0
    on_disk = sum(path.stat().st_size for path in (store.folder / summary.key).iterdir())
    assert store.disk_bytes(summary) == on_disk
