"""The researcher's own columns: a file of per-example values that become slice features like the built-in ones.

A CSV, TSV or JSONL file keyed by `guid` (also `turn` for WoS; for NER, `start` and `end` make the
columns entity-level: the entity spanning those characters of that sentence, end exclusive, as in
the prediction format) with any other columns. Each column becomes one slice feature:

* **numeric** (at least 90% of its filled cells read as numbers): binned into `QUANTILE_BINS`
  quantile bins (quartiles; `numpy.quantile` edges, each bin closed on the right and the first on
  both sides, so `[1, 25]`, `(25, 50]`...; equal edges merge, so a column of few distinct values has
  fewer bins). A numeric column with at most `QUANTILE_BINS` distinct values keeps its values as
  categories (a 0/1 flag stays `0` and `1`). The raw number is kept too, as a sort key.
* **text** (everything else): the `TOP_CATEGORIES` most frequent values, the rest `other`.

The binned values live in frame columns named `user:<column>` (the raw numbers in
`user_value:<column>`), so every view that reads a run's frames (slice tables, filters, weak
slices, sort keys, reports) finds them with `user_slices` and `user_sort_orders`.

Bad rows are listed with their line and left out; nothing else is refused: a guid that is not in
the gold, a guid (or guid and turn, or span) given twice (the first line is kept), a cell that is
not a number in a numeric column or is a list or object (left empty).
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np
import pandas as pd

from klue_viz.core.problems import InputError, Problem
from klue_viz.core.results import Frames
from klue_viz.reading.records import read_records
from klue_viz.tasks.base import Slice, Task

#: A scored run (klue_viz.scoring.evaluate.RunResult): a dataclass with `key` and `frames`, named here without importing it.
Run = TypeVar("Run")

PREFIX = "user:"
VALUE_PREFIX = "user_value:"
QUANTILE_BINS = 4
TOP_CATEGORIES = 20
OTHER = "other"
#: Share of a column's filled cells that must read as numbers for the column to be numeric.
NUMERIC_SHARE = 0.9
KEY_COLUMNS = ("guid", "id", "turn", "start", "end")


@dataclass(frozen=True)
class UserColumn:
    """One column of the user's file: its name in the file, how it was read and the frame column that holds it."""

    name: str
    kind: str  # "numeric" or "text"
    level: str  # "examples" or the task's span detail level (NER's entities)
    bins: tuple[str, ...] = ()  # the values it takes after binning, in order

    @property
    def key(self) -> str:
        return PREFIX + self.name

    @property
    def value_key(self) -> str:
        return VALUE_PREFIX + self.name

    def describe(self) -> str:
        if self.kind == "numeric" and self.bins:
            return f"numeric, {len(self.bins)} bins: {', '.join(self.bins)}"
        return f"{self.kind}: {', '.join(self.bins[:8])}{'…' if len(self.bins) > 8 else ''}"


@dataclass
class UserFeatures:
    """The columns of one file, read against one gold: binned values and raw numbers, by unit key."""

    file: str
    digest: str
    level: str
    columns: list[UserColumn]
    #: One row per unit the file describes; key columns (`guid`, or `guid`, `start`, `end`), then each column's
    #: binned value (`user:<name>`) and, for numeric columns, its number (`user_value:<name>`).
    values: pd.DataFrame = field(repr=False)
    rows: int = 0
    #: What one row describes, in words ("examples", "entity spans").
    unit: str = "examples"


def digest_of(data: bytes) -> str:
    """The content address of a features file (the same bytes, the same features)."""
    return hashlib.sha256(data).hexdigest()


def _number(value: Any) -> float | None:
    """The number a cell holds (a JSON number, or text that reads as one), None when it is not a finite number."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        number = float(value)
    elif isinstance(value, str):
        try:
            number = float(value.strip()) if value.strip() else math.nan
        except ValueError:
            return None
    else:
        return None
    return number if math.isfinite(number) else None


def _empty(value: Any) -> bool:
    return value is None or (isinstance(value, str) and not value.strip())


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value).strip()


def _format(number: float) -> str:
    return f"{number:.4g}"


def quantile_bins(numbers: np.ndarray, bins: int = QUANTILE_BINS) -> tuple[list[str | None], tuple[str, ...]]:
    """Each number's bin label and the labels in order: `bins` quantile bins, or the values themselves when there
    are no more distinct values than bins. NaN stays unbinned (None)."""
    present = ~np.isnan(numbers)
    distinct = np.unique(numbers[present])
    if len(distinct) <= bins:
        labels = [_format(v) for v in distinct]
        lookup = dict(zip(distinct.tolist(), labels))
        return [lookup[v] if ok else None for v, ok in zip(numbers.tolist(), present.tolist())], tuple(labels)
    edges = np.unique(np.quantile(numbers[present], np.linspace(0, 1, bins + 1)))
    labels = [f"[{_format(edges[0])}, {_format(edges[1])}]"] + [f"({_format(lo)}, {_format(hi)}]" for lo, hi in zip(edges[1:-1], edges[2:])]
    # a value v falls in the first bin whose upper edge is >= v (the lowest edge belongs to the first bin)
    which = np.clip(np.searchsorted(edges, numbers, side="left") - 1, 0, len(labels) - 1)
    return [labels[k] if ok else None for k, ok in zip(which.tolist(), present.tolist())], tuple(labels)


def top_categories(texts: list[str | None], top: int = TOP_CATEGORIES) -> tuple[list[str | None], tuple[str, ...]]:
    """Each text as itself when it is among the `top` most frequent (ties: first seen), else OTHER."""
    counts = Counter(t for t in texts if t is not None)
    kept = [t for t, _ in counts.most_common(top)]
    keep = set(kept)
    out = [t if t is None or t in keep else OTHER for t in texts]
    return out, tuple(kept) + ((OTHER,) if len(counts) > top else ())


def _unit_keys(task: Task, gold_rows: Sequence[dict]) -> tuple[dict[str, str], dict[str, list[str]], dict[str, str]]:
    """Example guids; dialogue (card) -> its example guids; example guid -> its sentence (NER entity offsets)."""
    examples = {row["guid"]: row["guid"] for row in gold_rows}
    cards: dict[str, list[str]] = {}
    if task.view.card_column:
        for row in gold_rows:
            cards.setdefault(str(row.get(task.view.card_column)), []).append(row["guid"])
    sentences = {row["guid"]: row.get("sentence", "") for row in gold_rows}
    return examples, cards, sentences


def read_features(data: bytes, name: str, task: Task, gold_rows: Sequence[dict], bins: int = QUANTILE_BINS,
                  top: int = TOP_CATEGORIES) -> tuple[UserFeatures, list[Problem]]:
    """The user's columns in `data` (CSV, TSV, JSONL or JSON), matched to the gold examples (`Gold.rows`).

    Returns the features and the problems, each naming its line (and guid): rows with an unknown or repeated
    key are left out, cells of the wrong type left empty. A file that cannot be used at all (no guid column, no
    other column, not a table) is an InputError.
    """
    found = read_records(data, name)
    problems = list(found.problems)
    records = found.records
    if not records:
        raise InputError(f"{name}: no rows (expected a header with a guid column and your columns)")
    fields = list(dict.fromkeys(k for _, r in records for k in r))
    id_field = "guid" if "guid" in fields else ("id" if "id" in fields else None)
    if id_field is None:
        raise InputError(f"{name}: no 'guid' column (the examples' ids, as in the gold file); columns found: {', '.join(fields[:10])}")
    spans = task.facts.detail if task.facts.detail is not None and task.facts.detail.spans else None
    entity_level = "start" in fields and "end" in fields and spans is not None
    level = spans.name if spans is not None and entity_level else "examples"
    key_fields = {id_field, "turn", "start", "end"} if entity_level else {id_field, "turn"}
    names = [f for f in fields if f not in key_fields]
    if not names:
        raise InputError(f"{name}: only key columns ({', '.join(sorted(key_fields & set(fields)))}); add at least one column of your own")
    examples, cards, sentences = _unit_keys(task, gold_rows)
    kept: list[tuple[int | None, tuple, dict]] = []  # (line, unit key, record)
    seen: dict[tuple, int | None] = {}
    for line, record in records:
        raw = record.get(id_field)
        if _empty(raw):
            problems.append(Problem(f"no {id_field}: the row is left out", line, file=name))
            continue
        guid = _text(raw)
        turn = record.get("turn")
        targets: list[str]
        if not _empty(turn) and task.view.card_column:
            turn_number = _number(turn)
            if turn_number is None or not turn_number.is_integer():
                problems.append(Problem(f"turn {turn!r} is not a whole number: the row is left out", line, guid, name))
                continue
            example = task.example_guid(guid, int(turn_number))
            targets = [example] if example in examples else []
        elif guid in examples:
            targets = [guid]
        else:
            targets = cards.get(guid, [])  # a dialogue's guid without a turn: every turn of it
        if not targets:
            what = f"guid {guid}" + (f" turn {turn}" if not _empty(turn) else "")
            problems.append(Problem(f"{what} is not in the gold: the row is left out", line, guid, name))
            continue
        units: list[tuple]
        if entity_level:
            start, end = _number(record.get("start")), _number(record.get("end"))
            length = len(sentences.get(targets[0], ""))
            if start is None or end is None or not start.is_integer() or not end.is_integer() or not 0 <= start < end <= length:
                problems.append(Problem(f"start {record.get('start')!r}, end {record.get('end')!r}: expected whole numbers with "
                                        f"0 <= start < end <= {length} (the sentence's length; end is exclusive): the row is left out",
                                        line, guid, name))
                continue
            units = [(t, int(start), int(end)) for t in targets]
        else:
            units = [(t,) for t in targets]
        repeated = [u for u in units if u in seen]
        if repeated:
            problems.append(Problem(f"{' '.join(map(str, repeated[0]))} is given twice (first on line {seen[repeated[0]]}); "
                                    "this row is left out", line, guid, name))
            continue
        for unit in units:
            seen[unit] = line
            kept.append((line, unit, record))
    columns: list[UserColumn] = []
    values: dict[str, Any] = {}
    for column in names:
        cells = [record.get(column) for _, _, record in kept]
        filled = [(k, c) for k, c in enumerate(cells) if not _empty(c)]
        numbers = [_number(c) for _, c in filled]
        numeric = bool(filled) and sum(n is not None for n in numbers) >= NUMERIC_SHARE * len(filled)
        reported: set[int | None] = set()
        if numeric:
            raw_numbers = np.full(len(cells), np.nan)
            for (k, cell), number in zip(filled, numbers):
                if number is None:
                    line = kept[k][0]
                    if line not in reported:  # a dialogue row fills several turns: one problem per line
                        reported.add(line)
                        problems.append(Problem(f"column {column!r} holds numbers, found {_shown(cell)}: left empty", line, kept[k][1][0], name))
                else:
                    raw_numbers[k] = number
            binned, labels = quantile_bins(raw_numbers, bins)
            values[VALUE_PREFIX + column] = raw_numbers
        else:
            texts: list[str | None] = [None] * len(cells)
            for k, cell in filled:
                if isinstance(cell, (list, dict)):
                    line = kept[k][0]
                    if line not in reported:
                        reported.add(line)
                        problems.append(Problem(f"column {column!r}: a list or object cannot be a category, found {_shown(cell)}: left empty",
                                                line, kept[k][1][0], name))
                    continue
                texts[k] = _text(cell)
            binned, labels = top_categories(texts, top)
        values[PREFIX + column] = binned
        columns.append(UserColumn(column, "numeric" if numeric else "text", level, labels))
    keys = ["guid", "start", "end"] if entity_level else ["guid"]
    table = pd.DataFrame({k: [unit[j] for _, unit, _ in kept] for j, k in enumerate(keys)})
    for key, column_values in values.items():
        table[key] = np.asarray(column_values, dtype=float) if key.startswith(VALUE_PREFIX) else pd.array(column_values, dtype="string")
    features = UserFeatures(name, digest_of(data if isinstance(data, bytes) else str(data).encode()), level,
                            columns, table, len(records), f"{spans.row} spans" if spans is not None and entity_level else "examples")
    return features, problems


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:40] + "…"


def apply_features(frames: Frames, features: UserFeatures) -> Frames:
    """The frames with the user's columns: on the example frame, or on the entity frame (both gold and predicted
    entities with the span the file names); units the file does not describe get no value."""
    if features.level == "examples":
        joined = frames.examples[["guid"]].merge(features.values, on="guid", how="left")
        added = joined.drop(columns="guid").set_axis(frames.examples.index)
        return Frames(pd.concat([frames.examples.drop(columns=[c for c in added.columns if c in frames.examples]), added], axis=1),
                      dict(frames.details))
    entities = frames.details[features.level]
    keys = ["guid", "start", "end"]
    joined = entities[keys].astype({"start": "int64", "end": "int64"}).merge(features.values, on=keys, how="left")
    added = joined.drop(columns=keys).set_axis(entities.index)
    details = dict(frames.details)
    details[features.level] = pd.concat([entities.drop(columns=[c for c in added.columns if c in entities]), added], axis=1)
    return Frames(frames.examples, details)


def with_features(result: Run, features: UserFeatures) -> Run:
    """A copy of a scored run (a RunResult) whose frames carry the user's columns (its cache key names the features file)."""
    source: Any = result
    return dataclasses.replace(source, key=f"{source.key}|features:{features.digest}" if source.key else "",
                               frames_builder=lambda: apply_features(source.frames, features))


def user_slices(frames: Frames) -> list[Slice]:
    """The slices the user's columns add to a run's frames (none when no features file is applied)."""
    found = [Slice(c, label(c), "examples") for c in frames.examples.columns if isinstance(c, str) and c.startswith(PREFIX)]
    for level, frame in frames.details.items():
        found += [Slice(c, label(c), level) for c in frame.columns if isinstance(c, str) and c.startswith(PREFIX)]
    return found


def label(key: str) -> str:
    """How a user column is named in the app: its name in the file, marked as the user's."""
    return f"{key.removeprefix(PREFIX)} (your column)"


def user_sort_orders(frames: Frames) -> dict[str, Callable[[Frames], pd.Series]]:
    """Example-list orders by each numeric example-level user column, low and high first (examples without a value last)."""
    orders: dict[str, Callable[[Frames], pd.Series]] = {}
    for column in frames.examples.columns:
        if isinstance(column, str) and column.startswith(VALUE_PREFIX):
            name = column.removeprefix(VALUE_PREFIX)
            orders[f"{name} (your column), low first"] = _order(column, 1.0)
            orders[f"{name} (your column), high first"] = _order(column, -1.0)
    return orders


def _order(column: str, sign: float) -> Callable[[Frames], pd.Series]:
    """An example order by one numeric column: its value times `sign`, lower first."""
    def values(frames: Frames) -> pd.Series:
        return sign * frames.examples[column].astype(float)

    return values


def summary(features: UserFeatures, problems: Iterable[Problem]) -> str:
    """One line on what was read: the file, its rows, its columns and how each was read, and the problems."""
    listed = list(problems)
    parts = [f"{c.name}: {c.describe()}" for c in features.columns]
    return (f"{features.file}: {len(features.values):,} {features.unit} described by {len(features.columns)} column(s) ({'; '.join(parts)})"
            + (f"; {len(listed)} problem(s)" if listed else ""))
