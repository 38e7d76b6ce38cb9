"""`klue-viz evaluate`: the official KLUE metrics of prediction files, for scripts and CI."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from klue_viz.io import read_bytes, read_records
from klue_viz.problems import InputError
from klue_viz.tasks import TASKS, detect_task, get_task

if TYPE_CHECKING:
    from klue_viz.evaluate import RunResult

SHOWN_PROBLEMS = 10


def format_value(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"


def report(result: RunResult) -> str:
    """A plain-text table of one run's metrics, coverage and first problems."""
    lines = [f"== {result.run} ({result.task.name}) =="]
    width = max(len(m.key) for m in result.task.metrics)
    for metric in result.task.metrics:
        value = result.scores.values.get(metric.key)
        reason = result.scores.reasons.get(metric.key)
        interval = (result.intervals or {}).get(metric.key)
        spread = f"  [{interval[0]:.2f}, {interval[1]:.2f}]" if interval else ""
        lines.append(f"  {metric.key:<{width}}  {format_value(value):>7}{spread}" + (f"  ({reason})" if reason else ""))
    c = result.coverage
    lines.append(f"  coverage: {c.n_scored}/{c.n_gold} gold scored, {c.n_missing} missing, {c.n_extra} extra, {c.n_invalid} unreadable")
    lines.extend(f"  note: {note}" for note in result.notes)
    for problem in result.problems[:SHOWN_PROBLEMS]:
        lines.append(f"  problem: {problem}")
    if len(result.problems) > SHOWN_PROBLEMS:
        lines.append(f"  ... and {len(result.problems) - SHOWN_PROBLEMS} more problems (all of them are in --out)")
    return "\n".join(lines)


def guess_task(paths: list[str]) -> str:
    records = read_records(read_bytes(paths[0]), Path(paths[0]).name).records
    found = detect_task([r for _, r in records])
    if found is None:
        raise InputError(f"{paths[0]}: cannot tell which KLUE task this file is for; pass --task")
    return found


def evaluate_command(args: argparse.Namespace) -> int:
    from klue_viz.evaluate import evaluate_file, load_gold  # pandas: only for the command that scores

    try:
        task = get_task(args.task) if args.task else get_task(guess_task(args.pred))
        gold = load_gold(task, args.gold)
    except (InputError, KeyError) as err:
        print(f"klue-viz: {err.args[0] if isinstance(err, KeyError) else err}", file=sys.stderr)
        return 2
    for problem in gold.problems[:SHOWN_PROBLEMS]:
        print(f"gold problem: {problem}", file=sys.stderr)
    results, failures = [], []
    for path in args.pred:
        try:
            result = evaluate_file(task, gold, path, strict=args.strict)
            if args.bootstrap:
                from klue_viz.bootstrap import confidence_intervals

                result.intervals = confidence_intervals(task, result.frames, samples=args.bootstrap)
        except InputError as err:
            failures.append(str(err))
            print(f"klue-viz: {err}", file=sys.stderr)
            continue
        results.append(result)
        print(report(result))
    if args.out:
        payload = {"task": task.name, "gold": gold.source, "strict": args.strict, "runs": [r.to_dict() for r in results]}
        if failures:
            payload["failed"] = failures
        if len(args.pred) == 1 and results:
            payload["metrics"] = results[0].scores.values
        Path(args.out).write_text(json.dumps(payload, ensure_ascii=False, indent=2), encoding="utf-8")
    return 0 if results else 1


def annotations_command(args: argparse.Namespace) -> int:
    """export / import / new-db against the store named by KLUE_VIZ_DB (or the default file)."""
    from klue_viz.annotations.files import export_text, parse
    from klue_viz.annotations.store import Store, StoreError, database_url, set_aside

    try:
        if args.action == "new-db":
            url = database_url()
            if not url.startswith("sqlite:///"):
                raise StoreError("new-db only applies to a SQLite file")
            path = Path(url.removeprefix("sqlite:///"))
            if path.exists():
                print(f"kept the old database as {set_aside(path)}")
            print(f"new annotation database: {Store(url).location}")
            return 0
        store = Store()
        if args.action == "export":
            items = store.find(task=args.task)
            Path(args.out).write_text(export_text(items, args.out), encoding="utf-8")
            print(f"wrote {len(items)} annotation(s) from {store.location} to {args.out}")
            return 0
        items, problems = parse(read_bytes(args.file), Path(args.file).name)
        for problem in problems[:SHOWN_PROBLEMS]:
            print(f"problem: {problem}", file=sys.stderr)
        plan = store.plan_import(items)
        print(f"{args.file}: {plan.summary()}")
        for item, current in plan.conflicting[:SHOWN_PROBLEMS]:
            print(f"  conflict: {item.task} {item.guid} {item.run} by {item.annotator}: stored {current.updated_at} is newer than {item.updated_at}")
        written = store.apply_import(plan, overwrite_conflicts=args.overwrite_conflicts)
        print(f"wrote {written} annotation(s) to {store.location}")
        return 0 if items or not problems else 1
    except (StoreError, InputError) as err:
        print(f"klue-viz: {err}", file=sys.stderr)
        return 2


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="klue-viz", description="Evaluation and error analysis for the KLUE benchmark")
    commands = parser.add_subparsers(dest="command", required=True)
    evaluate = commands.add_parser("evaluate", help="official metrics of one or more prediction files")
    evaluate.add_argument("--task", choices=list(TASKS), help="the KLUE task (guessed from the first file when left out)")
    evaluate.add_argument("--gold", required=True,
                          help="official file, klue_benchmark/ folder, JSON(L) export of klue/klue, or hf[:split]")
    evaluate.add_argument("--pred", required=True, action="append", help="prediction file (repeat for several runs)")
    evaluate.add_argument("--out", help="write metrics, coverage and problems as JSON")
    evaluate.add_argument("--strict", action="store_true", help="score gold examples without a prediction as wrong")
    evaluate.add_argument("--bootstrap", type=int, default=0, metavar="N",
                          help="also give 95%% confidence intervals from N bootstrap resamples of the examples")
    notes = commands.add_parser("annotations", help="export or import error annotations (the store named by KLUE_VIZ_DB)")
    actions = notes.add_subparsers(dest="action", required=True)
    export = actions.add_parser("export", help="write annotations to a .jsonl or .csv file")
    export.add_argument("--task", choices=list(TASKS))
    export.add_argument("--out", required=True)
    load = actions.add_parser("import", help="merge a .jsonl or .csv export into the store")
    load.add_argument("file")
    load.add_argument("--overwrite-conflicts", action="store_true", help="also write records older than the stored ones")
    actions.add_parser("new-db", help="set an unreadable SQLite database aside and start a new one")
    args = parser.parse_args(argv)
    return evaluate_command(args) if args.command == "evaluate" else annotations_command(args)


if __name__ == "__main__":
    sys.exit(main())
