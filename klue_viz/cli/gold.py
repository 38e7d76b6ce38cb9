"""`klue-viz gold versions | make | export`: gold versions (accepted corrections) kept in the database, and the
corrected gold written out whole or as a Hugging Face dataset."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from klue_viz.cli.common import SHOWN_PROBLEMS, check_out, positive, say, terminal
from klue_viz.core.lazy import lazy_module
from klue_viz.core.problems import InputError
from klue_viz.scoring.evaluate import gold_file
from klue_viz.tasks import TASKS, Task, get_task

if TYPE_CHECKING:
    from klue_viz.discovery import corrected_gold, hf_export
    from klue_viz.store import annotations as annotation_store
    from klue_viz.store import gold_versions
else:  # SQLAlchemy, pandas and datasets load when the command runs
    annotation_store = lazy_module("klue_viz.store.annotations")
    gold_versions = lazy_module("klue_viz.store.gold_versions")
    corrected_gold = lazy_module("klue_viz.discovery.corrected_gold")
    hf_export = lazy_module("klue_viz.discovery.hf_export")


def add_commands(commands: argparse._SubParsersAction) -> None:
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
