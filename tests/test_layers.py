"""The package's layering, as CI checks it: import-linter's contracts (pyproject.toml [tool.importlinter]) and
no import cycle at module or part level, counting every import (function-local and under TYPE_CHECKING too)."""

from __future__ import annotations

import ast
import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import tomllib

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
    assert "0 broken" in done.stdout and "4 kept" in done.stdout, done.stdout


def test_the_floors_are_folders_each_saying_what_it_may_import():
    """At most three plain modules beside the floor packages; the layers contract names packages, at most 14; each
    package's docstring says what it may import (docs/architecture.md)."""
    root = REPO / "klue_viz"
    plain = sorted(p.name for p in root.glob("*.py"))
    assert len(plain) <= 3, plain
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    layers = next(c for c in config["tool"]["importlinter"]["contracts"] if c["id"] == "layers")["layers"]
    names = [name.strip() for layer in layers for name in layer.split("|")]
    assert len(names) <= 14, names
    packages = sorted(p.parent.name for p in root.glob("*/__init__.py"))
    assert sorted(names) == packages
    for package in packages:
        doc = ast.get_docstring(ast.parse((root / package / "__init__.py").read_text(encoding="utf-8"))) or ""
        assert "May import:" in doc, package


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
    metrics = package / "metrics" / "official.py"
    metrics.write_text(metrics.read_text(encoding="utf-8") + "\n\ndef _hidden():\n    from klue_viz.tasks import TASKS\n", encoding="utf-8")
    graph = import_graph.read_graph(package)
    assert graph.local_imports == ["klue_viz.metrics.official:" + str(len(metrics.read_text(encoding="utf-8").splitlines()))]
    assert any({"klue_viz.metrics.official", "klue_viz.tasks", "klue_viz.tasks.base"} <= set(c) for c in import_graph.cycles(graph.edges))
    assert any("klue_viz.metrics" in c and "klue_viz.tasks" in c for c in import_graph.cycles(import_graph.part_graph(graph)))

    results = package / "core" / "results.py"
    results.write_text(results.read_text(encoding="utf-8").replace("if TYPE_CHECKING:\n", "if TYPE_CHECKING:\n    from klue_viz.scoring.evaluate import Gold\n", 1),
                       encoding="utf-8")
    part_cycles = import_graph.cycles(import_graph.part_graph(import_graph.read_graph(package)))
    assert any("klue_viz.core" in c and "klue_viz.scoring" in c for c in part_cycles)
