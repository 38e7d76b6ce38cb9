"""What every harness reader shares: the typed facts of a log (`HarnessLog`), the converted prediction file a log
becomes (`LogFile`, `converted`), the record fields a converted log carries, and the `Format` table entry whose
`handles(name, first_bytes)` tells a reader's files from ordinary prediction files.

A converted log is ordinary JSONL whose first line is `{"klue_viz_log": {...}}` (the log's facts) and whose records
carry `source_line`, the line of the log they came from. The store keeps these converted files, so a run reads the
same wherever it was uploaded; `HarnessLog.from_record` reads the first line back.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from klue_viz.core.problems import Problem

#: The key of the first line of a converted log.
LOG_KEY = "klue_viz_log"
#: Key of a converted record: the line of the original log it came from.
SOURCE_LINE = "source_line"
#: Key of a converted record whose document had no guid: its 0-based position in the harness's dataset.
POSITION = "doc_position"
#: Fields of a converted multiple-choice or generation record (klue_viz.scoring.llm_outputs reads them).
CHOICES, LOGLIKELIHOODS, TARGET, PROMPT, RAW_OUTPUT = "choices", "loglikelihoods", "target", "prompt", "raw_output"
#: Fields of a harness document that may hold the KLUE guid.
GUID_FIELDS = ("guid", "id")
#: How much of a file `Format.handles` looks at: its first line, up to this many bytes (a first line longer than that
#: is read by its top-level keys all the same, `top_level_keys`).
FIRST_BYTES = 64 * 1024 * 1024

#: A sibling file of the log: name -> a reader of its bytes (results_<ts>.json beside the samples).
Siblings = dict[str, Callable[[], bytes]]


@dataclass(frozen=True)
class LogFile:
    """One prediction file made from a log (or an ordinary file as it is): the name its run takes, and its bytes."""

    name: str
    data: bytes


@dataclass(frozen=True)
class HarnessLog:
    """What an evaluation-harness log says about itself: its format, the file it came from, the harness's task,
    filter (lm-evaluation-harness) or epoch (Inspect AI), the model, the harness's own metrics, and the problems
    found while converting it."""

    format: str
    source: str
    task: str | None = None
    filter: str | None = None
    model: str | None = None
    harness_metrics: dict[str, float] = field(default_factory=dict)
    problems: tuple[Problem, ...] = ()
    epoch: int | None = None

    def to_dict(self) -> dict[str, Any]:
        """The log's facts as the converted file's first line holds them (and `--out`'s `harness`, less the problems)."""
        out: dict[str, Any] = {"format": self.format, "source": self.source, "task": self.task, "filter": self.filter,
                               "model": self.model, "harness_metrics": self.harness_metrics,
                               "problems": [p.to_dict() for p in self.problems]}
        if self.epoch is not None:
            out["epoch"] = self.epoch
        return out

    @classmethod
    def from_record(cls, given: Any, name: str) -> HarnessLog:
        """The facts of a converted file's first line (`{"klue_viz_log": given}`), whatever wrote it; `name` is the
        file's own name, the source when the line names none."""
        facts = given if isinstance(given, dict) else {}
        metrics = facts.get("harness_metrics")
        source = str(facts.get("source") or name)
        problems = tuple(Problem(str(p.get("message", "")), p.get("line"), p.get("guid"), source)
                         for p in facts.get("problems") or [] if isinstance(p, dict))
        epoch = facts.get("epoch")
        return cls(str(facts.get("format") or "harness"), source, _text(facts.get("task")), _text(facts.get("filter")),
                   _text(facts.get("model")),
                   {str(k): float(v) for k, v in metrics.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}
                   if isinstance(metrics, dict) else {}, problems, epoch if isinstance(epoch, int) and not isinstance(epoch, bool) else None)

    def notes(self) -> list[str]:
        """What the app and the CLI say about the log beside the run's metrics."""
        parts = [f"{self.format} log {self.source}"]
        if self.task:
            parts.append(f"task {self.task}")
        if self.filter not in (None, "none"):
            parts.append(f"filter {self.filter}")
        if self.model:
            parts.append(f"model {self.model}")
        notes = [", ".join(parts)]
        if self.harness_metrics:
            shown = ", ".join(f"{k} {v:.4f}" for k, v in self.harness_metrics.items())
            notes.append(f"the harness's own metrics: {shown} (on its 0..1 scale, with its own targets)")
        return notes


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


@dataclass(frozen=True)
class Format:
    """One harness format in the reading stage's table: which files it handles and how it reads one.

    `handles` looks only at the name and the first bytes (magic numbers, the first line's top-level keys); `read`
    gives the converted runs, or None when the file turns out not to be this format's after all (a JSON document
    that merely names an `eval` key), which is then read as an ordinary prediction file."""

    name: str
    read: Callable[[str, bytes, Siblings], list[LogFile] | None]
    #: File-name endings the format is written with (lowercase); empty: any name.
    suffixes: tuple[str, ...] = ()
    #: The first bytes of a binary format (zip, Parquet).
    magic: bytes = b""
    #: A text format: the top-level keys its first line's object holds, all of them (one set of several alternatives).
    first_keys: tuple[frozenset[str], ...] = ()
    #: A pretty-printed JSON format: a key its document opens with, found within the first 8 KB.
    opening_key: str = ""

    def handles(self, name: str, first_bytes: bytes) -> bool:
        """Whether a file of this name starting with these bytes (its first line at least) is this format's."""
        if self.suffixes and not name.lower().endswith(self.suffixes):
            return False
        if self.magic:
            return first_bytes.startswith(self.magic)
        start = len(first_bytes) - len(first_bytes.lstrip(b"\xef\xbb\xbf \t\r\n"))
        if first_bytes[start:start + 1] != b"{":
            return False
        line = first_bytes[start:].split(b"\n", 1)[0]
        keys = top_level_keys(line)
        if any(wanted <= keys for wanted in self.first_keys):
            return True
        one_line_object = line.rstrip().endswith(b"}") and bool(keys)
        return bool(self.opening_key) and not one_line_object and f'"{self.opening_key}"'.encode() in first_bytes[:8192]


#: A JSON string, or one of the characters that open or close a container.
_JSON_TOKEN = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|[{}\[\]]')  # a string unrolled (Friedl): no step per character


def top_level_keys(line: bytes) -> set[str]:
    """The keys of the JSON object `line` opens, read by a scan of its strings and brackets, without parsing values.

    Written here because json's parser recurses (a line nested 100,000 deep raises RecursionError) and builds every
    value (a 10 MB document in the first row costs its whole size), where telling a harness log from a prediction file
    needs only the first row's keys. A key is a string at depth 1 followed by a colon; a line that is not one
    object (an array, text) gives no keys."""
    keys: set[str] = set()
    depth = 0
    for found in _JSON_TOKEN.finditer(line):
        token = found.group()
        if depth == 0 and token != b"{":
            return set()
        if token in (b"{", b"["):
            depth += 1
        elif token in (b"}", b"]"):
            depth -= 1
            if depth <= 0:
                break
        elif depth == 1 and line[found.end():found.end() + 64].lstrip()[:1] == b":":
            try:
                keys.add(json.loads(token))
            except ValueError:
                continue
    return keys


def converted(log: HarnessLog, records: list[dict]) -> bytes:
    """The converted prediction file of one run: the log's facts as the first line, then one record a line."""
    lines = [json.dumps({LOG_KEY: log.to_dict()}, ensure_ascii=False)]
    lines.extend(json.dumps(r, ensure_ascii=False) for r in records)
    # backslashreplace: a lone surrogate (from a \\ud800 escape in the log) has no UTF-8 form; as an escape again it is
    # read back, and reported, by klue_viz.reading.records like any other
    return ("\n".join(lines) + "\n").encode("utf-8", "backslashreplace")


def stem(base: str) -> str:
    """A log's name without its format's suffix: the run's name."""
    for suffix in (".jsonl", ".json", ".eval", ".parquet"):
        if base.lower().endswith(suffix):
            return base[: -len(suffix)]
    return Path(base).stem


def guid_of(doc: Any) -> str | None:
    """The KLUE guid a harness document carries, if any."""
    if isinstance(doc, dict):
        for key in GUID_FIELDS:
            if doc.get(key) not in (None, ""):
                return str(doc[key])
    return None
