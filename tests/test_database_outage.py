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
import sqlite3
import subprocess
from pathlib import Path
from urllib.parse import urlparse

import pytest
import sqlalchemy as sa

from klue_viz.store.annotations import Store
from klue_viz.ui.home import PAGE_FILES
from tests.conftest import REPO
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
