"""Loading gold, matching a prediction file to it, and scoring: the one path the CLI and the app share."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from klue_viz.io import (
    NON_SPACE,
    RecordFile,
    bulk_reading,
    decode,
    load_json,
    read_bytes,
    read_records,
)
from klue_viz.lazy import lazy_module
from klue_viz.problems import InputError, Problem
from klue_viz.results import Coverage, Frames, Repaired, Scores
from klue_viz.tasks import detect_task
from klue_viz.tasks.base import RecordError, Task

if TYPE_CHECKING:
    import pandas as pd
else:
    pd = lazy_module("pandas")  # the CLI scores without it
datasets = lazy_module("datasets")  # only `--gold hf` needs it: scoring a file never loads it

#: How many problems of one kind are listed before the rest are only counted.
MAX_LISTED = 200


@dataclass
class Gold:
    """The gold examples of one task, one row per evaluation example (plain dicts; a frame only when a view asks)."""

    task: Task
    rows: list[dict]
    source: str
    problems: list[Problem] = field(default_factory=list)
    #: Guids were made from positions (Hugging Face NER/DP): match predictions by guid number too.
    positional: bool = False

    def __post_init__(self) -> None:
        self.position = {row["guid"]: k for k, row in enumerate(self.rows)}
        self.by_number: dict[str | None, int] = {}
        if self.positional:
            for guid, k in self.position.items():
                self.by_number.setdefault(self.task.number_key(guid), k)

    @cached_property
    def frame(self) -> pd.DataFrame:
        """The rows as a DataFrame, built on first use (scoring alone never needs it)."""
        return pd.DataFrame(self.rows)

    def locate(self, key: str) -> int | None:
        if key in self.position:
            return self.position[key]
        if self.positional:
            return self.by_number.get(self.task.number_key(key))
        return None


@dataclass
class RunResult:
    """One prediction file scored against one gold: metrics, coverage, problems and the per-example frames."""

    task: Task
    run: str
    file: str
    scores: Scores
    coverage: Coverage
    #: Builds the per-example frames; called once, the first time `frames` is read.
    frames_builder: Callable[[], Frames] = field(repr=False, compare=False)
    problems: list[Problem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    extra_guids: list[str] = field(default_factory=list)
    #: Identifies the inputs (gold, file content, options) for caches of views derived from this result.
    key: str = ""
    #: Bootstrap confidence intervals per metric, when asked for.
    intervals: dict[str, tuple[float, float] | None] | None = None

    @cached_property
    def frames(self) -> Frames:
        """The per-example frames every view filters, built when first needed (the CLI's scores never need them)."""
        frames = self.frames_builder()
        self.frames_builder = lambda: frames  # lets go of the parsed predictions
        return frames

    def to_dict(self) -> dict:
        return {
            "run": self.run,
            "file": self.file,
            "metrics": self.scores.values,
            "undefined": self.scores.reasons,
            "coverage": asdict(self.coverage),
            "problems": [p.to_dict() for p in self.problems],
            "notes": self.notes,
            **({"ci95": self.intervals} if self.intervals is not None else {}),
        }


# ---- gold ---------------------------------------------------------------------------------------

def official_file(task: Task, folder: Path, split: str = "dev") -> Path | None:
    """The task's dev (or `split`) file in a folder laid out like the official `klue_benchmark/`.

    Only the official layout is looked at (`<folder>/<task folder>/<file>`, `<folder>/<file>`, and the same one
    folder down, e.g. a folder holding `klue_benchmark/`): the search never walks a whole tree, whatever path
    a user typed.
    """
    name, stem = task.facts.official_folder, f"{task.facts.official_folder}_{split}"
    for pattern in (f"{name}/{stem}.{task.facts.official_ext}", f"{name}/{stem}*.{task.facts.official_ext}", f"{stem}.{task.facts.official_ext}",
                    f"{stem}*.{task.facts.official_ext}", f"*/{name}/{stem}.{task.facts.official_ext}", f"*/{name}/{stem}*.{task.facts.official_ext}",
                    f"*/{stem}*.{task.facts.official_ext}"):
        try:
            found = sorted(p for p in folder.glob(pattern) if p.is_file())
        except OSError:
            continue  # an unreadable sub-folder
        if found:
            return found[0]
    return None


def load_gold(task: Task, source: str | Path, loader: Callable | None = None) -> Gold:
    """Gold from an official file, a `klue_benchmark/`-like folder, a JSON(L) export of `klue/klue`, or `hf[:split]`."""
    text = str(source)
    if text == "hf" or text.startswith("hf:"):
        return load_hf(task, text.partition(":")[2] or "validation", loader)
    path = Path(source)
    if path.is_dir():
        found = official_file(task, path)
        if found is None:
            raise InputError(f"{path}: no {task.facts.official_folder}/{task.facts.official_folder}_dev.{task.facts.official_ext} in this folder")
        path = found
    return gold_from_bytes(task, read_bytes(path), str(path))


def gold_from_bytes(task: Task, data: bytes, name: str) -> Gold:
    with bulk_reading():
        return _gold_from_text(task, decode(data, name)[0], data, name)


def _gold_from_text(task: Task, text: str, data: bytes, name: str) -> Gold:
    found = NON_SPACE.search(text)
    if found is None:
        raise InputError(f"{name}: the gold file is empty")
    first = found.group()
    if task.facts.official_ext == "tsv" and first not in "[{":
        rows, problems = task.read_official(text, name)
        return _gold(task, rows, problems, name, positional=False)
    data_json = _parsed_json(text, first, name)  # the one parse of a JSON gold file
    if data_json is not None:
        if isinstance(data_json, list) and data_json and isinstance(data_json[0], dict) and task.looks_like_hf(data_json[0]):
            rows, problems = task.rows_from_hf(data_json)
            return _gold(task, rows, problems, name, positional=not task.facts.hf_has_guid)
        rows, problems = task.read_official_json(data_json, name) if task.facts.official_ext == "json" else task.read_official(text, name)
        return _gold(task, rows, problems, name, positional=False)
    records = read_records(data, name)
    rows, problems = task.rows_from_hf([r for _, r in records.records])
    return _gold(task, rows, records.problems + problems, name, positional=not task.facts.hf_has_guid)


def _parsed_json(text: str, first: str, name: str) -> object | None:
    """The file (whose first non-space character is `first`) as one JSON document, or None for JSON lines
    (an object per line); a broken JSON list is an error."""
    if first != "[" and (first != "{" or name.endswith(".jsonl")):
        return None
    try:
        return load_json(text, name)
    except InputError:
        if first == "{":
            return None  # JSON lines: an object per line
        raise


def load_hf(task: Task, split: str = "validation", loader: Callable | None = None) -> Gold:
    """The `klue/klue` split through `datasets`; a hub that cannot be reached becomes a one-line InputError."""
    if loader is None:
        loader = datasets.load_dataset
    try:
        dataset = loader("klue/klue", task.facts.hf_config, split=split)
    except Exception as err:  # datasets raises ConnectionError, OSError or its own errors when offline
        reason = str(err).splitlines()[0][:160] if str(err) else type(err).__name__
        offline = " (HF_HUB_OFFLINE is set)" if os.environ.get("HF_HUB_OFFLINE") else ""
        raise InputError(
            f"could not load klue/klue '{task.facts.hf_config}' split '{split}' from the Hugging Face hub{offline}: {reason}. "
            f"Use a local copy instead: --gold path/to/{task.facts.official_folder}_dev.{task.facts.official_ext} or a klue_benchmark/ folder"
        ) from None
    short = {"validation": "dev"}.get(split, split)
    rows, problems = task.rows_from_hf(iter(dataset), split=short)
    return _gold(task, rows, problems, f"hf:klue/klue/{task.facts.hf_config}:{split}", positional=not task.facts.hf_has_guid)


def _gold(task: Task, rows: list[dict], problems: list[Problem], source: str, positional: bool) -> Gold:
    if not rows:
        first = f" ({problems[0]})" if problems else ""
        raise InputError(f"{source}: no {task.facts.name.upper()} gold example could be read{first}")
    seen: set[str] = set()
    kept = []
    for row in rows:
        if row["guid"] in seen:
            problems.append(Problem("duplicate gold guid; the first one is kept", guid=row["guid"], file=source))
        else:
            seen.add(row["guid"])
            kept.append(row)
    return Gold(task, kept, source, problems, positional)


# ---- predictions --------------------------------------------------------------------------------

def evaluate_file(task: Task, gold: Gold, path: str | Path, strict: bool = False) -> RunResult:
    path = Path(path)
    return score_matched(task, gold, _read_and_match(task, gold, read_bytes(path), path.name, strict))


def evaluate_bytes(task: Task, gold: Gold, data: bytes, name: str, strict: bool = False, run: str | None = None) -> RunResult:
    return score_matched(task, gold, _read_and_match(task, gold, data, name, strict), run)


def _read_and_match(task: Task, gold: Gold, data: bytes, name: str, strict: bool) -> Matched:
    """The file's predictions matched to gold; its text and raw records are let go before scoring starts."""
    with bulk_reading():
        return match_records(task, gold, read_records(data, name, task.normalise_record), strict)


@dataclass
class Matched:
    """Predictions matched to gold rows (`order`: gold positions, ascending), and what was found on the way."""

    name: str
    order: list[int]
    predictions: list
    #: Gold positions scored as empty predictions under --strict.
    filled: set[int]
    coverage: Coverage
    problems: list[Problem]
    notes: list[str]
    extra: list[str]


def score_matched(task: Task, gold: Gold, matched: Matched, run: str | None = None) -> RunResult:
    """The run's official metrics from its matched rows; its frames are built the first time they are read."""
    order, scored, filled = matched.order, matched.predictions, matched.filled

    def frames_builder() -> Frames:
        frames = task.build_frames(gold.frame.iloc[order].reset_index(drop=True), scored)
        frames.examples["has_prediction"] = [k not in filled for k in order]
        return frames

    stats = task.row_statistics([gold.rows[k] for k in order], scored)
    return RunResult(task, run or Path(matched.name).stem, matched.name, task.scores_of(stats), matched.coverage, frames_builder,
                     matched.problems, matched.notes, matched.extra)


def match_records(task: Task, gold: Gold, file: RecordFile, strict: bool = False) -> Matched:
    """Match records (read with the task's `normalise_record`) to gold by guid (or by order for keyless files) and parse them."""
    name = file.name
    problems = list(file.problems)
    notes: list[str] = []
    records = file.records
    if not records:
        raise InputError(f"{name}: no record could be read" + (f" ({problems[0]})" if problems else ""))
    keys = [task.record_key(r) for _, r in records]
    n_gold = len(gold.rows)
    if all(k is None for k in keys):
        if len(records) != n_gold:
            raise InputError(
                f"{name}: no record has a 'guid' (or 'id'); rows can only be aligned with the gold by order when there are "
                f"exactly {n_gold} of them, found {len(records)}"
            )
        positions: list[int | None] = list(range(n_gold))
        notes.append(f"{name} has no guid column: its {n_gold} rows were aligned with the gold in order")
    else:
        positions = [None if k is None else gold.locate(k) for k in keys]

    predictions: dict[int, object] = {}
    first_line: dict[int, int | None] = {}
    extra: list[str] = []
    n_invalid = file.unreadable
    for (line, record), key, pos in zip(records, keys, positions):
        if pos is None:
            if key is None:
                n_invalid += 1
                problems.append(Problem("missing 'guid' (or 'id')", line, file=name))
            else:
                extra.append(key)
            continue
        guid = gold.rows[pos]["guid"]
        if pos in first_line:
            n_invalid += 1
            earlier = "" if pos in predictions else ", which could not be used either"
            problems.append(Problem(f"duplicate guid, already given on line {first_line[pos]}{earlier}; this line is left out", line, guid, name))
            continue
        first_line[pos] = line  # the first line given for a guid is the one used, even when it is unusable
        try:
            parsed = task.parse_prediction(record, gold.rows[pos])
            if isinstance(parsed, Repaired):  # scored, and what was repaired is listed (convention 9)
                problems.extend(Problem(note, line, guid, name) for note in parsed.notes)
                parsed = parsed.prediction
            predictions[pos] = parsed
        except RecordError as err:  # anything else is a bug in the parser: it must surface, not become a problem
            n_invalid += 1
            problems.append(Problem(str(err), line, guid, name))

    if not predictions and not strict:
        looks = detect_task([r for _, r in records])
        if extra and looks and looks != task.facts.name:
            mine = task.facts.name.upper()
            raise InputError(f"{name}: this looks like a {looks.upper()} file, not {mine} (no guid matches the {mine} gold)")
        reason = problems[0] if problems else (f"none of its {len(extra)} guids is in the gold (e.g. {extra[0]})" if extra else "nothing usable")
        raise InputError(f"{name}: no prediction could be scored: {reason}")
    if extra:
        shown = ", ".join(extra[:5]) + (", ..." if len(extra) > 5 else "")
        notes.append(f"{len(extra)} guid(s) not in the gold were ignored: {shown}")

    missing = [k for k in range(n_gold) if k not in predictions]
    if strict:
        for k in missing:
            predictions[k] = task.empty_prediction(gold.rows[k])
        if missing:
            notes.append(f"--strict: {len(missing)} gold example(s) without a prediction were scored as empty predictions")
    order = sorted(predictions)
    coverage = Coverage(n_gold, len(order), len(missing), len(extra), n_invalid)
    return Matched(name, order, [predictions[k] for k in order], set(missing) if strict else set(), coverage,
                   problems[:MAX_LISTED], notes, extra)
