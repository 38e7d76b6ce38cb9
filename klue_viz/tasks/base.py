"""What every KLUE task module provides (the containers that flow between them are in klue_viz.core.results).

A task says how to read its gold (official file or Hugging Face records), parse one prediction
record, build the tidy per-example frames of a run, score any subset of those frames with the
official metrics, slice them and draw one example. Matching predictions to gold is shared
(`klue_viz.scoring.evaluate`), so every task treats missing, extra and broken records alike.
"""

from __future__ import annotations

import math
import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from klue_viz.core.crowd import HumanBaseline
from klue_viz.core.lazy import lazy_module
from klue_viz.core.problems import InputError, Problem
from klue_viz.core.results import Frames, ScoredRun, Scores
from klue_viz.metrics.official import Statistics
from klue_viz.reading.answers import Answer
from klue_viz.reading.records import BARE_VALUE, load_json
from klue_viz.tasks.kit import Suspect
from klue_viz.tasks.probing import ProbeIO

if TYPE_CHECKING:
    import pandas as pd
else:
    pd = lazy_module("pandas")  # the CLI scores without it


class RecordError(ValueError):
    """A prediction or gold record that cannot be used; the message says what was expected."""


@dataclass(frozen=True)
class Metric:
    key: str
    label: str


@dataclass(frozen=True)
class Slice:
    """A slicing attribute: a column of the `level` frame (`examples`, or a detail frame such as `entities`)."""

    key: str
    label: str
    level: str = "examples"


@dataclass(frozen=True)
class DetailLevel:
    """The detail frame whose rows a task's finer slices describe (NER's entities, DP's words, WoS's slots): what the
    slice finder (klue_viz.discovery.slices) and your own columns (klue_viz.scoring.user_features) need to know of it,
    so that neither names a task's frames."""

    #: The frame's key in `Frames.details`, and the `level` of the task's finer `Slice`s.
    name: str
    #: One row, in words ("entity").
    row: str
    #: The rows in a heading ("entities (gold and predicted)").
    heading: str
    #: The columns that pair one run's rows with another's; empty where rows differ between runs (WoS's slots), which
    #: are then compared on the examples.
    pair_keys: tuple[str, ...] = ()
    #: The rows come from both sides, gold and predicted (a `side` column, "gold" or "pred"): the side is a slice
    #: feature, and two runs are paired on their gold rows.
    sided: bool = False
    #: The rows are character spans of the example (`start`, `end` exclusive): your own column files may describe them.
    spans: bool = False


GUID_NUMBER = re.compile(r"_(\d{5})(?:[-_]|$)")


@dataclass(frozen=True, kw_only=True)
class TaskFacts:
    """What a task is: its names, data files, metrics, slices and units. The first four fields are required."""

    name: str
    title: str
    guid_prefix: str
    metrics: tuple[Metric, ...]
    hf_config: str = ""
    #: The folder and file stem of the official data (`klue_benchmark/<folder>/<stem>_dev.<ext>`).
    official_folder: str = ""
    official_ext: str = "json"
    slices: tuple[Slice, ...] = ()
    #: Fields of a prediction record that only this task uses (for telling tasks apart).
    signature_fields: frozenset[str] = frozenset()
    #: The field a bare `{guid: value}` mapping fills in.
    bare_value_field: str = "label"
    #: The unit the confusion matrix and the example list count ("sentence", "pair", "turn"...).
    unit: str = "example"
    #: Columns of the example frame that the text search looks in.
    text_columns: tuple[str, ...] = ()
    #: What the confusion matrix's rows and columns are ("topic", "entity type", ...).
    confusion_label: str = "label"
    #: The starting taxonomy of error tags (users extend it in the app).
    error_tags: tuple[str, ...] = ()
    #: Hugging Face records of this task carry no guid (NER, DP): gold guids are made from positions.
    hf_has_guid: bool = True
    #: Why a metric can be undefined on examples that exist (docs/metrics.md).
    undefined_reasons: Mapping[str, str] = field(default_factory=dict)
    #: The detail frame the finer slices describe; None where every slice is of the examples.
    detail: DetailLevel | None = None


@dataclass(frozen=True, kw_only=True)
class ViewSettings:
    """How the app lays out a task's examples; every setting is optional."""

    #: Examples drawn together on one card (WoS: the turns of one dialogue); None: one card per example.
    card_column: str | None = None
    #: The drawing needs the page's width (DP's arcs): comparing two runs puts the second's under the first, not beside it.
    wide_drawing: bool = False
    #: Examples short enough for one table row each (YNAT, NLI, STS): the example list offers a compact table.
    compact_table: bool = False
    #: Confusion labels the page offers to leave out, left out by default (RE's no_relation).
    hideable_labels: tuple[str, ...] = ()
    #: Confusion columns that are outcomes rather than labels (NER's "wrong boundary"): drawn as columns only.
    outcome_columns: tuple[str, ...] = ()


@dataclass(frozen=True)
class SeenInTraining:
    """A task's optional "seen in training" feature (klue_viz.discovery.features): how often a run's unit was seen in
    training is how often its `unit_keys` key occurs among the `keys` of the training gold rows."""

    #: The name of the slice a training file adds.
    label: str
    #: The keys (entity text, answer...) of the training gold rows, one per occurrence.
    keys: Callable[[list[dict]], Iterable[Hashable]]
    #: The training key of each unit row of a run (the rows the slice finder works on); None for a unit with none.
    unit_keys: Callable[[pd.DataFrame], Iterable[Hashable | None]]


@dataclass(frozen=True)
class SurfaceForms:
    """A task's own "errors by surface form" table (klue_viz.scoring.surface_forms): a run's errors by the form of its
    unit (entity text, word, slot value...), in the shape of klue_viz.tasks.surface. A task without one is tabled by
    the words of its text columns."""

    errors: Callable[[Frames], pd.DataFrame]


@dataclass(frozen=True)
class DrawingDocument:
    """A task's drawing of one card (the examples in `guids`) as a document for klue_viz.drawing.svg: a dict of what to
    draw (`kind`, rows or arcs or turns, notes, legend), no markup. A task without one is drawn as its text columns with
    the gold and predicted label (klue_viz.outputs.example_document)."""

    document: Callable[[Frames, list[str]], dict]


class Task(ABC):
    """Base class of a KLUE task module: its parts (`facts`, `view`, and the optional `training`, `surface`,
    `svg_document`, `labels`: a feature checks `task.<part> is None`, never the task's name or its frames' shape) and the methods below, abstract where
    every task must say how, with defaults where one fits every task.

    How a task reads an LLM's answer and which frame columns the slice search adds are class attributes beside the
    parts (they tell how the task's code works, not what its data is)."""

    #: Required: what the task is.
    facts: TaskFacts
    #: How the app lays out its examples.
    view: ViewSettings = ViewSettings()
    #: The seen-in-training feature, for the tasks that have one.
    training: SeenInTraining | None = None
    #: The task's own errors-by-surface-form table, for the tasks whose unit is finer than the text.
    surface: SurfaceForms | None = None
    #: The task's own drawing of a card as a standalone document, for the tasks drawn as more than text and labels.
    svg_document: DrawingDocument | None = None
    #: The label space of a single-label task (YNAT, NLI, RE) in its official order; None where a prediction is not
    #: one label of a fixed set.
    labels: tuple[str, ...] | None = None
    #: How the behavioural test suites read, rebuild and write this task's examples (klue_viz.probes); None: not probed.
    probe: ProbeIO | None = None

    #: Fields of a prediction record holding this task's prediction; a record with none of them but a free-text field
    #: (`generation`, `output`, `response`, `text`) is an LLM's answer and goes through `parse_answer`.
    prediction_fields: frozenset[str] = frozenset({"label", "probs"})
    #: The version of the task's answer parser (docs/answer-parsers.md), raised whenever what it reads changes.
    answer_parser_version: int = 0
    #: The official scorer compares this task's prediction text byte for byte (MRC's exact match): a file in decomposed
    #: Unicode is scored as written, not composed as every other task reads it, and `as_written_note` says what
    #: composing would have changed.
    keeps_text_as_written: bool = False
    #: Weak-slice features taken from example-frame columns: (feature name, column, readable name). Label tasks
    #: add the gold and the predicted label, so 'gold = entailment' can be found where a run fails most.
    label_features: tuple[tuple[str, str, str], ...] = ()
    #: Example-frame columns that together fix whether an example is right, and predicted values wrong by definition
    #: (column -> values): a slice conditioning on all the columns of one set (a label task's gold and predicted label,
    #: a confusion-matrix cell) or on one of those values has the error rate its definition gives it, and is never
    #: ranked as a weak slice (klue_viz.discovery.slices).
    error_fixing_columns: tuple[frozenset[str], ...] = ()
    error_fixing_values: Mapping[str, frozenset[str]] = {}

    # ---- gold -------------------------------------------------------------------------------
    def read_official(self, text: str, name: str) -> tuple[list[dict], list[Problem]]:
        """Gold rows (one per evaluation example, with a `guid`) from the official file's text.

        JSON tasks parse the text here and read the data in `read_official_json`; TSV tasks override this.
        """
        return self.read_official_json(load_json(text, name), name)

    def read_official_json(self, data: Any, name: str) -> tuple[list[dict], list[Problem]]:
        """Gold rows from the official file already parsed as JSON (so that a file is parsed once)."""
        raise InputError(f"{name}: the official {self.facts.title} file is not JSON")

    @abstractmethod
    def rows_from_hf(self, records: Iterable[dict], split: str = "dev") -> tuple[list[dict], list[Problem]]:
        """Gold rows from Hugging Face `klue/klue` records (from `datasets` or a JSON(L) export)."""

    @abstractmethod
    def looks_like_hf(self, record: dict) -> bool:
        """Whether a gold record has the Hugging Face schema rather than the official one."""

    # ---- predictions ------------------------------------------------------------------------
    def record_key(self, record: dict) -> str | None:
        """The example a prediction record is for (its gold guid)."""
        key = record.get("guid", record.get("id"))
        return None if key is None else str(key).strip()

    def normalise_record(self, record: dict) -> dict:
        if BARE_VALUE in record:
            record = dict(record)
            record[self.facts.bare_value_field] = record.pop(BARE_VALUE)
        return record

    @abstractmethod
    def parse_prediction(self, record: dict, gold: dict) -> Any:
        """The prediction for one gold row, or RecordError saying what was expected."""

    @abstractmethod
    def empty_prediction(self, gold: dict) -> Any:
        """What a missing prediction counts as under --strict."""

    def parse_answer(self, text: str, gold: dict) -> Answer:
        """The prediction record fields an LLM's generated `text` gives for one gold row (`gold` may be `{}` when a
        multiple-choice log's choice texts are read); an Answer without fields when the text is unreadable."""
        raise RecordError(f"{self.facts.title} has no answer parser: give its prediction fields ({', '.join(sorted(self.prediction_fields))})")

    def unreadable_prediction(self, gold: dict) -> Any:
        """What an unreadable answer is scored as: wrong (klue_viz.scoring.llm_outputs); by default the empty prediction."""
        return self.empty_prediction(gold)

    def as_written_note(self, gold: list[dict], predictions: list[Any]) -> str | None:
        """For a task that `keeps_text_as_written`: what reading these predictions (of these gold rows) composed would
        change, as one problem line; None when nothing would."""
        return None

    # ---- results ----------------------------------------------------------------------------
    @abstractmethod
    def build_frames(self, gold: pd.DataFrame, predictions: list[Any]) -> Frames:
        """Tidy per-example frames for gold rows and their predictions (same order)."""

    @abstractmethod
    def statistics(self, frames: Frames) -> Statistics:
        """Per-example sufficient statistics of `frames` (rows in `frames.examples` order) and their aggregate."""

    @abstractmethod
    def row_statistics(self, gold: list[dict], predictions: list[Any]) -> Statistics:
        """The statistics `statistics` gives for the frames of these gold rows and parsed predictions, without the frames.

        A run's headline numbers come from here, so scoring a file never builds a DataFrame (the CLI does
        not import pandas); the tests hold the two equal on every real dev set.
        """

    def score(self, frames: Frames) -> Scores:
        """The official metrics over the examples in `frames`: the aggregate of their summed statistics."""
        return self.scores_of(self.statistics(frames))

    def scores_of(self, stats: Statistics) -> Scores:
        """The official metrics of every example in `stats`."""
        return self.as_scores(stats.scores(stats.totals()), 0, stats.n)

    def as_scores(self, values: dict[str, np.ndarray], row: int, n: int) -> Scores:
        """Row `row` of aggregated metric arrays as Scores; NaN becomes None with its reason."""
        scores = Scores({})
        for metric in self.facts.metrics:
            value = float(values[metric.key][row])
            if np.isnan(value):
                scores.values[metric.key] = None
                scores.reasons[metric.key] = self.facts.undefined_reasons.get(metric.key, "undefined") if n else f"no scored {self.facts.unit}s"
            else:
                scores.values[metric.key] = value
        return scores

    def detail_statistics(self, level: str, frame: pd.DataFrame) -> Statistics:
        """Statistics of the rows of a detail frame (an entity, a word, a slot), one row each."""
        raise KeyError(f"{self.facts.name} has no detail level {level!r}")

    def detail_statistics_columns(self, level: str) -> tuple[str, ...] | None:
        """The columns of a detail level `detail_statistics` reads (None: every column), so the metrics along a sequence of
        kept runs read those and the slices' own (klue_viz.compare.ranking.sequence_columns); tests/test_sequence.py holds
        the numbers of frames cut to them equal to the whole frames' on every demo run."""
        return None

    def detail_scores(self, level: str, frame: pd.DataFrame) -> dict[str, float | None]:
        """Metrics of a slice taken at a detail level (an entity type, a word relation, a slot)."""
        stats = self.detail_statistics(level, frame)
        values = stats.scores(stats.totals())
        return {key: None if np.isnan(v[0]) else float(v[0]) for key, v in values.items()}

    def statistics_columns(self) -> dict[str, tuple[str, ...]] | None:
        """The frame columns `statistics`, `example_scores` and `annotation_key` read, by level ("examples" and detail
        levels), besides the examples' `guid` and `correct`: all that comparing many runs reads of each run, so a kept
        run's other columns stay on disk (klue_viz.store.kept_scoring.column_frames). None: every column. tests/test_compare_columns.py
        holds the statistics of frames cut to these columns equal to the whole frames' on every demo run."""
        return None

    def example_columns(self, gold: list[dict], predictions: list[Any]) -> dict[str, list]:
        """The per-example columns calibration and the crowd figures read (klue_viz.discovery), as the frames built from
        these gold rows and parsed predictions hold them, without building the frames: `evaluate --out` then needs no
        pandas. {} where the task has none of them; tests/test_scoring_paths.py holds them equal to the frames' columns."""
        return {}

    def example_scores(self, frames: Frames) -> pd.Series | None:
        """One score per example of a run's frames on 0..1 (1 = fully right), for tasks whose examples are more than
        right or wrong (the compare matrix colours by it: klue_viz.compare.ranking); None where right/wrong is all there is."""
        return None

    @abstractmethod
    def render(self, frames: Frames, guid: str) -> str:
        """HTML (escaped) drawing one example with gold and prediction."""

    # ---- shared helpers ---------------------------------------------------------------------
    def hf_guid(self, index: int, split: str) -> str:
        """Official-style guid for a positional Hugging Face record (no source suffix)."""
        return f"{self.facts.guid_prefix}_{split}_{index:05d}"

    @staticmethod
    def number_key(guid: str) -> str | None:
        match = GUID_NUMBER.search(guid)
        return match.group(1) if match else None

    def annotation_key(self, example: dict) -> tuple[str, int | None]:
        """(guid, turn) under which annotations of an example are stored; turn is WoS's alone."""
        return example["guid"], None

    def example_guid(self, guid: str, turn: int | None) -> str:
        """The example-frame guid of a stored annotation key (the inverse of `annotation_key`)."""
        return guid if turn is None else f"{guid}-{turn}"

    def confusion(self, frames: Frames) -> pd.DataFrame | None:
        """Long-form gold/pred pairs for the confusion matrix (`gold`, `pred`, `guid`), where it means something."""
        return None

    def selection_charts(self, frames: Frames) -> list[tuple[str, Any]]:
        """(title, plotly figure) pairs whose selected points (customdata = guid) filter the examples (STS's scatter)."""
        return []

    def render_card(self, frames: Frames, guids: list[str]) -> str:
        """One card of the example list: the examples in `guids` share it (see `card_column`), the first is the anchor."""
        return self.render(frames, guids[0])

    # ---- the annotators' own labels (klue_viz.core.crowd) ---------------------------------------------
    def human_baseline(self, rows: list[dict]) -> HumanBaseline | None:
        """How well the gold's annotators agree, on the scale of the task's first metric, over these gold rows;
        None when the rows keep no per-annotator labels (the default)."""
        return None

    def held_out_baseline(self, rows: list[dict]) -> HumanBaseline | None:
        """The human baseline with each annotator held out of the reference they are scored against (klue_viz.core.crowd);
        None when the rows keep no per-annotator labels (the default)."""
        return None

    def suspect_text(self, row: dict, suspect: Suspect) -> str:
        """The unit of a suspect as plain text (escaped where it is drawn): by default the example's text columns,
        one per line; tasks with finer units mark the span, the word and its head, the slot."""
        return "\n".join(f"{column}: {row[column]}" for column in self.facts.text_columns if row.get(column) not in (None, ""))

    # ---- discovery (klue_viz.discovery calls these) -------------------------------------------
    @abstractmethod
    def find_suspects(self, results: Sequence[ScoredRun]) -> list[Suspect]:
        """Units whose gold looks wrong to the runs (of this task, on one gold), unranked: `klue_viz.discovery.suspects`
        sorts them into the review queue. Entries are `klue_viz.tasks.kit.Suspect`s; `proposed` in the form `write_patch`
        reads back."""

    @abstractmethod
    def write_patch(self, official_text: str, name: str, corrections: dict[tuple[str, int | None], list[str]],
                    problems: list[Problem]) -> tuple[str, int]:
        """The corrected records of the official file (`official_text`, named `name`) in its format, and their count.
        `corrections`: (guid, turn) -> correction texts as stored (klue_viz.discovery.patch); one that cannot be read
        goes to `problems`."""

    def sort_orders(self) -> dict[str, Callable[[Frames], pd.Series]]:
        """Example-list orders of this task, offered after the shared ones (klue_viz.discovery.sorting):
        name -> a function giving one number per example of a run's frames, lower first."""
        return {}


def require(record: dict, field_name: str, what: str) -> Any:
    if field_name not in record or record[field_name] is None or record[field_name] == "":
        raise RecordError(f"missing field '{field_name}' ({what})")
    return record[field_name]


#: Largest integer a record may hold (offsets, heads, ids): what fits every integer column downstream.
MAX_INT = 2**31 - 1


def shown(value: Any, limit: int = 60) -> str:
    """A value as it is quoted in a problem message: repr, cut short."""
    text = repr(value) if not isinstance(value, str) or len(value) <= limit else repr(value[:limit]) + "..."
    return text if len(text) <= limit + 8 else text[:limit] + "..."


def as_int(value: Any, what: str) -> int:
    if isinstance(value, bool):
        raise RecordError(f"{what} must be an integer, found {value!r}")
    number = None
    if isinstance(value, int):
        number = value
    elif isinstance(value, float) and value.is_integer():
        number = int(value)
    elif isinstance(value, str) and value.strip().lstrip("-").isdigit() and value.isascii() and len(value.strip()) <= 12:  # not `①`
        number = int(value.strip())
    if number is None:
        raise RecordError(f"{what} must be an integer, found {shown(value)}")
    if not -MAX_INT <= number <= MAX_INT:
        raise RecordError(f"{what} {shown(number, 20)} is out of range")
    return number


def as_list(value: Any, what: str) -> list:
    if isinstance(value, list):
        return value
    raise RecordError(f"{what} must be a JSON list, found {type(value).__name__}: {str(value)[:60]!r}")


def bucket(values: pd.Series, edges: list[float], unit: str) -> pd.Series:
    """Length buckets as readable, ordered strings ('1-10 chars', ...)."""
    labels = []
    for low, high in zip(edges[:-1], edges[1:]):
        labels.append(f"{low + 1}+ {unit}" if math.isinf(high) else f"{low + 1}-{int(high)} {unit}")
    return pd.cut(values, edges, labels=labels).astype("string")
