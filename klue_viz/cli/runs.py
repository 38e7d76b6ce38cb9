"""`klue-viz runs add | list | remove`: prediction runs in the store named by KLUE_VIZ_DB, without a browser.

`add` takes files, folders (each file's model is the folder it sits in, as the app's folder upload
has it) and zips (the zip, or the folder inside it, names the model); each file's task is detected,
the file is stored as a run under the app's rules (names, the upload size limit, the same bytes
stored once), then scored against the gold in use and its result kept (klue_viz/store/kept_results.py), so the
app shows it without scoring it. The gold is `--gold`, else the folder KLUE_VIZ_DATA_DIR names
(the app's default), else the embedded demo; a run whose task has no gold there is stored and
scored later, when a page opens it with its gold.
"""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from klue_viz.core.gc_pause import bulk_reading
from klue_viz.core.lazy import lazy_module
from klue_viz.core.problems import InputError
from klue_viz.drawing.markup import visible
from klue_viz.reading.demo import DEMO_BENCHMARK
from klue_viz.reading.gold_folders import DATA_DIR_ENV
from klue_viz.reading.records import RecordFile, read_bytes
from klue_viz.reading.uploads import check_size
from klue_viz.scoring.evaluate import Gold, gold_file, load_gold, official_file
from klue_viz.tasks import TASKS, get_task
from klue_viz.tasks.base import Task

if TYPE_CHECKING:
    from klue_viz.scoring import benchmark as workspace
    from klue_viz.store import annotations as store
    from klue_viz.store import kept_results as kept
    from klue_viz.store import parsed_golds
    from klue_viz.store import runs as stored
else:  # the database, pandas and pyarrow load when a `runs` command runs, not with every command of the CLI
    kept = lazy_module("klue_viz.store.kept_results")
    parsed_golds = lazy_module("klue_viz.store.parsed_golds")
    workspace = lazy_module("klue_viz.scoring.benchmark")
    stored = lazy_module("klue_viz.store.runs")
    store = lazy_module("klue_viz.store.annotations")


def say(text: str, error: bool = False) -> None:
    """One line of file text for a terminal: control and bidi characters as codes."""
    print(visible(text).replace("\n", "\\n"), file=sys.stderr if error else sys.stdout, flush=error)


def add_runs_commands(commands: argparse._SubParsersAction) -> None:
    """The `runs` command and its actions, on the CLI's sub-parsers."""
    runs = commands.add_parser("runs", help="add, list or remove the prediction runs the app shows (the store named by KLUE_VIZ_DB)")
    actions = runs.add_subparsers(dest="action", required=True)
    add = actions.add_parser("add", help="store prediction files (files, folders, zips) as runs, each scored once and kept")
    add.add_argument("paths", nargs="+", metavar="PATH", help="a prediction file, a folder of them (the folder names the model) or a zip")
    add.add_argument("--model", default="", help="the model of every file given (default: the folder or zip each file came in)")
    add.add_argument("--gold", help=f"official file, klue_benchmark/ folder, JSON(L) export of klue/klue, or hf[:split] "
                                    f"(default: the folder {DATA_DIR_ENV} names, else the embedded demo, as the app)")
    add.add_argument("--strict", action="store_true", help="score gold examples without a prediction as wrong (as the app's Strict)")
    add.add_argument("--uploader", default=os.environ.get("USER", ""), help="who added the runs (default: $USER)")
    listing = actions.add_parser("list", help="the stored runs, one line each")
    listing.add_argument("--task", choices=list(TASKS))
    remove = actions.add_parser("remove", help="remove stored runs and their kept results (annotations are kept unless asked)")
    remove.add_argument("--task", required=True, choices=list(TASKS))
    remove.add_argument("names", nargs="+", metavar="NAME", help="run names, as `runs list` shows them")
    remove.add_argument("--delete-annotations", action="store_true", help="also delete the annotations of the removed runs")


def runs_command(args: argparse.Namespace) -> int:
    """Exit code as `evaluate`: 0 when something was done, 1 when nothing could be, 2 for a store or gold that cannot be used."""
    try:
        database = store.Store()
        runs, results = stored.RunStore(database), kept.KeptResults(database)
    except (store.StoreError, OSError) as err:
        say(f"klue-viz: {err}", error=True)
        return 2
    if args.action == "list":
        return list_runs(runs, args.task)
    if args.action == "remove":
        return remove_runs(runs, results, args.task, args.names, args.delete_annotations)
    return add_runs(runs, results, args)


def list_runs(runs: stored.RunStore, task: str | None) -> int:
    stored = runs.list(task)
    for run in stored:
        say("\t".join([run.task, run.name, run.model or "-", run.file_name, f"{run.size} bytes", run.created_at[:19], run.uploader or "-"]))
    say(f"{len(stored)} run(s) in {runs.store.location}", error=True)
    return 0


def remove_runs(runs: stored.RunStore, results: kept.KeptResults, task: str, names: list[str], delete_annotations: bool) -> int:
    removed = 0
    for name in names:
        run = runs.get(task, name)
        if run is None:
            say(f"klue-viz: there is no {task.upper()} run named {name}", error=True)
            continue
        try:
            deleted = kept.remove_run(results, runs, task, name, run.version, delete_annotations=delete_annotations)
        except stored.RunConflict as err:
            say(f"klue-viz: {name}: {err}", error=True)
            continue
        removed += 1
        say(f"removed {task} {name}" + (f" and {deleted} annotation(s)" if delete_annotations else "; its annotations are kept"))
    return 0 if removed else 1


@dataclass
class GoldChoice:
    """The gold of one task for `runs add`, or why there is none."""

    gold: Gold | None
    reason: str = ""


def gold_of(task_name: str, given: str | None, parsed: parsed_golds.ParsedGolds | None = None) -> GoldChoice:
    """The task's gold: --gold, else KLUE_VIZ_DATA_DIR's folder, else the embedded demo (the app's default).

    With `parsed`, a gold file is read through the store's parsed golds, so the app's first page on this store reads
    back the gold parsed here instead of parsing it again."""
    task = get_task(task_name)
    try:
        if given:
            return GoldChoice(_load(task, given, parsed))
        folder = os.environ.get(DATA_DIR_ENV, "").strip()
        if folder:
            found = official_file(task, Path(folder).expanduser())
            if found is not None:
                return GoldChoice(_load(task, str(found.resolve()), parsed))  # resolved, as the app names it
        return GoldChoice(_load(task, str(DEMO_BENCHMARK), parsed))
    except InputError as err:
        return GoldChoice(None, str(err))


def _load(task: Task, source: str, parsed: parsed_golds.ParsedGolds | None) -> Gold:
    if parsed is None or source == "hf" or source.startswith("hf:"):
        return load_gold(task, source)
    path = gold_file(task, Path(source))
    return parsed.gold(task, read_bytes(path), str(path))


def expand(path_text: str, model: str) -> list[workspace.ModelFile]:
    """The prediction files a PATH names: a file, each file of a folder, each member of a zip; sizes checked before reading."""
    path = Path(path_text)
    if path.is_dir():
        return [workspace.ModelFile(Path(f.name).name, f.data, model or f.model) for f in workspace.folder_files(path)]
    if not path.is_file():
        raise InputError(f"{path_text}: no such file or folder")
    check_size(str(path), path.stat().st_size)
    return [workspace.ModelFile(f.name, f.data, model or f.model) for f in workspace.prediction_files(path.name, read_bytes(path))]


def add_runs(runs: stored.RunStore, results: kept.KeptResults, args: argparse.Namespace) -> int:
    if args.gold and not (args.gold == "hf" or args.gold.startswith("hf:")) and not Path(args.gold).exists():
        say(f"klue-viz: --gold {args.gold}: no such file or folder", error=True)
        return 2
    files: list[tuple[str, workspace.ModelFile | None, str]] = []  # (shown name, file, why it was refused)
    for path in args.paths:
        try:
            found = expand(path, args.model)
        except InputError as err:
            files.append((path, None, str(err)))
            continue
        single = len(found) == 1 and not Path(path).is_dir()
        files += [(path if single else f"{path}:{f.name}", f, "") for f in found]
    golds: dict[str, GoldChoice] = {}
    added = 0
    progress = Progress(len(files))
    for k, (shown, file, refused) in enumerate(files):
        progress.step(k, shown)
        if file is None:
            say(f"refused\t{shown}\t{refused}")
            continue
        # A file's records and frames are many small containers that go with it: the cyclic collector, paused, does not
        # scan them again and again while they live (as bulk_reading does for reading alone).
        with bulk_reading():
            added += add_file(runs, results, file, shown, golds, args)
    progress.done()
    return 0 if added else 1


def add_file(runs: stored.RunStore, results: kept.KeptResults, file: workspace.ModelFile, shown: str,
             golds: dict[str, GoldChoice], args: argparse.Namespace) -> bool:
    """Store one prediction file as a run and score it against its task's gold (loaded into `golds` the first time);
    says what was done in one line. False when the file was refused."""
    try:
        task_name, records = workspace.read_and_detect(file)
        run = runs.add(task_name, file.name, file.data, model=file.model, uploader=args.uploader)
    except (InputError, store.StoreError, stored.RunConflict) as err:
        say(f"refused\t{shown}\t{err}")
        return False
    if task_name not in golds:
        golds[task_name] = gold_of(task_name, args.gold, parsed_golds.ParsedGolds(runs.store))
    say(score_line(results, run, file.data, golds[task_name], args.strict, records))
    return True


def score_line(results: kept.KeptResults, run: stored.Run, data: bytes, choice: GoldChoice, strict: bool,
               records: RecordFile | None = None) -> str:
    """Score a stored run against its gold, keep the result, and say so in one line (and on stderr, as `evaluate` does,
    when it looks scored against the wrong gold). `records`: the file's records as read to tell its task (scored from,
    not read again)."""
    head = f"{run.task}\t{run.name}\t{run.model or '-'}"
    if choice.gold is None:
        return f"{head}\tstored, not scored: no gold for it ({choice.reason}); it is scored when a page opens it with its gold"
    task = get_task(run.task)
    scored, failures = kept.results_for(results, task, choice.gold, [kept.RunInput(run.name, kept.sha256(data), run.file_name, lambda: data, records)], strict)
    if run.name in failures:
        return f"{head}\tstored, not scored against {choice.gold.source}: {failures[run.name]}"
    result = scored[run.name]
    if result.wrong_gold:  # as `evaluate` warns: the few guids that match make metrics that look valid
        say(f"klue-viz: WARNING: {run.name}: {result.wrong_gold}", error=True)
    c = result.coverage
    metrics = " ".join(f"{m.key}={'n/a' if result.scores.values.get(m.key) is None else format(result.scores.values[m.key], '.2f')}"
                       for m in task.facts.metrics)
    return f"{head}\t{c.n_scored}/{c.n_gold} scored, {c.n_missing} missing, {c.n_extra} extra, {c.n_invalid} unreadable\t{metrics}"


class Progress:
    """`[k/N] file` on stderr for more than one file: rewritten in place on a terminal, every tenth of the way otherwise."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.tty = sys.stderr.isatty()
        self.every = max(1, total // 10)

    def step(self, k: int, name: str) -> None:
        if self.total < 2:
            return
        if self.tty:
            print(f"\r\x1b[2K[{k + 1}/{self.total}] {visible(name)[:60]}", end="", file=sys.stderr, flush=True)
        elif k % self.every == 0:
            print(f"[{k + 1}/{self.total}] {visible(name)}", file=sys.stderr, flush=True)

    def done(self) -> None:
        if self.total >= 2 and self.tty:
            print(file=sys.stderr)
