"""`klue-viz annotations export | import | new-db`: the error annotations of the store named by KLUE_VIZ_DB, as files."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from klue_viz.cli.common import SHOWN_PROBLEMS, check_out, say
from klue_viz.core.lazy import lazy_module
from klue_viz.core.problems import InputError
from klue_viz.reading.records import read_bytes
from klue_viz.tasks import TASKS

if TYPE_CHECKING:
    from klue_viz.store import annotation_files
    from klue_viz.store import annotations as annotation_store
else:  # SQLAlchemy loads when the command runs
    annotation_files = lazy_module("klue_viz.store.annotation_files")
    annotation_store = lazy_module("klue_viz.store.annotations")


def add_commands(commands: argparse._SubParsersAction) -> None:
    """`klue-viz annotations` and its actions."""
    notes = commands.add_parser("annotations", help="export or import error annotations (the store named by KLUE_VIZ_DB)")
    actions = notes.add_subparsers(dest="action", required=True)
    export = actions.add_parser("export", help="write annotations to a .jsonl or .csv file")
    export.add_argument("--task", choices=list(TASKS))
    export.add_argument("--out", required=True)
    load = actions.add_parser("import", help="merge a .jsonl or .csv export into the store")
    load.add_argument("file")
    load.add_argument("--overwrite-conflicts", action="store_true", help="also write records older than the stored ones")
    actions.add_parser("new-db", help="set an unreadable SQLite database aside and start a new one")


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
