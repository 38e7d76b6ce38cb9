"""Which examples pass the filters a user set: pure pandas on the tidy frames, no Streamlit."""

from __future__ import annotations

import json
import unicodedata
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import re2

from klue_viz.core.results import Frames
from klue_viz.drawing.markup import csv_cell
from klue_viz.tasks.base import Slice, Task

ERROR_SEPARATOR = ", "


@dataclass
class ExampleFilter:
    """Everything a task page can filter on; empty means 'no restriction'."""

    status: str = "all"  # "all", "wrong" or "correct"
    gold: list[str] = field(default_factory=list)
    pred: list[str] = field(default_factory=list)
    error_types: list[str] = field(default_factory=list)
    slice: Slice | None = None
    slice_values: list[str] = field(default_factory=list)
    text: str = ""
    regex: bool = False
    guids: frozenset[str] | None = None  # a selection made on a chart
    tagged: frozenset[str] | None = None  # examples carrying the chosen error tags


class FilterError(ValueError):
    """A filter that cannot be applied (a malformed regular expression); shown to the user as is."""


#: Longest search text accepted; longer input is refused rather than compiled.
MAX_PATTERN = 500
#: Memory RE2 may use for one compiled pattern (its own bound on pathological patterns).
RE2_MAX_MEM = 8 << 20
#: Every example is searched in its guid too, so a guid pasted from a report finds its example.
ALWAYS_SEARCHED = ("guid",)


def compile_search(text: str, regex: bool) -> re2._Regexp:
    """A case-insensitive RE2 matcher for the search box: linear time whatever the pattern.

    Python's `re` backtracks without end on patterns like `(?:.+.+)+#`, and one such search stalls
    every session of the server; RE2 cannot, and refuses what it cannot run in linear time
    (backreferences, look-arounds) with an error we pass on.
    """
    if len(text) > MAX_PATTERN:
        raise FilterError(f"the search is {len(text):,} characters long; at most {MAX_PATTERN} are accepted")
    options = re2.Options()
    options.case_sensitive = False
    options.log_errors = False
    options.max_mem = RE2_MAX_MEM
    options.literal = not regex
    try:
        return re2.compile(text, options)
    except re2.error as err:
        detail = err.args[0].decode("utf-8", "replace") if err.args and isinstance(err.args[0], bytes) else str(err)
        raise FilterError(
            f"not a regular expression the search can run ({detail}); backreferences such as \\1 and look-arounds "
            "such as (?=...) are not supported, everything else of Python's syntax is"
        ) from None


def error_type_options(examples: pd.DataFrame) -> list[str]:
    """The atomic error types present (NER and WoS examples list several, comma-separated)."""
    types = set()
    for value in examples["error_type"].dropna().unique():
        types.update(str(value).split(ERROR_SEPARATOR))
    types.discard("correct")
    return sorted(types)


def text_mask(examples: pd.DataFrame, columns: tuple[str, ...], text: str, regex: bool) -> pd.Series:
    """Examples whose guid or text columns contain `text` (a literal, or an RE2 pattern with `regex`), both read as NFC."""
    text = unicodedata.normalize("NFC", text)
    pattern = compile_search(text, regex)  # refuses, with the reason, what RE2 cannot run
    mask = np.zeros(len(examples), dtype=bool)
    for column in dict.fromkeys(ALWAYS_SEARCHED + tuple(columns)):
        if column in examples:
            mask |= _matches(examples[column], pattern, text, regex)
    return pd.Series(mask, index=examples.index)


def _matches(values: pd.Series, pattern: re2._Regexp, text: str, regex: bool) -> np.ndarray:
    """Which values contain the search. A text column is searched by Arrow's RE2 kernels in one call (the same
    engine and options as `pattern`: linear time, case-insensitive, literal unless `regex`; a missing value
    matches nothing); 30x faster than calling `pattern` per value, which remains for columns that are not text."""
    try:
        array = pa.array(values, from_pandas=True)
        if pa.types.is_string(array.type) or pa.types.is_large_string(array.type):
            kernel = pc.match_substring_regex if regex else pc.match_substring
            return kernel(array, pattern=text, ignore_case=True).fill_null(False).to_numpy(zero_copy_only=False)
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):
        pass  # mixed values, or a pattern Arrow's RE2 refuses: searched value by value below
    texts = values.astype(str).tolist()  # a missing value stays missing (NaN), and matches nothing
    return np.fromiter((isinstance(v, str) and pattern.search(v) is not None for v in texts), dtype=bool, count=len(texts))


def apply_filter(task: Task, frames: Frames, pairs: pd.DataFrame | None, f: ExampleFilter) -> pd.DataFrame:
    """The examples passing every filter, in their original order."""
    ex = frames.examples
    mask = pd.Series(True, index=ex.index)
    if f.status == "wrong":
        mask &= ~ex["correct"]
    elif f.status == "correct":
        mask &= ex["correct"]
    if (f.gold or f.pred) and pairs is not None:
        chosen = pairs
        if f.gold:
            chosen = chosen[chosen["gold"].astype(str).isin(f.gold)]
        if f.pred:
            chosen = chosen[chosen["pred"].astype(str).isin(f.pred)]
        mask &= ex["guid"].isin(set(chosen["guid"]))
    if f.error_types:
        wanted = set(f.error_types)
        mask &= ex["error_type"].map(lambda v: bool(wanted & set(str(v).split(ERROR_SEPARATOR))))
    if f.slice is not None and f.slice_values:
        values = set(f.slice_values)
        if f.slice.level == "examples":
            mask &= ex[f.slice.key].astype(str).isin(values)
        else:
            detail = frames.details[f.slice.level]
            mask &= ex["guid"].isin(set(detail.loc[detail[f.slice.key].astype(str).isin(values), "guid"]))
    if f.text:
        mask &= text_mask(ex, task.facts.text_columns, f.text, f.regex)
    if f.guids is not None:
        mask &= ex["guid"].isin(f.guids)
    if f.tagged is not None:
        mask &= ex["guid"].isin(f.tagged)
    return ex[mask]


def export_frame(examples: pd.DataFrame) -> pd.DataFrame:
    """The example table as it is downloaded: list and dict cells become JSON-like text, count columns are dropped,
    and text a spreadsheet would run as a formula (`=`, `+`, `-`, `@`, tab, CR first) starts with `'`."""
    keep = [c for c in examples.columns if not c.startswith("char_")]
    out = examples[keep].copy()
    for column in out.columns:
        if pd.api.types.is_numeric_dtype(out[column]) or pd.api.types.is_bool_dtype(out[column]):
            continue
        out[column] = out[column].map(lambda v: csv_cell(_text(v) if isinstance(v, (list, dict, tuple)) else v))
    return out


def _text(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)
