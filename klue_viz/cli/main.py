"""`klue-viz`: the parser of every command, assembled from the command groups, and the table that runs each command.

Each group is a module of `klue_viz.cli` with `add_commands(subparsers)` and its handlers: `evaluate`, `report`,
`annotations`, `discovery` (slices, suspects, errors), `compare` (compare, gate), `gold`, `runs` and `probes`;
what two groups share (terminal escaping, --out checks, argument types) is `klue_viz.cli.common`. A new command
is its group's `add_commands` plus one row of `COMMANDS` (tests/test_cli_commands.py checks they match).

No `from __future__ import annotations` here: its name would hide the `annotations` command group."""

import argparse
import gc
import os
import sys
from types import ModuleType
from typing import TYPE_CHECKING

from klue_viz.core.lazy import lazy_module

if TYPE_CHECKING:
    from klue_viz.cli import annotations, compare, discovery, evaluate, gold, probes, report, runs
else:  # a command imports its own group only: `klue-viz evaluate` neither imports the others nor builds their parsers
    annotations = lazy_module("klue_viz.cli.annotations")
    compare = lazy_module("klue_viz.cli.compare")
    discovery = lazy_module("klue_viz.cli.discovery")
    evaluate = lazy_module("klue_viz.cli.evaluate")
    gold = lazy_module("klue_viz.cli.gold")
    probes = lazy_module("klue_viz.cli.probes")
    report = lazy_module("klue_viz.cli.report")
    runs = lazy_module("klue_viz.cli.runs")

#: The command groups, in the order `klue-viz --help` lists their commands.
GROUPS = (evaluate, report, annotations, discovery, compare, gold, runs, probes)

#: Each command's group and the name of its handler there (the parsed arguments in, the exit code out).
COMMANDS: dict[str, tuple[ModuleType, str]] = {
    "evaluate": (evaluate, "evaluate_command"),
    "report": (report, "report_command"),
    "annotations": (annotations, "annotations_command"),
    "slices": (discovery, "slices_command"),
    "suspects": (discovery, "suspects_command"),
    "errors": (discovery, "errors_command"),
    "compare": (compare, "compare_command"),
    "gate": (compare, "gate_command"),
    "gold": (gold, "gold_command"),
    "runs": (runs, "runs_command"),
    "probe": (probes, "probe_command"),
}


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The `klue-viz` parser: one sub-parser per command, each added by its group; given a known `command` (the first
    word of the command line), only its group's sub-parsers, which parse that command line the same way (its usage,
    help and errors are its sub-parser's) without importing or building the others."""
    parser = argparse.ArgumentParser(prog="klue-viz", description="Evaluation and error analysis for the KLUE benchmark")
    commands = parser.add_subparsers(dest="command", required=True)
    for group in (COMMANDS[command][0],) if command in COMMANDS else GROUPS:
        group.add_commands(commands)
    return parser


def main(argv: list[str] | None = None) -> int:
    words = sys.argv[1:] if argv is None else argv
    args = build_parser(words[0] if words else None).parse_args(argv)
    if argv is None and args.command == "evaluate":
        # A process of its own that reads, scores and exits: its millions of small containers hold no cycles, and the
        # collector's passes over them (as reading ends, klue_viz.reading.records.bulk_reading) cost about a tenth of
        # the run. A call from Python (argv given) leaves the caller's collector alone.
        gc.disable()
    try:
        group, handler = COMMANDS[args.command]
        code = getattr(group, handler)(args)
        sys.stdout.flush()  # here, where a reader that left is caught, not at exit
        return code
    except BrokenPipeError:
        # `klue-viz runs list | head`: the reader has what it wanted. Python's advice: point stdout at devnull so the
        # interpreter's own flush at exit does not fail again; 141 is what a tool killed by SIGPIPE exits with.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141


if __name__ == "__main__":
    sys.exit(main())
