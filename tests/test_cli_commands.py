"""The command line's layout (klue_viz/cli/main.py): every command the parser offers has a row in the command table
and the other way round, in the order `--help` listed them before the commands were split into group modules; and
each group module imports only `common` of the CLI, so the groups stay independent of each other and of `main`."""

from __future__ import annotations

import ast
import re

import pytest

from klue_viz.cli.main import COMMANDS, main
from tests.conftest import REPO

#: `klue-viz --help`'s list of commands, as written by hand from the CLI before the split (commit 4041ba4).
LISTED = ["evaluate", "report", "annotations", "slices", "suspects", "errors", "compare", "gate", "gold", "runs", "probe"]


def test_every_command_the_parser_offers_has_a_handler_in_the_table(capsys):
    with pytest.raises(SystemExit) as done:
        main(["--help"])
    assert done.value.code == 0
    offered = re.search(r"\{([a-z,]+)\}", capsys.readouterr().out)
    assert offered is not None
    assert offered.group(1).split(",") == LISTED
    assert list(COMMANDS) == LISTED


def cli_modules_imported(path) -> set[str]:
    """The modules of klue_viz.cli a file imports: `from klue_viz.cli import x` names klue_viz.cli.x."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module == "klue_viz.cli":
            found |= {f"klue_viz.cli.{alias.name}" for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("klue_viz.cli."):
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names if alias.name.startswith("klue_viz.cli")}
    return found


def test_a_group_module_imports_no_other_part_of_the_command_line_but_common():
    groups = [p for p in sorted((REPO / "klue_viz" / "cli").glob("*.py")) if p.stem not in {"__init__", "main", "common"}]
    assert [p.stem for p in groups] == ["annotations", "compare", "discovery", "evaluate", "gold", "probes", "report", "runs"]
    for path in groups:
        assert cli_modules_imported(path) <= {"klue_viz.cli.common"}, path.name
    assert cli_modules_imported(REPO / "klue_viz" / "cli" / "common.py") == set()
