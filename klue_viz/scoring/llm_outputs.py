"""Prediction records that hold an LLM's output: generated text read by the task's answer parser, and
multiple-choice log-likelihoods turned into a label and probabilities.

`read_prediction` is what matching calls for every record: a record with the task's own prediction
fields is parsed as before; one with only a free-text field (`generation`, `output`, `response`,
`text`) goes through `task.parse_answer`, and an unreadable answer becomes `task.unreadable_prediction`
(scored as wrong, never dropped). `resolve_choices` maps a multiple-choice run's choices to labels,
by their text through the answer parser, or by index only when the index agrees with the gold on
every document. `answer_columns` adds what was read to a run's example frame, for the card, the
slice, the filter and the error type.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from klue_viz.core.problems import InputError, Problem
from klue_viz.core.results import Frames, Repaired
from klue_viz.reading.answers import TEXT_FIELDS, UNREADABLE, Answer, unreadable
from klue_viz.reading.harness.formats import CHOICES, LOGLIKELIHOODS, POSITION, PROMPT, RAW_OUTPUT, TARGET
from klue_viz.tasks.base import RecordError, Slice, Task

if TYPE_CHECKING:
    import pandas as pd

    from klue_viz.reading.records import RecordFile


class GoldRows(Protocol):
    """What matching needs of a gold (klue_viz.scoring.evaluate.Gold is one): its rows, and the row of a prediction's key."""

    rows: list[dict]

    def locate(self, key: str) -> int | None: ...

#: The example frame's column saying whether the run's answer was read (the "Answer" slice).
STATUS_COLUMN = "answer_status"
#: Fields that make a record an LLM's: free text, or what a harness log adds.
LLM_FIELDS = frozenset((*TEXT_FIELDS, CHOICES, LOGLIKELIHOODS, PROMPT, RAW_OUTPUT))
#: The slice of a run with generated answers: read, or unreadable (klue_viz.ui offers it beside the task's own slices).
ANSWER_SLICE = Slice(STATUS_COLUMN, "Generated answer read")


@dataclass(frozen=True)
class Trace:
    """What a run's record showed beside its prediction: the answer read from its text, the prompt, the choices."""

    answer: Answer | None = None
    prompt: str | None = None
    choices: tuple[tuple[str, float], ...] | None = None
    raw_output: str | None = None


def generated_text(task: Task, record: dict) -> str | None:
    """The free text a record holds in place of the task's prediction fields, or None for an ordinary record."""
    if any(record.get(name) not in (None, "") for name in task.prediction_fields):
        return None
    for name in TEXT_FIELDS:
        value = record.get(name)
        if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            value = value[0]  # a list of samples: the first is the answer
        if isinstance(value, str):
            return value
    return None


def read_prediction(task: Task, record: dict, gold: dict) -> tuple[Any, Trace | None]:
    """The prediction of one record for one gold row, and its trace when the record came from an LLM.

    RecordError for an ordinary record that cannot be used (as `task.parse_prediction` says); an answer that
    cannot be read is not an error: it is scored as `task.unreadable_prediction`.
    """
    if record.keys().isdisjoint(LLM_FIELDS):  # an ordinary record: nothing more to look at (the common, fast path)
        return task.parse_prediction(record, gold), None
    trace = trace_of(record)
    text = generated_text(task, record)
    if text is None:
        return task.parse_prediction(record, gold), trace
    answer = task.parse_answer(text, gold)
    if answer.fields is None:
        return task.unreadable_prediction(gold), Trace(answer, *_context(trace))
    try:
        parsed = task.parse_prediction({**record, **answer.fields}, gold)
    except RecordError as err:  # the parser read something the task cannot score (a deprel unknown, a span outside)
        answer = unreadable(text, str(err))
        return task.unreadable_prediction(gold), Trace(answer, *_context(trace))
    if answer.notes:  # scored, and what the parser left out is listed on the record's line
        parsed = Repaired(parsed.prediction, parsed.notes + answer.notes) if isinstance(parsed, Repaired) else Repaired(parsed, answer.notes)
    return parsed, Trace(answer, *_context(trace))


def _context(trace: Trace | None) -> tuple:
    return (None, None, None) if trace is None else (trace.prompt, trace.choices, trace.raw_output)


def trace_of(record: dict) -> Trace | None:
    """The prompt, choices and raw output a record carries (a harness log's), or None."""
    prompt, choices, raw = record.get(PROMPT), record.get(CHOICES), record.get(RAW_OUTPUT)
    scores = record.get(LOGLIKELIHOODS)
    shown = None
    if isinstance(choices, list) and isinstance(scores, list) and len(choices) == len(scores):
        shown = tuple((str(c), float(s)) for c, s in zip(choices, scores))
    if prompt is None and shown is None and raw is None:
        return None
    return Trace(None, str(prompt) if prompt is not None else None, shown, str(raw) if raw is not None else None)


def softmax(scores: list[float]) -> list[float]:
    """Probabilities from log-likelihoods (the choices' relative likelihoods), stable for large magnitudes."""
    top = max(scores)
    weights = [math.exp(s - top) for s in scores]
    total = sum(weights)
    return [w / total for w in weights]


def resolve_choices(task: Task, gold: GoldRows, file: RecordFile) -> list[str]:
    """Turn every multiple-choice record of `file` into a label and probabilities, in place; the notes to show.

    Choices are mapped to labels by their text through the task's answer parser when every document's choices
    read as distinct labels; otherwise by index (choice k = the task's k-th label in Hugging Face order), but only
    when the harness's target index names the gold label on every document. Neither: an InputError saying why.
    """
    rows = [(line, r) for line, r in file.records if isinstance(r.get(CHOICES), list) and isinstance(r.get(LOGLIKELIHOODS), list)]
    if not rows:
        return []
    labels = task.labels
    if not labels:
        raise InputError(f"{file.name}: a multiple-choice log, but {task.facts.name.upper()} has no label set to map choices to; "
                         "log it as a generation task")
    mapping: list[list[str]] | None
    by_text, why_not_text = _choices_by_text(task, rows)
    if by_text is not None:
        mapping, how = by_text, "by their text through the answer parser"
    else:
        mapping, why_not_index = _choices_by_index(task, gold, rows, labels)
        if mapping is None:
            raise InputError(f"{file.name}: the choices cannot be mapped to {task.facts.name.upper()} labels: by text, {why_not_text}; "
                             f"by index, {why_not_index}")
        how = "by index (choice k is label k in Hugging Face order; the harness's target agrees with the gold on every document)"
    pairs = sorted({(c, l) for (_, r), m in zip(rows, mapping) for c, l in zip(r[CHOICES], m)})
    shown = ", ".join(f"{c.strip()} → {l}" for c, l in pairs[:12]) + (", ..." if len(pairs) > 12 else "")
    disagree = 0
    for (_, record), chosen in zip(rows, mapping):
        scores = [float(s) for s in record[LOGLIKELIHOODS]]
        probs = softmax(scores)
        by_label = dict.fromkeys(labels, 0.0)
        for label, p in zip(chosen, probs):
            by_label[label] += p
        record["label"] = chosen[max(range(len(scores)), key=scores.__getitem__)]
        record["probs"] = by_label
        target = record.get(TARGET)
        pos = gold.locate(task.record_key(record) or "")
        if isinstance(target, int) and 0 <= target < len(chosen) and pos is not None and chosen[target] != gold.rows[pos]["gold"]:
            disagree += 1
    notes = [f"multiple choice: {len(rows)} documents, choices mapped to labels {how}: {shown}; "
             "predicted label = the most likely choice, probabilities = softmax over the choices' log-likelihoods"]
    if disagree:
        notes.append(f"on {disagree} document(s) the harness's target choice is not the KLUE gold label (its own metric differs from ours there)")
    return notes


def _choices_by_text(task: Task, rows: list[tuple[int | None, dict]]) -> tuple[list[list[str]] | None, str]:
    out: list[list[str]] = []
    cache: dict[str, str | None] = {}
    for line, record in rows:
        chosen: list[str] = []
        for choice in record[CHOICES]:
            text = str(choice)
            if text not in cache:
                answer = task.parse_answer(text, {})
                cache[text] = None if answer.fields is None else task.parse_prediction(answer.fields, {}).get("label")
            label = cache[text]
            if label is None:
                return None, f"choice {text.strip()!r} (line {line}) names no single label"
            chosen.append(label)
        if len(set(chosen)) != len(chosen):
            return None, f"two choices of line {line} name the same label ({', '.join(chosen)})"
        out.append(chosen)
    return out, ""


def _choices_by_index(task: Task, gold: GoldRows, rows: list[tuple[int | None, dict]],
                      labels: tuple[str, ...]) -> tuple[list[list[str]] | None, str]:
    checked = 0
    for line, record in rows:
        if len(record[CHOICES]) > len(labels):
            return None, f"line {line} has {len(record[CHOICES])} choices, more than the {len(labels)} labels"
        target, pos = record.get(TARGET), gold.locate(task.record_key(record) or "")
        if pos is None:
            continue
        if not isinstance(target, int):
            return None, f"line {line} has no integer target to check the order against"
        if not 0 <= target < len(labels) or labels[target] != gold.rows[pos]["gold"]:
            return None, (f"line {line}: target choice {target} would be {labels[target] if 0 <= target < len(labels) else '?'}, "
                          f"but the gold is {gold.rows[pos]['gold']}")
        checked += 1
    if not checked:
        return None, "no document matches the gold to check the order against"
    return [list(labels[:len(r[CHOICES])]) for _, r in rows], ""


def answer_columns(examples: pd.DataFrame, traces: list[Trace | None]) -> None:
    """Add what the run's records showed to its example frame (rows in the same order), in place.

    `answer_text`, `answer_spans`, `answer_reason`, `prompt`, `choices`, `raw_output`; with any generated answer also
    `answer_status` ("read" / UNREADABLE, the slice), and an unreadable answer's example is wrong with error type UNREADABLE.
    """
    if not any(t is not None for t in traces):
        return
    answers = [t.answer if t is not None else None for t in traces]
    examples["answer_text"] = [a.text if a is not None else None for a in answers]
    examples["answer_spans"] = [a.used_spans() if a is not None else () for a in answers]
    examples["answer_reason"] = [a.reason if a is not None else "" for a in answers]
    examples["prompt"] = [t.prompt if t is not None else None for t in traces]
    examples["choices"] = [t.choices if t is not None else None for t in traces]
    examples["raw_output"] = [t.raw_output if t is not None else None for t in traces]
    if any(a is not None for a in answers):
        bad = [a is not None and a.fields is None for a in answers]
        examples[STATUS_COLUMN] = [UNREADABLE if b else ("read" if a is not None else "(no generated answer)") for a, b in zip(answers, bad)]
        if any(bad):
            examples.loc[bad, "correct"] = False
            examples.loc[bad, "error_type"] = UNREADABLE


def unreadable_problems(traces: dict[int, Trace], lines: dict[int, int | None], guids: dict[int, str], name: str) -> list[Problem]:
    """One problem per unreadable answer, naming its line, guid and why (the first few are shown, all are counted)."""
    out = []
    for pos, trace in traces.items():
        answer = trace.answer
        if answer is not None and answer.fields is None:
            text = answer.text.strip().replace("\n", " ")
            out.append(Problem(f"unreadable answer ({answer.reason}): {text[:80]!r}", lines.get(pos), guids.get(pos), name))
    return out


def locate_positions(task: Task, gold: GoldRows, file: RecordFile) -> list[Problem]:
    """Records of a harness log's documents without a guid get the guid of the gold example at their position; one
    problem says so."""
    positional = [record for _, record in file.records if POSITION in record and task.record_key(record) is None]
    if not positional:
        return []
    outside = 0
    for record in positional:
        position = record.pop(POSITION)
        if isinstance(position, int) and 0 <= position < len(gold.rows):
            record["guid"] = gold.rows[position]["guid"]
            record.pop("turn", None)  # the gold example's guid names the WoS turn already
        else:
            outside += 1
    beyond = f"; {outside} position(s) are outside the gold's {len(gold.rows)} examples" if outside else ""
    return [Problem(f"{len(positional)} document(s) of the log carry no guid: matched to the gold by their row position "
                    f"(doc_id k = the k-th gold example){beyond}", file=file.name)]


def run_slices(task: Task, frames: Frames) -> tuple[Slice, ...]:
    """The task's slices, and the "Generated answer read" slice when the run's records held generated text."""
    return task.facts.slices + ((ANSWER_SLICE,) if STATUS_COLUMN in frames.examples.columns else ())
