"""`klue-viz slices`, `klue-viz suspects` and `klue-viz errors`: the discovery views, headless (where a run fails
most, gold records that look wrong, errors by surface form)."""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from klue_viz.cli.common import (
    FEATURES_HELP,
    check_out,
    distinct_run_names,
    featured,
    load_features,
    positive,
    resamples,
    say,
    stored_remarks,
    terminal,
    write_out,
)
from klue_viz.core.lazy import lazy_module
from klue_viz.core.problems import InputError
from klue_viz.drawing.markup import csv_cell
from klue_viz.scoring.evaluate import RunResult, evaluate_file, load_gold
from klue_viz.tasks import TASKS, Task, get_task

if TYPE_CHECKING:
    from klue_viz.discovery import features, slices
    from klue_viz.discovery import suspects as suspect_queue
    from klue_viz.scoring import surface_forms as surface
    from klue_viz.scoring.evaluate import Gold
else:  # pandas and cleanlab load when a command runs
    features = lazy_module("klue_viz.discovery.features")
    slices = lazy_module("klue_viz.discovery.slices")
    suspect_queue = lazy_module("klue_viz.discovery.suspects")
    surface = lazy_module("klue_viz.scoring.surface_forms")


def add_commands(commands: argparse._SubParsersAction) -> None:
    """`klue-viz slices`, `klue-viz suspects` and `klue-viz errors`, with their options."""
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

    command = commands.add_parser("errors", help="errors by surface form: entity strings, words, slot values... most frequent first")
    command.add_argument("--task", choices=list(TASKS), required=True)
    command.add_argument("--gold", required=True, help="official file, klue_benchmark/ folder, JSON(L) export of klue/klue, or hf[:split]")
    command.add_argument("--pred", required=True, action="append", help="prediction file (repeat to compare runs side by side)")
    command.add_argument("--top", type=int, default=50, metavar="N", help="rows to list and write (default 50; 0: all)")
    command.add_argument("--out", help="write the table: .json, or .csv/.tsv (guids space-separated)")
    command.add_argument("--strict", action="store_true", help="score gold examples without a prediction as wrong")


def _load_runs(args: argparse.Namespace) -> tuple[Task, Gold, list[RunResult]]:

    check_out(args.out)
    task = get_task(args.task)
    gold = load_gold(task, args.gold)
    columns, _ = load_features(getattr(args, "features", None), task, gold)
    results = [featured(evaluate_file(task, gold, path, strict=args.strict), columns) for path in args.pred]
    return task, gold, results


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


