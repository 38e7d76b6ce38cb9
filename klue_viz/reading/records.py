"""Reading raw prediction and gold files: decoding and record containers (JSON, JSONL, CSV, TSV).

Everything here is task-agnostic: it turns bytes into numbered records and a list of problems.
What the fields mean is decided by the task modules.
"""

from __future__ import annotations

import io
import json
import re
import unicodedata
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from klue_viz.core.lazy import lazy_module
from klue_viz.core.problems import InputError, Problem

if TYPE_CHECKING:
    import csv
else:  # imported when a CSV or TSV file is read, not by `klue-viz evaluate` of JSON lines
    csv = lazy_module("csv")

#: Key under which a bare value of a `{guid: value}` JSON object is passed on to the task.
BARE_VALUE = "_value"
NON_SPACE = re.compile(r"\S")


@dataclass
class RecordFile:
    """The records of one file, each with the 1-based line it starts on."""

    name: str
    records: list[tuple[int | None, dict]] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    encoding: str = "utf-8"
    container: str = "jsonl"
    #: Records that could not be read at all (a line that is not JSON, a row with the wrong number of cells).
    unreadable: int = 0
    #: Applied to each record as it is read (a task's `normalise_record`), so raw records never pile up.
    normalise: Callable[[dict], dict] | None = field(default=None, repr=False, compare=False)
    #: Whether the text holds a surrogate escape (`SURROGATE_ESCAPE`): only then are records checked for lone ones.
    scrub: bool = field(default=False, repr=False, compare=False)
    #: How many lone surrogates were read as U+FFFD (`without_lone_surrogates`).
    surrogates: list[int] = field(default_factory=lambda: [0], repr=False, compare=False)

    def add(self, line: int | None, record: dict) -> None:
        if self.scrub:
            record = without_lone_surrogates(record, self.surrogates)
        self.records.append((line, record if self.normalise is None else self.normalise(record)))

    def skip(self, problem: Problem) -> None:
        """One record left out as unreadable: listed, and counted."""
        self.problems.append(problem)
        self.unreadable += 1


def normalised(file: RecordFile, normalise: Callable[[dict], dict]) -> RecordFile:
    """A file read without `normalise` as `read_records` with it gives it (normalise works on one record at a time):
    a file read once to tell its task is scored without being read again. Takes the records over from `file`."""
    return RecordFile(file.name, [(line, normalise(record)) for line, record in file.records], file.problems, file.encoding,
                      file.container, file.unreadable, normalise)


#: Said when a file was in decomposed Unicode and was read composed.
NFD_NOTE = ("the file's text is in decomposed Unicode (NFD, as macOS tools write Korean); it was read as NFC, so its labels, "
            "guids and text match the gold's")


def decode(data: bytes, name: str = "") -> tuple[str, str]:
    """Decode UTF-8 (with or without BOM) or CP949/EUC-KR; normalise CRLF to LF and Unicode to NFC.

    The encoding is decided for the whole file with a hint: a file whose other non-ASCII lines are
    UTF-8 is UTF-8, and its lines that are not are named ('line 12 is not UTF-8') instead of
    switching the whole file to CP949 over one stray byte pair. The encoding is returned with
    ' (NFD → NFC)' when the text had to be composed (`NFD_NOTE` says so to the user)."""
    try:
        text, encoding = data.decode("utf-8-sig"), "utf-8"
    except UnicodeDecodeError as err:
        first_bad = data[:err.start].count(b"\n") + 1
        bad = _non_utf8_lines(data) if _has_utf8_text(data) else []
        if bad:
            listed = ", ".join(map(str, bad[:5])) + (", ..." if len(bad) > 5 else "")
            raise InputError(f"{name or 'file'}: line {bad[0]} is not UTF-8, though the rest of the file is ({len(bad)} such line(s): "
                             f"{listed}); fix those lines or save the file as UTF-8") from None
        try:
            text, encoding = data.decode("cp949"), "cp949"
        except UnicodeDecodeError:
            raise InputError(f"{name or 'file'}: not UTF-8 (line {first_bad} is not) or CP949/EUC-KR text; save it as UTF-8") from None
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if not is_nfc(text):
        text, encoding = unicodedata.normalize("NFC", text), f"{encoding} (NFD → NFC)"
    return text, encoding


#: Characters that are in NFC whatever surrounds them: each is its own NFC form, has canonical combining class 0 (so
#: nothing reorders around it) and is never the second character of a canonical composition (so it does not combine
#: with the character before it). ASCII, Latin-1 and Latin Extended, general punctuation (dashes, quotes), CJK
#: punctuation, CJK ideographs, Hangul syllables, full-width forms. tests/test_nfc_check.py holds each of these facts
#: against `unicodedata` for every character of the set.
ALWAYS_NFC = "\x00-\u02ff\u2010-\u2027\u3000-\u3029\u4e00-\u9fff\uac00-\ud7a3\uff01-\uff5e"
_OTHER_CHARACTERS = re.compile(f"[^{ALWAYS_NFC}]+")


def is_nfc(text: str) -> bool:
    """`unicodedata.is_normalized("NFC", text)`, checked only around the characters outside `ALWAYS_NFC`.

    The standard check walks every character, about 0.1 CPU s for the NER dev set's 1.8 million, and every file read
    pays it. A run of other characters is checked with the one character before it, which may compose with the run
    (`e` and a combining acute, a Hangul syllable and a final jamo), and the one after; an always-NFC character
    neither combines with the one before it nor moves, so each such window decides alone. An ASCII text (a prediction
    file of guids and tags or labels) is NFC as it is: `str.isascii` reads a flag, where the search walks every character."""
    if text.isascii():
        return True
    for found in _OTHER_CHARACTERS.finditer(text):
        start, end = found.span()
        if not unicodedata.is_normalized("NFC", text[max(start - 1, 0):end + 1]):
            return False
    return True


def _has_utf8_text(data: bytes) -> bool:
    """Whether some line with non-ASCII bytes decodes as UTF-8 (then the file is UTF-8 with a few stray lines)."""
    for line in data.split(b"\n"):
        if not line.isascii():
            try:
                line.decode("utf-8")
                return True
            except UnicodeDecodeError:
                continue
    return False


def _non_utf8_lines(data: bytes) -> list[int]:
    bad = []
    for number, line in enumerate(data.split(b"\n"), 1):
        try:
            line.decode("utf-8")
        except UnicodeDecodeError:
            bad.append(number)
    return bad


def read_bytes(path: str | Path) -> bytes:
    """Read a file, turning a missing path into a one-line InputError."""
    path = Path(path)
    if not path.exists():
        raise InputError(f"{path}: no such file")
    if path.is_dir():
        raise InputError(f"{path}: is a folder, expected a file")
    return path.read_bytes()


#: What Python's json raises on input it cannot turn into values: syntax errors, integers over 4,300 digits
#: (ValueError) and nesting deeper than the interpreter's recursion limit (RecursionError).
JSON_FAILURES = (ValueError, RecursionError)


def json_failure(err: Exception) -> str:
    """A short reason for a JSON value that could not be read."""
    if isinstance(err, json.JSONDecodeError):
        return err.msg
    if isinstance(err, RecursionError):
        return "nested too deeply"
    return str(err).split(";")[0][:120]


class KeyedObject(dict):
    """A JSON object that also keeps its (key, value) pairs in order, repeated keys included."""

    def __init__(self, pairs: list[tuple[str, object]]) -> None:
        super().__init__(pairs)
        self.pairs = pairs


#: A JSON escape of a UTF-16 surrogate (`\\ud800`), the one way a lone surrogate gets into decoded text (UTF-8 and
#: CP949 cannot hold one). A lone one cannot be written as UTF-8: pandas, pyarrow and the browser refuse such a string.
SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
LONE_SURROGATE = re.compile("[\ud800-\udfff]")  # json joins a valid pair into one character: any surrogate left is lone
SURROGATE_NOTE = ("{n} lone surrogate escape(s) (such as \\ud800: half of a UTF-16 pair, not a character) read as "
                  "U+FFFD (\ufffd)")


def without_lone_surrogates(value: Any, count: list[int]) -> Any:
    """`value` with every lone surrogate in its strings (at any depth, keys too) replaced by U+FFFD; `count[0]` grows
    by the number replaced. The rest of the record is kept: one bad character does not cost the record."""
    if isinstance(value, str):
        if LONE_SURROGATE.search(value) is None:
            return value
        fixed, n = LONE_SURROGATE.subn("\ufffd", value)
        count[0] += n
        return fixed
    if isinstance(value, list):
        return [without_lone_surrogates(v, count) for v in value]
    if isinstance(value, KeyedObject):
        return KeyedObject([(without_lone_surrogates(k, count), without_lone_surrogates(v, count)) for k, v in value.pairs])
    if isinstance(value, dict):
        return {without_lone_surrogates(k, count): without_lone_surrogates(v, count) for k, v in value.items()}
    return value


def load_json(text: str, name: str, keep_pairs: bool = False, surrogates: list[int] | None = None) -> Any:
    """The JSON value of a whole file, or an InputError naming the file, the line and what is wrong; lone surrogates
    read as U+FFFD (counted in `surrogates[0]`)."""
    try:
        value = json.loads(text, object_pairs_hook=KeyedObject if keep_pairs else None)
        return without_lone_surrogates(value, surrogates or [0]) if SURROGATE_ESCAPE.search(text) else value
    except json.JSONDecodeError as err:
        raise InputError(f"{name}: invalid JSON at line {err.lineno}: {err.msg}") from None
    except JSON_FAILURES as err:
        raise InputError(f"{name}: cannot be read as JSON: {json_failure(err)}") from None


def line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def _json_array(text: str, name: str, out: RecordFile) -> RecordFile:
    """Decode a top-level JSON list element by element, so that a broken element keeps the ones before it."""
    out.container = "json"
    decoder = json.JSONDecoder()
    pos = text.index("[") + 1
    n = len(text)
    while True:
        while pos < n and text[pos] in " \t\n,":
            pos += 1
        if pos >= n:
            out.problems.append(Problem("the JSON list is not closed with ']'", line_of(text, n), file=name))
            break
        if text[pos] == "]":
            break
        try:
            value, end = decoder.raw_decode(text, pos)
        except json.JSONDecodeError as err:
            out.problems.append(Problem(f"invalid JSON: {err.msg}; the rest of the file was not read", err.lineno, file=name))
            break
        except JSON_FAILURES as err:
            out.problems.append(Problem(f"cannot be read as JSON ({json_failure(err)}); the rest of the file was not read",
                                        line_of(text, pos), file=name))
            break
        line = line_of(text, pos)
        if isinstance(value, dict):
            out.add(line, value)
        else:
            out.skip(Problem(f"expected a JSON object, found {type(value).__name__}", line, file=name))
        pos = end
    return out


def _json_object(value: dict, text: str, name: str, out: RecordFile) -> RecordFile:
    """A `{guid: prediction}` mapping; line numbers are found by locating each key.

    A key given twice yields two records (JSON would keep only the last), so it is reported as a duplicate guid.
    """
    out.container = "json"
    search_from = 0
    for key, val in getattr(value, "pairs", None) or list(value.items()):
        at = text.find(json.dumps(key, ensure_ascii=False), search_from)
        if at < 0:
            at = text.find(json.dumps(key), search_from)
        line = line_of(text, at) if at >= 0 else None
        if at >= 0:
            search_from = at
        record = dict(val, guid=val.get("guid", key)) if isinstance(val, dict) else {"guid": key, BARE_VALUE: val}
        out.add(line, record)
    return out


def lines_of(text: str) -> Iterator[str]:
    """The lines of a text one at a time (a list of them all would double a large file in memory)."""
    start = 0
    while start <= len(text):
        end = text.find("\n", start)
        if end < 0:
            end = len(text)
        yield text[start:end]
        start = end + 1


#: json's own scanner (what `json.loads` calls after skipping white space), for a line that is one JSON value and nothing else.
_SCAN_JSON: Callable[[str, int], tuple[Any, int]] = json.JSONDecoder().scan_once  # type: ignore[attr-defined]  # set by __init__, not in typeshed


def json_line(line: str) -> Any:
    """`json.loads(line)`: the same value, or the same error. A line that is exactly one value, the common case, is
    scanned directly (json.loads costs a third more on a short line); anything else goes through json.loads."""
    try:
        value, end = _SCAN_JSON(line, 0)
    except (StopIteration, *JSON_FAILURES):
        end = -1
    return value if end == len(line) else json.loads(line)


def _jsonl(text: str, name: str, out: RecordFile) -> RecordFile:
    out.container = "jsonl"
    for number, line in enumerate(lines_of(text), 1):
        if not line.strip():
            continue
        try:
            value = json_line(line)
        except json.JSONDecodeError as err:
            out.skip(Problem(f"invalid JSON: {err.msg} (column {err.colno})", number, file=name))
            continue
        except JSON_FAILURES as err:
            out.skip(Problem(f"cannot be read as JSON: {json_failure(err)}", number, file=name))
            continue
        if isinstance(value, dict):
            out.add(number, value)
        else:
            out.skip(Problem(f"expected a JSON object, found {type(value).__name__}", number, file=name))
    return out


def _cell(value: str | None) -> object:
    """CSV cells holding JSON lists or objects (entities, heads, states) are decoded; the rest stay text."""
    if value is None:
        return None
    stripped = value.strip()
    if stripped[:1] in "[{" and stripped:
        try:
            return json.loads(stripped)
        except JSON_FAILURES:
            return value
    return value


def _delimited(text: str, name: str, delimiter: str, out: RecordFile) -> RecordFile:
    out.container = "tsv" if delimiter == "\t" else "csv"
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    try:
        header = next(reader)
    except StopIteration:
        return out
    except csv.Error as err:
        raise InputError(f"{name}: the header line cannot be read as {out.container.upper()}: {err}") from None
    header = [h.strip() for h in header]
    if len(set(header)) != len(header):
        out.problems.append(Problem(f"the header repeats a column: {header}", 1, file=name))
    line = reader.line_num
    while True:
        try:
            row = next(reader)
        except StopIteration:
            break
        except csv.Error as err:  # a field over csv.field_size_limit() (131,072 characters), a stray quote...
            start, line = line + 1, reader.line_num
            out.skip(Problem(f"unreadable {out.container.upper()} row: {err}", start, file=name))
            continue
        start, line = line + 1, reader.line_num
        if not any(cell.strip() for cell in row):
            continue
        if len(row) != len(header):
            out.skip(Problem(f"expected {len(header)} columns as in the header, found {len(row)}", start, file=name))
            continue
        out.add(start, {key: _cell(val) for key, val in zip(header, row)})
    return out


def read_records(data: bytes | str, name: str, normalise: Callable[[dict], dict] | None = None) -> RecordFile:
    """Read any accepted container into numbered records; the container is taken from the name, else sniffed.

    `normalise` is applied to each record as it is read. Text (`str`) is read as it is, not decoded nor composed.
    """
    out = RecordFile(name, normalise=normalise)
    text, encoding = decode(data, name) if isinstance(data, bytes) else (data, "utf-8")
    out.scrub = SURROGATE_ESCAPE.search(text) is not None
    suffix = Path(name).suffix.lower()
    found = NON_SPACE.search(text)  # not text.strip(): a copy of a large file
    if found is None:
        raise InputError(f"{name}: the file is empty")
    first = found.group()
    if suffix in (".csv", ".tsv") or (suffix not in (".json", ".jsonl") and first not in "[{"):
        delimiter = "\t" if suffix == ".tsv" or (suffix != ".csv" and "\t" in text.split("\n", 1)[0]) else ","
        result = _delimited(text, name, delimiter, out)
    elif first == "[":
        result = _json_array(text, name, out)
    elif suffix == ".jsonl" or text.find("\n{", found.start()) >= 0:
        # A JSON-lines file also starts with "{", so only treat it as one object when it parses whole.
        try:
            whole = load_json(text, name, keep_pairs=True, surrogates=out.surrogates)
        except InputError:
            whole = None
        if isinstance(whole, dict) and not _looks_like_record(whole):
            result = _json_object(whole, text, name, out)
        else:
            out.surrogates[0] = 0  # read again line by line: counted there
            result = _jsonl(text, name, out)
    else:
        whole = load_json(text, name, keep_pairs=True, surrogates=out.surrogates)
        if not isinstance(whole, dict):
            raise InputError(f"{name}: expected JSON records (a list, one object per line, or a {{guid: prediction}} object), "
                             f"found a single {type(whole).__name__ if whole is not None else 'null'}")
        if _looks_like_record(whole):
            out.container = "json"
            out.add(1, whole)
            result = out
        else:
            result = _json_object(whole, text, name, out)
    result.encoding = encoding
    if result.surrogates[0]:
        result.problems.insert(0, Problem(SURROGATE_NOTE.format(n=result.surrogates[0]), file=name))
    if encoding.endswith("(NFD → NFC)"):
        result.problems.insert(0, Problem(NFD_NOTE, file=name))
    return result


def _looks_like_record(value: dict) -> bool:
    """A single prediction record (has a key field) rather than a guid -> prediction mapping."""
    return "guid" in value or "id" in value
