"""The one reading stage of a prediction file: bytes (or a path) in, a typed `PredictionFile(records, log)` out.

An ordinary prediction file is read into records as it is (klue_viz.reading.records). An evaluation-harness log is
first told by the table of harness formats (`FORMATS`, each a `Format` whose `handles(name, first_bytes)` looks at
the name and the first line only) and converted by its reader (klue_viz.reading.harness) into one prediction file
per run (a filter, an epoch): ordinary JSONL whose first line holds the log's facts, which `read_prediction_file`
takes back out as a `HarnessLog`. A gzip file is unpacked first, within the upload limit.

`expand` gives a file's runs (the store keeps each converted run, so a run reads the same wherever it came from);
`read_prediction_file` reads one run once, for scoring. May import: klue_viz.reading, core.
"""

from __future__ import annotations

import io
import re
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from klue_viz.core.lazy import lazy_module
from klue_viz.core.problems import InputError, Problem
from klue_viz.reading.harness import every_eval_ever, inspect_logs, lighteval, lm_eval
from klue_viz.reading.harness.formats import FIRST_BYTES, LOG_KEY, SOURCE_LINE, Format, HarnessLog, LogFile, Siblings
from klue_viz.reading.records import RecordFile, normalised, read_records
from klue_viz.reading.uploads import check_size, max_upload_bytes

if TYPE_CHECKING:
    import gzip
else:  # imported when a gzip file is unpacked, not by every command that reads a plain one
    gzip = lazy_module("gzip")

#: The harness formats, in the order they are asked whether they handle a file (binary ones first).
FORMATS: tuple[Format, ...] = (inspect_logs.EVAL_FORMAT, lighteval.FORMAT, lm_eval.FORMAT, every_eval_ever.FORMAT,
                               inspect_logs.JSON_FORMAT)
#: File names klue-viz reads as logs besides the ordinary prediction suffixes.
LOG_SUFFIXES = (".jsonl.gz", ".json.gz", ".eval", ".parquet")
GZIP_MAGIC = b"\x1f\x8b"
ZIP_MAGIC = b"PK\x03\x04"


@dataclass
class PredictionFile:
    """One prediction file read once: its records (each on the line of the file, or of the log, it came from), and
    what the harness log it was converted from says about itself (None for an ordinary prediction file)."""

    records: RecordFile
    log: HarnessLog | None = None


def read_prediction_path(path: str | Path, normalise: Callable[[dict], dict] | None = None) -> PredictionFile:
    """The one run a file on disk holds, read (`read_prediction_file`); a harness log is read with the lm-evaluation-harness
    results file beside it. A log of several runs is an InputError naming them (`expand_path` gives each)."""
    path = Path(path)
    if not path.exists():
        raise InputError(f"{path}: no such file")
    if path.is_dir():
        raise InputError(f"{path}: is a folder, expected a file")
    data = path.read_bytes()
    if data[:2] == GZIP_MAGIC or data[:4] == ZIP_MAGIC or _format_of(path.name, data) is not None:
        return _one_run(str(path), expand(path.name, data, _siblings(path)), normalise)
    return PredictionFile(read_records(data, path.name, normalise))


def read_prediction_file(name: str, data: bytes, normalise: Callable[[dict], dict] | None = None,
                         read: RecordFile | None = None) -> PredictionFile:
    """The records of one run, read once: an ordinary file as it is, a log converted (it must hold one run), a converted
    run (from the store) with its log's facts taken out of its first line and each record moved to its log line.

    `normalise` is applied to each record as it is read; `read`: the records of `data` already read under `name` without
    normalising (to tell the task), taken over instead of reading the file again."""
    if data[:2] == GZIP_MAGIC or _format_of(PurePosixPath(name).name, data) is not None:
        return _one_run(name, expand(name, data), normalise)
    if data[:4] == ZIP_MAGIC:
        raise InputError(not_a_zip(name))
    if read is not None and read.name == name:
        file = read if normalise is None else normalised(read, normalise)
    else:
        file = read_records(data, name, normalise)
    first = file.records[0][1] if file.records else {}
    return PredictionFile(file, _take_log(file) if LOG_KEY in first and len(first) == 1 else None)


def _one_run(name: str, runs: list[LogFile], normalise: Callable[[dict], dict] | None) -> PredictionFile:
    if len(runs) > 1:
        raise InputError(several_runs(name, runs))
    return read_prediction_file(runs[0].name, runs[0].data, normalise)


def several_runs(name: str, runs: list[LogFile]) -> str:
    """What is said of a log of several runs (filters, epochs) given where one run is read."""
    shown = ", ".join(Path(f.name).stem for f in runs)
    return (f"{name}: this log holds {len(runs)} runs ({shown}); each is scored as its own run "
            "(klue-viz evaluate and the app's uploads split it)")


def _take_log(file: RecordFile) -> HarnessLog:
    """The log's facts (the converted file's first line) taken out of `file`, every record moved to the line of the log it
    came from, and the log's own problems added."""
    log = HarnessLog.from_record(file.records[0][1][LOG_KEY], file.name)
    kept = []
    for line, record in file.records[1:]:
        given = record.pop(SOURCE_LINE, None)
        kept.append((given if isinstance(given, int) else line, record))
    file.records = kept
    file.problems.extend(log.problems)
    return log


def _format_of(base: str, data: bytes) -> Format | None:
    """The harness format of a file, from its name and its first line (at least 8 KB), or None for an ordinary file."""
    start = len(data[:4096]) - len(data[:4096].lstrip(b"\xef\xbb\xbf \t\r\n"))
    end = data.find(b"\n", start, FIRST_BYTES)
    first_bytes = data[:max(end, 8192) if end >= 0 else FIRST_BYTES]
    return next((f for f in FORMATS if f.handles(base, first_bytes)), None)


def expand(name: str, data: bytes, siblings: Siblings | None = None) -> list[LogFile]:
    """The prediction files of one file: a log's runs converted to JSONL, anything else as it is."""
    base = PurePosixPath(name).name
    if data[:2] == GZIP_MAGIC:
        data = gunzip(name, data)
        if name.lower().endswith(".gz"):
            name, base = name[:-3], base[:-3]
    found = _format_of(base, data)
    runs = None if found is None else found.read(base, data, siblings or {})
    if runs is None and data[:4] == ZIP_MAGIC:
        raise InputError(not_a_zip(name))
    return [LogFile(name, data)] if runs is None else runs


def not_a_zip(name: str) -> str:
    """What is said of a zip given where one prediction file is read (its bytes would read as 'not UTF-8')."""
    return (f"{name}: a zip archive, not a prediction file. Unpack it and give its folder (klue-viz evaluate --pred FOLDER "
            "scores each file in it, routed to its task), or give the zip itself to klue-viz runs add or the home page's upload")


def expand_path(path: str | Path) -> list[LogFile]:
    """`expand` for a file on disk; the files beside it are its siblings (lm-evaluation-harness's results file)."""
    path = Path(path)
    if not path.exists():
        raise InputError(f"{path}: no such file")
    if path.is_dir():
        raise InputError(f"{path}: is a folder, expected a file")
    return expand(path.name, path.read_bytes(), _siblings(path))


def _siblings(path: Path) -> Siblings:
    return {p.name: p.read_bytes for p in path.parent.glob("results_*.json") if p.is_file()}


def gunzip(name: str, data: bytes) -> bytes:
    """A gzip file's content, refused once it grows past the upload limit (a small file can unpack to gigabytes)."""
    limit = max_upload_bytes()
    # The trailer's ISIZE (RFC 1952 2.3.1) is the last member's unpacked size modulo 2**32: over the limit, the file is
    # too (refused before unpacking anything); under it, the read below stops at the limit whatever the file holds.
    if len(data) >= 18:
        check_size(f"{name} (unpacked, as its gzip trailer says)", int.from_bytes(data[-4:], "little"))
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(data)) as unpacked:
            content = unpacked.read(limit + 1)
    except (OSError, EOFError, zlib.error) as err:  # zlib.error: a broken deflate stream (an invalid block type...)
        raise InputError(f"{name}: not a readable gzip file ({err})") from None
    check_size(f"{name} (unpacked)", len(content))
    return content


def results_beside(files: list[tuple[str, Callable[[], bytes]]]) -> dict[str, Siblings]:
    """The results files among uploaded files named by their path in a folder: folder -> {name: reader}."""
    out: dict[str, Siblings] = {}
    for name, read in files:
        if lm_eval.is_results_name(name) and len(PurePosixPath(name).parts) > 1:
            out.setdefault(str(PurePosixPath(name).parent), {})[PurePosixPath(name).name] = read
    return out


def _reader(data: bytes) -> Callable[[], bytes]:
    """A sibling's reader for bytes already read (a member of a zip)."""
    return lambda: data


def log_files(names_and_data: Iterator[tuple[str, bytes]]) -> list[LogFile]:
    """Several files of one folder or zip: each expanded with the folder's results files as its siblings."""
    files = list(names_and_data)
    siblings: Siblings = {PurePosixPath(n).name: _reader(d) for n, d in files if lm_eval.is_results_name(n)}
    out = []
    for name, data in files:
        if not lm_eval.is_results_name(name):
            out.extend(expand(name, data, siblings))
    return out


def task_hint(records: list[dict], task_names: list[str]) -> str | None:
    """The KLUE task a converted log names in its harness task (`klue_nli_mc` -> nli), for logs whose documents carry
    no guid to detect it from; None when it names none, or several."""
    facts = next((r[LOG_KEY] for r in records[:1] if LOG_KEY in r and isinstance(r[LOG_KEY], dict)), None)
    if not facts or not facts.get("task"):
        return None
    words = set(re.split(r"[^0-9a-z]+", str(facts["task"]).lower()))
    named = [name for name in task_names if name in words]
    return named[0] if len(named) == 1 else None


def log_problems(problems: list[Problem], name: str, log: HarnessLog | None) -> list[Problem]:
    """Problems found in a converted log named after the log itself, whose lines they give."""
    if log is None:
        return problems
    return [Problem(p.message, p.line, p.guid, log.source) if p.file == name else p for p in problems]
