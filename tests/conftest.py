"""Shared test setup: the real KLUE dev sets beside the repo, a hub that fails at once, and the annotation database of
each test (SQLite, and PostgreSQL when KLUE_VIZ_TEST_PG names a server: one database per pytest-xdist worker)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest
import sqlalchemy as sa

from klue_viz.store import annotations as store_module
from klue_viz.store import schema

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("HF_HOME", tempfile.mkdtemp(prefix="klue-viz-hf-"))
# Annotations written by tests never reach the user's own database.
os.environ["KLUE_VIZ_DB"] = os.path.join(tempfile.mkdtemp(prefix="klue-viz-db-"), "annotations.sqlite3")

REPO = Path(__file__).resolve().parents[1]
#: The dev sets beside the clone; KLUE_VIZ_SHARED points elsewhere (mutmut runs the tests in a copy, mutants/).
SHARED = Path(os.environ.get("KLUE_VIZ_SHARED", REPO.parent / "shared" / "klue"))


def worker_database(url: str, worker: str) -> str:
    """The URL of this pytest-xdist worker's own database on the server of `url` (created when missing): the store
    tests drop and create the schema, so two workers on one database would pull it from under each other."""
    base, _, name = url.rpartition("/")
    if name.endswith(f"_{worker}"):  # a process the worker started (multiprocessing) imports this module again
        return url
    mine = f"{name}_{worker}"
    engine = sa.create_engine(store_module.database_url(url), isolation_level="AUTOCOMMIT")
    try:
        with engine.connect() as connection:
            if connection.execute(sa.text("SELECT 1 FROM pg_database WHERE datname = :name"), {"name": mine}).first() is None:
                connection.execute(sa.text(f'CREATE DATABASE "{mine}"'))
    finally:
        engine.dispose()
    return f"{base}/{mine}"


if os.environ.get("KLUE_VIZ_TEST_PG") and os.environ.get("PYTEST_XDIST_WORKER"):  # read below and by the test modules
    os.environ["KLUE_VIZ_TEST_PG"] = worker_database(os.environ["KLUE_VIZ_TEST_PG"], os.environ["PYTEST_XDIST_WORKER"])
PG_URL = os.environ.get("KLUE_VIZ_TEST_PG")
#: The store tests run on both; CI (CI=true) must have the server, a developer's run skips PostgreSQL without one.
BACKENDS = ["sqlite", pytest.param("postgresql", marks=pytest.mark.skipif(not PG_URL and not os.environ.get("CI"), reason="set KLUE_VIZ_TEST_PG (CI starts a server)"))]


def reset(url: str) -> None:
    """An empty annotation database: every table of the schema dropped (the store creates them again)."""
    engine = sa.create_engine(store_module.database_url(url))
    schema.metadata.drop_all(engine)
    engine.dispose()


@pytest.fixture(params=BACKENDS)
def db_url(request, tmp_path) -> str:
    """An empty annotation database, once on SQLite (a file of the test's own) and once on PostgreSQL."""
    if request.param == "sqlite":
        return str(tmp_path / "annotations.sqlite3")
    assert PG_URL, "CI must provide KLUE_VIZ_TEST_PG"
    reset(PG_URL)
    return PG_URL


@pytest.fixture(scope="session")
def shared() -> Path:
    assert SHARED.is_dir(), f"the KLUE dev sets are expected in {SHARED} (a copy of shared/ beside the clone)"
    return SHARED


def jsonl(records) -> bytes:
    import json

    return "\n".join(json.dumps(r, ensure_ascii=False) for r in records).encode("utf-8")


@pytest.fixture(autouse=True)
def own_database(tmp_path, monkeypatch):
    """Each test its own database: runs and annotations stored by one test never show in another."""
    monkeypatch.setenv("KLUE_VIZ_DB", str(tmp_path / "klue-viz.sqlite3"))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Keep each phase's report on the test item, so that a fixture can tell whether its test failed."""
    outcome = yield
    report = outcome.get_result()
    setattr(item, f"report_{report.when}", report)
