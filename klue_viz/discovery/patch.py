"""Gold corrections as a patch in the official file format: the corrected records only, as they should read.

A correction is the text stored with a "gold looks wrong" remark (the suspect queue writes it; a user
may type it): a label name (YNAT, NLI, RE), a score 0..5 (STS), an answer (MRC), and for the finer
units one or more `;`-separated items (MRC: `(unanswerable)` makes the question unanswerable): NER `start-end:TYPE` (end exclusive, `O` removes the entity),
DP `index:head:DEPREL`, WoS `domain-slot-value` (`none` removes the slot) for the remark's turn.
Corrections that cannot be read are returned as problems and left out; the others are applied to a
copy of the official record. Each task writes its own file format (`Task.write_patch` in its module;
the default is the single-label writer here); this module gathers the corrections and holds what the
writers share.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from klue_viz.problems import InputError, Problem
from klue_viz.tasks.base import RecordError, Task


@dataclass
class Patch:
    text: str
    records: int
    problems: list[Problem] = field(default_factory=list)


def corrections_from(items, task: Task) -> dict[tuple[str, int | None], list[str]]:
    """(guid, turn) -> correction texts, from stored annotations marked 'gold looks wrong' with a correction."""
    out: dict[tuple[str, int | None], list[str]] = {}
    for item in items:
        if item.task == task.name and item.gold_wrong and item.corrected_label:
            out.setdefault((item.guid, item.turn), []).append(item.corrected_label)
    return out


def make_patch(task: Task, official_text: str, name: str, corrections: dict[tuple[str, int | None], list[str]]) -> Patch:
    """The corrected records of the official file `official_text`, in the same format."""
    problems: list[Problem] = []
    text, count = task.write_patch(official_text, name, corrections, problems)
    return Patch(text, count, problems)


def read_json(text: str, name: str):
    """The official JSON file's data; InputError naming the file and line when it is not JSON."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        raise InputError(f"{name}: invalid JSON at line {err.lineno}: {err.msg}") from None


def dump_json(records) -> str:
    """Records as the patch file's text (indented UTF-8 JSON, as the official files are written)."""
    return json.dumps(records, ensure_ascii=False, indent=2) + "\n"


def correction_items(corrections, guid, turn=None) -> list[str]:
    """The `;`-separated items of every correction of an example (of a WoS turn), in the order they were stored."""
    return [part for text in corrections.get((guid, turn), []) for part in str(text).split(";") if part.strip()]


def label_patch(task, text, name, corrections, problems):
    """Single-label tasks (the default of Task.write_patch): the last correction's label in the official label field."""
    out = []
    for record in read_json(text, name):
        guid = str(record.get("guid"))
        items = correction_items(corrections, guid)
        if not items:
            continue
        try:
            label = task.label_of(items[-1].strip(), "corrected label")
        except RecordError as err:
            problems.append(Problem(str(err), guid=guid, file=name))
            continue
        out.append({**record, task.official_label_field: label})
    return dump_json(out), len(out)


def tsv_blocks(text: str):
    """(guid, header line, body lines) of each sentence of an official NER/DP TSV."""
    guid, header = None, ""
    body: list[str] = []
    for line in text.split("\n"):
        if line.startswith("## "):
            name, tab, _ = line[3:].partition("\t")
            if tab and " " not in name.strip():
                if guid is not None:
                    yield guid, header, body
                guid, header, body = name.strip(), line, []
            continue
        if guid is not None and line.strip():
            body.append(line)
    if guid is not None:
        yield guid, header, body
