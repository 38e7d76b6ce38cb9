"""What a task tells the behavioural test suites (klue_viz.probes) about its data: the optional `probe` part of a task.

A task that can be probed reads its official file into `ProbeExample`s (the text fields an edit may change, the spans
an edit must move or leave whole, the gold label), rebuilds one from edited texts, writes examples back in its official
format and says when two of its predictions are the same answer. The Korean edits themselves (which name, which
particle, which space) are made in klue_viz.probes, above the tasks; this module only moves spans through them, so
every task moves its spans the same way.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from klue_viz.core.problems import InputError, Problem


@dataclass(frozen=True)
class Span:
    """A character span of one text field that an edit must move (an entity, an answer), end exclusive."""

    field: str
    start: int
    end: int
    label: str


@dataclass(frozen=True)
class Edit:
    """One replaced stretch of a text field, in the source example's characters: `before` at start..end became `after`."""

    field: str
    start: int
    end: int
    before: str
    after: str

    def to_dict(self, new_start: int) -> dict[str, Any]:
        """The edit as the manifest writes it: where it was in the source and where it is in the perturbed text."""
        return {"field": self.field, "start": self.start, "end": self.end, "before": self.before,
                "new_start": new_start, "new_end": new_start + len(self.after), "after": self.after}


@dataclass(frozen=True)
class ProbeExample:
    """One example as the suite maker sees it: editable `texts`, the `spans` on them, its gold `label` (None for tasks
    whose gold is more than a label) and the task's own `record` it is written back from."""

    guid: str
    texts: dict[str, str]
    spans: tuple[Span, ...] = ()
    label: Any = None
    record: Any = None
    #: Extra strings an edit of a name must change alike (WoS: the slot values of the state); task-specific.
    extra: dict[str, Any] = field(default_factory=dict)


class Unmade(ValueError):
    """A perturbation that cannot be made validly; the message is the reason the suite's README counts."""


class SpanCut(Unmade):
    """An edit that cuts a span (neither inside it, nor around it, nor the whole of it): the perturbation is skipped."""


def apply_edits(example: ProbeExample, edits: Sequence[Edit]) -> tuple[dict[str, str], tuple[Span, ...], list[int]]:
    """The edited texts, the spans moved through the edits, and where each edit starts in its perturbed text.

    Edits of one field must not overlap. A span is shifted by the edits before it; an edit inside it (a number rewritten
    inside a quantity) stretches it; an edit of exactly the span (a swapped name) makes the replacement the span; any
    other overlap raises SpanCut."""
    texts = dict(example.texts)
    starts = [0] * len(edits)
    spans = list(example.spans)
    for name in texts:
        own = sorted((k for k, e in enumerate(edits) if e.field == name), key=lambda k: edits[k].start)
        pieces, pos, shift = [], 0, 0
        for k in own:
            edit = edits[k]
            if edit.start < pos or texts[name][edit.start:edit.end] != edit.before:
                raise ValueError(f"edit {edit} overlaps another or does not match the text")
            pieces.append(texts[name][pos:edit.start])
            starts[k] = edit.start + shift
            pieces.append(edit.after)
            pos, shift = edit.end, shift + len(edit.after) - (edit.end - edit.start)
        pieces.append(texts[name][pos:])
        texts[name] = "".join(pieces)
        spans = [_moved(span, [edits[k] for k in own]) if span.field == name else span for span in spans]
    return texts, tuple(spans), starts


def _moved(span: Span, edits: Sequence[Edit]) -> Span:
    """A span through the edits of its field (sorted by start)."""
    start_shift = end_shift = 0
    for edit in edits:
        delta = len(edit.after) - (edit.end - edit.start)
        if edit.end <= span.start and not (edit.start == edit.end == span.start):
            start_shift += delta
            end_shift += delta
        elif edit.start >= span.end:
            continue
        elif span.start <= edit.start and edit.end <= span.end:
            end_shift += delta  # inside (or exactly) the span: the span holds the new text
        else:
            raise SpanCut(f"an edit at {edit.start}..{edit.end} cuts the {span.label} span {span.start}..{span.end}")
    return replace(span, start=span.start + start_shift, end=span.end + end_shift)


class ProbeIO(ABC):
    """The part of a task that the suite maker and scorer use (`Task.probe`; None for a task that cannot be probed)."""

    #: The ids of the tests that apply to this task (klue_viz.probes.tests), in the order the README lists them.
    tests: tuple[str, ...]
    #: The text fields the spacing, typo and register edits may change, in order of preference.
    edit_fields: tuple[str, ...]
    #: The file name of the written gold (the official dev file's name, so every pipeline finds it).
    file_name: str
    #: Names to swap are the gold spans of people, places and organisations (NER, RE); else the proper nouns the analyzer
    #: finds in every text field of an example (NLI's premise and hypothesis).
    names_from_spans: bool = False
    #: With names from spans: whether the new name must also be near the old one in meaning (the analyzer's embedding),
    #: because the span's type is coarser than the world it lives in (NER's LC holds countries, districts and
    #: restaurants); False where the label is already that fine (WoS's 식당-이름 holds only restaurants).
    names_near_in_meaning: bool = True
    #: The lm-evaluation-harness task fields (output_type, doc_to_text, doc_to_target, ...) of a suite written with
    #: `--format lm-eval`, over the documents `lm_docs` gives (the prompts of examples/lm_eval/); None: no harness task.
    lm_eval: dict[str, Any] | None = None

    def swappable(self, label: str) -> bool:
        """Whether a span with this label is a name the name-swap test replaces (by default people, places and
        organisations, in NER's codes and RE's)."""
        return label in ("PS", "LC", "OG", "PER", "LOC", "ORG")

    def scriptable(self, label: str) -> bool:
        """Whether a span with this label is a name the name-script test writes in the other script: organisations and
        places (LG, 유엔, US). A person written in capitals or in Hangul letter names is mostly a stage name said as a
        word (EXO, 아이비, 디오), not an initialism."""
        return label in ("OG", "LC", "ORG", "LOC")

    def lm_docs(self, example: ProbeExample) -> list[dict[str, Any]]:
        """The harness documents of an example, each holding the guid its prediction is matched by (WoS: one per user
        turn, with the turn): by default its official record (JSON tasks)."""
        return [dict(example.record)]

    @abstractmethod
    def read(self, text: str, name: str) -> tuple[list[ProbeExample], list[Problem]]:
        """The examples of the official file's text (named `name`)."""

    @abstractmethod
    def rebuilt(self, example: ProbeExample, guid: str, texts: dict[str, str], spans: tuple[Span, ...], label: Any) -> ProbeExample:
        """The perturbed example: its own guid, the edited texts, the moved spans and its gold label."""

    @abstractmethod
    def write(self, examples: Sequence[ProbeExample]) -> str:
        """The examples as the task's official file (what `read_official` reads back with no problem)."""

    @abstractmethod
    def answer(self, prediction: Any) -> Hashable:
        """A parsed prediction (`Task.parse_prediction`) as a value two predictions are compared by."""

    def unit_of(self, row: dict) -> str:
        """The example (a manifest guid) a gold row of the task belongs to: itself, but a WoS turn belongs to its dialogue."""
        return str(row["guid"])

    def answer_of(self, predictions: list[Any]) -> Hashable:
        """The answer of an example from the predictions of its gold rows, in order (one row but for WoS)."""
        return self.answer(predictions[0])

    def same(self, source: Hashable, perturbed: Hashable, edits: Sequence[dict[str, Any]]) -> bool:
        """Whether the prediction on the perturbed example is the source's answer carried through the edits (as the
        manifest has them); by default plain equality (a label)."""
        return source == perturbed

    def met(self, answer: Hashable, expect: Any) -> bool:
        """Whether a DIR/MFT expectation holds (`not:entailment`: any label but that; else that label)."""
        text = str(expect)
        return answer != text[4:] if text.startswith("not:") else answer == text


def carried(span: Span, edits: Sequence[dict[str, Any]]) -> Span | None:
    """A span of the source example where the manifest's edits put it in the perturbed one; None when an edit cuts it."""
    own = sorted((Edit(e["field"], e["start"], e["end"], e["before"], e["after"]) for e in edits if e["field"] == span.field),
                 key=lambda e: e.start)
    try:
        return _moved(span, own)
    except SpanCut:
        return None


class JsonLabelProbe(ProbeIO):
    """The probe part of a task whose official file is a JSON list of records with text fields and one gold field
    (NLI, STS, YNAT): an edited record is the source record with its guid, texts and gold replaced, and the
    annotators' votes left out (they were cast on the source sentence, not on the perturbed one)."""

    def __init__(self, tests: tuple[str, ...], edit_fields: tuple[str, ...], file_name: str, label_field: str,
                 dropped_fields: tuple[str, ...] = (), lm_eval: dict[str, Any] | None = None) -> None:
        self.tests, self.edit_fields, self.file_name = tests, edit_fields, file_name
        self.label_field, self.dropped_fields, self.lm_eval = label_field, dropped_fields, lm_eval

    def read(self, text: str, name: str) -> tuple[list[ProbeExample], list[Problem]]:
        data = json.loads(text)
        if not isinstance(data, list):
            raise InputError(f"{name}: expected the official JSON list of examples")
        examples, problems = [], []
        for k, record in enumerate(data):
            if not isinstance(record, dict) or not all(isinstance(record.get(f), str) for f in ("guid", *self.edit_fields)):
                problems.append(Problem(f"record #{k + 1}: expected an object with guid and {', '.join(self.edit_fields)}", file=name))
                continue
            examples.append(ProbeExample(record["guid"], {f: record[f] for f in self.edit_fields}, (), record.get(self.label_field), record))
        return examples, problems

    def rebuilt(self, example: ProbeExample, guid: str, texts: dict[str, str], spans: tuple[Span, ...], label: Any) -> ProbeExample:
        record = {k: v for k, v in example.record.items() if k not in self.dropped_fields}
        record.update(texts, guid=guid)
        record[self.label_field] = label
        return ProbeExample(guid, texts, spans, label, record)

    def write(self, examples: Sequence[ProbeExample]) -> str:
        return json.dumps([e.record for e in examples], ensure_ascii=False, indent=4) + "\n"

    def answer(self, prediction: Any) -> Hashable:
        return prediction.get("label") if isinstance(prediction, dict) else prediction


class JsonSpanProbe(JsonLabelProbe):
    """A JSON label task whose record also holds entity spans of one text field as objects (`word`, `start_idx`,
    `end_idx` inclusive, `type`): KLUE-RE's subject and object. The spans move with the edits and are written back."""

    def __init__(self, span_fields: tuple[str, ...], *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.span_fields = span_fields
        self.names_from_spans = True

    def read(self, text: str, name: str) -> tuple[list[ProbeExample], list[Problem]]:
        examples, problems = super().read(text, name)
        out = []
        field_name = self.edit_fields[0]
        for example in examples:
            try:
                spans = tuple(Span(field_name, int(example.record[key]["start_idx"]), int(example.record[key]["end_idx"]) + 1,
                                   str(example.record[key]["type"])) for key in self.span_fields)
            except (KeyError, TypeError, ValueError):
                problems.append(Problem(f"{example.guid}: expected {', '.join(self.span_fields)} with start_idx, end_idx and type", file=name))
                continue
            out.append(replace(example, spans=spans))
        return out, problems

    def rebuilt(self, example: ProbeExample, guid: str, texts: dict[str, str], spans: tuple[Span, ...], label: Any) -> ProbeExample:
        new = super().rebuilt(example, guid, texts, spans, label)
        text = texts[self.edit_fields[0]]
        for key, span in zip(self.span_fields, spans):
            new.record[key] = {**new.record[key], "word": text[span.start:span.end], "start_idx": span.start, "end_idx": span.end - 1}
        return new


def carried_text(text: str, edits: Sequence[dict[str, Any]]) -> str:
    """A predicted string (an answer, a slot value) as the edits rewrite it: every edited name or number it holds,
    rewritten. Used where a prediction is text rather than offsets (MRC's answer, WoS's slot values). Edits of one
    character (a particle, a space, a typo) are left out: they would rewrite unrelated text (은 in 은행)."""
    for edit in edits:
        if len(edit["before"].strip()) >= 2 and edit["before"] in text:  # a name or a number; not a particle or a space
            text = text.replace(edit["before"], edit["after"])
    return text
