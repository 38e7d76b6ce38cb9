"""The suite runs in two pytest-xdist processes (README, .ci/run): the same command in both places, a database of each
worker's own on PostgreSQL, and a failure that reads as it does in one process."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from tests.conftest import PG_URL, REPO

XDIST = "-n 2 --dist loadfile"


def test_the_readme_and_ci_run_the_suite_in_the_same_two_processes():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    ci = (REPO / ".ci/run").read_text(encoding="utf-8")
    assert re.search(rf"^python -m pytest {XDIST}$", ci, re.M), "CI runs the README's command"
    assert f".venv/bin/python -m pytest {XDIST}\n" in readme
    assert f'.venv/bin/python -m pytest {XDIST} -m "not slow and not browser"' in readme


@pytest.mark.skipif(not (PG_URL and os.environ.get("PYTEST_XDIST_WORKER")), reason="a PostgreSQL server and a pytest-xdist worker")
def test_each_worker_has_a_postgresql_database_of_its_own():
    worker = os.environ["PYTEST_XDIST_WORKER"]
    assert PG_URL is not None and PG_URL.endswith(f"_{worker}"), PG_URL


@pytest.mark.slow
def test_a_failure_in_a_worker_names_the_test_and_the_values(tmp_path):
    (tmp_path / "test_sample.py").write_text(
        "def test_passes():\n    assert 1 + 1 == 2\n\n\ndef test_fails():\n    found = 41\n    assert found == 42\n", encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "pytest", *XDIST.split(), "-p", "no:cacheprovider", str(tmp_path / "test_sample.py")],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "FAILED test_sample.py::test_fails - assert 41 == 42" in done.stdout, done.stdout
    assert re.search(r"^=+ 1 failed, 1 passed in ", done.stdout, re.M), done.stdout
