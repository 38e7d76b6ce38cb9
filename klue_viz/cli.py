"""`klue-viz evaluate`: the official KLUE metrics of prediction files, for scripts and CI."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from klue_viz.discovery.calibration import run_calibration
from klue_viz.evaluate import RunResult, evaluate_file, load_gold
from klue_viz.io import read_bytes, read_records
from klue_viz.lazy import lazy_module
from klue_viz.markup import visible
from klue_viz.problems import InputError
from klue_viz.tasks import TASKS, detect_task, get_task

if TYPE_CHECKING:
    from klue_viz import bootstrap, workspace
    from klue_viz import report as html_report
    from klue_viz.annotations import files as annotation_files
    from klue_viz.annotations import store as annotation_store
    from klue_viz.discovery import features, slices
    from klue_viz.discovery import suspects as suspect_queue
else:  # the commands that need pandas, SQLAlchemy or cleanlab load them when they run: `klue-viz evaluate` needs numpy only
    bootstrap = lazy_module("klue_viz.bootstrap")
    workspace = lazy_module("klue_viz.workspace")
    html_report = lazy_module("klue_viz.report")
    annotation_files = lazy_module("klue_viz.annotations.files")
    annotation_store = lazy_module("klue_viz.annotations.store")
    features = lazy_module("klue_viz.discovery.features")
    slices = lazy_module("klue_viz.discovery.slices")
    suspect_queue = lazy_module("klue_viz.discovery.suspects")

SHOWN_PROBLEMS = 10


def terminal(text) -> str:
    """File text as it may reach a terminal: control and bidi characters as codes, a newline as \\n (one line per item)."""
    return visible(text).replace("\n", "\\n")


def say(text, error: bool = False) -> None:
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
    lines.append(f"  coverage: {c.n_scored}/{c.n_gold} gold scored, {c.n_missing} missing, {c.n_extra} extra, {c.n_invalid} unreadable")
    lines.extend(f"  note: {terminal(note)}" for note in result.notes)
    for problem in result.problems[:SHOWN_PROBLEMS]:
        lines.append(f"  problem: {terminal(problem)}")
    if len(result.problems) > SHOWN_PROBLEMS:
        lines.append(f"  ... and {len(result.problems) - SHOWN_PROBLEMS} more problems (all of them are in --out)")
    return "\n".join(lines)


def guess_task(paths: list[str]) -> str:
    records = read_records(read_bytes(paths[0]), Path(paths[0]).name).records
    found = detect_task([r for _, r in records])
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


def write_out(path: str, text: str) -> bool:
    """Write an --out file; a failure (permission, full disk) is one line on stderr, not a traceback."""
    try:
        Path(path).write_text(text, encoding="utf-8")
    except OSError as err:
        say(f"klue-viz: cannot write --out {path}: {err.strerror or err}", error=True)
        return False
    return True


def evaluate_command(args: argparse.Namespace) -> int:
    if any(Path(p).is_dir() for p in args.pred):
        return evaluate_folders(args)

    try:
        check_out(args.out)
        task = get_task(args.task) if args.task else get_task(guess_task(args.pred))
        gold = load_gold(task, args.gold)
    except (InputError, KeyError) as err:
        say(f"klue-viz: {err.args[0] if isinstance(err, KeyError) else err}", error=True)
        return 2
    for problem in gold.problems[:SHOWN_PROBLEMS]:
        say(f"gold problem: {problem}", error=True)
    results, failures = [], []
    for path in args.pred:
        try:
            result = evaluate_file(task, gold, path, strict=args.strict)
            if args.bootstrap:

                result.intervals = bootstrap.confidence_intervals(task, result.frames, samples=args.bootstrap)
        except InputError as err:
            failures.append(str(err))
            say(f"klue-viz: {err}", error=True)
            continue
        results.append(result)
        print(report(result))
    if args.out:
        payload = {"task": task.facts.name, "gold": gold.source, "strict": args.strict, "runs": [run_record(r) for r in results]}
        if failures:
            payload["failed"] = failures
        if len(args.pred) == 1 and results:
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
    for failure in done.failures:
        print(f"klue-viz: {failure}", file=sys.stderr)
    for run in done.runs:
        if args.bootstrap:
            run.result.intervals = run.intervals = bootstrap.confidence_intervals(run.result.task, run.result.frames, samples=args.bootstrap)
    if done.runs:
        print(workspace.text_table(done.runs))
    if args.out:
        payload = {"gold": done.gold_sources, "strict": args.strict, "runs": [run.to_dict() for run in done.runs]}
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
        results = [evaluate_file(task, gold, path, strict=args.strict) for path in args.pred]
        distinct_run_names(results)
    except (InputError, KeyError) as err:
        print(f"klue-viz: {err.args[0] if isinstance(err, KeyError) else err}", file=sys.stderr)
        return 2
    remarks = stored_remarks(task.facts.name)
    html = html_report.build_report(task, results, gold.source, remarks, errors=args.errors, samples=args.bootstrap)
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


def run_record(result: RunResult) -> dict:
    """A run as written by --out: metrics and coverage, plus calibration when the run gave probabilities."""

    record = result.to_dict()
    if getattr(result.task, "labels", None):  # only label tasks have probabilities: the others never build frames here
        found = run_calibration(result.task, result.frames.examples)
        if found is not None:
            record["calibration"] = found.to_dict()
    return record


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


def add_discovery_commands(commands) -> None:
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
            command.add_argument("--train", help="the task's training file in the official format, a klue_benchmark/ folder holding it, "
                                                  "or hf (the train split): adds 'seen in training' (NER, RE, MRC, WoS)")
            command.add_argument("--bootstrap", type=resamples, default=100, metavar="N",
                                 help="resamples for each slice's 95%% interval (default 100; 0 leaves intervals out)")


def _load_runs(args: argparse.Namespace):

    check_out(args.out)
    task = get_task(args.task)
    gold = load_gold(task, args.gold)
    results = [evaluate_file(task, gold, path, strict=args.strict) for path in args.pred]
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
    for k, item in enumerate(found, 1):
        conditions = " & ".join(f"{key}={value}" for key, value in item.conditions.items())
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
        found = suspect_queue.suspects(task, results, top=args.top)
    except (InputError, KeyError) as err:
        say(f"klue-viz: {err.args[0] if isinstance(err, KeyError) else err}", error=True)
        return 2
    for k, item in enumerate(found, 1):
        turn = f" turn {item.turn}" if item.turn is not None else ""
        print(terminal(f"{k:>3}. {item.guid}{turn} {item.unit}: gold {item.gold} -> {item.proposed}  score {item.score:.3f}"))
    if args.out:
        payload = {"task": task.facts.name, "runs": [r.run for r in results], "suspects": [item.to_dict() for item in found]}
        Path(args.out).write_text(json.dumps(payload, ensure_ascii=False, indent=2), encoding="utf-8")
    return 0


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
    report = commands.add_parser("report", help="one self-contained HTML report of one or two runs (opens offline)")
    report.add_argument("--task", required=True, choices=list(TASKS))
    report.add_argument("--gold", required=True, help="official file, klue_benchmark/ folder, JSON(L) export of klue/klue, or hf[:split]")
    report.add_argument("--pred", required=True, action="append", help="prediction file; give two for a paired comparison")
    report.add_argument("--out", required=True, help="the HTML file to write")
    report.add_argument("--errors", type=int, default=50, metavar="N", help="how many instructive errors to draw (default 50)")
    report.add_argument("--bootstrap", type=resamples, default=1000, metavar="N", help="bootstrap resamples for the 95%% intervals (default 1000)")
    report.add_argument("--strict", action="store_true", help="score gold examples without a prediction as wrong")
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
    args = parser.parse_args(argv)
    handlers = {"evaluate": evaluate_command, "report": report_command, "annotations": annotations_command,
                "slices": slices_command, "suspects": suspects_command}
    return handlers[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
