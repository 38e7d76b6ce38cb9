"""The package's layering, as CI checks it: import-linter's contracts (pyproject.toml [tool.importlinter]) and
no import cycle at module or part level, counting every import (function-local and under TYPE_CHECKING too)."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

spec = importlib.util.spec_from_file_location("import_graph", REPO / "scripts" / "import_graph.py")
assert spec is not None and spec.loader is not None
import_graph = importlib.util.module_from_spec(spec)
sys.modules["import_graph"] = import_graph  # dataclasses look their module up there
spec.loader.exec_module(import_graph)


def test_the_import_contracts_hold():
    lint = Path(sys.executable).with_name("lint-imports")
    done = subprocess.run([str(lint), "--no-cache"], cwd=REPO, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 broken" in done.stdout and "6 kept" in done.stdout, done.stdout


@pytest.fixture(scope="module")
def package_graph() -> import_graph.ImportGraph:
    """The package's import graph, read once for the tests below (parsing every module takes over a CPU second)."""
    return import_graph.read_graph(REPO / "klue_viz")


def test_no_import_cycle_between_modules_or_parts(package_graph):
    assert import_graph.cycles(package_graph.edges) == []
    assert import_graph.cycles(import_graph.part_graph(package_graph)) == []


def test_no_function_local_imports(package_graph):
    assert package_graph.local_imports == []


@pytest.mark.slow
def test_the_walker_sees_a_cycle_hidden_in_a_function_or_under_type_checking(tmp_path):
    package = tmp_path / "klue_viz"
    shutil.copytree(REPO / "klue_viz", package, ignore=shutil.ignore_patterns("__pycache__", "demo"))
    metrics = package / "metrics.py"
    metrics.write_text(metrics.read_text(encoding="utf-8") + "\n\ndef _hidden():\n    from klue_viz.tasks import TASKS\n", encoding="utf-8")
    graph = import_graph.read_graph(package)
    assert graph.local_imports == ["klue_viz.metrics:" + str(len(metrics.read_text(encoding="utf-8").splitlines()))]
    assert any({"klue_viz.metrics", "klue_viz.tasks", "klue_viz.tasks.base"} <= set(c) for c in import_graph.cycles(graph.edges))
    assert any("klue_viz.metrics" in c and "klue_viz.tasks" in c for c in import_graph.cycles(import_graph.part_graph(graph)))

    results = package / "results.py"
    results.write_text(results.read_text(encoding="utf-8").replace("if TYPE_CHECKING:\n", "if TYPE_CHECKING:\n    from klue_viz.evaluate import Gold\n", 1),
                       encoding="utf-8")
    part_cycles = import_graph.cycles(import_graph.part_graph(import_graph.read_graph(package)))
    assert any("klue_viz.results" in c and "klue_viz.evaluate" in c for c in part_cycles)
