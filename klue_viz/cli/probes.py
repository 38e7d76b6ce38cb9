"""`klue-viz probe make` and `klue-viz probe score`: the Korean behavioural test suites (klue_viz.probes) from the command line."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from klue_viz.core.lazy import lazy_module
from klue_viz.core.problems import InputError
from klue_viz.drawing.markup import visible
from klue_viz.probes.catalogue import TESTS
from klue_viz.reading.records import read_bytes
from klue_viz.scoring.evaluate import gold_file
from klue_viz.tasks import TASKS, get_task

if TYPE_CHECKING:
    from klue_viz.probes import lm_eval, make, score
else:  # the analyzer and the suites load only when a probe command runs
    make = lazy_module("klue_viz.probes.make")
    score = lazy_module("klue_viz.probes.score")
    lm_eval = lazy_module("klue_viz.probes.lm_eval")


#: How many problems of a prediction file are printed.
SHOWN_PROBLEMS = 10


def say(text: object, error: bool = False) -> None:
    print(visible(text).replace("\n", "\\n") if error else visible(text), file=sys.stderr if error else sys.stdout)


def test_list(text: str) -> list[str]:
    """`--tests a,b`: test ids, comma-separated."""
    tests = [t.strip() for t in text.split(",") if t.strip()]
    if not tests:
        raise argparse.ArgumentTypeError("give one or more test ids, comma-separated (e.g. name-swap,spacing)")
    return tests


def count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, found {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def add_commands(commands: argparse._SubParsersAction) -> None:
    probe = commands.add_parser("probe", help="Korean behavioural test suites: make perturbed dev sets, score a model's behaviour on them")
    actions = probe.add_subparsers(dest="action", required=True)
    made = actions.add_parser("make", help="write perturbed copies of a dev set (official format), a manifest and a README")
    made.add_argument("--task", required=True, choices=list(TASKS))
    made.add_argument("--gold", required=True, help="the official dev file (or its klue_benchmark/ folder)")
    made.add_argument("--out", required=True, help="the suite's folder (made if missing)")
    made.add_argument("--tests", type=test_list, help=f"comma-separated test ids, of {', '.join(TESTS)} (default: every test of "
                      "the task; docs/probes.md says which apply to which task)")
    made.add_argument("--per-test", type=count, metavar="N", help="at most N cases per test (default: every example that allows it)")
    made.add_argument("--seed", type=int, default=0, help="which examples and which edits are drawn (default 0)")
    made.add_argument("--format", choices=["files", "lm-eval"], default="files",
                      help="lm-eval: also write an lm-evaluation-harness task YAML and JSONL over the perturbed and source examples")
    scored = actions.add_parser("score", help="failure rates per test of one or more runs on a suite")
    scored.add_argument("--task", required=True, choices=list(TASKS))
    scored.add_argument("--probes", required=True, help="the suite's folder (written by `probe make`)")
    scored.add_argument("--pred", required=True, action="append", help="a run's predictions on the suite (repeat for several runs)")
    scored.add_argument("--source-pred", action="append",
                        help="the same run's predictions on the dev set, for the source examples (repeat in --pred's order; "
                             "default: the sources' predictions from --pred)")
    scored.add_argument("--out", help="write {task, runs: [{run, tests: [...]}]} as JSON")


def make_command(args: argparse.Namespace) -> int:
    task = get_task(args.task)
    path = gold_file(task, Path(args.gold))
    text = read_bytes(path).decode("utf-8-sig")
    if args.format == "lm-eval" and (task.probe is None or task.probe.lm_eval is None):
        raise InputError(f"--format lm-eval: {task.facts.name} has no lm-evaluation-harness prompt yet; write the suite as files")
    suite = make.make_suite(task, text, str(path), args.tests, args.per_test, args.seed)
    out = Path(args.out)
    written = make.write_suite(task, suite, out)
    if args.format == "lm-eval":
        written += lm_eval.write_lm_eval(task, suite, out, make.source_examples(suite))
    for test in suite.tests:
        say(f"{test:>14}: {suite.made(test)} cases, {sum(suite.skipped[test].values())} skipped")
    for problem in suite.problems[:10]:
        say(f"gold problem: {problem}", error=True)
    say(f"wrote {', '.join(str(p) for p in written)}")
    return 0


def score_command(args: argparse.Namespace) -> int:
    task = get_task(args.task)
    probes = score.read_probe_set(task, args.probes)
    sources = args.source_pred or []
    if sources and len(sources) != len(args.pred):
        raise InputError(f"--source-pred: give one per --pred ({len(args.pred)}), in the same order; found {len(sources)}")
    runs = []
    for k, path in enumerate(args.pred):
        source = sources[k] if sources else None
        runs.append(score.score_run(probes, Path(path).stem, read_bytes(path), path,
                                    read_bytes(source) if source else None, source or ""))
    for run in runs:
        for problem in run.problems[:SHOWN_PROBLEMS]:
            say(f"{run.run}: problem: {problem}", error=True)
        if len(run.problems) > SHOWN_PROBLEMS:
            say(f"{run.run}: ... and {len(run.problems) - SHOWN_PROBLEMS} more problems", error=True)
    say(score.behaviour_table(runs))
    if args.out:
        Path(args.out).write_text(json.dumps(score.behaviour_payload(task, runs), ensure_ascii=False, indent=2), encoding="utf-8")
    return 0


def probe_command(args: argparse.Namespace) -> int:
    try:
        return make_command(args) if args.action == "make" else score_command(args)
    except (InputError, KeyError, OSError, UnicodeDecodeError) as err:
        say(f"klue-viz: {err.args[0] if isinstance(err, KeyError) else err}", error=True)
        return 2
