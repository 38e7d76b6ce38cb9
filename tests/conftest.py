"""Shared test setup: the real KLUE dev sets beside the repo, and a hub that fails at once."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("HF_HOME", tempfile.mkdtemp(prefix="klue-viz-hf-"))
# Annotations written by tests never reach the user's own database.
os.environ["KLUE_VIZ_DB"] = os.path.join(tempfile.mkdtemp(prefix="klue-viz-db-"), "annotations.sqlite3")

REPO = Path(__file__).resolve().parents[1]
#: The dev sets beside the clone; KLUE_VIZ_SHARED points elsewhere (mutmut runs the tests in a copy, mutants/).
SHARED = Path(os.environ.get("KLUE_VIZ_SHARED", REPO.parent / "shared" / "klue"))


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
