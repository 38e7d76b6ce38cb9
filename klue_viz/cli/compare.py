"""`klue-viz compare` (many runs ranked with paired bootstrap intervals, what each fixed and broke) and `klue-viz gate`
(a regression check for CI: fail when a candidate is significantly worse than a baseline, overall or on a slice)."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING

from klue_viz.cli.common import (
    FEATURES_HELP,
    check_out,
    distinct_run_names,
    featured,
    guess_task,
    load_features,
    positive,
    resamples,
    say,
    terminal,
    write_out,
)
from klue_viz.core.lazy import lazy_module
from klue_viz.core.problems import InputError
from klue_viz.reading.records import read_bytes
from klue_viz.scoring.evaluate import RunResult, evaluate_file, load_gold
from klue_viz.tasks import TASKS, Task, get_task

if TYPE_CHECKING:
    from klue_viz.compare import gate as regression_gate
    from klue_viz.compare import ranking as run_comparison
    from klue_viz.discovery import slices
    from klue_viz.probes import score as probe_scores
    from klue_viz.store import annotations as annotation_store
else:  # pandas, SQLAlchemy and the probe suites load when a command runs
    run_comparison = lazy_module("klue_viz.compare.ranking")
    regression_gate = lazy_module("klue_viz.compare.gate")
    slices = lazy_module("klue_viz.discovery.slices")
    probe_scores = lazy_module("klue_viz.probes.score")
    annotation_store = lazy_module("klue_viz.store.annotations")


GATE_HELP = """Exit 0 when nothing regressed, 1 when something did (or the coverage dropped), 2 for bad input (also
too few resamples, or a KLUE_VIZ_DB that cannot be read without --no-store). Every official metric is tested
overall, on each value of each slice the task defines (example-level and entity/word/slot-level; not the
confidence slices, which depend on each run) and on each error tag stored for the runs (KLUE_VIZ_DB), when the
group holds at least --min-size examples (units). A test is the paired bootstrap of candidate - baseline over the
examples both runs scored, all tests on the same resamples. The family-wise error over everything tested is
controlled by the one-sided step-down max-t bootstrap (Romano-Wolf): each drop is divided by its bootstrap
standard error, and the 95% quantile of the largest t over the tests still in play on each resample is the
critical value, taken again over the rest after each finding. A regression is a drop whose one-sided 95% upper
bound is below 0, so a candidate that differs from the baseline only by chance fails at most 5% of the time,
however many slices are tested. An example the baseline scored and the candidate did not is a coverage drop
(overall and per slice), which fails the gate unless --allow-coverage-drop."""


def add_commands(commands: argparse._SubParsersAction) -> None:
    """`klue-viz compare` (a ranking of many runs, example by example) and `klue-viz gate` (a regression check for CI)."""
    compare = commands.add_parser("compare", help="rank many runs with paired bootstrap intervals; what each run fixed and broke")
    compare.add_argument("--task", choices=list(TASKS), help="the KLUE task (guessed from the first file when left out)")
    compare.add_argument("--gold", required=True, help="official file, klue_benchmark/ folder, JSON(L) export of klue/klue, or hf[:split]")
    compare.add_argument("--pred", required=True, action="append", help="prediction file (repeat: two or more runs, in sequence order)")
    compare.add_argument("--out", help="write {task, ranking, runs, examples, changes, sequence} as JSON")
    compare.add_argument("--bootstrap", type=resamples, default=1000, metavar="N", help="paired bootstrap resamples (default 1000; at least 200)")
    compare.add_argument("--metric", help="the official metric to rank by, its key as the table heads it (default: the task's first); "
                         "the best run, the p-values and the ties are computed on it")
    compare.add_argument("--strict", action="store_true", help="score gold examples without a prediction as wrong")
    compare.add_argument("--features", help=FEATURES_HELP)
    gate = commands.add_parser("gate", help="fail when a candidate run is significantly worse than a baseline, overall or on any slice",
                               description=GATE_HELP)
    gate.add_argument("--task", choices=list(TASKS), help="the KLUE task (guessed from the baseline file when left out)")
    gate.add_argument("--gold", required=True, help="official file, klue_benchmark/ folder, JSON(L) export of klue/klue, or hf[:split]")
    gate.add_argument("--baseline", required=True, help="the baseline's prediction file")
    gate.add_argument("--candidate", required=True, help="the candidate's prediction file")
    gate.add_argument("--min-size", type=positive, default=30, metavar="N", help="smallest group tested, in examples or units (default 30)")
    gate.add_argument("--out", help="write {verdict, checked, regressions} as JSON")
    gate.add_argument("--markdown", help="write the verdict and a table for a pull-request comment")
    gate.add_argument("--bootstrap", type=resamples, default=1000, metavar="N", help="paired bootstrap resamples (default 1000; at least 200)")
    gate.add_argument("--strict", action="store_true", help="score gold examples without a prediction as wrong")
    gate.add_argument("--features", help=FEATURES_HELP + "; each column is a slice the gate tests")
    gate.add_argument("--allow-coverage-drop", action="store_true",
                      help="report examples the candidate stopped predicting without failing the gate for them")
    gate.add_argument("--no-store", action="store_true",
                      help="do not read KLUE_VIZ_DB: test without the error-tag slices (without it, a store that cannot be read exits 2)")
    gate.add_argument("--probes", help="a behavioural test suite (klue-viz probe make): each test's pass rate joins the tests, so the gate "
                                       "also fails when the candidate fails a test significantly more often")
    gate.add_argument("--probe-baseline", help="the baseline's predictions on the suite (default: --baseline, when it holds them too)")
    gate.add_argument("--probe-candidate", help="the candidate's predictions on the suite (default: --candidate, when it holds them too)")


def _scored_runs(task_name: str | None, gold_source: str, paths: list[str], strict: bool, outs: list[str | None],
                 features_path: str | None = None) -> tuple[Task, list[RunResult]]:
    """The task, and each file scored against the gold (distinct run names), with the user's columns (--features) when
    given; InputError/KeyError for bad input."""
    for out in outs:
        check_out(out)
    task = get_task(task_name) if task_name else get_task(guess_task(paths))
    gold = load_gold(task, gold_source)
    columns, _ = load_features(features_path, task, gold)
    results = [featured(evaluate_file(task, gold, path, strict=strict), columns) for path in paths]
    distinct_run_names(results)
    return task, results


def compare_command(args: argparse.Namespace) -> int:
    try:
        if len(args.pred) < 2:
            raise InputError("compare needs at least two runs: give --pred two or more times")
        task, results = _scored_runs(args.task, args.gold, args.pred, args.strict, [args.out], args.features)
        keys = [m.key for m in task.facts.metrics]
        if args.metric is not None and args.metric not in keys:
            raise InputError(f"--metric {args.metric!r}: {task.facts.name} ranks by one of {', '.join(keys)}")
        statistics = [task.statistics(r.frames) for r in results]  # once, for the ranking and the sequence
        table = run_comparison.run_table(results, statistics)
        if not len(table.shared):
            raise InputError("the runs have no scored example in common")
        ranking = run_comparison.rank_runs(table, samples=args.bootstrap, metric=args.metric)
    except (InputError, KeyError, ValueError) as err:
        say(f"klue-viz: {err.args[0] if isinstance(err, KeyError) else err}", error=True)
        return 2
    changes = run_comparison.consecutive_changes(table)
    for line in run_comparison.ranking_text(ranking, task).splitlines():
        say(line)
    for c in changes:
        print(terminal(f"{c.first} -> {c.second}: fixed {len(c.fixed)}, broke {len(c.broke)}"))
    sequence = run_comparison.run_sequence(task, results, statistics=statistics) if args.out else None
    if args.out and not write_out(args.out, json.dumps(run_comparison.compare_payload(table, ranking, changes, sequence), ensure_ascii=False, indent=2)):
        return 2
    return 0


def gate_command(args: argparse.Namespace) -> int:
    try:
        task, (baseline, candidate) = _scored_runs(args.task, args.gold, [args.baseline, args.candidate], args.strict, [args.out, args.markdown],
                                                   args.features)
        remarks = gate_remarks(task.facts.name) if not args.no_store else []
        tags = slices.error_tags(task, baseline.run, remarks)
        for guid, found in slices.error_tags(task, candidate.run, remarks).items():
            tags.setdefault(guid, set()).update(found)
        behaviour = None
        if args.probes:
            suite = probe_scores.read_probe_set(task, args.probes)
            runs = [probe_scores.score_run(suite, run.run, read_bytes(probe_file or dev_file), probe_file or dev_file, read_bytes(dev_file), dev_file)
                    for run, probe_file, dev_file in ((baseline, args.probe_baseline, args.baseline), (candidate, args.probe_candidate, args.candidate))]
            behaviour = probe_scores.paired_outcomes(suite, runs[0], runs[1])
        result = regression_gate.gate(task, baseline, candidate, min_size=args.min_size, tags=tags, samples=args.bootstrap,
                                      allow_coverage_drop=args.allow_coverage_drop, behaviour=behaviour)
    except (InputError, KeyError, ValueError) as err:
        say(f"klue-viz: {err.args[0] if isinstance(err, KeyError) else err}", error=True)
        return 2
    for line in regression_gate.gate_text(result).splitlines():
        say(line)
    if args.out and not write_out(args.out, json.dumps(result.to_dict(), ensure_ascii=False, indent=2)):
        return 2
    if args.markdown and not write_out(args.markdown, regression_gate.gate_markdown(result, task)):
        return 2
    return 1 if result.verdict == "fail" else 0


def gate_remarks(task_name: str) -> list:
    """The annotations the gate's error-tag slices read; InputError when the store cannot be read, since a gate that
    silently tests fewer slices would pass what it should have checked (--no-store says to go without)."""
    try:
        return annotation_store.Store().find(task=task_name)
    except annotation_store.StoreError as err:
        raise InputError(f"the annotation store (KLUE_VIZ_DB) cannot be read, so its error-tag slices cannot be tested: {err}. "
                         "Fix KLUE_VIZ_DB, or pass --no-store to run the gate without them") from err
