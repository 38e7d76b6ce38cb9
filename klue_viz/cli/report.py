"""`klue-viz report`: one self-contained HTML report of one or two runs (opens offline), with the annotations stored
for them and, on request, a behavioural test suite's table."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from klue_viz.cli.common import (
    FEATURES_HELP,
    check_out,
    distinct_run_names,
    featured,
    load_features,
    resamples,
    stored_remarks,
    write_out,
)
from klue_viz.core.lazy import lazy_module
from klue_viz.core.problems import InputError
from klue_viz.reading.records import read_bytes
from klue_viz.scoring.evaluate import evaluate_file, load_gold
from klue_viz.tasks import TASKS, get_task

if TYPE_CHECKING:
    from klue_viz.outputs import report as html_report
    from klue_viz.probes import score as probe_scores
else:  # the report's pandas, plotly and the probe suites load when the command runs
    html_report = lazy_module("klue_viz.outputs.report")
    probe_scores = lazy_module("klue_viz.probes.score")


def add_commands(commands: argparse._SubParsersAction) -> None:
    """`klue-viz report` and its options."""
    report = commands.add_parser("report", help="one self-contained HTML report of one or two runs (opens offline)")
    report.add_argument("--task", required=True, choices=list(TASKS))
    report.add_argument("--gold", required=True, help="official file, klue_benchmark/ folder, JSON(L) export of klue/klue, or hf[:split]")
    report.add_argument("--pred", required=True, action="append", help="prediction file; give two for a paired comparison")
    report.add_argument("--out", required=True, help="the HTML file to write")
    report.add_argument("--errors", type=int, default=50, metavar="N", help="how many instructive errors to draw (default 50)")
    report.add_argument("--bootstrap", type=resamples, default=1000, metavar="N", help="bootstrap resamples for the 95%% intervals (default 1000)")
    report.add_argument("--strict", action="store_true", help="score gold examples without a prediction as wrong")
    report.add_argument("--features", help=FEATURES_HELP)
    report.add_argument("--probes", help="a behavioural test suite (klue-viz probe make): the report gets its runs × tests table")
    report.add_argument("--probe-pred", action="append", help="a run's predictions on the suite, in --pred's order (default: the --pred "
                                                               "file itself, when it holds them too)")


def report_command(args: argparse.Namespace) -> int:
    """One self-contained HTML report of one or two runs, with the annotations stored for them."""

    try:
        check_out(args.out)
        task = get_task(args.task)
        gold = load_gold(task, args.gold)
        columns, _ = load_features(args.features, task, gold)
        results = [featured(evaluate_file(task, gold, path, strict=args.strict), columns) for path in args.pred]
        distinct_run_names(results)
        behaviour = []
        if args.probes:
            suite = probe_scores.read_probe_set(task, args.probes)
            probe_files = args.probe_pred or args.pred
            if len(probe_files) != len(args.pred):
                raise InputError(f"--probe-pred: give one per --pred ({len(args.pred)}), in the same order; found {len(probe_files)}")
            behaviour = [probe_scores.score_run(suite, result.run, read_bytes(probe), probe, read_bytes(path), path)
                         for result, probe, path in zip(results, probe_files, args.pred)]
    except (InputError, KeyError) as err:
        print(f"klue-viz: {err.args[0] if isinstance(err, KeyError) else err}", file=sys.stderr)
        return 2
    remarks = stored_remarks(task.facts.name)
    try:
        html = html_report.build_report(task, results, gold.source, remarks, errors=args.errors, samples=args.bootstrap, gold_rows=gold.rows,
                                        behaviour=behaviour, suite=args.probes or "")
    except Exception as err:  # noqa: BLE001 - one line saying why, never a traceback
        reason = str(err).strip().splitlines()[0][:200] if str(err).strip() else ""
        print(f"klue-viz: the report could not be built ({type(err).__name__}: {reason}); nothing was written", file=sys.stderr)
        return 1
    if not write_out(args.out, html):
        return 2
    print(f"wrote {args.out}: {' vs '.join(r.run for r in results)}, {len(remarks)} stored annotation(s) of {task.facts.name.upper()} considered")
    return 0

