"""`klue-viz evaluate`: the official KLUE metrics of prediction files, for scripts and CI."""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from klue_viz.cli.probes import add_probe_commands, probe_command
from klue_viz.cli.runs import add_runs_commands, runs_command
from klue_viz.core.lazy import lazy_module
from klue_viz.core.problems import InputError
from klue_viz.discovery.calibration import run_calibration
from klue_viz.drawing.markup import csv_cell, visible
from klue_viz.reading.prediction_files import expand_path, task_hint
from klue_viz.reading.records import read_bytes, read_records
from klue_viz.scoring.evaluate import RunResult, evaluate_bytes, evaluate_file, gold_file, load_gold
from klue_viz.tasks import TASKS, Task, detect_task, get_task

if TYPE_CHECKING:
    from klue_viz.compare import gate as regression_gate
    from klue_viz.compare import ranking as run_comparison
    from klue_viz.core.crowd import HumanBaseline
    from klue_viz.core.problems import Problem
    from klue_viz.core.results import Frames
    from klue_viz.discovery import annotators, corrected_gold, features, hf_export, slices
    from klue_viz.discovery import suspects as suspect_queue
    from klue_viz.outputs import report as html_report
    from klue_viz.probes import score as probe_scores
    from klue_viz.scoring import benchmark as workspace
    from klue_viz.scoring import bootstrap, slicing, user_features
    from klue_viz.scoring import surface_forms as surface
    from klue_viz.scoring.evaluate import Gold
    from klue_viz.scoring.user_features import UserFeatures
    from klue_viz.store import annotation_files, gold_versions
    from klue_viz.store import annotations as annotation_store
    from klue_viz.tasks.base import Task
else:  # the commands that need pandas, SQLAlchemy or cleanlab load them when they run: `klue-viz evaluate` needs numpy only
    bootstrap = lazy_module("klue_viz.scoring.bootstrap")
    run_comparison = lazy_module("klue_viz.compare.ranking")
    regression_gate = lazy_module("klue_viz.compare.gate")
    workspace = lazy_module("klue_viz.scoring.benchmark")
    html_report = lazy_module("klue_viz.outputs.report")
    probe_scores = lazy_module("klue_viz.probes.score")
    annotation_files = lazy_module("klue_viz.store.annotation_files")
    annotation_store = lazy_module("klue_viz.store.annotations")
    features = lazy_module("klue_viz.discovery.features")
    slices = lazy_module("klue_viz.discovery.slices")
    suspect_queue = lazy_module("klue_viz.discovery.suspects")
    annotators = lazy_module("klue_viz.discovery.annotators")
    hf_export = lazy_module("klue_viz.discovery.hf_export")
    corrected_gold = lazy_module("klue_viz.discovery.corrected_gold")
    gold_versions = lazy_module("klue_viz.store.gold_versions")
    slicing = lazy_module("klue_viz.scoring.slicing")
    surface = lazy_module("klue_viz.scoring.surface_forms")
    user_features = lazy_module("klue_viz.scoring.user_features")

SHOWN_PROBLEMS = 10
FEATURES_HELP = ("your own columns: a CSV, TSV or JSONL file keyed by guid (and turn for WoS; guid, start, end for NER entities), "
                 "each column a slice feature (numbers in quartile bins, text as its 20 most frequent values)")


def terminal(text: object) -> str:
    """File text as it may reach a terminal: control and bidi characters as codes, a newline as \\n (one line per item)."""
    return visible(text).replace("\n", "\\n")


def say(text: object, error: bool = False) -> None:
    print(terminal(text), file=sys.stderr if error else sys.stdout)


def format_value(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"


def report(result: RunResult) -> str:
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


def guess_task(paths: list[str]) -> str:
    first = expand_path(paths[0])[0]  # a harness log as the prediction file it converts to
    records = [r for _, r in read_records(first.data, first.name).records]
    found = detect_task(records) or task_hint(records, list(TASKS))  # a log without guids names its task
    if found is None:
        raise InputError(f"{paths[0]}: cannot tell which KLUE task this file is for; pass --task")
    return found


def check_out(path: str | None) -> None:
    """Refuse an --out that cannot be written before any scoring is done."""
    if not path:
        return
    out = Path(path)
    if out.is_dir():
        raise InputError(f"--out {path}: is a folder; give a file name such as {out / 'metrics.json'}")
    if not out.parent.is_dir():
        raise InputError(f"--out {path}: the folder {out.parent} does not exist")


def check_export_file(task: Task, gold: str, path: str | None, force: bool) -> None:
    """Refuse, before any work, a `gold export --file` that would replace the gold it reads (never: the corrections are made
    against it), or another existing file without --force."""
    if not path:
        return
    check_out(path)
    target = Path(path)
    if not target.exists():
        return
    try:
        source = gold_file(task, Path(gold))
    except InputError:
        source = None
    if source is not None and source.exists() and target.resolve() == source.resolve():
        raise InputError(f"--file {path} is the gold file this export reads ({source}); write the corrected file elsewhere")
    if not force:
        raise InputError(f"--file {path} already exists; add --force to replace it, or give another name")


def write_out(path: str, text: str) -> bool:
    """Write an --out file; a failure (permission, full disk) is one line on stderr, not a traceback."""
    try:
        Path(path).write_text(text, encoding="utf-8")
    except OSError as err:
        say(f"klue-viz: cannot write --out {path}: {err.strerror or err}", error=True)
        return False
    return True


def load_features(path: str | None, task: Task, gold: Gold) -> tuple[UserFeatures | None, list[Problem]]:
    """The user's own columns from `--features` (None without it); each bad row is printed with its line."""
    if not path:
        return None, []
    columns, problems = user_features.read_features(read_bytes(path), Path(path).name, task, gold.rows)
    say(user_features.summary(columns, problems), error=True)
    for problem in problems[:SHOWN_PROBLEMS]:
        say(f"features problem: {problem}", error=True)
    if len(problems) > SHOWN_PROBLEMS:
        say(f"... and {len(problems) - SHOWN_PROBLEMS} more problems in {path}", error=True)
    return columns, problems


def feature_tables(task: Task, frames: Frames) -> dict[str, list[dict]]:
    """Per-slice metrics of each of the user's columns (what `evaluate --out` writes): column -> rows of `slice_table`."""
    out = {}
    for spec in user_features.user_slices(frames):
        table = slicing.slice_table(task, frames, spec)
        out[spec.key.removeprefix(user_features.PREFIX)] = [{k: (None if isinstance(v, float) and v != v else v) for k, v in row.items()}
                                              for row in table.to_dict("records")]
    return out


def featured(result: RunResult, columns: UserFeatures | None) -> RunResult:
    """The run with the user's columns on its frames (as it is without --features)."""
    if columns is None:
        return result
    return user_features.with_features(result, columns)


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
            print(report(result))
            if result.wrong_gold:
                say(f"klue-viz: WARNING: {result.run}: {result.wrong_gold}", error=True)
    crowd_figures: dict[int, dict] = {}
    human = human_line(task, gold, results, per_run=bool(args.out), figures=crowd_figures)
    if corrected is not None and results:
        print(corrected.table(task, before, args.pred, args.strict))
    if args.out:
        payload = {"task": task.facts.name, "gold": gold.source, "strict": args.strict,
                   "runs": [run_record(r, crowd=crowd_figures.get(k, human is not None)) for k, r in enumerate(results)]}
        if human is not None:
            payload["human"] = human.to_dict()
            held_out = annotators.human_of(task, gold.rows, results, held_out=True)
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
        baseline = human_line(gold.task, gold, [run.result for run in of_task], per_run=bool(args.out), figures=per_run)
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


def distinct_run_names(results: list[RunResult]) -> None:
    """Two files with the same stem (model-a/ner.jsonl, model-b/ner.jsonl) become ner and ner-2, as the app names them."""
    taken: set[str] = set()
    for result in results:
        chosen, k = result.run, 2
        while chosen in taken:
            chosen, k = f"{result.run}-{k}", k + 1
        result.run = chosen
        taken.add(chosen)


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
               figures: dict[int, dict] | None = None) -> HumanBaseline | None:
    """Print the annotators' agreement (the human baseline) over the gold the runs scored; returns it (None without votes).

    With `per_run` (`--out`, whose runs carry these figures) also each run against the annotators (numpy, from the
    matched rows: klue_viz.discovery.annotators.run_crowd); `figures` gets them by the run's position in `results`,
    for `run_record`, so they are computed once."""
    if not results or task.human_baseline(gold.rows) is None:
        return None
    human = annotators.human_of(task, gold.rows, results)
    if human is None:
        return None
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
    return human


def annotations_command(args: argparse.Namespace) -> int:
    """export / import / new-db against the store named by KLUE_VIZ_DB (or the default file)."""

    try:
        if args.action == "new-db":
            url = annotation_store.database_url()
            if not url.startswith("sqlite:///"):
                raise annotation_store.StoreError("new-db only applies to a SQLite file")
            path = Path(url.removeprefix("sqlite:///"))
            if path.exists():
                say(f"kept the old database as {annotation_store.set_aside(path)}")
            say(f"new annotation database: {annotation_store.Store(url).location}")
            return 0
        store = annotation_store.Store()
        if args.action == "export":
            items = store.find(task=args.task)
            check_out(args.out)
            Path(args.out).write_text(annotation_files.export_text(items, args.out), encoding="utf-8")
            say(f"wrote {len(items)} annotation(s) from {store.location} to {args.out}")
            return 0
        items, problems = annotation_files.parse(read_bytes(args.file), Path(args.file).name)
        for problem in problems[:SHOWN_PROBLEMS]:
            say(f"problem: {problem}", error=True)
        plan = store.plan_import(items)
        say(f"{args.file}: {plan.summary()}")
        for item, current in plan.conflicting[:SHOWN_PROBLEMS]:
            say(f"  conflict: {item.task} {item.guid} {item.run} by {item.annotator}: stored {current.updated_at} is newer than {item.updated_at}")
        written = store.apply_import(plan, overwrite_conflicts=args.overwrite_conflicts)
        if plan.replanned:
            say(f"the annotations changed during the import; planned again: {plan.summary()}")
        say(f"wrote {written} annotation(s) to {store.location}")
        return 0 if items or not problems else 1
    except (annotation_store.StoreError, InputError) as err:
        say(f"klue-viz: {err}", error=True)
        return 2


def resamples(text: str) -> int:
    """--bootstrap N: 0 (off) or a number of resamples up to 100,000."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number of resamples, found {text!r}") from None
    if not 0 <= value <= 100_000:
        raise argparse.ArgumentTypeError(f"the number of resamples must be from 0 (off) to 100000, found {value}")
    return value


def positive(text: str) -> int:
    """--top N: a whole number from 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, found {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a number from 1, found {value}")
    return value


def add_discovery_commands(commands: argparse._SubParsersAction) -> None:
    """`klue-viz slices` and `klue-viz suspects`: the discovery views, headless."""
    for name, help_text, top in (("slices", "the slices where a run fails most (or where one run is worse than another)", 10),
                                 ("suspects", "gold records that look wrong, most suspicious first", 100)):
        command = commands.add_parser(name, help=help_text)
        command.add_argument("--task", choices=list(TASKS), required=True)
        command.add_argument("--gold", required=True, help="official file, klue_benchmark/ folder, JSON(L) export of klue/klue, or hf[:split]")
        command.add_argument("--pred", required=True, action="append", help="prediction file (repeat for several runs)")
        command.add_argument("--top", type=positive, default=top, help=f"how many to list (default {top})")
        command.add_argument("--out", help="write the list as JSON")
        command.add_argument("--strict", action="store_true", help="score gold examples without a prediction as wrong")
        if name == "slices":
            command.add_argument("--features", help=FEATURES_HELP)
            command.add_argument("--train", help="the task's training file in the official format, a klue_benchmark/ folder holding it, "
                                                  "or hf (the train split): adds 'seen in training' (NER, RE, MRC, WoS)")
            command.add_argument("--bootstrap", type=resamples, default=100, metavar="N",
                                 help="resamples for each slice's 95%% interval (default 100; 0 leaves intervals out)")


def _load_runs(args: argparse.Namespace) -> tuple[Task, Gold, list[RunResult]]:

    check_out(args.out)
    task = get_task(args.task)
    gold = load_gold(task, args.gold)
    columns, _ = load_features(getattr(args, "features", None), task, gold)
    results = [featured(evaluate_file(task, gold, path, strict=args.strict), columns) for path in args.pred]
    return task, gold, results


def stored_remarks(task_name: str) -> list:
    """The annotations of a task in the store named by KLUE_VIZ_DB (none, with a note, when it cannot be read)."""

    try:
        return annotation_store.Store().find(task=task_name)
    except annotation_store.StoreError as err:
        say(f"klue-viz: annotations left out: {err}", error=True)
        return []


def slices_command(args: argparse.Namespace) -> int:

    try:
        task, _, results = _load_runs(args)
        if len(results) > 2:
            raise InputError("slices compares at most two runs: give --pred once (weak slices) or twice (where one run is worse)")
        first = results[0]
        extra = features.training_features(task, first.frames, features.load_training(task, args.train)) if args.train else None
        tags = slices.error_tags(task, first.run, stored_remarks(task.facts.name))  # the user's tags on the (first) run are conditions too
        found: Sequence[slices.WeakSlice] | Sequence[slices.PairedSlice]
        if len(results) == 1:
            found = slices.weak_slices(task, first.frames, tags=tags, extra=extra, top=args.top, ci_samples=args.bootstrap)
        else:
            found = slices.paired_slices(task, first, results[1], tags=tags, extra=extra, top=args.top, ci_samples=args.bootstrap)
    except (InputError, KeyError) as err:
        say(f"klue-viz: {err.args[0] if isinstance(err, KeyError) else err}", error=True)
        return 2
    print(terminal(slices.slices_header(task, [r.run for r in results], found[0].unit if found else slices.unit_level(task))))
    for k, item in enumerate(found, 1):
        conditions = slices.slice_name(item)
        who = f"  {item.worse} worse by {item.difference:.1f} points" if isinstance(item, slices.PairedSlice) else ""
        print(terminal(f"{k:>3}. {conditions}  size {item.size} {item.unit}, {item.errors} errors ({item.error_rate:.1f}%){who}"))
    if not found:
        print("no slice is worse than the whole run by enough to list")
    if args.out:
        payload = {"task": task.facts.name, "runs": [r.run for r in results], "slices": [item.to_dict() for item in found]}
        Path(args.out).write_text(json.dumps(payload, ensure_ascii=False, indent=2), encoding="utf-8")
    return 0


def suspects_command(args: argparse.Namespace) -> int:

    try:
        task, gold, results = _load_runs(args)
        found = suspect_queue.suspects(task, results, top=args.top, gold_rows=gold.rows)
    except (InputError, KeyError) as err:
        say(f"klue-viz: {err.args[0] if isinstance(err, KeyError) else err}", error=True)
        return 2
    for k, item in enumerate(found, 1):
        turn = f" turn {item.turn}" if item.turn is not None else ""
        ties = "".join(f"  {name} {value:.3f}" for value, name in ((item.confidence, "confidence"), (item.label_quality, "label quality"))
                       if value is not None)
        print(terminal(f"{k:>3}. {item.guid}{turn} {item.unit}: gold {item.gold} -> {item.proposed}  score {item.score:.3f}{ties}"))
        for line in (item.text or "").split("\n"):
            print("       " + terminal(line))
    if args.out:
        payload = {"task": task.facts.name, "runs": [r.run for r in results], "suspects": [item.to_dict() for item in found]}
        Path(args.out).write_text(json.dumps(payload, ensure_ascii=False, indent=2), encoding="utf-8")
    return 0


def errors_command(args: argparse.Namespace) -> int:
    """`klue-viz errors`: the errors by surface form of one run, or of several side by side."""
    try:
        task, _, results = _load_runs(args)
        distinct_run_names(results)
    except (InputError, KeyError) as err:
        say(f"klue-viz: {err.args[0] if isinstance(err, KeyError) else err}", error=True)
        return 2
    tables = {r.run: surface.surface_errors(task, r.frames) for r in results}
    table = next(iter(tables.values())) if len(tables) == 1 else surface.compare_surface(tables)
    shown = table if not args.top else table.head(args.top)
    counts = [c for c in table.columns if c.startswith("count")]
    for k, row in enumerate(shown.head(args.top or 30).to_dict("records"), 1):
        what = f" ({row['type']})" if row["type"] else ""
        print(terminal(f"{k:>3}. {row['unit']} {row['form']}{what}: {row['error']}  " + ", ".join(f"{c} {row[c]}" for c in counts)
                       + (f" of {row['total']}" if row.get("total") is not None and row["total"] == row["total"] else "")))
    if table.empty:
        print("no errors")
    if args.out:
        if args.out.lower().endswith((".csv", ".tsv")):
            text = surface.flat_table(shown).map(csv_cell).to_csv(index=False, sep="\t" if args.out.lower().endswith(".tsv") else ",")
            ok = write_out(args.out, "\ufeff" + text)  # formula-like cells start with ' (OWASP), as every CSV klue-viz writes
        else:
            ok = write_out(args.out, json.dumps({"task": task.facts.name, "runs": [r.run for r in results], "errors": surface.as_records(shown)},
                                                ensure_ascii=False, indent=2))
        if not ok:
            return 2
    return 0


def add_errors_command(commands: argparse._SubParsersAction) -> None:
    """`klue-viz errors` and its options."""
    command = commands.add_parser("errors", help="errors by surface form: entity strings, words, slot values... most frequent first")
    command.add_argument("--task", choices=list(TASKS), required=True)
    command.add_argument("--gold", required=True, help="official file, klue_benchmark/ folder, JSON(L) export of klue/klue, or hf[:split]")
    command.add_argument("--pred", required=True, action="append", help="prediction file (repeat to compare runs side by side)")
    command.add_argument("--top", type=int, default=50, metavar="N", help="rows to list and write (default 50; 0: all)")
    command.add_argument("--out", help="write the table: .json, or .csv/.tsv (guids space-separated)")
    command.add_argument("--strict", action="store_true", help="score gold examples without a prediction as wrong")


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


def add_compare_commands(commands: argparse._SubParsersAction) -> None:
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


def add_gold_commands(commands: argparse._SubParsersAction) -> None:
    """`klue-viz gold versions|make|export`: gold versions kept in the database, and the corrected gold written out."""
    gold = commands.add_parser("gold", help="gold versions (accepted corrections) and the corrected gold file or dataset")
    actions = gold.add_subparsers(dest="action", required=True)
    listed = actions.add_parser("versions", help="list the gold versions of a task kept in KLUE_VIZ_DB")
    listed.add_argument("--task", choices=list(TASKS), required=True)
    make = actions.add_parser("make", help="keep the accepted corrections stored in KLUE_VIZ_DB as a named gold version")
    make.add_argument("--task", choices=list(TASKS), required=True)
    make.add_argument("--gold", required=True, help="the official file or klue_benchmark/ folder the corrections apply to")
    make.add_argument("--name", help="the version's name (default: 'dev + corrections, N records, <date>')")
    make.add_argument("--reviews", type=positive, default=1, help="reviews a unit needs before its correction counts (default 1)")
    export = actions.add_parser("export", help="write the corrected official file whole and/or a Hugging Face dataset folder")
    export.add_argument("--task", choices=list(TASKS), required=True)
    export.add_argument("--gold", required=True, help="the official file or klue_benchmark/ folder the corrections apply to")
    export.add_argument("--corrections", help="a corrections JSONL file")
    export.add_argument("--gold-version", help="a gold version kept in KLUE_VIZ_DB, by name")
    export.add_argument("--file", help="write the corrected official file (whole, in its format) here")
    export.add_argument("--dataset", help="write a Hugging Face datasets folder here, a new or empty one (save_to_disk, Parquet, README.md card)")
    export.add_argument("--force", action="store_true", help="replace the file --file names when it exists (never the gold it reads)")


def gold_command(args: argparse.Namespace) -> int:
    """List, make and export gold versions."""
    task = get_task(args.task)
    try:
        if args.action == "versions":
            versions = gold_versions.GoldVersions(annotation_store.Store()).for_task(task.facts.name)
            for version in versions:
                print(terminal(f"{version.name}  ({version.records} record(s), by {version.created_by or '(anonymous)'} at {version.created_at[:19]})"))
            if not versions:
                print(f"no {task.facts.name.upper()} gold version yet")
            return 0
        if args.action == "make":
            store = annotation_store.Store()
            version = corrected_gold.make_version(task, args.gold, store, store.find(task=task.facts.name), name=args.name, reviews=args.reviews)
            say(f"kept gold version {version.name!r} in {store.location}")
            return 0
        if not (args.file or args.dataset):
            raise InputError("give --file (the corrected official file) and/or --dataset (a Hugging Face dataset folder)")
        check_export_file(task, args.gold, args.file, args.force)
        if args.dataset:
            hf_export.check_dataset_folder(Path(args.dataset))
        if args.corrections and args.gold_version:
            raise InputError("give --corrections or --gold-version, not both")
        if args.corrections:
            corrected = corrected_gold.CorrectedGold.from_file(task, args.gold, args.corrections)
        elif args.gold_version:
            corrected = corrected_gold.CorrectedGold.from_version(task, args.gold, args.gold_version)
        else:
            raise InputError("give --corrections FILE or --gold-version NAME")
        for _, reason in corrected.file.left_out[:SHOWN_PROBLEMS]:
            say(f"not applied: {reason}", error=True)
        if len(corrected.file.left_out) > SHOWN_PROBLEMS:
            say(f"... and {len(corrected.file.left_out) - SHOWN_PROBLEMS} more correction(s) not applied", error=True)
        if args.file:
            Path(args.file).write_text(corrected.file.text, encoding="utf-8")
            say(f"wrote {args.file}: the whole corrected file, {len(corrected.file.changed)} record(s) changed")
        if args.dataset:
            hf_export.export_dataset(task, corrected.file, corrected.base_name, Path(args.dataset), corrected.version, corrected.base)
            say(f"wrote the dataset {args.dataset} (load_from_disk, Parquet under data/, README.md card)")
        return 0
    except (InputError, annotation_store.StoreError, OSError) as err:
        say(f"klue-viz: {err}", error=True)
        return 2


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="klue-viz", description="Evaluation and error analysis for the KLUE benchmark")
    commands = parser.add_subparsers(dest="command", required=True)
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
    notes = commands.add_parser("annotations", help="export or import error annotations (the store named by KLUE_VIZ_DB)")
    actions = notes.add_subparsers(dest="action", required=True)
    export = actions.add_parser("export", help="write annotations to a .jsonl or .csv file")
    export.add_argument("--task", choices=list(TASKS))
    export.add_argument("--out", required=True)
    load = actions.add_parser("import", help="merge a .jsonl or .csv export into the store")
    load.add_argument("file")
    load.add_argument("--overwrite-conflicts", action="store_true", help="also write records older than the stored ones")
    actions.add_parser("new-db", help="set an unreadable SQLite database aside and start a new one")
    add_discovery_commands(commands)
    add_errors_command(commands)
    add_compare_commands(commands)
    add_gold_commands(commands)
    add_runs_commands(commands)
    add_probe_commands(commands)
    args = parser.parse_args(argv)
    if argv is None and args.command == "evaluate":
        # A process of its own that reads, scores and exits: its millions of small containers hold no cycles, and the
        # collector's passes over them (as reading ends, klue_viz.reading.records.bulk_reading) cost about a tenth of
        # the run. A call from Python (argv given) leaves the caller's collector alone.
        gc.disable()
    handlers = {"evaluate": evaluate_command, "report": report_command, "annotations": annotations_command,
                "slices": slices_command, "suspects": suspects_command, "errors": errors_command, "gold": gold_command,
                "compare": compare_command, "gate": gate_command, "runs": runs_command,
                "probe": probe_command}
    try:
        code = handlers[args.command](args)
        sys.stdout.flush()  # here, where a reader that left is caught, not at exit
        return code
    except BrokenPipeError:
        # `klue-viz runs list | head`: the reader has what it wanted. Python's advice: point stdout at devnull so the
        # interpreter's own flush at exit does not fail again; 141 is what a tool killed by SIGPIPE exits with.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141


if __name__ == "__main__":
    sys.exit(main())
