"""The command line's layout (klue_viz/cli/main.py): every command the parser offers has a row in the command table
and the other way round, in the order `--help` listed them before the commands were split into group modules; and
each group module imports only `common` of the CLI, so the groups stay independent of each other and of `main`."""

from __future__ import annotations

import ast
import re
import subprocess
import sys

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


def test_a_command_imports_and_builds_its_own_group_only_and_parses_as_the_whole_parser_does():
    """`klue-viz evaluate` (the CI path, issue 28's speed figure) neither imports nor builds the other groups' parsers;
    its help, and an error in its arguments, read as with every group's parser built."""
    code = ("import contextlib, io, sys\n"
            "from klue_viz.cli.main import build_parser\n"
            "def said(parser, words):\n"
            "    out = io.StringIO()\n"
            "    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):\n"
            "        try:\n"
            "            parser.parse_args(words)\n"
            "        except SystemExit as done:\n"
            "            out.write(f'exit {done.code}')\n"
            "    return out.getvalue()\n"
            "own = build_parser('evaluate')\n"
            "loaded = sorted(m for m in sys.modules if m.startswith('klue_viz.cli.') and m != 'klue_viz.cli.main')\n"
            "whole = build_parser()\n"
            "same = all(said(own, words) == said(whole, words) for words in "
            "(['evaluate', '--help'], ['evaluate', '--task', 'nerr'], ['evaluate', '--gold', 'g']))\n"
            "print(loaded, same)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=True)
    assert done.stdout.strip() == "['klue_viz.cli.common', 'klue_viz.cli.evaluate'] True"
