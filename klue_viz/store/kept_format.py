"""The kept format: how a scored run, its views and a parsed gold are written to the database and to Parquet, and read back.

A kept thing is used only when everything it was made from matches, and when what is read back is what was written:

- **Layout** (`layout`, `view_layout`): LAYOUT and a hash of the code whose output is kept. It is part of every key
  (`result_key`, `gold_key`), so rows of another layout (another klue-viz version on the same database) are never
  read and never replaced: each version writes its own rows beside the other's, and neither scores again what the
  other kept (a removed run takes the rows of every layout with it).
- **Checksum** (`seal`, `unseal`): the JSON text of every kept row (a result's summary, a view, a parsed gold) is
  stored behind the sha256 of the row's key fields and that text. A row that was edited, truncated or written by
  hand fails the check and is treated as missing: the run is scored again (the view computed, the gold parsed) and
  the row replaced. What passes the check is still read with its types checked (`summary_from_row`), so a row can
  never crash a page.
- **Parquet** (`parquet_bytes`, `read_frame`, `read_columns`): a frame's object columns as JSON text, its layout in
  the file's metadata; each file's sha256 and size are in the summary row and checked when read.
- **View JSON** (`view_json`, `view_from_json`): exact JSON with dataclasses tagged by class, so what is read back
  equals what was computed.

Hand-written (not a library) because the checksum and the layout key are what the database rows must agree on
with the files beside them; the encoders themselves are pyarrow, pandas and klue_viz/core/exact_json.py.
"""

from __future__ import annotations

import hashlib
import io
import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, fields, is_dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from klue_viz.core.exact_json import decode, decoder, encode, exact, untagged
from klue_viz.core.lazy import lazy_module
from klue_viz.core.problems import Problem
from klue_viz.core.results import Coverage, Scores

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa
    import pyarrow.parquet as pq
else:
    pd = lazy_module("pandas")
    pa = lazy_module("pyarrow")
    pq = lazy_module("pyarrow.parquet")

#: Bumped by hand when what is kept changes shape; `layout()` also changes with the scoring code itself.
#: 2: keys include the layout, rows carry a checksum.
LAYOUT = 2
#: The code whose output is kept: a change to any of these files makes every kept result stale (scored again, once).
SCORING_SOURCES = ("scoring/evaluate.py", "metrics", "reading/records.py", "core", "tasks", "store/kept_format.py", "store/kept_results.py",
                   "scoring/bootstrap.py")
#: The code whose output a kept view is, besides the scoring code (`layout`): a change to any of these makes every kept
#: view stale (computed again, once, and replaced).
VIEW_SOURCES = ("discovery", "scoring/slicing.py")
#: A frame's object columns (lists, dicts, strings mixed with None) are kept as JSON text, decoded on reading.
JSON_COLUMNS = b"klue_viz.json_columns"
LAYOUT_KEY = b"klue_viz.layout"
#: How a sealed text starts: the checksum's name, its hex digest, a newline, then the JSON text.
SEAL = "sha256:"


class KeptUnreadable(Exception):
    """A kept result's frames are missing, damaged or of another layout: score the run again."""


class Unsealed(ValueError):
    """A kept row's text does not match its checksum (damaged, edited, or not written by klue-viz)."""


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _code_fingerprint(prefix: str, sources: tuple[str, ...]) -> str:
    """`prefix` and a hash of it and of the package's `sources` (files, or folders of .py files): what a kept thing
    was written by, so that anything kept by other code is never read."""
    package = Path(__file__).resolve().parent.parent
    digest = hashlib.sha256(prefix.encode())
    for name in sources:
        path = package / name
        for file in sorted(path.rglob("*.py")) if path.is_dir() else [path]:
            digest.update(file.relative_to(package).as_posix().encode())
            digest.update(file.read_bytes())
    return f"{prefix}.{digest.hexdigest()[:16]}"


_LAYOUT = _code_fingerprint(str(LAYOUT), SCORING_SOURCES)
_VIEW_LAYOUT = _code_fingerprint(_LAYOUT, VIEW_SOURCES)


def layout() -> str:
    """The layout kept results are written in: LAYOUT and a hash of the scoring code, so results kept by other code are never read."""
    return _LAYOUT


def view_layout() -> str:
    """The layout kept views are written in: the results' layout and a hash of the code that computes the views."""
    return _VIEW_LAYOUT


def result_key(run_sha256: str, gold_sha256: str, strict: bool) -> str:
    """The name of the kept result of a run (its bytes' sha256) scored against a gold (its bytes' sha256), strict or not,
    by this layout: another layout's result of the same run is another row."""
    return sha256(f"{run_sha256}|{gold_sha256}|{int(bool(strict))}|{layout()}".encode())


def gold_key(task: str, gold_sha256: str, name: str) -> str:
    """The name of a parsed gold: the task, the gold bytes' sha256, the name read under, and this layout."""
    return sha256("\n".join([task, gold_sha256, name, layout()]).encode())


# ---- checksums of kept rows ---------------------------------------------------------------------

def _digest(text: str, fields: Sequence[object]) -> str:
    """sha256 of the key fields (as one JSON list, so no two field lists give the same bytes) and then the text."""
    digest = hashlib.sha256(json.dumps([str(f) for f in fields], ensure_ascii=False).encode("utf-8", "surrogatepass"))
    digest.update(b"\n")
    digest.update(text.encode("utf-8", "surrogatepass"))
    return digest.hexdigest()


def seal(text: str, *fields: object) -> str:
    """`text` behind the sha256 of the row's key `fields` and the text, as a kept row stores it."""
    return f"{SEAL}{_digest(text, fields)}\n{text}"


def unseal(stored: object, *fields: object) -> str:
    """The text `seal` wrote with the same `fields`; Unsealed when the row is not that (edited, truncated, of another kind)."""
    if not isinstance(stored, str) or not stored.startswith(SEAL):
        raise Unsealed("no checksum")
    head, newline, text = stored.partition("\n")
    if not newline or head[len(SEAL):] != _digest(text, fields):
        raise Unsealed("the checksum does not match")
    return text


@dataclass(frozen=True)
class Summary:
    """A kept result's database row: all the home page needs of a run, without its frames."""

    key: str
    task: str
    run_sha256: str
    gold_sha256: str
    strict: bool
    file_name: str
    scores: Scores
    coverage: Coverage
    problems: list[Problem]
    notes: list[str]
    extra_guids: list[str]
    levels: dict[str, tuple[str, int]]


def summary_row(summary: Summary, kept_layout: str, created_at: str) -> dict[str, Any]:
    """A summary as its `kept_scores` row, sealed over every column it is read by."""
    body = json.dumps({"scores": summary.scores.values, "reasons": summary.scores.reasons, "coverage": asdict(summary.coverage),
                       "problems": [p.to_dict() for p in summary.problems], "notes": summary.notes, "extra": summary.extra_guids},
                      ensure_ascii=False)
    levels = json.dumps(summary.levels)
    fields = (summary.key, summary.task, summary.run_sha256, summary.gold_sha256, bool(summary.strict), kept_layout, summary.file_name, levels)
    return {"key": summary.key, "task": summary.task, "run_sha256": summary.run_sha256, "gold_sha256": summary.gold_sha256,
            "strict": bool(summary.strict), "layout": kept_layout, "file_name": summary.file_name, "summary": seal(body, *fields),
            "levels": levels, "created_at": created_at}


def _of(value: Any, kind: type | tuple[type, ...], what: str) -> Any:
    """`value` when it is of `kind` (a bool only where bool is named), else TypeError naming `what`."""
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
        raise TypeError(f"{what} of a kept row is a {type(value).__name__}")
    return value


def _texts(value: Any, what: str) -> list[str]:
    return [_of(item, str, what) for item in _of(value, list, what)]


def summary_from_row(row: Any) -> Summary:
    """The Summary of a `kept_scores` row; Unsealed, ValueError, KeyError or TypeError when the row is damaged (its
    checksum fails) or holds anything but the types a summary has (a page never sees a wrong type)."""
    fields = (row.key, row.task, row.run_sha256, row.gold_sha256, bool(row.strict), row.layout, row.file_name, row.levels)
    data = _of(json.loads(unseal(row.summary, *fields)), dict, "summary")
    levels = {}
    for level, pair in _of(json.loads(row.levels), dict, "levels").items():
        digest, size = _of(pair, list, "level")
        levels[level] = (_of(digest, str, "level digest"), _of(size, int, "level size"))
    if "examples" not in levels:
        raise ValueError("no example frame")
    scores = {_of(k, str, "metric"): None if v is None else float(_of(v, (int, float), "score"))
              for k, v in _of(data["scores"], dict, "scores").items()}
    reasons = {_of(k, str, "metric"): _of(v, str, "reason") for k, v in _of(data["reasons"], dict, "reasons").items()}
    coverage = Coverage(**{k: _of(v, int, "coverage") for k, v in _of(data["coverage"], dict, "coverage").items()})
    problems = []
    for item in _of(data["problems"], list, "problems"):
        item = _of(item, dict, "problem")
        problems.append(Problem(_of(item["message"], str, "message"), _of(item.get("line"), (int, type(None)), "line"),
                                _of(item.get("guid"), (str, type(None)), "guid"), _of(item.get("file"), (str, type(None)), "file")))
    return Summary(row.key, row.task, row.run_sha256, row.gold_sha256, bool(row.strict), row.file_name, Scores(scores, reasons), coverage,
                   problems, _texts(data["notes"], "note"), _texts(data["extra"], "extra guid"), levels)


# ---- frames as Parquet --------------------------------------------------------------------------

def json_cells(values: Iterable[Any]) -> list[str]:
    """Each value as one JSON text, `encode(exact(value))`: None is `null` and a list of strings
    (NLI's votes, repeated across a column) is encoded once per distinct list, so a column costs far less than a
    `json.dumps` per cell; TypeError for a value `exact` refuses."""
    out = []
    lists: dict[tuple[str, ...], str] = {}
    for value in values:
        if value is None:
            out.append("null")
        elif type(value) is list and all(type(item) is str for item in value):
            key = tuple(value)
            text = lists.get(key)
            if text is None:
                text = lists[key] = encode(value)
            out.append(text)
        else:
            out.append(encode(exact(value)))
    return out


def parquet_bytes(frame: pd.DataFrame, kept_layout: str | None = None) -> bytes:
    """A frame as Parquet bytes (zstd): object columns as JSON text, every other column as it is (pandas metadata keeps its dtype).

    TypeError when an object column holds a value JSON cannot give back as it was (a numpy scalar, a set).
    """
    table = frame.copy(deep=False)
    encoded = [str(c) for c in frame.columns if frame[c].dtype == object]
    for column in encoded:
        table[column] = pd.array(json_cells(frame[column]), dtype="string")
    arrow = pa.Table.from_pandas(table, preserve_index=None)
    extra = {JSON_COLUMNS: json.dumps(encoded).encode(), LAYOUT_KEY: (kept_layout or layout()).encode()}
    arrow = arrow.replace_schema_metadata({**(arrow.schema.metadata or {}), **extra})
    sink = io.BytesIO()
    pq.write_table(arrow, sink, compression="zstd", write_statistics=False)  # min/max per column: nothing reads them
    return sink.getvalue()


def read_frame(data: bytes, kept_layout: str | None = None) -> pd.DataFrame:
    """The frame `parquet_bytes` wrote; KeptUnreadable when the bytes are damaged or of another layout."""
    try:
        table = pq.read_table(io.BytesIO(data))
    except (pa.ArrowException, OSError, ValueError) as err:
        raise KeptUnreadable(f"unreadable Parquet ({err})") from None
    meta = table.schema.metadata or {}
    if meta.get(LAYOUT_KEY, b"").decode() != (kept_layout or layout()):
        raise KeptUnreadable(f"written in layout {meta.get(LAYOUT_KEY, b'?').decode()!r}, not {kept_layout or layout()!r}")
    frame = table.to_pandas()
    _decode_json_columns(frame, json.loads(meta.get(JSON_COLUMNS, b"[]")))
    return frame


def _decode_json_columns(frame: pd.DataFrame, columns: Iterable[str]) -> None:
    """Decode, in place, the frame's columns `parquet_bytes` wrote as JSON text."""
    for column in columns:
        cells = frame[column].tolist()
        if all(isinstance(v, str) for v in cells):  # each cell one JSON text (parquet_bytes): the column is read as one array
            values = decode("[" + ",".join(cells) + "]")
            if len(values) != len(cells):
                raise KeptUnreadable(f"column {column!r}: {len(values)} values for {len(cells)} cells")
        else:
            values = [decode(v) for v in cells]  # raises for a cell that is not text, as before
        frame[column] = pd.Series(values, index=frame.index, dtype=object)


def read_columns(data: bytes, columns: Sequence[str], kept_layout: str | None = None) -> pd.DataFrame:
    """`read_frame(data)[columns]` without reading the other columns: the same values and dtypes, in the order asked, a
    name the frame has not left out. Only the JSON columns asked for are decoded, and the file is read in this thread
    (pyarrow's pool costs more CPU than it saves on a frame this size). KeptUnreadable as `read_frame`."""
    try:
        source = pq.ParquetFile(pa.BufferReader(data))
        meta = source.schema_arrow.metadata or {}
        if meta.get(LAYOUT_KEY, b"").decode() != (kept_layout or layout()):
            raise KeptUnreadable(f"written in layout {meta.get(LAYOUT_KEY, b'?').decode()!r}, not {kept_layout or layout()!r}")
        present = set(source.schema_arrow.names)
        wanted = [c for c in dict.fromkeys(columns) if c in present]
        table = source.read(columns=wanted, use_threads=False)
    except (pa.ArrowException, OSError, ValueError) as err:
        raise KeptUnreadable(f"unreadable Parquet ({err})") from None
    frame = table.to_pandas(use_threads=False)
    _decode_json_columns(frame, [c for c in json.loads(meta.get(JSON_COLUMNS, b"[]")) if c in wanted])
    return frame


# ---- views as JSON ------------------------------------------------------------------------------

#: How a dataclass instance is written in a kept view's JSON: {DATACLASS: class name, "fields": {...}}.
DATACLASS = "\u0000dataclass"


def _view_kinds(types: dict[str, type]) -> Callable[[Any], Any]:
    """`exact`'s conversion for kept views: a dataclass of `types` tagged with its class name, a numpy scalar as the
    Python number it equals; TypeError for a dataclass of another type, or an object using the dataclass tag."""

    def convert(value: Any) -> Any:
        if is_dataclass(value) and not isinstance(value, type):
            name = type(value).__name__
            if types.get(name) is not type(value):
                raise TypeError(f"a {name} cannot be kept (not one of the view's types)")
            return {DATACLASS: name, "fields": {f.name: getattr(value, f.name) for f in fields(value)}}
        if isinstance(value, dict) and DATACLASS in value:
            raise TypeError("a dict with the dataclass tag as a key cannot be kept exactly")
        if type(value).__module__ == "numpy" and hasattr(value, "item") and getattr(value, "ndim", None) == 0:
            return value.item()  # np.int64(3) -> 3, np.bool_ -> bool
        return value
    return convert


def view_json(value: Any, types: Iterable[type] = ()) -> str:
    """A view's value as the JSON text a kept view holds: `exact` with dataclasses of `types` and numpy scalars
    converted (`_view_kinds`); TypeError when it cannot be kept exactly."""
    text: str = encode(exact(value, _view_kinds({t.__name__: t for t in types})))
    return text


def view_from_json(text: str, types: Iterable[type] = ()) -> Any:
    """The value `view_json` wrote; ValueError (or KeyError, TypeError) when the text is not one."""
    known = {t.__name__: t for t in types}

    def hook(item: dict) -> Any:
        if DATACLASS in item:
            return known[item[DATACLASS]](**item["fields"])
        return untagged(item)

    return decoder(hook)(text)
