"""Annotations as JSONL and CSV files, for export, re-import and sharing."""

from __future__ import annotations

import csv
import io
import json
from typing import Any

from klue_viz.core.problems import InputError, Problem
from klue_viz.drawing.markup import csv_cell, csv_text
from klue_viz.reading.records import read_records
from klue_viz.store.annotations import Annotation, InvalidRecord, newest_per_key, validate
from klue_viz.tasks import TASKS

FIELDS = ("task", "guid", "turn", "run", "tags", "note", "gold_wrong", "corrected_label", "annotator", "updated_at")


def to_jsonl(items: list[Annotation]) -> str:
    return "".join(json.dumps(a.to_record(), ensure_ascii=False) + "\n" for a in items)


def to_csv(items: list[Annotation]) -> str:
    """One row per record; `tags` is a JSON list in its cell, as in prediction CSVs; formula-like cells are neutralised."""
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=FIELDS, lineterminator="\n")
    writer.writeheader()
    for a in items:
        record = a.to_record()
        record["tags"] = json.dumps(record["tags"], ensure_ascii=False)
        record["turn"] = "" if record["turn"] is None else record["turn"]
        record["corrected_label"] = record["corrected_label"] or ""
        record["gold_wrong"] = "true" if record["gold_wrong"] else "false"
        writer.writerow({key: csv_cell(value) for key, value in record.items()})
    return out.getvalue()


def export_text(items: list[Annotation], name: str) -> str:
    if name.lower().endswith(".csv"):
        return to_csv(items)
    if name.lower().endswith(".jsonl"):
        return to_jsonl(items)
    raise InputError(f"{name}: export to a .jsonl or .csv file")


def _flag(value: object) -> bool:
    if isinstance(value, bool):
        return value
    if str(value).strip().lower() in ("true", "1", "yes"):
        return True
    if str(value).strip().lower() in ("false", "0", "no", ""):
        return False
    raise ValueError(f"gold_wrong must be true or false, found {value!r}")


def _field(record: dict, name: str) -> str:
    value = record[name]
    if isinstance(value, (dict, list)) or value is None:
        raise ValueError(f"{name} must be text, found {type(value).__name__}")
    return str(value)


def _optional(record: dict, name: str, default: str) -> str:
    """A text field that may be left out or empty; an object, list or number there is refused, not stored as its repr."""
    value = record.get(name)
    if value in (None, ""):
        return default
    if not isinstance(value, str):
        raise ValueError(f"{name} must be text, found {type(value).__name__}")
    return value


def _turn(value: Any) -> int | None:  # any JSON or CSV value: int() says which it cannot read
    if value in (None, ""):
        return None
    if isinstance(value, bool) or (isinstance(value, float) and not value.is_integer()):
        raise ValueError(f"turn must be a whole number, found {value!r}")
    try:
        return int(value)
    except (TypeError, ValueError, OverflowError):
        raise ValueError(f"turn must be a whole number, found {str(value)[:40]!r}") from None


def parse(data: bytes, name: str) -> tuple[list[Annotation], list[Problem]]:
    """Annotation records from an exported JSONL or CSV file; unusable lines are reported, the rest kept."""
    file = read_records(data, name)
    items, problems = [], list(file.problems)
    at_line: list[int | None] = []
    for line, record in file.records:
        if file.container in ("csv", "tsv"):  # undo the formula guard of `to_csv`
            record = {key: csv_text(value) if isinstance(value, str) else value for key, value in record.items()}
        try:
            task = str(record["task"])
            if task not in TASKS:
                raise ValueError(f"task {task!r} is not one of {', '.join(TASKS)}")
            tags = record.get("tags") or []
            if isinstance(tags, str):
                tags = json.loads(tags) if tags.strip().startswith("[") else [t for t in tags.split("|") if t]
            if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
                raise ValueError("tags must be a list of strings")
            item = Annotation(
                task=task, guid=_field(record, "guid"), run=_field(record, "run"), annotator=_optional(record, "annotator", "unknown"),
                tags=tags, note=_optional(record, "note", ""), gold_wrong=_flag(record.get("gold_wrong", False)),
                corrected_label=(str(record["corrected_label"]) if record.get("corrected_label") not in (None, "") else None),
                turn=_turn(record.get("turn")), updated_at=str(record.get("updated_at") or ""),
            )
            validate(item)  # lengths, NUL bytes, surrogates, timestamp: what either database would refuse
            items.append(item)
            at_line.append(line)
        except (KeyError, ValueError, TypeError, RecursionError, InvalidRecord) as err:
            message = f"missing field {err}" if isinstance(err, KeyError) else str(err)
            guid = record.get("guid")
            problems.append(Problem(f"not an annotation record: {message}", line, None if guid is None else str(guid)[:200], name))
    kept = {id(item) for item in newest_per_key(items)}
    winner = {item.key: line for item, line in zip(items, at_line) if id(item) in kept}
    for item, line in zip(items, at_line):
        if id(item) not in kept:
            problems.append(Problem(f"the same record (task, guid, turn, run, annotator) as line {winner[item.key]}, which has the newer "
                                    f"updated_at (or comes later) and is imported instead", line, item.guid[:200], name))
    return [item for item in items if id(item) in kept], sorted(problems, key=lambda p: (p.line or 0))
