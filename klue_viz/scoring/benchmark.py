"""A model across the benchmark: prediction files routed to their tasks, and one table of models by task.

Pure functions, shared by the app's home page and `klue-viz evaluate --pred <folder>`: a zip or a
folder of one model's prediction files becomes (model, file) pairs; each file's task is detected
from its guids and fields; the scored runs become one row per model with the official metrics of
each of the eight tasks.
"""

from __future__ import annotations

import io
import zipfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from urllib.parse import urlencode

import pandas as pd

from klue_viz.core.gc_pause import bulk_reading
from klue_viz.core.problems import InputError
from klue_viz.drawing.markup import attrs, esc, esc_attr
from klue_viz.reading.harness.formats import Siblings
from klue_viz.reading.harness.lm_eval import is_results_name
from klue_viz.reading.prediction_files import LOG_SUFFIXES, expand, log_files, task_hint
from klue_viz.reading.records import RecordFile, read_bytes, read_records
from klue_viz.reading.uploads import check_size, clean_name, max_upload_bytes
from klue_viz.scoring.evaluate import Gold, RunResult, evaluate_bytes, load_gold
from klue_viz.tasks import TASKS, detect_task, get_task

PREDICTION_SUFFIXES = (".json", ".jsonl", ".csv", ".tsv", *LOG_SUFFIXES)


@dataclass(frozen=True)
class ModelFile:
    """One prediction file as given (a harness log already split into its runs), with the model it belongs to."""

    name: str
    data: bytes
    #: The folder or zip the file came in ("" for a file on its own).
    model: str = ""


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
        model = clean_name(path.parent.name) if len(path.parts) > 1 else ""
        return [ModelFile(f.name, f.data, model) for f in expand(path.name, data, siblings)]
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile:
        raise InputError(f"{name}: not a readable zip file") from None
    limit, total = max_upload_bytes(), 0
    members: dict[str, list[tuple[str, bytes]]] = {}
    stem = clean_name(Path(name).stem)
    with archive:
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
            parent = PurePosixPath(info.filename).parent.name
            members.setdefault(clean_name(parent) or stem, []).append((PurePosixPath(info.filename).name, content))
    # a harness log is read with the results file of its folder, and becomes its runs
    out = [ModelFile(f.name, f.data, model) for model, files in members.items() for f in log_files(iter(files))]
    if not out:
        raise InputError(f"{name}: no prediction file (.json, .jsonl, .csv, .tsv) inside this zip")
    return out


def folder_files(folder: Path) -> list[ModelFile]:
    """The prediction files under a folder; a file's model is the folder it sits in."""
    by_folder: dict[Path, list[tuple[str, bytes]]] = {}
    for path in sorted(folder.rglob("*")):
        relative = path.relative_to(folder).as_posix()
        if path.is_file() and is_prediction_name(relative):
            check_size(str(path), path.stat().st_size)
            by_folder.setdefault(path.parent, []).append((relative, read_bytes(path)))
    # a harness log is read with the results file of its folder, and becomes its runs
    out = [ModelFile(f.name, f.data, clean_name(parent.name)) for parent, files in by_folder.items() for f in log_files(iter(files))]
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
                    golds[task_name] = loaded
                    out.gold_sources[task_name] = loaded.source
                except InputError as err:
                    golds[task_name] = str(err)
            gold = golds[task_name]
            if isinstance(gold, str):
                raise InputError(f"{file.name}: a {task_name.upper()} file, but its gold cannot be read: {gold}")
            result = evaluate_bytes(gold.task, gold, file.data, file.name, strict=strict, run=Path(file.name).stem)
        except InputError as err:
            out.failures.append(str(err))
            continue
        out.runs.append(ModelRun(file.model or Path(file.name).stem, result))
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


def column_title(task_name: str) -> str:
    task = TASKS[task_name]
    return f"{task_name.upper()} " + " / ".join(m.key for m in task.facts.metrics)


def model_table(runs: list[ModelRun]) -> pd.DataFrame:
    """Models as rows, the eight tasks as columns: each cell the task's official metrics and its coverage.

    A model with several runs of one task shows the last one given.
    """
    cells: dict[str, dict[str, str]] = {}
    for run in runs:
        cells.setdefault(run.model, {})[column_title(run.task)] = f"{cell_text(run)} ({coverage_text(run)})"
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


def html_table(runs: list[ModelRun], settings: dict[str, list[str]] | None = None) -> str:
    """The model table as HTML: every cell links to its run's page (with `settings`); all file text escaped."""
    by_model: dict[str, dict[str, ModelRun]] = {}
    for run in runs:
        by_model.setdefault(run.model, {})[run.task] = run
    head = "".join(f"<th title=\"{esc_attr(column_title(name))}\">{esc(name.upper())}"
                   f"<br><small>{esc(' / '.join(m.key for m in TASKS[name].facts.metrics))}</small></th>"
                   for name in TASKS)
    rows = []
    for model, tasks in by_model.items():
        cells = []
        for name in TASKS:
            scored = tasks.get(name)
            if scored is None:
                cells.append("<td class='kv-empty'>–</td>")
                continue
            link = attrs(href=run_link(name, scored.result.run, settings), target="_self")
            cells.append(f"<td data-task=\"{esc_attr(name)}\"><a {link}>{esc(cell_text(scored))}</a>"
                         f"<br><small>{esc(scored.result.run)} · {esc(coverage_text(scored))} scored</small></td>")
        rows.append(f"<tr><th scope='row'>{esc(model)}</th>{''.join(cells)}</tr>")
    # Fixed columns sharing the page's width, their text wrapping (a metric list breaks at ' / '), so all eight tasks fit a
    # 1400 px window; below 720 px the table scrolls sideways.
    return ("<div class='kv-models' style='overflow-x:auto;font-size:.85rem'><table class='kv-model-table' "
            "style='width:100%;min-width:720px;table-layout:fixed;overflow-wrap:anywhere'>"
            f"<thead><tr><th>model</th>{head}</tr></thead>"
            f"<tbody>{''.join(rows)}</tbody></table></div>")
