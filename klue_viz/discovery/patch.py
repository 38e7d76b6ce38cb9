"""Gold corrections as a patch in the official file format: the corrected records only, as they should read.

A correction is the text stored with a "gold looks wrong" remark (the suspect queue writes it; a user
may type it): a label name (YNAT, NLI, RE), a score 0..5 (STS), an answer (MRC), and for the finer
units one or more `;`-separated items (MRC: `(unanswerable)` makes the question unanswerable): NER `start-end:TYPE` (end exclusive, `O` removes the entity),
DP `index:head:DEPREL`, WoS `domain-slot-value` (`none` removes the slot) for the remark's turn.
Corrections that cannot be read are returned as problems and left out; the others are applied to a
copy of the official record.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from klue_viz.problems import InputError, Problem
from klue_viz.tasks.base import RecordError, Task

#: The MRC correction that says a question has no answer in its passage (as the app shows an unanswerable gold).
NO_ANSWER = "(unanswerable)"
UNANSWERABLE_TYPE = 3  # KLUE-MRC question_type of unanswerable questions
NER_ITEM = re.compile(r"^\s*(\d+)-(\d+):([A-Z]{1,2})\s*$")
DP_ITEM = re.compile(r"^\s*(\d+):(\d+):([A-Z_]+)\s*$")


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
    writer = {"ner": _ner, "dp": _dp, "wos": _wos, "sts": _sts, "mrc": _mrc}.get(task.name, _labels)
    problems: list[Problem] = []
    text, count = writer(task, official_text, name, corrections, problems)
    return Patch(text, count, problems)


def _json(text: str, name: str):
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        raise InputError(f"{name}: invalid JSON at line {err.lineno}: {err.msg}") from None


def _dump(records) -> str:
    return json.dumps(records, ensure_ascii=False, indent=2) + "\n"


def _items(corrections, guid, turn=None) -> list[str]:
    return [part for text in corrections.get((guid, turn), []) for part in str(text).split(";") if part.strip()]


def _labels(task, text, name, corrections, problems):
    out = []
    for record in _json(text, name):
        guid = str(record.get("guid"))
        items = _items(corrections, guid)
        if not items:
            continue
        try:
            label = task.label_of(items[-1].strip(), "corrected label")
        except RecordError as err:
            problems.append(Problem(str(err), guid=guid, file=name))
            continue
        out.append({**record, task.official_label_field: label})
    return _dump(out), len(out)


def _sts(task, text, name, corrections, problems):
    out = []
    for record in _json(text, name):
        guid = str(record.get("guid"))
        items = _items(corrections, guid)
        if not items:
            continue
        try:
            score = float(items[-1])
            if not 0 <= score <= 5:
                raise ValueError
        except ValueError:
            problems.append(Problem(f"corrected score {items[-1]!r} is not a number from 0 to 5", guid=guid, file=name))
            continue
        labels = {**record.get("labels", {}), "real-label": score, "label": round(score, 1), "binary-label": int(round(score, 1) >= 3.0)}
        out.append({**record, "labels": labels})
    return _dump(out), len(out)


def _mrc(task, text, name, corrections, problems):
    data = _json(text, name)
    documents = []
    for document in data.get("data", []):
        paragraphs = []
        for paragraph in document.get("paragraphs", []):
            qas = []
            for qa in paragraph.get("qas", []):
                items = corrections.get((str(qa.get("guid")), None))
                if not items:
                    continue
                answer = items[-1]
                if answer == NO_ANSWER:  # the official form of an unanswerable question: no answers, the old ones as distractors
                    qas.append({**qa, "answers": [], "plausible_answers": qa.get("answers") or qa.get("plausible_answers", []),
                                "is_impossible": True, "question_type": UNANSWERABLE_TYPE})
                    continue
                start = paragraph["context"].find(answer)
                if start < 0:
                    problems.append(Problem(f"corrected answer {answer[:40]!r} is not in the passage", guid=qa.get("guid"), file=name))
                    continue
                answerable = {k: v for k, v in qa.items() if k != "plausible_answers"}  # distractors belong to unanswerable questions
                qas.append({**answerable, "answers": [{"text": answer, "answer_start": start}], "is_impossible": False})
            if qas:
                paragraphs.append({**paragraph, "qas": qas})
        if paragraphs:
            documents.append({**document, "paragraphs": paragraphs})
    return _dump({**{k: v for k, v in data.items() if k != "data"}, "data": documents}), sum(len(p["qas"]) for d in documents for p in d["paragraphs"])


def _wos(task, text, name, corrections, problems):
    out = []
    for dialogue in _json(text, name):
        guid = str(dialogue.get("guid"))
        wanted = {turn: _items(corrections, guid, turn) for (g, turn) in corrections if g == guid}
        if not wanted:
            continue
        turns, user_turn, changed = [], 0, False
        for turn in dialogue["dialogue"]:
            if turn.get("role") == "user":
                state = list(turn.get("state") or [])
                for item in wanted.get(user_turn, []):
                    parts = item.strip().split("-", 2)
                    if len(parts) != 3:
                        problems.append(Problem(f"correction {item!r} is not 'domain-slot-value'", guid=f"{guid}-{user_turn}", file=name))
                        continue
                    slot = f"{parts[0]}-{parts[1]}-"
                    at = next((k for k, s in enumerate(state) if s.startswith(slot)), len(state))  # keep the slot's place
                    state = [s for s in state if not s.startswith(slot)]
                    if parts[2] != "none":
                        state.insert(at, item.strip())
                    changed = True
                turn = {**turn, "state": state}
                user_turn += 1
            turns.append(turn)
        if changed:
            out.append({**dialogue, "dialogue": turns})
    return _dump(out), len(out)


def _blocks(text: str):
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


def _ner(task, text, name, corrections, problems):
    out, count = [], 0
    for guid, _header, body in _blocks(text):
        items = _items(corrections, guid)
        if not items:
            continue
        chars = [line[0] if line else " " for line in body]
        tags = [line[2:] for line in body]
        sentence = "".join(chars)
        applied = 0
        for item in items:
            match = NER_ITEM.match(item)
            start, end, label = (int(match[1]), int(match[2]), match[3]) if match else (0, 0, "")
            if not match or not 0 <= start < end <= len(tags) or label not in (*_ner_types(), "O"):
                problems.append(Problem(f"correction {item.strip()!r} is not 'start-end:TYPE' within the sentence", guid=guid, file=name))
                continue
            first, last = start, end
            while first > 0 and tags[first].startswith("I-"):
                first -= 1  # the whole entity the span cuts into is replaced
            while last < len(tags) and tags[last].startswith("I-"):
                last += 1
            tags[first:last] = ["O"] * (last - first)
            if label != "O":
                tags[start:end] = [f"B-{label}"] + [f"I-{label}"] * (end - start - 1)
            applied += 1
        if not applied:
            continue
        out.append(f"## {guid}\t{markup(sentence, tags)}\n" + "".join(f"{c}\t{t}\n" for c, t in zip(chars, tags)))
        count += 1
    return "\n".join(out), count


def _ner_types():
    from klue_viz.tasks.ner import TYPES

    return TYPES


def markup(sentence: str, tags: list[str]) -> str:
    """The official `<text:TYPE>` markup of a sentence and its character tags."""
    out, k = [], 0
    while k < len(sentence):
        if tags[k].startswith("B-"):
            label, end = tags[k][2:], k + 1
            while end < len(sentence) and tags[end] == f"I-{label}":
                end += 1
            out.append(f"<{sentence[k:end]}:{label}>")
            k = end
        else:
            out.append(sentence[k])
            k += 1
    return "".join(out)


def _dp(task, text, name, corrections, problems):
    out, count = [], 0
    for guid, header, body in _blocks(text):
        items = _items(corrections, guid)
        if not items:
            continue
        rows = [line.split("\t") for line in body]
        changed = False
        for item in items:
            match = DP_ITEM.match(item)
            if not match or not 1 <= int(match[1]) <= len(rows) or not 0 <= int(match[2]) <= len(rows):
                problems.append(Problem(f"correction {item.strip()!r} is not 'index:head:DEPREL' within the sentence", guid=guid, file=name))
                continue
            row = rows[int(match[1]) - 1]
            row[4], row[5] = match[2], match[3]
            changed = True
        if changed:
            out.append(header + "\n" + "".join("\t".join(r) + "\n" for r in rows))
            count += 1
    return "\n".join(out), count
