"""Loading gold, matching a prediction file to it, and scoring: the one path the CLI and the app share."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from klue_viz.core.gc_pause import bulk_reading
from klue_viz.core.lazy import lazy_module
from klue_viz.core.problems import InputError, Problem
from klue_viz.core.results import Coverage, Frames, Repaired, Scores
from klue_viz.drawing.markup import INVISIBLE, visible
from klue_viz.reading.demo import DEMO_MARK
from klue_viz.reading.harness.formats import CHOICES, HarnessLog
from klue_viz.reading.prediction_files import PredictionFile, log_problems, read_prediction_file, read_prediction_path
from klue_viz.reading.records import NON_SPACE, RecordFile, decode, load_json, read_bytes, read_records
from klue_viz.scoring.llm_outputs import (
    LLM_FIELDS,
    Trace,
    answer_columns,
    locate_positions,
    read_prediction,
    resolve_choices,
    unreadable_problems,
)
from klue_viz.tasks import detect_task
from klue_viz.tasks.base import RecordError, Task

if TYPE_CHECKING:
    import pandas as pd

    from klue_viz.reading import hf_hub as hub
else:
    pd = lazy_module("pandas")  # the CLI scores without it
    hub = lazy_module("klue_viz.reading.hf_hub")  # only `--gold hf` asks the hub (its threading and urllib.parse with it)
datasets = lazy_module("datasets")  # only `--gold hf` needs it: scoring a file never loads it

#: How many problems of a file (unreadable answers aside: each is listed) are listed before the rest are only counted.
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
    #: sha256 of the bytes the gold was read from (of its rows as JSON for the hub): what kept results are keyed by.
    sha256: str = ""

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
    #: The evaluation-harness log the run was read from (format, model, filter, the harness's own metrics); None otherwise.
    log: HarnessLog | None = None
    #: The gold guids scored with a prediction of the run's own (not a --strict filler), when known without the frames
    #: (a run scored here); None for a run read back from kept results, whose frames say it.
    predicted_guids: frozenset[str] | None = field(default=None, repr=False, compare=False)
    #: The gold rows scored and their parsed predictions (same order) of a run scored here, until its frames are built:
    #: what `example_columns` reads so `evaluate --out` gets calibration and crowd figures without pandas.
    matched: tuple[list[dict], list] | None = field(default=None, repr=False, compare=False)

    @property
    def wrong_gold(self) -> str:
        """A warning when most predicted ids are not in the gold (real-dev predictions against the demo, another split...):
        the few that match make numbers that look valid. Empty when the gold fits."""
        c = self.coverage
        if c.n_extra <= c.n_scored:
            return ""
        total = c.n_extra + c.n_scored
        return (f"this looks like the wrong gold: {c.n_extra:,} of the {total:,} predicted ids are not in it, and the metrics come "
                f"from the {c.n_scored:,} that are. Check the gold source (demo, folder, upload, hub) and the split")

    @cached_property
    def frames(self) -> Frames:
        """The per-example frames every view filters, built when first needed (the CLI's scores never need them)."""
        frames = self.frames_builder()
        self.frames_builder = lambda: frames  # lets go of the parsed predictions
        self.matched = None
        return frames

    def example_columns(self) -> Mapping[str, Sequence]:
        """The per-example columns calibration and the crowd figures read (`Task.example_columns`): from the matched rows
        while the frames are not built (no pandas: the CLI's path), else the frames' own columns."""
        if self.matched is not None and "frames" not in self.__dict__:
            return self.task.example_columns(*self.matched)
        return self.frames.examples

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
            **({"harness": {k: v for k, v in self.log.to_dict().items() if k != "problems"}} if self.log is not None else {}),
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
    path = gold_file(task, Path(source))
    return gold_from_bytes(task, read_bytes(path), str(path))


def gold_file(task: Task, path: Path) -> Path:
    """A gold file as given, or the task's dev file in a folder laid out like `klue_benchmark/` (InputError when it has none)."""
    if not path.is_dir():
        return path
    found = official_file(task, path)
    if found is None:
        raise InputError(f"{path}: no {task.facts.official_folder}/{task.facts.official_folder}_dev.{task.facts.official_ext} in this folder")
    return found


def gold_from_bytes(task: Task, data: bytes, name: str) -> Gold:
    with bulk_reading():
        gold = _gold_from_text(task, decode(data, name)[0], data, name)
    gold.sha256 = hashlib.sha256(data).hexdigest()
    return gold


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
    advice = f"Use a local copy instead: --gold path/to/{task.facts.official_folder}_dev.{task.facts.official_ext} or a klue_benchmark/ folder"
    from_hub = loader is None
    if loader is None:
        down = hub.unreachable_reason()  # one quick probe instead of datasets' retries, remembered for a while
        if down is not None:
            raise InputError(f"could not load klue/klue '{task.facts.hf_config}' split '{split}': {down}. {advice}")
        loader = datasets.load_dataset  # imported here, after the probe: seconds of imports for a hub that may be down
    try:
        load = loader
        dataset = hub.bounded(lambda: load("klue/klue", task.facts.hf_config, split=split), hub.LOAD_TIMEOUT)
    except Exception as err:  # datasets raises ConnectionError, OSError or its own errors when offline
        reason = str(err).splitlines()[0][:160] if str(err) else type(err).__name__
        if from_hub and not hub.offline_mode() and isinstance(err, (ConnectionError, OSError, TimeoutError)):
            hub.mark_down(reason)
        offline = " (HF_HUB_OFFLINE is set)" if os.environ.get("HF_HUB_OFFLINE") else ""
        raise InputError(
            f"could not load klue/klue '{task.facts.hf_config}' split '{split}' from the Hugging Face hub{offline}: {reason}. {advice}"
        ) from None
    short = {"validation": "dev"}.get(split, split)
    rows, problems = task.rows_from_hf(iter(dataset), split=short)
    gold = _gold(task, rows, problems, f"hf:klue/klue/{task.facts.hf_config}:{split}", positional=not task.facts.hf_has_guid)
    gold.sha256 = hashlib.sha256(json.dumps(gold.rows, ensure_ascii=False, sort_keys=True, default=str).encode()).hexdigest()
    return gold


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
    """One prediction file scored; a harness log with the results file beside it (klue_viz.reading.prediction_files)."""
    with bulk_reading():
        matched = match_file(task, gold, read_prediction_path(path, task.normalise_record), strict)
    return score_matched(task, gold, matched)


def evaluate_bytes(task: Task, gold: Gold, data: bytes, name: str, strict: bool = False, run: str | None = None) -> RunResult:
    return score_matched(task, gold, _read_and_match(task, gold, data, name, strict), run)


#: The end of a file's encoding when it was read composed (klue_viz.reading.records.decode).
COMPOSED = "(NFD → NFC)"


def as_written(data: bytes) -> str:
    """A UTF-8 file's text as written, for a task that `keeps_text_as_written`: line ends made LF, Unicode not composed
    (decode composes it). Only a file `decode` read as UTF-8 comes here: CP949 has no decomposed jamo."""
    return data.decode("utf-8-sig").replace("\r\n", "\n").replace("\r", "\n")


def _read_and_match(task: Task, gold: Gold, data: bytes, name: str, strict: bool, read: RecordFile | None = None) -> Matched:
    """The file's predictions matched to gold; its text and raw records are let go before scoring starts.
    An evaluation-harness log is read as the prediction file it converts to (klue_viz.reading.prediction_files).
    `read`: the records of `data` already read under `name` without normalising (to tell the task), used instead of
    reading it again."""
    with bulk_reading():
        prediction = read_prediction_file(name, data, task.normalise_record, read)
        if task.keeps_text_as_written and prediction.log is None and prediction.records.encoding.endswith(COMPOSED):
            prediction = PredictionFile(read_records(as_written(data), name, task.normalise_record))  # scored as written, not composed
        return match_file(task, gold, prediction, strict)


def match_file(task: Task, gold: Gold, read: PredictionFile, strict: bool = False) -> Matched:
    """A file read once matched to gold; a harness log's documents without a guid by their position, and its facts noted;
    for a task that keeps text as written, a note on what composing it would change."""
    file, log = read.records, read.log
    if log is None:
        matched = match_records(task, gold, file, strict)
    else:
        file.problems.extend(locate_positions(task, gold, file))
        matched = match_records(task, gold, file, strict)
        matched.log = log
        matched.notes[:0] = log.notes()
        matched.problems = log_problems(matched.problems, file.name, log)
    if task.keeps_text_as_written:
        note = task.as_written_note([gold.rows[k] for k in matched.order], matched.predictions)
        if note:
            matched.problems.insert(0, Problem(note, file=file.name))
    return matched


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
    #: Gold position -> what an LLM's record showed (its generated answer, prompt, choices), for records that had any.
    traces: dict[int, Trace] = field(default_factory=dict)
    #: What an evaluation-harness log says about itself (format, model, filter, its own metrics); None for an ordinary file.
    log: HarnessLog | None = None


def evaluate_with_frames(task: Task, gold: Gold, data: bytes, name: str, strict: bool = False, run: str | None = None,
                         read: RecordFile | None = None) -> RunResult:
    """`evaluate_bytes` for a caller that needs the frames at once (a run being kept, klue_viz/store/kept_results.py): the metrics
    come from the frames' statistics, so the per-example work is done once instead of twice. `read`: the records of
    `data` read without normalising, when the caller has them (`_read_and_match`)."""
    return score_matched(task, gold, _read_and_match(task, gold, data, name, strict, read), run, from_frames=True)


def score_matched(task: Task, gold: Gold, matched: Matched, run: str | None = None, from_frames: bool = False) -> RunResult:
    """The run's official metrics from its matched rows; its frames are built the first time they are read
    (at once with `from_frames`, the metrics then come from their statistics: the tests hold both equal)."""
    order, scored, filled = matched.order, matched.predictions, matched.filled

    def frames_builder() -> Frames:
        frames = task.build_frames(gold.frame.iloc[order].reset_index(drop=True), scored)
        frames.examples["has_prediction"] = [k not in filled for k in order]
        if matched.traces:
            answer_columns(frames.examples, [matched.traces.get(k) for k in order])
        return frames

    if from_frames:
        built = frames_builder()
        stats, frames_builder = task.statistics(built), lambda: built
    else:
        stats = task.row_statistics([gold.rows[k] for k in order], scored)
    predicted = frozenset(gold.rows[k]["guid"] for k in order if k not in filled)
    return RunResult(task, run or Path(matched.name).stem, matched.name, task.scores_of(stats), matched.coverage, frames_builder,
                     matched.problems, matched.notes, matched.extra, log=matched.log, predicted_guids=predicted,
                     matched=None if from_frames else ([gold.rows[k] for k in order], scored))


def _wrong_gold(task: Task, gold: Gold, extra: list[str]) -> str:
    """Why a file of the task's own guids matches nothing: guids carrying invisible characters (a zero-width space
    pasted in), or the wrong gold (real predictions against the demo, another split)."""
    hidden = next((guid for guid in extra[:50] if INVISIBLE.search(guid) and INVISIBLE.sub("", guid) in gold.position), None)
    if hidden is not None:
        return (f"; its guids carry invisible characters: {visible(hidden)} is the gold's {INVISIBLE.sub('', hidden)} with "
                "them added (a zero-width space or a direction mark, often pasted in with the text). Remove them from the file")
    if not any(guid.startswith(task.facts.guid_prefix + "_") for guid in extra[:50]):
        return ""
    demo = all(DEMO_MARK in guid for guid in gold.position)
    return ("; this looks like the wrong gold" + (f": the embedded demo's guids end in {DEMO_MARK}, so real predictions need the real "
            "dev set (a folder, an upload or the hub)" if demo else ": check the gold source and the split"))


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

    if any(CHOICES in r for _, r in records):  # a multiple-choice log (the only records resolve_choices changes)
        notes.extend(resolve_choices(task, gold, file))
    predictions: dict[int, object] = {}
    traces: dict[int, Trace] = {}
    first_line: dict[int, int | None] = {}
    extra: list[str] = []
    n_invalid = file.unreadable
    n_duplicate = 0  # lines of a guid given before: left out, and counted as duplicates (not as unreadable)
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
            n_duplicate += 1
            earlier = "" if pos in predictions else ", which could not be used either"
            problems.append(Problem(f"duplicate guid, already given on line {first_line[pos]}{earlier}; this line is left out", line, guid, name))
            continue
        first_line[pos] = line  # the first line given for a guid is the one used, even when it is unusable
        try:
            if record.keys().isdisjoint(LLM_FIELDS):  # an ordinary record (the common, fast path): the task's parser alone
                parsed, trace = task.parse_prediction(record, gold.rows[pos]), None
            else:
                parsed, trace = read_prediction(task, record, gold.rows[pos])
            if trace is not None:
                traces[pos] = trace
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
        reason = problems[0] if problems else (f"none of its {len(extra)} guids is in the gold (e.g. {extra[0]}){_wrong_gold(task, gold, extra)}"
                                               if extra else "nothing usable")
        raise InputError(f"{name}: no prediction could be scored: {reason}")
    if extra:
        shown = ", ".join(extra[:5]) + (", ..." if len(extra) > 5 else "")
        notes.append(f"{len(extra)} guid(s) not in the gold were ignored: {shown}")
    if n_duplicate:
        notes.append(f"{n_duplicate} duplicate line(s) of a guid given before were left out (the first line of each guid is used)")

    missing = [k for k in range(n_gold) if k not in predictions]
    if strict:
        for k in missing:
            predictions[k] = task.empty_prediction(gold.rows[k])
        if missing:
            notes.append(f"--strict: {len(missing)} gold example(s) without a prediction were scored as empty predictions")
    order = sorted(predictions)
    unread = unreadable_problems(traces, first_line, {k: gold.rows[k]["guid"] for k in traces}, name) if traces else []
    coverage = Coverage(n_gold, len(order), len(missing), len(extra), n_invalid, len(unread))
    if unread:
        notes.append(f"{len(unread)} generated answer(s) could not be read (no label, or two): scored as wrong")
    if len(problems) > MAX_LISTED:
        notes.append(f"{len(problems):,} problems were found in {name}; the first {MAX_LISTED} are listed")
    # Every unreadable answer is listed (they are the run's answers, one per example at most); other problems are cut.
    return Matched(name, order, [predictions[k] for k in order], set(missing) if strict else set(), coverage,
                   problems[:MAX_LISTED] + unread, notes, extra, traces)
