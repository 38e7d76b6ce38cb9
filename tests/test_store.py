"""The annotation store, for real, on SQLite and on PostgreSQL (KLUE_VIZ_TEST_PG, started by .ci/run)."""

from __future__ import annotations

import json
import multiprocessing
import signal
import sqlite3
import subprocess
import sys

import pytest

from klue_viz.cli.main import main
from klue_viz.discovery.tags import agreement, tag_rows, tag_table
from klue_viz.reading.demo import DEMO_BENCHMARK, demo_runs
from klue_viz.scoring.evaluate import evaluate_file, load_gold
from klue_viz.store import annotations as store_module
from klue_viz.store import schema
from klue_viz.store.annotation_files import parse, to_csv, to_jsonl
from klue_viz.store.annotations import (
    Annotation,
    ConflictError,
    InvalidRecord,
    Store,
    StoreBusy,
    StoreCorrupt,
    StoreError,
    StoreUnavailable,
    set_aside,
)
from klue_viz.tasks import get_task
from tests.conftest import REPO


def note(guid="klue-ner-v1_dev_00001-nsmc", run="bert-crf", who="지민", tags=("boundary",), turn=None, task="ner") -> Annotation:
    return Annotation(task=task, guid=guid, run=run, annotator=who, tags=list(tags), note="경계가 한 글자 짧음", turn=turn)


def test_save_read_update_and_versions(db_url):
    store = Store(db_url)
    assert store.version() == schema.SCHEMA_VERSION
    saved = store.save(note())
    assert saved.version == 1 and saved.updated_at
    wos = store.save(note(guid="wos-v1_dev_00000", run="trade", task="wos", turn=2, tags=("missed update",)))
    again = store.get("ner", "klue-ner-v1_dev_00001-nsmc", "bert-crf", "지민")
    assert again.tags == ["boundary"] and again.turn is None and again.note == "경계가 한 글자 짧음"
    assert store.get("wos", "wos-v1_dev_00000", "trade", "지민", turn=2).tags == ["missed update"]
    assert store.get("wos", "wos-v1_dev_00000", "trade", "지민", turn=1) is None
    again.tags = ["boundary", "gold error"]
    again.gold_wrong, again.corrected_label = True, "<서울 강남구:LC>"
    updated = store.save(again, expected_version=1)
    assert updated.version == 2 and [a.version for a in store.find(task="ner")] == [2]
    assert {a.task for a in store.find()} == {"ner", "wos"} and wos.version == 1


def test_a_stale_save_is_refused_with_who_and_when(db_url):
    store = Store(db_url)
    mine = store.save(note())
    theirs = store.get(mine.task, mine.guid, mine.run, mine.annotator)
    theirs.tags = ["type confusion"]
    store.save(theirs, expected_version=1)
    mine.tags = ["missed"]
    with pytest.raises(ConflictError) as info:
        store.save(mine, expected_version=1)
    assert info.value.current.tags == ["type confusion"] and info.value.current.updated_at
    assert store.get(mine.task, mine.guid, mine.run, mine.annotator).tags == ["type confusion"]


@pytest.mark.parametrize("suffix", ["jsonl", "csv"])
def test_export_import_into_an_empty_store_export_again_is_identical(db_url, tmp_path, suffix):
    store = Store(db_url)
    store.save(note())
    store.save(note(who="서연", tags=("type confusion", "gold error")))
    store.save(note(guid="wos-v1_dev_00003", run="trade", task="wos", turn=0, tags=()))
    items = store.find()
    text = to_jsonl(items) if suffix == "jsonl" else to_csv(items)
    empty = Store(str(tmp_path / "empty.sqlite3"))
    parsed, problems = parse(text.encode("utf-8"), f"export.{suffix}")
    assert not problems
    plan = empty.plan_import(parsed)
    assert (len(plan.added), len(plan.updated), len(plan.conflicting)) == (3, 0, 0)
    empty.apply_import(plan)
    again = to_jsonl(empty.find()) if suffix == "jsonl" else to_csv(empty.find())
    assert again == text
    assert [json.loads(line) for line in to_jsonl(items).splitlines()][0].keys() == {
        "task", "guid", "turn", "run", "tags", "note", "gold_wrong", "corrected_label", "annotator", "updated_at"}


def test_import_plan_counts_added_updated_and_conflicting(db_url):
    store = Store(db_url)
    old = store.save(note(guid="a"))
    newer = store.save(note(guid="b"))
    same = store.save(note(guid="d"))
    incoming = [
        Annotation(**{**old.__dict__, "tags": ["missed"], "updated_at": "2999-01-01T00:00:00.000+00:00"}),  # newer: update
        Annotation(**{**newer.__dict__, "tags": ["spurious"], "updated_at": "2000-01-01T00:00:00.000+00:00"}),  # older: conflict
        note(guid="c"),  # new
        Annotation(**{**same.__dict__}),  # same content: unchanged (a second line for "a" would be one record: the newer wins)
    ]
    plan = store.plan_import(incoming)
    assert (len(plan.added), len(plan.updated), len(plan.conflicting), len(plan.unchanged)) == (1, 1, 1, 1)
    store.apply_import(plan)
    assert store.get("ner", "b", "bert-crf", "지민").tags == ["boundary"]  # the newer stored record was kept
    assert store.get("ner", "a", "bert-crf", "지민").tags == ["missed"]
    store.apply_import(plan, overwrite_conflicts=True)
    assert store.get("ner", "b", "bert-crf", "지민").tags == ["spurious"]


def _writer(url: str, worker: int, count: int) -> None:
    store = Store(url)
    for k in range(count):
        store.save(note(guid=f"w{worker}-{k}", who=f"annotator-{worker}"))
        while True:  # read-modify-write of one shared record, retried on conflict
            shared = store.get("ner", "shared", "bert-crf", "team") or note(guid="shared", who="team", tags=())
            shared.tags = shared.tags + [f"{worker}-{k}"]
            try:
                store.save(shared, expected_version=shared.version)
                break
            except ConflictError:
                continue


@pytest.mark.slow
def test_concurrent_writers_from_several_processes_lose_nothing(db_url):
    Store(db_url)
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=_writer, args=(db_url, w, 15)) for w in range(4)]
    for process in workers:
        process.start()
    for process in workers:
        process.join(timeout=240)
        assert process.exitcode == 0
    store = Store(db_url)
    assert len(store.find(annotator=None)) == 4 * 15 + 1
    assert sorted(store.get("ner", "shared", "bert-crf", "team").tags) == sorted(f"{w}-{k}" for w in range(4) for k in range(15))


KILLED_WRITER = """
import sys
from klue_viz.store.annotations import Annotation, Store
store = Store(sys.argv[1])
for k in range(100000):
    store.save(Annotation(task="nli", guid=f"g{k}", run="r", annotator="a", tags=["negation"]))
    print(k, flush=True)
"""


@pytest.mark.slow
def test_a_killed_writer_loses_no_acknowledged_record(db_url):
    process = subprocess.Popen([sys.executable, "-c", KILLED_WRITER, db_url], stdout=subprocess.PIPE, text=True, cwd=REPO)
    acknowledged = [int(process.stdout.readline()) for _ in range(40)]
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=30)
    store = Store(db_url)
    present = {a.guid for a in store.find(task="nli")}
    assert {f"g{k}" for k in acknowledged} <= present


def test_an_unreadable_sqlite_file_is_never_overwritten(tmp_path):
    path = tmp_path / "annotations.sqlite3"
    garbage = b"this is not a database" * 100
    path.write_bytes(garbage)
    with pytest.raises(StoreCorrupt, match="integrity check") as info:
        Store(str(path))
    assert "new-db" in str(info.value) and path.read_bytes() == garbage
    kept = set_aside(path)
    assert kept.read_bytes() == garbage and Store(str(path)).find() == []


def test_a_database_from_a_newer_version_is_refused(tmp_path):
    path = tmp_path / "annotations.sqlite3"
    store = Store(str(path))
    with store.engine.begin() as connection:
        connection.execute(schema.schema_version.insert().values(version=99))
    with pytest.raises(StoreError, match="newer klue-viz"):
        Store(str(path))


def test_kappa_by_hand_and_disagreements():
    def tagged(who, tags_by_guid):
        return [Annotation("nli", g, "r", who, tags=list(t)) for g, t in tags_by_guid.items()]

    first = tagged("a", {"g1": ["negation"], "g2": ["negation"], "g3": [], "g4": []})
    second = tagged("b", {"g1": ["negation"], "g2": [], "g3": [], "g4": [], "g5": ["ambiguous"]})
    table, differ = agreement(first, second)
    # observed agreement 3/4; chance 0.5*0.25 + 0.5*0.75 = 0.5; kappa (0.75 - 0.5) / 0.5 = 0.5
    assert table.set_index("tag").loc["negation", "kappa"] == pytest.approx(0.5)
    assert table.set_index("tag").loc["negation", "examples"] == 4
    assert differ["guid"].tolist() == ["g2"]


def test_tag_table_reports_each_tags_share_of_the_errors():
    task = get_task("nli")
    result = evaluate_file(task, load_gold(task, DEMO_BENCHMARK), next(demo_runs("nli")))
    ex = result.frames.examples
    wrong = ex[~ex["correct"]]["guid"].tolist()
    items = [Annotation("nli", g, result.run, "a", tags=["numbers or time"]) for g in wrong[:2]]
    items.append(Annotation("nli", ex[ex["correct"]]["guid"].iloc[0], result.run, "a", tags=["numbers or time"]))
    table = tag_table(task, result.frames, tag_rows(task, items)).set_index("tag")
    assert table.loc["numbers or time", "n"] == 3 and table.loc["numbers or time", "errors"] == 2
    assert table.loc["numbers or time", "share_of_errors"] == pytest.approx(100 * 2 / len(wrong))


def test_cli_export_and_import_against_the_same_store(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("KLUE_VIZ_DB", str(tmp_path / "cli.sqlite3"))
    store = Store()
    store.save(note())
    store.save(note(task="wos", guid="wos-v1_dev_00000", turn=1, run="trade"))
    out = tmp_path / "ner.jsonl"
    assert main(["annotations", "export", "--task", "ner", "--out", str(out)]) == 0
    assert len(out.read_text(encoding="utf-8").splitlines()) == 1
    monkeypatch.setenv("KLUE_VIZ_DB", str(tmp_path / "other.sqlite3"))
    assert main(["annotations", "import", str(out)]) == 0
    assert "1 to add, 0 to update, 0 in conflict" in capsys.readouterr().out
    assert Store().find()[0].tags == ["boundary"]
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"task": "xx", "guid": "g", "run": "r"}\n', encoding="utf-8")
    assert main(["annotations", "import", str(bad)]) == 1


# ---- hardening: busy is not corrupt, imports check versions, both backends accept the same records ----------------

def test_a_busy_database_is_busy_not_unreadable_and_is_never_set_aside(tmp_path, monkeypatch):
    path = tmp_path / "annotations.sqlite3"
    Store(str(path)).save(note())
    monkeypatch.setattr(store_module, "BUSY_TIMEOUT", 0.2)
    monkeypatch.setattr(store_module, "WRITE_ATTEMPTS", 2)
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")  # a long import holding the write lock
    try:
        store = Store(str(path))  # opening only reads: it neither waits nor fails
        assert [a.guid for a in store.find()] == ["klue-ner-v1_dev_00001-nsmc"]
        with pytest.raises(StoreBusy, match="busy"):
            store.save(note(guid="other"))
        with pytest.raises(StoreError) as refused:
            set_aside(path)
        assert "not set aside" in str(refused.value) and path.exists()
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert [a.guid for a in Store(str(path)).find()] == ["klue-ner-v1_dev_00001-nsmc"]


def test_a_new_database_that_is_locked_is_busy_not_unreadable(tmp_path, monkeypatch):
    path = tmp_path / "annotations.sqlite3"
    monkeypatch.setattr(store_module, "BUSY_TIMEOUT", 0.2)
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("PRAGMA journal_mode=WAL")
    holder.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(StoreBusy, match="nothing is wrong"):
            Store(str(path))
    finally:
        holder.execute("ROLLBACK")
        holder.close()


def test_an_unreachable_database_is_not_called_unreadable(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    with pytest.raises(StoreUnavailable, match="cannot create the folder"):
        Store(str(blocker / "annotations.sqlite3"))
    with pytest.raises(StoreUnavailable, match="unreachable") as refused:
        Store("postgresql://postgres@127.0.0.1:9/none?connect_timeout=2")
    assert "127.0.0.1" not in str(refused.value) and ":9" not in str(refused.value), "the server's address goes to the log only"


def test_a_healthy_database_and_a_locked_corrupt_file_are_not_set_aside(tmp_path):
    healthy = tmp_path / "healthy.sqlite3"
    Store(str(healthy)).save(note())
    with pytest.raises(StoreError, match="passes SQLite's integrity check"):
        set_aside(healthy)
    broken = tmp_path / "broken.sqlite3"
    broken.write_bytes(b"not a database" * 200)
    holder = subprocess.Popen([sys.executable, "-c", LOCK_HOLDER, str(broken)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        with pytest.raises(StoreBusy, match="open in another process"):
            set_aside(broken)
        assert broken.exists()
    finally:
        holder.kill()
        holder.wait()
    assert set_aside(broken).exists() and not broken.exists()


LOCK_HOLDER = """
import fcntl, sys, time
handle = open(sys.argv[1], "rb")
fcntl.lockf(handle, fcntl.LOCK_SH, 1, 100)
print("locked", flush=True)
time.sleep(120)
"""


def test_a_save_confirmed_between_plan_and_apply_is_not_overwritten(db_url):
    store = Store(db_url)
    store.save(note(guid="g"))
    incoming = [Annotation(**{**store.get("ner", "g", "bert-crf", "지민").__dict__, "tags": ["missed"], "updated_at": "2030-01-01T00:00:00+00:00"})]
    plan = store.plan_import(incoming)
    assert len(plan.updated) == 1
    mine = store.get("ner", "g", "bert-crf", "지민")
    mine.tags = ["spurious"]
    confirmed = store.save(mine, expected_version=mine.version)  # the app confirmed this save to its user
    store.apply_import(plan)
    # The version moved, so the import was planned again against the confirmed save; its record (2030) is still the
    # newer one and updates it: a write that went through the same check as a save, on top of the save.
    stored = store.get("ner", "g", "bert-crf", "지민")
    assert plan.replanned == 1
    assert stored.version == confirmed.version + 1 and stored.tags == ["missed"]


def test_an_older_import_after_a_confirmed_save_becomes_a_conflict(db_url):
    store = Store(db_url)
    store.save(note(guid="g"))
    old = Annotation(**{**store.get("ner", "g", "bert-crf", "지민").__dict__, "tags": ["missed"]})
    old.updated_at = store.get("ner", "g", "bert-crf", "지민").updated_at  # as new as the stored one: planned as an update
    plan = store.plan_import([old])
    assert len(plan.updated) == 1
    mine = store.get("ner", "g", "bert-crf", "지민")
    mine.tags = ["spurious"]
    store.save(mine, expected_version=mine.version)
    assert store.apply_import(plan) == 0
    assert store.get("ner", "g", "bert-crf", "지민").tags == ["spurious"] and len(plan.conflicting) == 1


def test_two_imports_planned_together_do_not_overwrite_each_other(db_url):
    store = Store(db_url)
    newer = [note(guid=f"g{k}", tags=("missed",)) for k in range(20)]
    older = [note(guid=f"g{k}", tags=("spurious",)) for k in range(20)]
    for item in newer:
        item.updated_at = "2030-01-01T00:00:00+00:00"
    for item in older:
        item.updated_at = "2020-01-01T00:00:00+00:00"
    first, second = store.plan_import(newer), store.plan_import(older)
    assert len(first.added) == len(second.added) == 20
    store.apply_import(first)
    assert store.apply_import(second) == 0 and len(second.conflicting) == 20
    assert {tuple(a.tags) for a in store.find()} == {("missed",)}


def _importer(url: str, tags: str, stamp: str, queue) -> None:
    store = Store(url)
    items = [note(guid=f"g{k}", tags=(tags,)) for k in range(60)]
    for item in items:
        item.updated_at = stamp
    try:
        store.apply_import(store.plan_import(items))
        queue.put("ok")
    except Exception as err:  # noqa: BLE001 - reported to the test
        queue.put(f"{type(err).__name__}: {err}")


@pytest.mark.slow
def test_two_concurrent_imports_neither_crash_nor_overwrite_the_newer(db_url):
    Store(db_url)
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    workers = [context.Process(target=_importer, args=(db_url, tags, stamp, queue))
               for tags, stamp in (("missed", "2030-01-01T00:00:00+00:00"), ("spurious", "2020-01-01T00:00:00+00:00"))]
    for process in workers:
        process.start()
    outcomes = [queue.get(timeout=240) for _ in workers]
    for process in workers:
        process.join(timeout=60)
    assert outcomes == ["ok", "ok"]
    assert {tuple(a.tags) for a in Store(db_url).find()} == {("missed",)}


@pytest.mark.parametrize("change, reason", [
    ({"guid": "g" * 201}, "guid is 201"),
    ({"annotator": "a" * 101}, "annotator is 101"),
    ({"run": "r\x00un"}, "NUL"),
    ({"note": "bad \ud800 surrogate"}, "surrogate"),
    ({"tags": ["t" * 101]}, "a tag is 101"),
    ({"turn": 2**40}, "turn must be"),
    ({"turn": -3}, "turn must be"),
    ({"updated_at": "zzz"}, "ISO 8601"),
    ({"annotator": "  "}, "annotator is empty"),
])
def test_both_backends_refuse_the_same_records_before_writing(db_url, change, reason):
    store = Store(db_url)
    item = Annotation(**{**note().__dict__, **change})
    with pytest.raises(InvalidRecord, match=reason):
        store.save(item)
    with pytest.raises(InvalidRecord, match=reason):
        store.plan_import([Annotation(**{**note().__dict__, **change})])
    assert store.find() == []


def test_an_import_file_with_bad_records_lists_them_and_keeps_the_rest(db_url):
    lines = [
        {"task": "ner", "guid": "ok", "run": "r", "annotator": "a", "updated_at": "2024-05-01T12:00:00"},
        {"task": "ner", "guid": "late", "run": "r", "annotator": "a", "updated_at": "zzz"},
        {"task": "ner", "guid": "x" * 300, "run": "r", "annotator": "a"},
        {"task": "ner", "guid": "nul", "run": "r\u0000", "annotator": "a"},
        {"task": "ner", "guid": "t", "run": "r", "annotator": "a", "turn": 1e300},
        {"task": "ner", "guid": {"a": 1}, "run": "r", "annotator": "a"},
    ]
    items, problems = parse("\n".join(json.dumps(r) for r in lines).encode("utf-8"), "notes.jsonl")
    assert [i.guid for i in items] == ["ok"] and items[0].updated_at == "2024-05-01T12:00:00.000+00:00"
    assert [p.line for p in problems] == [2, 3, 4, 5, 6]
    store = Store(db_url)
    store.apply_import(store.plan_import(items))
    assert [a.guid for a in store.find()] == ["ok"]


def test_a_read_only_database_is_read_and_says_why_a_save_fails(tmp_path):
    """Read-only here (SQLite's own read-only mode: file permissions do not bind root, who runs CI) is neither busy nor corrupt."""
    path = tmp_path / "annotations.sqlite3"
    Store(str(path)).save(note())
    read_only = Store(f"sqlite:///file:{path}?mode=ro&uri=true")
    assert [a.guid for a in read_only.find()] == ["klue-ner-v1_dev_00001-nsmc"]
    with pytest.raises(StoreUnavailable, match="read-only here") as refused:
        read_only.save(note(guid="other"))
    assert "KLUE_VIZ_DB" in str(refused.value) and not isinstance(refused.value, (StoreBusy, StoreCorrupt))
    assert [a.guid for a in Store(str(path)).find()] == ["klue-ner-v1_dev_00001-nsmc"]
