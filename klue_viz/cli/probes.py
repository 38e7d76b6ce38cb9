"""`klue-viz probe make` and `klue-viz probe score`: the Korean behavioural test suites (klue_viz.probes) from the command line."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from klue_viz.core.lazy import lazy_module
from klue_viz.core.problems import InputError
from klue_viz.drawing.markup import visible
from klue_viz.probes.catalogue import DEFAULT_NAME_KINDS, NAME_KINDS, TESTS
from klue_viz.reading.records import read_bytes
from klue_viz.scoring.evaluate import gold_file, official_file
from klue_viz.tasks import TASKS, get_task
from klue_viz.tasks.base import Task

if TYPE_CHECKING:
    from klue_viz.probes import lm_eval, make, score
    from klue_viz.store import annotations as store
    from klue_viz.store import probe_runs, runs
else:  # the analyzer, the suites and the database load only when a probe command needs them
    make = lazy_module("klue_viz.probes.make")
    score = lazy_module("klue_viz.probes.score")
    lm_eval = lazy_module("klue_viz.probes.lm_eval")
    store = lazy_module("klue_viz.store.annotations")
    probe_runs = lazy_module("klue_viz.store.probe_runs")
    runs = lazy_module("klue_viz.store.runs")


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


def kind_list(text: str) -> list[str]:
    """`--name-kinds people,places`: the kinds of name name-swap swaps, comma-separated, each of NAME_KINDS."""
    kinds = [k.strip() for k in text.split(",") if k.strip()]
    wrong = [k for k in kinds if k not in NAME_KINDS]
    if wrong or not kinds:
        raise argparse.ArgumentTypeError(f"{', '.join(wrong) or 'nothing'}: give one or more of {', '.join(NAME_KINDS)}, comma-separated")
    return list(dict.fromkeys(kinds))


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
    made.add_argument("--names", action="append", metavar="PATH",
                      help="a data folder laid out like klue_benchmark/ (or an NER or RE dev file) whose gold names of people, places "
                           "and organisations also feed name-swap for NER and RE (repeatable; the folder --gold is in is always read)")
    made.add_argument("--name-kinds", type=kind_list, default=list(DEFAULT_NAME_KINDS), metavar="KINDS",
                      help=f"the kinds of name name-swap swaps, of {','.join(NAME_KINDS)} (default: people; place and "
                           "organisation swaps read natural in under 95%% of the readings, docs/probes.md)")
    made.add_argument("--format", choices=["files", "lm-eval"], default="files",
                      help="lm-eval: also write an lm-evaluation-harness task YAML and JSONL over the perturbed and source examples")
    scored = actions.add_parser("score", help="failure rates per test of one or more runs on a suite")
    scored.add_argument("--task", required=True, choices=list(TASKS))
    where = scored.add_mutually_exclusive_group(required=True)
    where.add_argument("--probes", help="the suite's folder (written by `probe make`)")
    where.add_argument("--suite", help="a suite stored with `klue-viz runs add --probes` (in the store KLUE_VIZ_DB names), by its name")
    scored.add_argument("--pred", action="append", help="a run's predictions on the suite (repeat for several runs; with --suite, "
                                                         "default: every run stored on it)")
    scored.add_argument("--source-pred", action="append",
                        help="the same run's predictions on the dev set, for the source examples (repeat in --pred's order; "
                             "default: the sources' predictions from --pred)")
    scored.add_argument("--out", help="write {task, runs: [{run, tests: [...]}]} as JSON")


#: The tasks whose gold names (typed spans) may feed another task's name-swap.
NAME_TASKS = ("ner", "re")


def name_sources(task: Task, gold: Path, extra: Sequence[str | Path] = ()) -> list[tuple[Task, str, str]]:
    """The gold files whose names join `task`'s name-swap pools: the NER and RE dev files of the data folder `gold` is in
    (its klue_benchmark/ folder) and of each `extra` folder, or an `extra` file itself when it is named like one of them;
    never `gold` itself. A demo-sized gold set has too few names for any to be near another in meaning (the RE demo's
    28 sentences make no swap alone); a real NER dev set beside it gives them (docs/probes.md)."""
    home = gold.parent.parent if gold.parent.name == task.facts.official_folder else gold.parent
    found: dict[Path, Task] = {}
    for place in (home, *(Path(p) for p in extra)):
        for name in NAME_TASKS:
            other = get_task(name)
            if place.is_file():
                if place.name.startswith(other.facts.official_folder):
                    found[place.resolve()] = other
            elif place.is_dir():
                path = official_file(other, place)
                if path is not None:
                    found[path.resolve()] = other
        if not place.exists():
            raise InputError(f"--names {place}: no such file or folder")
    found.pop(gold.resolve(), None)
    return [(other, read_bytes(path).decode("utf-8-sig"), str(path)) for path, other in found.items()]


def make_command(args: argparse.Namespace) -> int:
    task = get_task(args.task)
    path = gold_file(task, Path(args.gold))
    text = read_bytes(path).decode("utf-8-sig")
    if args.format == "lm-eval" and (task.probe is None or task.probe.lm_eval is None):
        raise InputError(f"--format lm-eval: {task.facts.name} has no lm-evaluation-harness prompt yet; write the suite as files")
    suite = make.make_suite(task, text, str(path), args.tests, args.per_test, args.seed, name_sources(task, path, args.names or ()),
                            args.name_kinds)
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
    if args.suite:
        return score_stored(task, args)
    if not args.pred:
        raise InputError("--pred: give the run's predictions on the suite (or --suite NAME for the runs stored on a stored suite)")
    probes = score.read_probe_set(task, args.probes)
    sources = args.source_pred or []
    if sources and len(sources) != len(args.pred):
        raise InputError(f"--source-pred: give one per --pred ({len(args.pred)}), in the same order; found {len(sources)}")
    behaviours = []
    for k, path in enumerate(args.pred):
        source = sources[k] if sources else None
        behaviours.append(score.score_run(probes, Path(path).stem, read_bytes(path), path,
                                          read_bytes(source) if source else None, source or ""))
    return report(task, probes, behaviours, args.out)


def score_stored(task: Task, args: argparse.Namespace) -> int:
    """`probe score --suite NAME`: the stored suite, and the runs stored on it (or the --pred files). A run's sources'
    predictions come from its own file, else --source-pred, else the ordinary stored run of the same name (its dev-set
    run), as `runs add --probes` and the Behaviour section take them."""
    database = store.Store()
    suites, stored_runs = probe_runs.SuiteStore(database), runs.RunStore(database)
    paths = score.suite_paths(task)
    found = suites.suite(task.facts.name, args.suite, paths["perturbed"], paths["sources"])
    if found is None:
        names = suites.suites(task.facts.name)
        raise InputError(f"--suite {args.suite}: no stored {task.facts.name.upper()} suite of that name"
                         + (f"; stored: {', '.join(names)}" if names else "; store one with `klue-viz runs add --probes DIR`"))
    probes = score.probe_set_from_files(task, found.files, f"stored suite {args.suite}")
    given = [(Path(path).stem, read_bytes(path), path) for path in args.pred or []]
    if not given:
        given = [(run.name, suites.data(run.sha256), run.file_name) for run in suites.runs(task.facts.name, args.suite)]
    if not given:
        raise InputError(f"--suite {args.suite}: no run is stored on it; add one with `klue-viz runs add --probes DIR PRED`")
    sources = args.source_pred or []
    if sources and len(sources) != len(given):
        raise InputError(f"--source-pred: give one per run ({len(given)}), in the same order; found {len(sources)}")
    behaviours = []
    for k, (name, data, file_name) in enumerate(given):
        if sources:
            source, source_name = read_bytes(sources[k]), sources[k]
        elif score.holds_sources(probes, data, file_name):
            source, source_name = None, ""
        else:
            dev = stored_runs.get(task.facts.name, name)
            source, source_name = (stored_runs.data(dev.sha256), f"stored run {dev.name}") if dev is not None else (None, "")
        behaviours.append(score.score_run(probes, name, data, file_name, source, source_name))
    return report(task, probes, behaviours, args.out)


def report(task: Task, probes: score.ProbeSet, behaviours: list[score.RunBehaviour], out: str | None) -> int:
    """The suite's problems, those of each run, the runs × tests table and, with --out, its JSON."""
    for problem in probes.problems[:SHOWN_PROBLEMS]:
        say(f"suite: problem: {problem}", error=True)
    for run in behaviours:
        for problem in run.problems[:SHOWN_PROBLEMS]:
            say(f"{run.run}: problem: {problem}", error=True)
        if len(run.problems) > SHOWN_PROBLEMS:
            say(f"{run.run}: ... and {len(run.problems) - SHOWN_PROBLEMS} more problems", error=True)
    say(score.behaviour_table(behaviours))
    if out:
        Path(out).write_text(json.dumps(score.behaviour_payload(task, behaviours), ensure_ascii=False, indent=2), encoding="utf-8")
    return 0


def probe_command(args: argparse.Namespace) -> int:
    try:
        return make_command(args) if args.action == "make" else score_command(args)
    except (InputError, KeyError, OSError, UnicodeDecodeError, store.StoreError) as err:
        say(f"klue-viz: {err.args[0] if isinstance(err, KeyError) else err}", error=True)
        return 2
