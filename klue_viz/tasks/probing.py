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


class SpanCut(ValueError):
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
    #: The lm-evaluation-harness task fields (output_type, doc_to_text, doc_to_target, ...) of a suite written with
    #: `--format lm-eval`, over the documents `lm_doc` gives (the prompts of examples/lm_eval/); None: no harness task.
    lm_eval: dict[str, Any] | None = None

    def lm_doc(self, example: ProbeExample) -> dict[str, Any]:
        """One harness document of an example: by default its official record (JSON tasks), which holds its guid."""
        return dict(example.record)

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
