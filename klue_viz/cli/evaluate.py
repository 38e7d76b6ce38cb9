"""`klue-viz evaluate`: the official KLUE metrics of prediction files (or of folders of them, a model per folder), for
scripts and CI; with the annotators' agreement where the gold keeps their votes, and the gold's corrections applied
on request."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from klue_viz.cli.common import (
    FEATURES_HELP,
    SHOWN_PROBLEMS,
    check_out,
    featured,
    guess_task,
    load_features,
    resamples,
    say,
    terminal,
    write_out,
)
from klue_viz.core.lazy import lazy_module
from klue_viz.core.problems import InputError
from klue_viz.discovery.calibration import run_calibration
from klue_viz.reading.prediction_files import expand_path
from klue_viz.scoring.evaluate import RunResult, evaluate_bytes, load_gold
from klue_viz.tasks import TASKS, Task, get_task

if TYPE_CHECKING:
    from klue_viz.core.crowd import HumanBaseline
    from klue_viz.core.results import Frames
    from klue_viz.discovery import annotators, corrected_gold
    from klue_viz.scoring import benchmark as workspace
    from klue_viz.scoring import bootstrap, slicing, user_features
    from klue_viz.scoring.evaluate import Gold
else:  # what only --bootstrap, --out, --features, --corrections or a folder needs loads when it is used: scoring needs numpy only
    bootstrap = lazy_module("klue_viz.scoring.bootstrap")
    workspace = lazy_module("klue_viz.scoring.benchmark")
    annotators = lazy_module("klue_viz.discovery.annotators")
    corrected_gold = lazy_module("klue_viz.discovery.corrected_gold")
    slicing = lazy_module("klue_viz.scoring.slicing")
    user_features = lazy_module("klue_viz.scoring.user_features")


def add_commands(commands: argparse._SubParsersAction) -> None:
    """`klue-viz evaluate` and its options."""
    evaluate = commands.add_parser("evaluate", help="official metrics of one or more prediction files")
    evaluate.add_argument("--task", choices=list(TASKS), help="the KLUE task (guessed from the first file when left out)")
    evaluate.add_argument("--gold", required=True,
                          help="official file, klue_benchmark/ folder, JSON(L) export of klue/klue, or hf[:split]")
    evaluate.add_argument("--pred", required=True, action="append",
                          help="prediction file (repeat for several runs), or a folder of files of several tasks (one model per folder)")
    evaluate.add_argument("--out", help="write metrics, coverage and problems as JSON")
    evaluate.add_argument("--strict", action="store_true", help="score gold examples without a prediction as wrong")
    evaluate.add_argument("--bootstrap", type=resamples, default=0, metavar="N",
                          help="also give 95%% confidence intervals from N bootstrap resamples of the examples")
    evaluate.add_argument("--features", help=FEATURES_HELP + "; --out gets each column's slice table")
    evaluate.add_argument("--corrections", help="score against the gold with these corrections (JSONL: guid, correction[, turn]; or an "
                                                "annotation export), and show what they change in each run's score and rank")
    evaluate.add_argument("--gold-version", help="score against a gold version kept in the database (KLUE_VIZ_DB), by name")


def format_value(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"


def metrics_text(result: RunResult) -> str:
    """A plain-text table of one run's metrics, coverage and first problems."""
    lines = [f"== {terminal(result.run)} ({result.task.facts.name}) =="]
    width = max(len(m.key) for m in result.task.facts.metrics)
    for metric in result.task.facts.metrics:
        value = result.scores.values.get(metric.key)
        reason = result.scores.reasons.get(metric.key)
        interval = (result.intervals or {}).get(metric.key)
        spread = f"  [{interval[0]:.2f}, {interval[1]:.2f}]" if interval else ""
        lines.append(f"  {metric.key:<{width}}  {format_value(value):>7}{spread}" + (f"  ({reason})" if reason else ""))
    c = result.coverage
    lines.append(f"  coverage: {c.n_scored}/{c.n_gold} gold scored, {c.n_missing} missing, {c.n_extra} extra, {c.n_invalid} records left out"
                 + (f"; {c.unreadable_answers} unreadable answers (scored as wrong)" if c.unreadable_answers else ""))
    lines.extend(f"  note: {terminal(note)}" for note in result.notes)
    for problem in result.problems[:SHOWN_PROBLEMS]:
        lines.append(f"  problem: {terminal(problem)}")
    if len(result.problems) > SHOWN_PROBLEMS:
        lines.append(f"  ... and {len(result.problems) - SHOWN_PROBLEMS} more problems (all of them are in --out)")
    return "\n".join(lines)


def feature_tables(task: Task, frames: Frames) -> dict[str, list[dict]]:
    """Per-slice metrics of each of the user's columns (what `evaluate --out` writes): column -> rows of `slice_table`."""
    out = {}
    for spec in user_features.user_slices(frames):
        table = slicing.slice_table(task, frames, spec)
        out[spec.key.removeprefix(user_features.PREFIX)] = [{k: (None if isinstance(v, float) and v != v else v) for k, v in row.items()}
                                              for row in table.to_dict("records")]
    return out


def evaluate_command(args: argparse.Namespace) -> int:
    if any(Path(p).is_dir() for p in args.pred):
        return evaluate_folders(args)

    try:
        check_out(args.out)
        task = get_task(args.task) if args.task else get_task(guess_task(args.pred))
        gold = load_gold(task, args.gold)
        corrected = corrected_for(task, args) if args.corrections or args.gold_version else None
        columns, column_problems = load_features(args.features, task, gold)
    except (InputError, KeyError) as err:
        say(f"klue-viz: {err.args[0] if isinstance(err, KeyError) else err}", error=True)
        return 2
    before = gold
    if corrected is not None:
        gold = corrected.gold
        say(f"scoring against {corrected.version}: {len(corrected.file.changed)} record(s) of {gold.source} corrected")
        for problem in corrected.file.problems[:SHOWN_PROBLEMS]:
            say(f"correction problem: {problem}", error=True)
    for problem in gold.problems[:SHOWN_PROBLEMS]:
        say(f"gold problem: {problem}", error=True)
    results, failures = [], []
    for path in args.pred:
        try:
            runs = expand_path(path)  # a harness log with several filters is one run each
        except InputError as err:
            failures.append(str(err))
            say(f"klue-viz: {err}", error=True)
            continue
        for run in runs:
            try:
                result = featured(evaluate_bytes(task, gold, run.data, run.name, strict=args.strict), columns)
                if args.bootstrap:
                    result.intervals = bootstrap.confidence_intervals(task, result.frames, samples=args.bootstrap)
            except InputError as err:
                failures.append(str(err))
                say(f"klue-viz: {err}", error=True)
                continue
            results.append(result)
            print(metrics_text(result))
            if result.wrong_gold:
                say(f"klue-viz: WARNING: {result.run}: {result.wrong_gold}", error=True)
    crowd_figures: dict[int, dict] = {}
    human, held_out = human_line(task, gold, results, per_run=bool(args.out), figures=crowd_figures)
    if corrected is not None and results:
        print(corrected.table(task, before, args.pred, args.strict))
    if args.out:
        payload = {"task": task.facts.name, "gold": gold.source, "strict": args.strict,
                   "runs": [run_record(r, crowd=crowd_figures.get(k, human is not None)) for k, r in enumerate(results)]}
        if human is not None:
            payload["human"] = human.to_dict()
            if held_out is not None:
                payload["human_held_out"] = held_out.to_dict()
        if corrected is not None:
            payload["corrections"] = corrected.summary(task, before, args.pred, args.strict)
        if columns is not None:
            for record, result in zip(payload["runs"], results):
                record["features"] = feature_tables(task, result.frames)  # per-slice metrics of each of your columns
            payload["features_file"] = columns.file
            payload["feature_problems"] = [p.to_dict() for p in column_problems]
        if failures:
            payload["failed"] = failures
        if len(args.pred) == 1 and len(results) == 1:
            payload["metrics"] = results[0].scores.values
        if not write_out(args.out, json.dumps(payload, ensure_ascii=False, indent=2)):
            return 2
    return 0 if results else 1


def evaluate_folders(args: argparse.Namespace) -> int:
    """Folders of prediction files of several tasks: each file's task detected, one table of models by task."""

    if args.task:
        print("klue-viz: --task does not apply to a folder (each file's task is detected); give files instead", file=sys.stderr)
        return 2
    if not all(Path(p).is_dir() for p in args.pred):
        print("klue-viz: give either prediction files or folders of them, not both", file=sys.stderr)
        return 2
    if args.features:
        print("klue-viz: --features applies to one task's files (--task and --pred files), not to folders", file=sys.stderr)
        return 2
    try:
        check_out(args.out)
    except InputError as err:
        say(f"klue-viz: {err}", error=True)
        return 2
    done = workspace.FolderEvaluation()
    for folder in args.pred:
        try:
            found = workspace.evaluate_folder(args.gold, Path(folder), strict=args.strict)
        except InputError as err:
            done.failures.append(str(err))
            continue
        done.runs += found.runs
        done.failures += found.failures
        done.gold_sources.update(found.gold_sources)
        done.golds.update(found.golds)
    for failure in done.failures:
        print(f"klue-viz: {failure}", file=sys.stderr)
    for run in done.runs:
        if args.bootstrap:
            run.result.intervals = run.intervals = bootstrap.confidence_intervals(run.result.task, run.result.frames, samples=args.bootstrap)
    if done.runs:
        print(workspace.text_table(done.runs))
    humans, crowd_figures = {}, {}
    for name, gold in done.golds.items():  # the annotators' agreement of each task whose gold keeps them, as --task prints it
        of_task = [run for run in done.runs if run.task == name]
        per_run: dict[int, dict] = {}
        baseline, _ = human_line(gold.task, gold, [run.result for run in of_task], per_run=bool(args.out), figures=per_run)
        if baseline is not None:
            humans[name] = baseline
            crowd_figures.update({id(of_task[k]): figures for k, figures in per_run.items()})
    if args.out:
        # each run as `--task` writes it (calibration, vote figures), with its task and model
        runs = [{"task": run.task, "model": run.model, **run_record(run.result, crowd=crowd_figures.get(id(run), run.task in humans))}
                for run in done.runs]
        payload = {"gold": done.gold_sources, "strict": args.strict, "runs": runs}
        if humans:
            payload["human"] = {name: human.to_dict() for name, human in humans.items()}
        if done.failures:
            payload["failed"] = done.failures
        if not write_out(args.out, json.dumps(payload, ensure_ascii=False, indent=2)):
            return 2
    return 0 if done.runs else 1


def corrected_for(task: Task, args: argparse.Namespace) -> corrected_gold.CorrectedGold:
    """The corrected gold of `evaluate --corrections FILE` or `--gold-version NAME` (a version kept in KLUE_VIZ_DB)."""
    if args.corrections and args.gold_version:
        raise InputError("give --corrections or --gold-version, not both")
    if args.corrections:
        return corrected_gold.CorrectedGold.from_file(task, args.gold, args.corrections)
    return corrected_gold.CorrectedGold.from_version(task, args.gold, args.gold_version)


def run_record(result: RunResult, crowd: bool | dict = False) -> dict:
    """A run as written by --out: metrics and coverage, plus calibration when the run gave probabilities, and what the
    gold's annotators say about it (vote cross-entropy, error against their spread) where the gold keeps them (`crowd`:
    True, or those figures already computed by `human_line`)."""

    record = result.to_dict()
    if getattr(result.task, "labels", None):  # only label tasks have probabilities: the others never build frames here
        found = run_calibration(result.task, result.example_columns())
        if found is not None:
            record["calibration"] = found.to_dict()
    if crowd is True:
        record.update(annotators.run_crowd(result.task, result))
    elif crowd:
        record.update(crowd)
    return record


def human_line(task: Task, gold: Gold, results: list[RunResult], per_run: bool,
               figures: dict[int, dict] | None = None) -> tuple[HumanBaseline | None, HumanBaseline | None]:
    """Print the annotators' agreement (the human baseline) over the gold the runs scored; returns it and its held-out
    form (`Task.held_out_baseline`), each None without votes, so `--out` writes them without computing them again.

    With `per_run` (`--out`, whose runs carry these figures) also each run against the annotators (numpy, from the
    matched rows: klue_viz.discovery.annotators.run_crowd); `figures` gets them by the run's position in `results`,
    for `run_record`, so they are computed once."""
    human = annotators.human_of(task, gold.rows, results) if results else None
    if human is None:
        return None, None
    held_out = annotators.human_of(task, gold.rows, results, held_out=True)
    print(f"== human baseline of {task.facts.name.upper()} (the gold's annotators) ==")
    if held_out is not None and held_out.value != human.value:
        print(f"  held out (each against the others): {held_out.text()}\n  against the gold they elected: {human.text()}")
    else:
        print(f"  {human.text()}")
    if human.metric == "pearsonr":
        print("  (one annotator against the mean of the others; a run is correlated with the mean of all of them)")
    for position, result in enumerate(results if per_run else []):
        found = annotators.run_crowd(task, result)
        if figures is not None:
            figures[position] = found
        if "vote_cross_entropy" in found:
            ce = found["vote_cross_entropy"]
            print(terminal(f"  {result.run}: vote cross-entropy {ce['value']:.4f} over {ce['n']:,} {task.facts.unit}s with probabilities"))
            div = found["vote_divergence"]
            print(terminal(f"  {result.run}: KL {div['kl']:.4f} nats, Jensen-Shannon distance {div['jsd']:.4f} (base e) to the votes; "
                           f"the votes' own entropy {div['vote_entropy']:.4f} nats"))
        rho = found.get("error_vs_spread", {}).get("spearman")
        if rho is not None:
            print(terminal(f"  {result.run}: Spearman rho of |gold - predicted| with the annotators' spread {rho['rho']:.3f} "
                           f"over {rho['n']:,} {task.facts.unit}s"))
    return human, held_out

