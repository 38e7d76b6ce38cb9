"""The annotation database going away (issue 19, item 3): a PostgreSQL server that stops, a full disk.

The pages keep what needs no database (the demo runs), say once and plainly that the database is
unreachable (no host or port on the page), keep a typed note until a save succeeds, and recover when
the server returns. The PostgreSQL test starts a private server of its own (.ci/postgres.sh) so that
stopping it touches no other test.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import sqlite3
import subprocess
import threading
from pathlib import Path
from urllib.parse import urlparse

import pytest
import sqlalchemy as sa

from klue_viz.store import annotations as store_module
from klue_viz.store.annotations import Store
from klue_viz.ui.home import PAGE_FILES
from tests.conftest import BACKENDS, REPO
from tests.test_annotations_app import first_form, open_as
from tests.test_app import plain

HAVE_PG = bool(list(Path("/usr/lib/postgresql").glob("*/bin/initdb"))) if Path("/usr/lib/postgresql").is_dir() else False


def everything_shown(at) -> str:
    texts = [e.value for kind in ("error", "warning", "info", "markdown", "caption", "success") for e in getattr(at, kind)]
    return "\n".join(plain(str(t)) for t in texts)


@pytest.fixture
def private_pg():
    """A PostgreSQL server of this test alone: (url, stop, start)."""
    if not HAVE_PG and not os.environ.get("CI"):
        pytest.skip("PostgreSQL (Debian's postgresql) is not installed")
    out = subprocess.run(["bash", "-c", "source .ci/postgres.sh start >/dev/null && echo $KLUE_VIZ_PG_DIR $KLUE_VIZ_TEST_PG"],
                         cwd=REPO, capture_output=True, text=True, check=True).stdout.split()
    folder, url = out[-2], out[-1]
    port = urlparse(url).port
    pg_bin = sorted(Path("/usr/lib/postgresql").glob("*/bin"))[-1]

    def ctl(*args: str) -> None:
        subprocess.run(["su", "postgres", "-c", " ".join([str(pg_bin / "pg_ctl"), "-D", f"{folder}/data", "-w", *args])],
                       check=True, capture_output=True)

    def stop() -> None:
        ctl("-m", "fast", "stop")

    def start() -> None:
        ctl("-l", f"{folder}/log", "-o", f"'-p {port} -k {folder} -c listen_addresses=127.0.0.1'", "start")

    try:
        yield url, stop, start
    finally:
        subprocess.run(["bash", ".ci/postgres.sh", "stop", folder], cwd=REPO, capture_output=True)
        shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.slow
def test_a_postgresql_outage_keeps_the_demo_the_typed_note_and_recovers(monkeypatch, private_pg):
    url, stop, start = private_pg
    port = str(urlparse(url).port)
    monkeypatch.setenv("KLUE_VIZ_DB", url)
    at = open_as("지민", PAGE_FILES["ynat"])
    runs_before = next(s for s in at.selectbox if s.label == "Run to inspect").options
    first_form(at)
    stop()
    at.run()
    assert not at.exception
    shown = everything_shown(at)
    assert not any("Something went wrong" in e.value for e in at.error)
    assert next(s for s in at.selectbox if s.label == "Run to inspect").options == runs_before, "the demo runs stay"
    assert "127.0.0.1" not in shown and port not in shown, "no internal address on the page"
    notices = [e.value for e in [*at.error, *at.warning] if "unreachable" in e.value]
    assert len(notices) == 1, notices
    note = next(t for t in at.text_area if t.label == "Note")
    note.set_value("서버가 멈췄을 때 쓴 메모")
    next(b for b in at.button if b.label == "Save").click().run()
    assert not at.exception
    assert any("Not saved" in e.value for e in at.error)
    assert next(t for t in at.text_area if t.label == "Note").value == "서버가 멈췄을 때 쓴 메모"
    home = open_as("지민")
    assert not home.exception and "127.0.0.1" not in everything_shown(home) and port not in everything_shown(home)
    start()
    next(b for b in at.button if b.label == "Save").click().run()
    assert not at.exception
    assert [a.note for a in Store(url).find(task="ynat")] == ["서버가 멈췄을 때 쓴 메모"]


@pytest.mark.slow
def test_a_full_disk_says_so_once_keeps_the_note_and_the_stored_runs(monkeypatch, tmp_path):
    path = tmp_path / "full.sqlite3"
    monkeypatch.setenv("KLUE_VIZ_DB", str(path))
    at = open_as("지민", PAGE_FILES["ynat"])
    first_form(at)
    full = {"on": True}

    def disk_full(conn, cursor, statement, parameters, context, executemany):
        if full["on"] and re.match(r"\s*(INSERT|UPDATE|DELETE)", statement, re.I):
            raise sqlite3.OperationalError("database or disk is full")

    sa.event.listen(sa.engine.Engine, "before_cursor_execute", disk_full)
    try:
        note = next(t for t in at.text_area if t.label == "Note")
        note.set_value("디스크가 찼을 때 쓴 메모")
        next(b for b in at.button if b.label == "Save").click().run()
        assert not at.exception
        errors = [plain(e.value) for e in at.error]
        assert sum("disk" in e and "full" in e for e in errors) == 1, errors
        assert next(t for t in at.text_area if t.label == "Note").value == "디스크가 찼을 때 쓴 메모"
        full["on"] = False
        next(b for b in at.button if b.label == "Save").click().run()
    finally:
        sa.event.remove(sa.engine.Engine, "before_cursor_execute", disk_full)
    assert [a.note for a in Store(str(path)).find(task="ynat")] == ["디스크가 찼을 때 쓴 메모"]


# ---- a server that accepts connections and never answers (issue 29 item 7) ----------------------

@pytest.fixture
def silent_server():
    """A TCP port that accepts connections and never answers (a server hung or behind a dropping firewall): each
    connection waits the connect timeout. Yields its PostgreSQL URL and the list of connections it was sent."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(listener.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    store_module.forget_outage()
    try:
        yield f"postgresql://klue@127.0.0.1:{listener.getsockname()[1]}/klue", held
    finally:
        stop.set()
        thread.join(timeout=5)
        for connection in held:
            connection.close()
        listener.close()
        store_module.forget_outage()


def test_an_unreachable_database_is_remembered_and_each_store_fails_at_once(silent_server, monkeypatch):
    url, held = silent_server
    monkeypatch.setattr(store_module, "CONNECT_TIMEOUT", 2)
    with pytest.raises(store_module.StoreUnavailable, match="unreachable"):
        Store(url)
    assert len(held) == 1
    for _ in range(5):  # the other stores of the page, the next pages, other sessions of the server
        with pytest.raises(store_module.StoreUnavailable, match="unreachable"):
            Store(url)
    assert len(held) == 1, "no connection while the outage is remembered"
    assert 0 < store_module.outage_left(store_module.database_url(url)) <= store_module.OUTAGE_SECONDS
    monkeypatch.setattr(store_module, "OUTAGE_SECONDS", 0.0)  # the while is over: tried again
    with pytest.raises(store_module.StoreUnavailable):
        Store(url)
    assert len(held) == 2


@pytest.mark.slow
def test_page_loads_with_the_database_down_wait_once_and_say_so(silent_server, monkeypatch):
    url, held = silent_server
    monkeypatch.setattr(store_module, "CONNECT_TIMEOUT", 2)
    monkeypatch.setenv("KLUE_VIZ_DB", url)
    at = open_as("지민", PAGE_FILES["ynat"])
    tried = len(held)
    assert tried >= 1
    for _ in range(2):  # reloads
        at.run()
        assert not at.exception
        assert len(held) == tried, "a page load while the outage is remembered waits for no connection"
        assert next(s for s in at.selectbox if s.label == "Run to inspect").options, "the demo runs and their metrics stay"
        notices = [e.value for e in [*at.error, *at.warning] if "unreachable" in e.value]
        assert len(notices) == 1 and "tries it again every 30 s" in plain(notices[0]), notices
        assert str(urlparse(url).port) not in everything_shown(at)


@pytest.mark.parametrize("db_url", [BACKENDS[1]], indirect=True)
def test_a_save_is_tried_during_a_remembered_outage_and_ends_it(db_url):
    store = Store(db_url)
    url = store_module.database_url(db_url)
    store_module.remember_outage(url)
    try:
        with pytest.raises(store_module.StoreUnavailable):
            Store(db_url)  # a page's reads: at once
        store.engine.dispose()  # no pooled connection left: the save must connect
        saved = store.save(store_module.Annotation("ynat", "g1", "run", "지민", note="저장"))
        assert saved.version == 1 and store_module.outage_left(url) == 0  # the server answered: the outage is over
        assert [a.note for a in Store(db_url).find()] == ["저장"]
    finally:
        store_module.forget_outage()
