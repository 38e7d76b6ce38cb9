"""Reads klue_viz's import graph from the source (every import: module level, inside functions, under
TYPE_CHECKING) and prints its cycles at two levels, modules and parts, plus the function-local imports.

A part is a floor package (core/, scoring/, tasks/, ui/, ...) or a top-level module. The walk is
the one in the team's before-stop hook; tests/test_layers.py asserts what this script prints.
Run: python scripts/import_graph.py [package-dir]
"""

from __future__ import annotations

import ast
import sys
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class ImportGraph:
    """Module -> imported klue_viz modules, and the function-local imports found on the way."""

    edges: dict[str, set[str]]
    local_imports: list[str] = field(default_factory=list)  # "module:line"
    type_checking_imports: list[str] = field(default_factory=list)


def module_names(root: Path) -> dict[str, Path]:
    """Dotted module name -> file, for every .py file under the package directory `root`."""
    names = {}
    for path in sorted(root.rglob("*.py")):
        dotted = ".".join(path.relative_to(root.parent).with_suffix("").parts)
        names[dotted.removesuffix(".__init__")] = path
    return names


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def read_graph(root: Path) -> ImportGraph:
    """The import graph of the package at `root`, counting imports wherever they stand."""
    modules = module_names(root)
    graph = ImportGraph({m: set() for m in modules})
    for module, path in modules.items():
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        tree = ast.parse(path.read_text(encoding="utf-8"))
        parents: dict[ast.AST, ast.AST] = {}
        for node in ast.walk(tree):
            for child in ast.iter_child_nodes(node):
                parents[child] = node
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = package.split(".")
                    parts = parts[: len(parts) - (node.level - 1)]
                    base = ".".join(parts + ([base] if base else []))
                names = [base] + [f"{base}.{a.name}" for a in node.names]
            else:
                continue
            up = parents.get(node)
            while up is not None:
                if isinstance(up, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    graph.local_imports.append(f"{module}:{node.lineno}")
                    break
                if isinstance(up, ast.If) and _is_type_checking(up.test):
                    graph.type_checking_imports.append(f"{module}:{node.lineno}")
                    break
                up = parents.get(up)
            for name in names:
                while name and name not in modules:
                    name = name.rpartition(".")[0]
                if name and name != module:
                    graph.edges[module].add(name)
    return graph


def part_of(module: str) -> str:
    """klue_viz.tasks.ner -> klue_viz.tasks; klue_viz.scoring.evaluate -> klue_viz.scoring."""
    return ".".join(module.split(".")[:2])


def part_graph(graph: ImportGraph) -> dict[str, set[str]]:
    """The graph with each part (subpackage or top-level module) as one node."""
    parts: dict[str, set[str]] = {}
    for module, targets in graph.edges.items():
        here = part_of(module)
        parts.setdefault(here, set()).update(part_of(t) for t in targets if part_of(t) != here)
    return parts


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one node (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(edges.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return sorted(found)


def main() -> None:
    """Print the cycles at both levels and the function-local imports."""
    root = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent / "klue_viz")
    graph = read_graph(root)
    module_cycles, part_cycles = cycles(graph.edges), cycles(part_graph(graph))
    print(f"modules: {len(graph.edges)}, edges: {sum(map(len, graph.edges.values()))}")
    print(f"module-level cycles: {len(module_cycles)}")
    for c in module_cycles:
        print("  " + " <-> ".join(c))
    print(f"part-level cycles: {len(part_cycles)}")
    for c in part_cycles:
        print("  " + " <-> ".join(c))
    print(f"function-local imports: {len(graph.local_imports)}")
    for where in graph.local_imports:
        print("  " + where)
    print(f"imports under TYPE_CHECKING: {len(graph.type_checking_imports)}")


if __name__ == "__main__":
    main()
