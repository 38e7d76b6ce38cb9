"""A model across the benchmark: prediction files routed to their tasks, and one table of models by task.

Pure functions, shared by the app's home page, `klue-viz runs add` and `klue-viz evaluate --pred <folder>`: a zip or a
folder of prediction files becomes files each with its run name and model, read from where it sits (`run_and_model`:
both layouts training scripts write, `<model>/<checkpoint>/<task>.jsonl` and `<model>/<task>/<checkpoint>.jsonl`); each
file's task is detected from its guids and fields; the scored runs become one row per model with the official metrics
of each of the eight tasks (the latest checkpoint of a model, or its best).
"""

from __future__ import annotations

import io
import re
import zipfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from urllib.parse import urlencode

import pandas as pd

from klue_viz.core.gc_pause import bulk_reading
from klue_viz.core.problems import InputError
from klue_viz.core.steps import natural_key, step_of
from klue_viz.drawing.markup import attrs, esc, esc_attr
from klue_viz.reading.harness.formats import Siblings
from klue_viz.reading.harness.lm_eval import is_results_name
from klue_viz.reading.prediction_files import LOG_SUFFIXES, expand, log_files, task_hint
from klue_viz.reading.records import RecordFile, read_bytes, read_records
from klue_viz.reading.suite_files import MANIFEST, folder_is_suite, refuse_suite_zip
from klue_viz.reading.uploads import check_size, clean_name, max_upload_bytes
from klue_viz.scoring.evaluate import Gold, RunResult, evaluate_bytes, load_gold
from klue_viz.tasks import TASKS, detect_task, get_task

PREDICTION_SUFFIXES = (".json", ".jsonl", ".csv", ".tsv", *LOG_SUFFIXES)


@dataclass(frozen=True)
class ModelFile:
    """One prediction file as given (a harness log already split into its runs), with the model it belongs to."""

    name: str
    data: bytes
    #: The model the file's place names (`run_and_model`; "" for a file on its own).
    model: str = ""
    #: The run name the file's place gives it ("": the file's stem).
    run: str = ""


#: Words of a file's stem that say what the file holds (a task, "predictions") rather than which run it is.
GENERIC_WORDS = frozenset({"klue", "prediction", "predictions", "pred", "preds", "output", "outputs", "result", "results",
                           "answers", "generated", "dev", "val", "validation", "test", "eval"})


def names_no_run(name: str) -> bool:
    """Whether a file stem or folder name only says which task or what kind of file it is (`ner`, `predictions`,
    `klue-nli_dev_preds`): such a file is named after its folder, such a folder is not a model's name."""
    words = [w for w in re.split(r"[-_.\s]+", name.casefold()) if w]
    return bool(words) and all(w in GENERIC_WORDS or w in TASKS for w in words)


def run_and_model(path: PurePosixPath, lone: bool = False) -> tuple[str, str]:
    """(run name, model) of a prediction file from where it sits (its folders from the one given down, file last).

    - `<model>/<checkpoint>/ner.jsonl` (a stem that names the task, or `predictions`, `preds`, `output`...): the run is
      the checkpoint folder, the model the folder above it (the checkpoint folder itself when there is none above, or
      when the one above only says what it holds: `predictions/<model>/ner.jsonl`).
    - `<model>/ner/<checkpoint>.jsonl` (a folder that names the task): the run is the file's stem, the model the folder
      above the task's.
    - anything else, `<model>/<run>.jsonl`: the run is the stem and the model its folder ("" for a file on its own).
    A run name of "" means the file's stem (the store's default). `lone`: a file given on its own (`runs add
    out/ckpt-500/ner.jsonl`), whose folders are wherever it lies on disk: only the first layout names its run, and no
    folder names its model."""
    folders = [clean_name(part) for part in path.parent.parts if part not in ("", ".", "/")]
    folders = [f for f in folders if f]
    stem = PurePosixPath(path.name).stem
    if folders and names_no_run(stem) and not names_no_run(folders[-1]):
        above = folders[-2] if len(folders) > 1 and not names_no_run(folders[-2]) else folders[-1]  # predictions/<model>/ner.jsonl
        return folders[-1], "" if lone else above
    if lone:
        return "", ""
    if len(folders) > 1 and names_no_run(folders[-1]):
        return "", folders[-2]
    return "", folders[-1] if folders else ""


def placed(name: str, data: bytes, where: PurePosixPath) -> ModelFile:
    """A file named `name` found at `where` (its folders, then its name), with the run name and model its place gives."""
    run, model = run_and_model(where)
    return ModelFile(PurePosixPath(name).name, data, model, run)


def is_prediction_name(name: str) -> bool:
    parts = PurePosixPath(name).parts
    return (name.lower().endswith(PREDICTION_SUFFIXES) and not any(p.startswith((".", "__MACOSX")) for p in parts))


#: Most prediction files one zip may hold: a zip is one model's files (8 KLUE tasks, a few runs each). More is
#: refused before anything is unpacked, so a zip of 300 (or 20,000) members never becomes as many stored runs.
MAX_ZIP_MEMBERS = 64


def prediction_files(name: str, data: bytes, siblings: Siblings | None = None) -> list[ModelFile]:
    """A file as it is, or the prediction files inside a zip, each with the model its folder (or the zip) names.

    A file of an uploaded folder comes named by its path in that folder (model-a/ner.jsonl): its model is
    the folder it sits in, and a hidden file (.DS_Store, ._ner.jsonl) is left out. A zip's members are
    checked against the upload limit, one by one and in total, before they are read. An evaluation-harness log
    becomes its runs (klue_viz.reading.prediction_files), read with the results file of its folder (`siblings`, or in the zip).
    """
    if not name.lower().endswith(".zip"):
        path = PurePosixPath(name)
        if len(path.parts) > 1 and not is_prediction_name(name):
            return []
        if is_results_name(path.name):
            raise InputError(f"{path.name}: the results file of lm-evaluation-harness holds no predictions; upload it "
                             "together with its samples_*.jsonl files, in a zip or a folder")
        return [placed(f.name, f.data, path.parent / PurePosixPath(f.name).name) for f in expand(path.name, data, siblings)]
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile:
        raise InputError(f"{name}: not a readable zip file") from None
    limit, total = max_upload_bytes(), 0
    members: dict[str, list[tuple[str, bytes]]] = {}
    stem = clean_name(Path(name).stem)
    with archive:
        refuse_suite_zip(archive, name)
        listed = [info for info in archive.infolist() if not info.is_dir() and is_prediction_name(info.filename)]
        if len(listed) > MAX_ZIP_MEMBERS:
            raise InputError(f"{name}: {len(listed):,} prediction files in one zip; at most {MAX_ZIP_MEMBERS} are taken (a zip is one "
                             f"model's files: 8 KLUE tasks, a few runs each). Nothing was stored: split it into one zip per model")
        for info in listed:
            total += info.file_size
            check_size(f"{name}/{info.filename}", info.file_size)
            check_size(f"{name} (unpacked)", total)
            try:
                with archive.open(info) as member:
                    content = member.read(limit + 1)
            except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError, RuntimeError, ValueError) as err:
                # A header that understates the size fails the CRC; encrypted or unknown compression fail too.
                raise InputError(f"{name}/{info.filename}: damaged inside the zip ({err}); nothing from this zip was stored") from None
            check_size(f"{name}/{info.filename}", len(content))
            # a member at the zip's top sits in the zip, as if the zip were its folder
            parent = PurePosixPath(info.filename).parent
            members.setdefault(str(parent) if str(parent) != "." else stem, []).append((PurePosixPath(info.filename).name, content))
    # a harness log is read with the results file of its folder, and becomes its runs
    out = [placed(f.name, f.data, PurePosixPath(folder) / f.name) for folder, files in members.items() for f in log_files(iter(files))]
    if not out:
        raise InputError(f"{name}: no prediction file (.json, .jsonl, .csv, .tsv) inside this zip")
    return out


def folder_files(folder: Path) -> list[ModelFile]:
    """The prediction files under a folder, each with the run name and model its place gives (`run_and_model`, the
    folder given counting as the first of its folders)."""
    if folder_is_suite(folder):
        raise InputError(f"{folder} is a behavioural test suite ({MANIFEST}), not prediction files: nothing was stored; "
                         "give it with `klue-viz runs add --probes`")
    by_folder: dict[Path, list[tuple[str, bytes]]] = {}
    for path in sorted(folder.rglob("*")):
        relative = path.relative_to(folder).as_posix()
        if path.is_file() and is_prediction_name(relative):
            check_size(str(path), path.stat().st_size)
            by_folder.setdefault(path.parent, []).append((relative, read_bytes(path)))
    # a harness log is read with the results file of its folder, and becomes its runs
    out = [placed(f.name, f.data, PurePosixPath(folder.resolve().name, parent.relative_to(folder).as_posix(), PurePosixPath(f.name).name))
           for parent, files in by_folder.items() for f in log_files(iter(files))]
    if not out:
        raise InputError(f"{folder}: no prediction file (.json, .jsonl, .csv, .tsv) in this folder")
    return out


def detect_file_task(file: ModelFile) -> str:
    return read_and_detect(file)[0]


def read_and_detect(file: ModelFile) -> tuple[str, RecordFile]:
    """The task of a prediction file, and its records as read to tell it (not normalised: scoring can take them over,
    klue_viz.reading.records.normalised); InputError when no task fits."""
    with bulk_reading():  # as scoring reads: the collector would rescan every record made
        read = read_records(file.data, file.name)
    records = [r for _, r in read.records]
    found = detect_task(records) or task_hint(records, list(TASKS))  # a log without guids names its task
    if found is None:
        raise InputError(f"{file.name}: cannot tell which KLUE task this file is for (no known guid prefix or field)")
    return found, read


@dataclass
class ModelRun:
    """One scored run in the model table."""

    model: str
    result: RunResult
    intervals: dict[str, tuple[float, float] | None] | None = None
    #: One of the embedded demo's runs (listed after the real ones, and marked).
    demo: bool = False

    @property
    def task(self) -> str:
        return self.result.task.facts.name

    def to_dict(self) -> dict:
        return {"task": self.task, "model": self.model, **self.result.to_dict()}


@dataclass
class FolderEvaluation:
    runs: list[ModelRun] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    gold_sources: dict[str, str] = field(default_factory=dict)
    #: The gold each task's runs were scored against (its annotators give the human baseline of `--out`).
    golds: dict[str, Gold] = field(default_factory=dict)


def evaluate_folder(gold_source: str | Path, folder: Path, strict: bool = False) -> FolderEvaluation:
    """Every prediction file of a folder, routed to its task and scored against that task's gold."""
    out = FolderEvaluation()
    golds: dict[str, Gold | str] = {}
    for file in folder_files(folder):
        try:
            task_name = detect_file_task(file)
            if task_name not in golds:
                try:
                    loaded = load_gold(get_task(task_name), gold_source)
                    golds[task_name] = out.golds[task_name] = loaded
                    out.gold_sources[task_name] = loaded.source
                except InputError as err:
                    golds[task_name] = str(err)
            gold = golds[task_name]
            if isinstance(gold, str):
                raise InputError(f"{file.name}: a {task_name.upper()} file, but its gold cannot be read: {gold}")
            result = evaluate_bytes(gold.task, gold, file.data, file.name, strict=strict, run=file.run or Path(file.name).stem)
        except InputError as err:
            out.failures.append(str(err))
            continue
        out.runs.append(ModelRun(file.model or result.run, result))
    return out


# ---- the table ----------------------------------------------------------------------------------

def cell_text(run: ModelRun) -> str:
    values = run.result.scores.values
    text = " / ".join("n/a" if values.get(m.key) is None else f"{values[m.key]:.2f}" for m in run.result.task.facts.metrics)
    if run.intervals:
        text += " " + " ".join(f"[{v[0]:.2f}, {v[1]:.2f}]" for m in run.result.task.facts.metrics if (v := run.intervals.get(m.key)))
    return text


def coverage_text(run: ModelRun) -> str:
    c = run.result.coverage
    return f"{c.n_scored}/{c.n_gold}"


def prompt_form(result: RunResult) -> str:
    """What tells two runs of one model and task apart: a harness log's task (its prompt: `klue_nli_mc`, `klue_nli_gen`)
    and filter, or the run's own name for a plain prediction file."""
    log = result.log
    if log is None:
        return result.run
    parts = [log.task or result.run]
    if log.filter not in (None, "none"):
        parts.append(str(log.filter))
    if log.epoch not in (None, 1):
        parts.append(f"epoch {log.epoch}")
    return " · ".join(parts)


def row_labels(runs: list[ModelRun]) -> list[str]:
    """The table row of each run: its model, or `model · prompt form` where the model has harness logs of the run's
    task in more than one prompt form (the multiple-choice and the generation log of one model), so each form has a
    row of its own. Runs without a log (plain prediction files: a model's checkpoints) share their model's row, whose
    cell shows one of them (`pick_run`) and folds the others."""
    forms: dict[tuple[str, str], set[str]] = {}
    for run in runs:
        if run.result.log is not None:
            forms.setdefault((run.model, run.task), set()).add(prompt_form(run.result))
    return [f"{run.model} · {prompt_form(run.result)}" if run.result.log is not None and len(forms[(run.model, run.task)]) > 1 else run.model
            for run in runs]


def column_title(task_name: str) -> str:
    task = TASKS[task_name]
    return f"{task_name.upper()} " + " / ".join(m.key for m in task.facts.metrics)


#: What a cell of the model table shows when a model has several runs of a task.
PICKS = {"latest": "the latest step", "best": "the best"}


@dataclass
class Cell:
    """One model's runs of one task: the run the cell shows, why it is that one, and the rest (natural order)."""

    shown: ModelRun
    why: str
    others: list[ModelRun]


def pick_run(runs: list[ModelRun], pick: str = "latest") -> tuple[ModelRun, str]:
    """The run a cell shows, and why in a few words: `latest`, the one with the latest step in its name (the last
    given when no name has a step); `best`, the one best on the task's first official metric (an undefined value
    last). Was the last one given, and `runs add` gives a folder's files in name order: ckpt-9000 stood for a model
    whose ckpt-25000 was 15 points better."""
    if len(runs) == 1:
        return runs[0], ""
    if pick == "best":
        metric = runs[0].result.task.facts.metrics[0].key
        scored = [(value, k) for k, r in enumerate(runs) if (value := r.result.scores.values.get(metric)) is not None]
        if scored:
            return runs[max(scored)[1]], f"best {metric} of {len(runs)} runs"
    steps = [(step, k) for k, r in enumerate(runs) if (step := step_of(r.result.run)) is not None]
    if steps:
        step, k = max(steps)
        return runs[k], f"latest step ({step:,}) of {len(runs)} runs"
    return runs[-1], f"last added of {len(runs)} runs"


def model_cells(runs: list[ModelRun], pick: str = "latest") -> dict[str, dict[str, Cell]]:
    """Model -> task -> its cell, models in natural order with the demo's after the real ones."""
    grouped: dict[str, dict[str, list[ModelRun]]] = {}
    for label, run in zip(row_labels(runs), runs):
        grouped.setdefault(label, {}).setdefault(run.task, []).append(run)
    demo = {label for label, run in zip(row_labels(runs), runs) if run.demo}
    out: dict[str, dict[str, Cell]] = {}
    for model in sorted(grouped, key=lambda m: (m in demo, natural_key(m))):
        for task, group in grouped[model].items():
            shown, why = pick_run(group, pick)
            out.setdefault(model, {})[task] = Cell(shown, why, sorted((r for r in group if r is not shown), key=lambda r: natural_key(r.result.run)))
    return out


def model_table(runs: list[ModelRun], pick: str = "latest") -> pd.DataFrame:
    """Models as rows, the eight tasks as columns: each cell the task's official metrics and its coverage, of the run
    `pick_run` chooses when a model has several runs of a task (and which it is)."""
    cells: dict[str, dict[str, str]] = {}
    for model, tasks in model_cells(runs, pick).items():
        for task, cell in tasks.items():
            which = f"; {cell.shown.result.run}, {cell.why}" if cell.why else ""
            cells.setdefault(model, {})[column_title(task)] = f"{cell_text(cell.shown)} ({coverage_text(cell.shown)}{which})"
    columns = [column_title(name) for name in TASKS]
    frame = pd.DataFrame.from_dict(cells, orient="index").reindex(columns=columns).astype(object).fillna("")
    return frame.rename_axis("model").reset_index()


def text_table(runs: list[ModelRun]) -> str:
    """The model table for a terminal: one line per (model, task) would hide the shape, so a grid."""
    frame = model_table(runs)
    shown = frame.loc[:, [c for c in frame.columns if c == "model" or frame[c].astype(bool).any()]]
    widths = {c: max(len(str(c)), *(len(str(v)) for v in shown[c])) for c in shown.columns}
    lines = ["  ".join(str(c).ljust(widths[c]) for c in shown.columns)]
    for _, row in shown.iterrows():
        lines.append("  ".join(str(row[c]).ljust(widths[c]) for c in shown.columns))
    return "\n".join(lines)


def run_link(task_name: str, run_name: str, settings: dict[str, list[str]] | None = None) -> str:
    """The task page of one run (the page reads `run=`), carrying the session's settings (`source=`, `strict=`)."""
    params = [(key, value) for key, values in (settings or {}).items() for value in values] + [("run", run_name)]
    return f"/{task_name}?{urlencode(params)}"


def html_table(runs: list[ModelRun], settings: dict[str, list[str]] | None = None, pick: str = "latest") -> str:
    """The model table as HTML: every cell links to the run it shows (`pick_run`), says which it is, and links the
    model's other runs of that task in a fold; the demo's models are marked. All file text escaped."""
    head = "".join(f"<th title=\"{esc_attr(column_title(name))}\">{esc(name.upper())}"
                   f"<br><small>{esc(' / '.join(m.key for m in TASKS[name].facts.metrics))}</small></th>"
                   for name in TASKS)
    rows = []
    for model, tasks in model_cells(runs, pick).items():
        cells = []
        demo = False
        for name in TASKS:
            cell = tasks.get(name)
            if cell is None:
                cells.append("<td class='kv-empty'>–</td>")
                continue
            scored = cell.shown
            demo = demo or scored.demo
            link = attrs(href=run_link(name, scored.result.run, settings), target="_self")
            which = f"<br><small class='kv-which'>{esc(cell.why)}</small>" if cell.why else ""
            rest = ""
            if cell.others:
                links = " ".join(f"<a {attrs(href=run_link(name, other.result.run, settings), target='_self')}>{esc(other.result.run)}</a>"
                                 for other in cell.others)
                rest = f"<details class='kv-others'><summary>{len(cell.others)} other run(s)</summary><small>{links}</small></details>"
            cells.append(f"<td data-task=\"{esc_attr(name)}\"><a {link}>{esc(cell_text(scored))}</a>"
                         f"<br><small>{esc(scored.result.run)} · {esc(coverage_text(scored))} scored</small>{which}{rest}</td>")
        badge = " <small class='kv-demo'>(embedded demo)</small>" if demo else ""
        style = " class='kv-demo-row' style='color:#57606a'" if demo else ""
        rows.append(f"<tr{style}><th scope='row'>{esc(model)}{badge}</th>{''.join(cells)}</tr>")
    # Fixed columns sharing the page's width, their text wrapping (a metric list breaks at ' / '), so all eight tasks fit a
    # 1400 px window; below 720 px the table scrolls sideways.
    return ("<div class='kv-models' style='overflow-x:auto;font-size:.85rem'><table class='kv-model-table' "
            "style='width:100%;min-width:720px;table-layout:fixed;overflow-wrap:anywhere'>"
            f"<thead><tr><th>model</th>{head}</tr></thead>"
            f"<tbody>{''.join(rows)}</tbody></table></div>")
