"""`klue-viz runs add | list | remove`: prediction runs in the store named by KLUE_VIZ_DB, without a browser.

`add` takes files, folders and zips; each file's run name and model come from where it sits, as the app's folder and
zip uploads read them (klue_viz.scoring.benchmark.run_and_model: `<model>/<checkpoint>/ner.jsonl` and
`<model>/ner/<checkpoint>.jsonl` are run `<checkpoint>` of `<model>`); each file's task is detected, the file is
stored as a run under the app's rules (the upload size limit, the same bytes stored once), then scored against the
gold in use and its result kept (klue_viz/store/kept_results.py), so the app shows it without scoring it. The gold is
`--gold`, else the folder KLUE_VIZ_DATA_DIR names (the app's default), else the embedded demo; a run whose task has no
gold there is stored and scored later, when a page opens it with its gold.
"""

from __future__ import annotations

import argparse
import os
import sys
import zipfile
from dataclasses import replace
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from klue_viz.core.gc_pause import bulk_reading
from klue_viz.core.lazy import lazy_module
from klue_viz.core.problems import InputError
from klue_viz.core.steps import natural_key, step_of
from klue_viz.drawing.markup import visible
from klue_viz.reading.gold_folders import DATA_DIR_ENV
from klue_viz.reading.records import RecordFile, read_bytes
from klue_viz.reading.suite_files import EXPECTED, MANIFEST, MANIFEST_FIELDS, folder_is_suite
from klue_viz.reading.uploads import check_size
from klue_viz.scoring.evaluate import Gold, gold_file, gold_from_bytes, load_gold
from klue_viz.store.gold_choice import GoldChoice, GoldReaders, gold_choice
from klue_viz.tasks import TASKS, get_task
from klue_viz.tasks.base import Task

if TYPE_CHECKING:
    from klue_viz.probes import score as probe_score
    from klue_viz.scoring import benchmark as workspace
    from klue_viz.store import annotations as store
    from klue_viz.store import kept_format, kept_scoring, parsed_golds, probe_runs
    from klue_viz.store import kept_results as kept
    from klue_viz.store import runs as stored
else:  # the database, pandas and pyarrow load when a `runs` command runs, not with every command of the CLI
    kept = lazy_module("klue_viz.store.kept_results")
    kept_scoring = lazy_module("klue_viz.store.kept_scoring")
    kept_format = lazy_module("klue_viz.store.kept_format")
    parsed_golds = lazy_module("klue_viz.store.parsed_golds")
    workspace = lazy_module("klue_viz.scoring.benchmark")
    stored = lazy_module("klue_viz.store.runs")
    store = lazy_module("klue_viz.store.annotations")
    probe_runs = lazy_module("klue_viz.store.probe_runs")
    probe_score = lazy_module("klue_viz.probes.score")


def say(text: str, error: bool = False) -> None:
    """One line of file text for a terminal: control and bidi characters as codes."""
    print(visible(text).replace("\n", "\\n"), file=sys.stderr if error else sys.stdout, flush=error)


def add_commands(commands: argparse._SubParsersAction) -> None:
    """The `runs` command and its actions, on the CLI's sub-parsers."""
    runs = commands.add_parser("runs", help="add, list or remove the prediction runs the app shows (the store named by KLUE_VIZ_DB)")
    actions = runs.add_subparsers(dest="action", required=True)
    add = actions.add_parser("add", help="store prediction files (files, folders, zips) as runs, each scored once and kept")
    add.add_argument("paths", nargs="+", metavar="PATH", help="a prediction file, a folder of them or a zip; out/<model>/<checkpoint>/ner.jsonl "
                                                                   "and out/<model>/ner/<checkpoint>.jsonl are run <checkpoint> of <model>")
    add.add_argument("--model", default="", help="the model of every file given (default: the folder its place names)")
    add.add_argument("--gold", help=f"official file, klue_benchmark/ folder, JSON(L) export of klue/klue, or hf[:split] "
                                    f"(default: the folder {DATA_DIR_ENV} names, else the embedded demo, as the app)")
    add.add_argument("--strict", action="store_true", help="score gold examples without a prediction as wrong (as the app's Strict)")
    add.add_argument("--uploader", default=os.environ.get("USER", ""), help="who added the runs (default: $USER)")
    add.add_argument("--probes", metavar="DIR", help="a behavioural test suite's folder (`klue-viz probe make --out DIR`) or a zip of it: store it (its gold "
                                                      "as a gold) and the PATHs as runs on it, for the Behaviour section and `probe score --suite`")
    add.add_argument("--suite-name", help="the name the suite is stored under (default: DIR's folder name)")
    listing = actions.add_parser("list", help="the stored runs under a header row, one line each with its step")
    listing.add_argument("--task", choices=list(TASKS))
    listing.add_argument("--probes", action="store_true", help="list the runs stored on behavioural test suites instead")
    remove = actions.add_parser("remove", help="remove stored runs and their kept results (annotations are kept unless asked)")
    remove.add_argument("--task", required=True, choices=list(TASKS))
    remove.add_argument("--probes", metavar="SUITE", help="remove runs kept on this stored suite (as `runs list --probes` names it)")
    remove.add_argument("--whole-suite", action="store_true", help="with --probes SUITE and no NAME: remove the stored suite itself and "
                                                                   "every run on it (its gold files stay, as uploaded golds do)")
    remove.add_argument("names", nargs="*", metavar="NAME", help="run names, as `runs list` shows them")
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
        return list_suite_runs(probe_runs.SuiteStore(database), args.task) if args.probes else list_runs(runs, args.task)
    if args.action == "remove":
        if (args.whole_suite and (not args.probes or args.names)) or (not args.whole_suite and not args.names):
            say("klue-viz: runs remove: give run NAMEs, or --probes SUITE --whole-suite (and no NAME) to remove a stored suite", error=True)
            return 2
        if args.whole_suite:
            return remove_suite(probe_runs.SuiteStore(database), args.task, args.probes)
        if args.probes:
            return remove_suite_runs(probe_runs.SuiteStore(database), args.task, args.probes, args.names)
        return remove_runs(runs, results, args.task, args.names, args.delete_annotations)
    if args.probes:
        return add_suite_runs(probe_runs.SuiteStore(database), runs, args)
    return add_runs(runs, results, args)


#: The columns of `runs list`, its first line.
LIST_HEADER = ("task", "run", "model", "step", "file", "size", "added", "uploader")


def list_runs(runs: stored.RunStore, task: str | None) -> int:
    """The stored runs, tab-separated under a header row: by task, then model and step read as numbers."""
    found = sorted(runs.list(task), key=lambda r: (r.task, natural_key(r.model), natural_key(r.name)))
    say("\t".join(LIST_HEADER))
    for run in found:
        step = step_of(run.name)
        say("\t".join([run.task, run.name, run.model or "-", "-" if step is None else str(step), run.file_name, f"{run.size} bytes",
                       run.created_at[:19], run.uploader or "-"]))
    say(f"{len(found)} run(s) in {runs.store.location}", error=True)
    return 0


#: The columns of `runs list --probes`.
SUITE_LIST_HEADER = ("task", "suite", "run", "model", "file", "size", "added", "uploader")


def list_suite_runs(suites: probe_runs.SuiteStore, task: str | None) -> int:
    """The runs stored on suites, tab-separated under a header row: by task, suite and the order they were added."""
    found = suites.runs(task)
    say("\t".join(SUITE_LIST_HEADER))
    for run in found:
        say("\t".join([run.task, run.suite, run.name, run.model or "-", run.file_name, f"{run.size} bytes", run.created_at[:19], run.uploader or "-"]))
    say(f"{len(found)} run(s) on {len({(r.task, r.suite) for r in found})} suite(s) in {suites.store.location}", error=True)
    return 0


def remove_suite(suites: probe_runs.SuiteStore, task: str, suite: str) -> int:
    """Remove a stored suite and the runs on it; 0 when it was removed, 1 when there was none of that name."""
    removed = suites.remove_suite(task, suite)
    if removed is None:
        stored = suites.suites(task)
        say(f"klue-viz: there is no {task.upper()} suite named {suite} (stored: {', '.join(stored) or 'none'})", error=True)
        return 1
    say(f"removed the {task} suite {suite} and its {removed} run(s); its gold files stay stored as uploaded golds")
    return 0


def remove_suite_runs(suites: probe_runs.SuiteStore, task: str, suite: str, names: list[str]) -> int:
    """Remove runs kept on a suite; 0 when one was removed, 1 when none was there."""
    removed = 0
    for name in names:
        if suites.remove_run(task, suite, name):
            removed += 1
            say(f"removed {task} {name} from the suite {suite}")
        else:
            say(f"klue-viz: there is no {task.upper()} run named {name} on the suite {suite}", error=True)
    return 0 if removed else 1


def suite_given(path: Path) -> tuple[Task, dict[str, bytes], str]:
    """The task, the files (by path in the suite's folder) and the default name of the suite `--probes` gives: a folder
    `klue-viz probe make` wrote or a zip of it, each told by its manifest (klue_viz.reading.suite_files)."""
    if path.is_file() and zipfile.is_zipfile(path):
        check_size(str(path), path.stat().st_size)
        task, files = probe_score.suite_files_from_zip(read_bytes(path), f"--probes {path}")
        return task, files, path.stem
    if not (path / MANIFEST).is_file():
        raise InputError(f"--probes {path}: no {MANIFEST}; expected a zip or a folder holding {EXPECTED}")
    if not folder_is_suite(path):
        raise InputError(f"--probes {path / MANIFEST}: not a suite's manifest (its first line needs {', '.join(MANIFEST_FIELDS)})")
    found = probe_score.suite_tasks(lambda rel: (path / rel).is_file())
    if len(found) != 1:
        raise InputError(f"--probes {path}: expected the gold file of one task beside the manifest and in sources/, found {len(found)}")
    wanted = [*probe_score.suite_paths(found[0]).values(), "README.md"]
    return found[0], {rel: (path / rel).read_bytes() for rel in wanted if (path / rel).is_file()}, path.resolve().name


def add_suite_runs(suites: probe_runs.SuiteStore, runs: stored.RunStore, args: argparse.Namespace) -> int:
    """Store the suite in --probes (read and checked first, as `probe score` reads it) and each PATH as a run on it,
    each scored once to say what it gives; 0 when a run was stored, 1 when none could be, 2 for a suite that cannot be used."""
    given = Path(args.probes)
    try:
        task, files, default = suite_given(given)
        probes = probe_score.probe_set_from_files(task, files, str(given))
        paths = probe_score.suite_paths(task)
        name = suites.add_suite(task.facts.name, args.suite_name or default, files[paths["manifest"]].decode("utf-8"),
                                (paths["perturbed"], files[paths["perturbed"]]), (paths["sources"], files[paths["sources"]]),
                                files.get("README.md", b"").decode("utf-8"), args.uploader)
    except (InputError, OSError, UnicodeDecodeError, store.StoreError) as err:
        say(f"klue-viz: {err}", error=True)
        return 2
    say(f"suite\t{task.facts.name}\t{name}\t{len(probes.manifest)} cases (stored; its gold is kept like an uploaded gold)")
    added = 0
    for path in args.paths:
        try:
            data = read_bytes(path)
            source, source_name = suite_source(probes, data, path, runs)
            behaviour = probe_score.score_run(probes, Path(path).stem, data, path, source, source_name)
            run = suites.add_run(task.facts.name, name, Path(path).name, data, model=args.model, uploader=args.uploader)
        except (InputError, OSError, store.StoreError) as err:
            say(f"refused\t{path}\t{err}")
            continue
        added += 1
        failures = sum(t.failures for t in behaviour.tests)
        cases = sum(t.n for t in behaviour.tests)
        say(f"{task.facts.name}\t{name}\t{run.name}\t{failures} of {cases} cases fail; the sources' predictions from {source_name or 'its own file'}")
    return 0 if added else 1


def suite_source(probes: probe_score.ProbeSet, data: bytes, name: str, runs: stored.RunStore) -> tuple[bytes | None, str]:
    """The dev-set predictions a run on a suite is scored with: none when its own file holds the sources' predictions,
    else the ordinary stored run of the same name (its dev-set run), as the Behaviour section takes them."""
    if probe_score.holds_sources(probes, data, name):
        return None, ""
    dev = runs.get(probes.task.facts.name, Path(name).stem)
    return (runs.data(dev.sha256), f"stored run {dev.name}") if dev is not None else (None, "")


def remove_runs(runs: stored.RunStore, results: kept.KeptResults, task: str, names: list[str], delete_annotations: bool) -> int:
    removed = 0
    for name in names:
        run = runs.get(task, name)
        if run is None:
            say(f"klue-viz: there is no {task.upper()} run named {name}", error=True)
            continue
        try:
            deleted = kept_scoring.remove_run(results, runs, task, name, run.version, delete_annotations=delete_annotations)
        except stored.RunConflict as err:
            say(f"klue-viz: {name}: {err}", error=True)
            continue
        removed += 1
        say(f"removed {task} {name}" + (f" and {deleted} annotation(s)" if delete_annotations else "; its annotations are kept"))
    return 0 if removed else 1


def gold_of(task_name: str, given: str | None, parsed: parsed_golds.ParsedGolds | None = None) -> GoldChoice:
    """The task's gold, decided as the app decides it (klue_viz.store.gold_choice): --gold, else KLUE_VIZ_DATA_DIR's
    folder, else the embedded demo.

    With `parsed`, a gold file is read through the store's parsed golds, so the app's first page on this store reads
    back the gold parsed here instead of parsing it again."""
    readers = GoldReaders(path=lambda task, source, _modified: _load(task, source, parsed),
                          upload=lambda task, _key, kept: gold_from_bytes(task, kept.data, kept.file_name),
                          hf=lambda task: load_gold(task, "hf"), stored=lambda _key: None)  # runs add keeps no uploads

    folder = os.environ.get(DATA_DIR_ENV, "").strip()
    source = "given" if given else ("folder" if folder else "demo")
    return gold_choice(get_task(task_name), source, readers, folder=folder, given=given)


def _load(task: Task, source: str, parsed: parsed_golds.ParsedGolds | None) -> Gold:
    if parsed is None or source == "hf" or source.startswith("hf:"):
        return load_gold(task, source)
    path = gold_file(task, Path(source))
    return parsed.gold(task, read_bytes(path), str(path))


def expand(path_text: str, model: str) -> list[workspace.ModelFile]:
    """The prediction files a PATH names: a file, each file of a folder, each member of a zip; sizes checked before reading."""
    path = Path(path_text)
    if path.is_dir():
        return [replace(f, model=model or f.model) for f in workspace.folder_files(path)]
    if not path.is_file():
        raise InputError(f"{path_text}: no such file or folder")
    check_size(str(path), path.stat().st_size)
    files = workspace.prediction_files(path.name, read_bytes(path))
    if path.suffix.lower() == ".zip":
        return [replace(f, model=model or f.model) for f in files]
    # a file given on its own still sits in its checkpoint's folder: out/ckpt-500/ner.jsonl is run ckpt-500
    run, placed_model = workspace.run_and_model(PurePosixPath(*path.absolute().parts[-3:]), lone=True)
    return [replace(f, run=f.run or run, model=model or f.model or placed_model) for f in files]


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
        run = runs.add(task_name, file.name, file.data, model=file.model, uploader=args.uploader, name=file.run or None)
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
    if choice.problem:
        return f"{head}\tstored, not scored: no gold for it ({choice.problem}); it is scored when a page opens it with its gold"
    task = get_task(run.task)
    stored_run = kept_scoring.RunInput(run.name, kept_format.sha256(data), run.file_name, lambda: data, records)
    scored, failures = kept_scoring.results_for(results, task, choice.gold, [stored_run], strict)
    if run.name in failures:
        return f"{head}\tstored, not scored against {choice.gold.source}: {failures[run.name]}"
    result = scored[run.name]
    if result.wrong_gold:  # as `evaluate` warns: the few guids that match make metrics that look valid
        say(f"klue-viz: WARNING: {run.name}: {result.wrong_gold}", error=True)
    c = result.coverage
    metrics = " ".join(f"{m.key}={'n/a' if result.scores.values.get(m.key) is None else format(result.scores.values[m.key], '.2f')}"
                       for m in task.facts.metrics)
    return f"{head}\t{c.n_scored}/{c.n_gold} scored, {c.n_missing} missing, {c.n_extra} extra, {c.n_invalid} records left out\t{metrics}"


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
