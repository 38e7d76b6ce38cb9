"""KLUE-NER: character-level BIO tagging of six entity types.

Official metrics (klue-tasks.md §4): both are computed over non-space characters. Entity F1 is
seqeval strict IOB2, macro over types; character F1 is macro over all 13 tags with one `O` pair
for [CLS] and one for [SEP] around each sentence. Entities are extracted with numpy over the whole
corpus at once (a B-X and the run of I-X that follows it), which is what seqeval's strict IOB2 does,
at a fraction of its cost; the tests hold the two together on the real dev set.
"""

from __future__ import annotations

import hashlib
import re
import sys
import threading
from collections import OrderedDict, defaultdict
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from klue_viz.core.lazy import lazy_module
from klue_viz.core.problems import InputError, Problem, record_fault
from klue_viz.core.results import Frames, Repaired, ScoredRun
from klue_viz.drawing import markup as mk
from klue_viz.metrics.official import (
    NER_TAG_ID,
    NER_TAGS,
    NER_TYPES,
    Layout,
    Statistics,
    character_counts,
    coo,
    entity_kinds,
    f1,
    ner_entity_table,
    ner_statistics,
    share,
    strict_entities,
)
from klue_viz.reading.answers import NOTHING_FORMS, Answer, Vocabulary, align, json_in, strip_answer, unreadable
from klue_viz.tasks.base import (
    DetailLevel,
    DrawingDocument,
    Metric,
    RecordError,
    SeenInTraining,
    Slice,
    SurfaceForms,
    Task,
    TaskFacts,
    ViewSettings,
    as_int,
    as_list,
    bucket,
)
from klue_viz.tasks.kit import Evidence, Suspect, correction_items, entity_features, eojeol_bucket, suspect_item, tsv_blocks
from klue_viz.tasks.probing import ProbeExample, ProbeIO, Span, carried
from klue_viz.tasks.surface import surface_table

if TYPE_CHECKING:
    import pandas as pd
else:
    pd = lazy_module("pandas")  # the CLI scores without it

#: Hugging Face ClassLabel order of `ner_tags`.
TAGS, TYPES, TAG_ID = NER_TAGS, NER_TYPES, NER_TAG_ID
NONE = "none"
#: The confusion column of gold entities found with the right type but the wrong span (never on the diagonal).
WRONG_BOUNDARY = "wrong boundary"
#: A sentence line of the official TSV; header lines have spaces before their tab, guids never do.
SENTENCE_HEADER = re.compile(r"^## (\S+)\t(.*)$", re.M)
#: A stored correction of an entity (klue_viz.discovery.patch): `start-end:TYPE`, end exclusive, `O` to remove it.
ENTITY_CORRECTION = re.compile(r"^\s*(\d+)-(\d+):([A-Z]{1,2})\s*$")
COUNT_COLUMNS = {kind: [f"char_{kind}_{tag}" for tag in TAGS] for kind in ("tp", "fp", "fn")}


#: How an LLM names the entity types besides KLUE's own codes (English, CoNLL-style, Korean): form -> type.
TYPE_FORMS = {
    **dict.fromkeys(("PS", "PER", "PERSON", "인물", "사람", "인명"), "PS"),
    **dict.fromkeys(("LC", "LOC", "LOCATION", "지명", "장소", "위치", "지역"), "LC"),
    **dict.fromkeys(("OG", "ORG", "ORGANIZATION", "ORGANISATION", "기관", "조직", "단체", "기관명"), "OG"),
    **dict.fromkeys(("DT", "DAT", "DATE", "날짜"), "DT"),
    **dict.fromkeys(("TI", "TIM", "TIME", "시간"), "TI"),
    **dict.fromkeys(("QT", "QUANTITY", "NUM", "NUMBER", "수량", "숫자"), "QT"),
}
TYPE_VOCABULARY = Vocabulary(TYPE_FORMS)
#: `<한국 교통대:OG>`: KLUE's own markup (the type after the last colon), in a generated answer.
MARKUP_ENTITY = re.compile(r"<([^<>\n]+):\s*([A-Za-z가-힣]+)\s*>")
#: One entity on a line or between commas: `한국 교통대:OG`, `한국 교통대 (OG)`, `한국 교통대 - 기관`, `OG: 한국 교통대`.
LISTED_ENTITY = re.compile(r"^\s*(?:[-*•]|\d+[.)])?\s*(?:(?P<text>.+?)\s*(?:[:/]|\s-\s|\s*\(|\s*\[)\s*(?P<type>[A-Za-z가-힣]+)\s*[)\]]?"
                           r"|(?P<type2>[A-Za-z가-힣]+)\s*:\s*(?P<text2>.+?))\s*$")


def entity_type(name: str) -> str | None:
    """KLUE's entity type for a type written by a model (`OG`, `ORG`, `기관`...), or None."""
    return TYPE_VOCABULARY.whole.get(name.strip().casefold())


def markup_to_plain(markup: str) -> str:
    """`<경찰:OG>은` -> `경찰은`: the plain sentence of the official markup."""
    out, pos = [], 0
    while True:
        start = markup.find("<", pos)
        if start < 0:
            break
        close = markup.find(">", start)
        colon = markup.rfind(":", start, close) if close > 0 else -1
        if colon < 0 or markup[colon + 1:close] not in TYPES:
            out.append(markup[pos:start + 1])
            pos = start + 1
            continue
        out.append(markup[pos:start])
        out.append(markup[start + 1:colon])
        pos = close + 1
    out.append(markup[pos:])
    return "".join(out)


def tags_to_markup(sentence: str, tags: list[str]) -> str:
    """The official `<text:TYPE>` markup of a sentence and its character tags (the inverse of `markup_to_plain`)."""
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


def tags_from_entities(sentence: str, entities: list) -> tuple[bytes, list[str], list[tuple[int, int, str]]]:
    """Character tag ids (spaces included) for predicted `{start, end, label}` spans, end exclusive.

    Spans become tags in the order given, a later span overwriting an earlier one where they
    overlap (convention 9, docs/metrics.md). Returns the tag ids, one note per overlap, and the spans
    as given (start, end, label).
    """
    tags = bytearray([TAG_ID["O"]]) * len(sentence)
    owner = [-1] * len(sentence)
    spans: list[tuple[int, int, str]] = []
    notes = []
    for k, ent in enumerate(as_list(entities, "entities")):
        if not isinstance(ent, dict):
            raise RecordError(f"entities[{k}] must be an object {{start, end, label}}")
        label = ent.get("label", ent.get("type"))
        if label not in TYPES:
            raise RecordError(f"entities[{k}].label {label!r} is not one of {', '.join(TYPES)}")
        start, end = as_int(ent.get("start"), f"entities[{k}].start"), as_int(ent.get("end"), f"entities[{k}].end")
        if not 0 <= start < end <= len(sentence):
            raise RecordError(f"entities[{k}] span {start}..{end} is outside the sentence of {len(sentence)} characters (end is exclusive)")
        for j in sorted({owner[c] for c in range(start, end)} - {-1}):
            a, b, _ = spans[j]
            notes.append(f"entities[{k}] {start}..{end} overlaps entities[{j}] {a}..{b}; scored with the later span's tags where they overlap")
        tags[start] = TAG_ID[f"B-{label}"]
        tags[start + 1:end] = bytes([TAG_ID[f"I-{label}"]]) * (end - start - 1)
        owner[start:end] = [k] * (end - start)
        spans.append((start, end, str(label)))
    return bytes(tags), notes, spans


def _json_entities(text: str, start: int, end: int) -> list[tuple[str, str, int, int]] | None:
    """Entities of a JSON list in the answer: objects with a text and a label, or [text, label] pairs; None when the
    answer holds no such list."""
    found = json_in(text, start, end)
    if found is None or not isinstance(found[0], list):
        return None
    value, a, b = found
    items = []
    for item in value:
        if isinstance(item, dict):
            name = next((item[k] for k in ("text", "word", "entity", "name", "span", "mention") if isinstance(item.get(k), str)), None)
            label = next((item[k] for k in ("label", "type", "tag", "entity_type", "category") if isinstance(item.get(k), str)), None)
        elif isinstance(item, list) and len(item) == 2 and all(isinstance(v, str) for v in item):
            name, label = item
        else:
            return None
        if name is None or label is None or entity_type(label) is None:
            return None
        items.append((name, label, a, b))
    return items


def _listed_entities(text: str, start: int, end: int) -> list[tuple[str, str, int, int]] | None:
    """One `text:TYPE` entity per line or between commas; None unless every piece reads as one."""
    items, pos = [], start
    for piece in re.split(r"[\n,;]", text[start:end]):
        at = text.index(piece, pos) if piece else pos
        pos = at + len(piece)
        if not piece.strip():
            continue
        match = LISTED_ENTITY.match(piece)
        if match is None:
            return None
        name, label = (match.group("text"), match.group("type")) if match.group("text") else (match.group("text2"), match.group("type2"))
        if entity_type(label) is None and entity_type(name) is not None:
            name, label = label, name  # `OG: 한국 교통대` read the other way round
        if entity_type(label) is None:
            return None
        items.append((name.strip().strip("\"'“”‘’"), label, at, at + len(piece)))
    return items or None


def _aligned(text: str, sentence: str, items: list[tuple[str, str, int, int]]) -> Answer:
    """The entities found in the sentence, in the order given; the ones not found are notes."""
    entities, spans, notes = [], [], []
    for (name, label, a, b), at in zip(items, align(sentence, [name for name, _, _, _ in items])):
        if at is None:
            notes.append(f"entity {name!r} ({label}) of the answer is not in the sentence; left out")
            continue
        entities.append({"start": at, "end": at + len(name), "label": entity_type(label)})
        spans.append((a, b))
    if not entities:
        return unreadable(text, f"none of its {len(items)} entities is in the sentence")
    return Answer(text, {"entities": entities}, None, "", tuple(dict.fromkeys(spans)), tuple(notes))


class OverlappingSpans(bytes):
    """Predicted character tag ids made from spans that overlap, with the spans as given (for the drawing)."""

    spans: list[tuple[int, int, str]]


def overlapping(tags: bytes, spans: list[tuple[int, int, str]]) -> OverlappingSpans:
    out = OverlappingSpans(tags)
    out.spans = spans
    return out


def tag_bytes(names: list[str]) -> bytes:
    """Tag names as one byte each (the tag's id): how tags are held, since a large file has tens of millions of them."""
    return bytes(map(TAG_ID.__getitem__, names))


def tag_list(ids: bytes) -> list[str]:
    """Tag ids (bytes) back to tag names, for reading and for tests."""
    return [TAGS[i] for i in ids]


def tag_ids(values: list, what: str, expected_length: int) -> bytes:
    """The tag ids of a list of tag names or Hugging Face ids, one per character; RecordError says what is wrong."""
    values = as_list(values, what)
    if len(values) == expected_length:
        try:
            return tag_bytes(values)  # the common case: every value is a tag name
        except (KeyError, TypeError):
            pass  # ids, or values that are no tag: read one by one below
    ids = []
    for k, value in enumerate(values):
        if isinstance(value, str) and value in TAG_ID:
            ids.append(TAG_ID[value])
        elif isinstance(value, (int, float, str)) and str(value).strip().isdigit() and 0 <= int(value) < len(TAGS):
            ids.append(int(value))
        else:
            raise RecordError(f"{what}[{k}] {value!r} is not a KLUE-NER tag (B-/I- with {', '.join(TYPES)}, or O, or an id 0..12)")
    if len(ids) != expected_length:
        raise RecordError(f"{what} has {len(ids)} tags, expected {expected_length} (one per character of the sentence, spaces included)")
    return bytes(ids)


class Characters:
    """The official view of sentences' tags: the non-space characters of all sentences in one run, as tag ids.

    `sentence` says which sentence each character is in; the official reader skips exactly the " " lines.
    """

    def __init__(self, sentences: list[str], gold_tags: list[bytes], pred_tags: list[bytes]) -> None:
        self.lengths = np.fromiter(map(len, sentences), dtype=np.int64, count=len(sentences))
        self.nonspace = np.frombuffer("".join(sentences).encode("utf-32-le"), dtype=np.uint32) != ord(" ")
        self.sentence = np.repeat(np.arange(len(sentences), dtype=np.int32), self.lengths)[self.nonspace]
        self.gold = np.frombuffer(b"".join(gold_tags), dtype=np.uint8)[self.nonspace]
        self.pred = np.frombuffer(b"".join(pred_tags), dtype=np.uint8)[self.nonspace]

    def offsets(self) -> np.ndarray:
        """Each character's position in its sentence (spaces counted, as the drawing needs)."""
        starts = np.cumsum(self.lengths) - self.lengths
        return (np.arange(len(self.nonspace)) - np.repeat(starts, self.lengths))[self.nonspace]


def training_keys(rows: list[dict]) -> Iterator[str]:
    """The text of each entity of the training sentences (strict IOB2 chunks, as the metric reads them)."""
    first = np.zeros(1, dtype=np.int64)
    for row in rows:
        if not row["tags"]:
            continue
        starts, ends, _ = strict_entities(np.frombuffer(bytes(row["tags"]), dtype=np.uint8), first)
        yield from (row["sentence"][s:e] for s, e in zip(starts.tolist(), ends.tolist()))


def unit_training_keys(units: pd.DataFrame) -> pd.Series:
    """An entity row's text."""
    return units["text"].astype(str)


#: A `start-end:TYPE` correction item (end exclusive).
SPAN_ITEM = re.compile(r"(\d+)-(\d+):([A-Z]+)$")


STATUS_TEXT = {"correct": "right", "missed": "missed (dashed)", "spurious": "spurious (dashed)", "wrong type": "wrong type",
               "wrong boundary": "wrong boundary", "wrong type and boundary": "wrong type and boundary"}


def _surface_errors(frames: Frames) -> pd.DataFrame:
    """Errors by surface form: each gold entity missed, mistyped or mis-bounded, by its text and gold type (with what it
    was predicted as), and each spurious prediction by its text and predicted type; `total` is how often the text occurs
    with that type in the gold."""
    ents = frames.details["entities"]
    gold = ents[ents["side"] == "gold"]
    wrong = gold[~gold["correct"].astype(bool)]
    totals = gold.groupby(["text", "label"]).size().to_dict()
    as_what = np.where(wrong["error_type"].isin(["wrong type", "wrong type and boundary"]), " as " + wrong["other_label"].astype(str), "")
    missed = pd.DataFrame({"form": wrong["text"].astype(str), "type": wrong["label"].astype(str),
                           "error": wrong["error_type"].astype(str) + as_what, "guid": wrong["guid"]})
    extra = ents[(ents["side"] == "pred") & (ents["error_type"] == "spurious")]
    spurious = pd.DataFrame({"form": extra["text"].astype(str), "type": extra["label"].astype(str), "error": "spurious", "guid": extra["guid"]})
    return surface_table(pd.concat([missed, spurious], ignore_index=True), "entity", totals)


def _status_legend(statuses: Iterable[object]) -> list[dict]:
    seen = list(dict.fromkeys(str(s) for s in statuses))
    return [{"text": STATUS_TEXT.get(s, s), "status": s} for s in seen]


def _drawing_document(frames: Frames, guids: list[str]) -> dict:
    """The card of `guids` as a document for klue_viz.drawing.svg (what to draw, no markup)."""
    guid = guids[0]
    ex = frames.example(guid)
    ents = frames.rows(guid, "entities")
    rows = []
    for side, name in (("gold", "gold"), ("pred", "predicted")):
        marks = [{"start": int(e.start), "end": int(e.end), "tag": e.label, "colour": mk.LABEL_COLOURS.get(e.label, "#d0d7de"), "status": e.error_type}
                 for e in ents[ents["side"] == side].itertuples()]
        rows.append({"side": name, "text": ex["sentence"], "marks": marks})
    types = sorted(set(ents["label"].astype(str)))
    legend = [{"text": t, "colour": mk.LABEL_COLOURS.get(t, "#d0d7de")} for t in types] + _status_legend(ents["error_type"])
    return {"kind": "spans", "rows": rows, "legend": legend}



#: The comment lines that open the official KLUE-NER TSV (kept in a written suite, so it reads as the dev file does).
TSV_PREAMBLE = "## 토큰, 레이블 구분자 : \\t\n## 토큰 구분자 : \\n\n## 문장 구분자 : \\n\\n\n## 주석 : ##\n## 컬럼명 : CHAR\tNE_TAG\n"


def tag_spans(tags: bytes) -> list[tuple[int, int, str]]:
    """(start, end, type) of the strict-IOB2 entities of one sentence's tag ids, end exclusive."""
    ids = np.frombuffer(tags, dtype=np.uint8).astype(np.int64)
    starts, ends, kinds = strict_entities(ids, np.array([0]))
    return [(int(s), int(e), TYPES[int(k)]) for s, e, k in zip(starts, ends, kinds)]


class NerProbe(ProbeIO):
    """NER examples for the suites: the sentence is the one text, its gold entities the spans an edit moves."""

    tests = ("name-swap", "name-script", "spacing", "typo", "number-format")
    edit_fields = ("sentence",)
    file_name = "klue-ner-v1.1_dev.tsv"
    names_from_spans = True
    lm_eval = {"output_type": "generate_until",
               "doc_to_text": "다음 문장의 개체명을 <텍스트:유형> 형식으로 표시해 문장을 다시 쓰세요. 유형은 PS(인물), LC(장소), OG(기관), DT(날짜), TI(시간), "
                              "QT(수량)입니다.\n문장: {{sentence}}\n답:",
               "doc_to_target": "{{markup}}", "generation_kwargs": {"until": ["\n\n"], "max_gen_toks": 256}}

    def lm_docs(self, example: ProbeExample) -> list[dict[str, Any]]:
        """The plain sentence and its gold markup (the documents of examples/lm_eval/klue_ner_gen.yaml)."""
        record = example.record
        return [{"guid": example.guid, "sentence": record["sentence"], "markup": tags_to_markup(record["sentence"], tag_list(record["tags"]))}]

    def read(self, text: str, name: str) -> tuple[list[ProbeExample], list[Problem]]:
        rows, problems = TASK.read_official(text, name)
        return [ProbeExample(row["guid"], {"sentence": row["sentence"]},
                             tuple(Span("sentence", s, e, t) for s, e, t in tag_spans(row["tags"])), None, row) for row in rows], problems

    def rebuilt(self, example: ProbeExample, guid: str, texts: dict[str, str], spans: tuple[Span, ...], label: Any) -> ProbeExample:
        sentence = texts["sentence"]
        tags = bytearray([TAG_ID["O"]]) * len(sentence)
        for span in spans:
            tags[span.start] = TAG_ID[f"B-{span.label}"]
            tags[span.start + 1:span.end] = bytes([TAG_ID[f"I-{span.label}"]]) * (span.end - span.start - 1)
        return ProbeExample(guid, texts, spans, label, {"guid": guid, "sentence": sentence, "tags": bytes(tags)})

    def write(self, examples: Sequence[ProbeExample]) -> str:
        blocks = [TSV_PREAMBLE.rstrip("\n")]
        for example in examples:
            sentence, tags = example.record["sentence"], tag_list(example.record["tags"])
            lines = [f"## {example.guid}\t{tags_to_markup(sentence, tags)}"]
            lines.extend(f"{char}\t{tag}" for char, tag in zip(sentence, tags))
            blocks.append("\n".join(lines))
        return "\n\n".join(blocks) + "\n"

    def answer(self, prediction: Any) -> Hashable:
        return frozenset(tag_spans(bytes(prediction)))

    def same(self, source: Hashable, perturbed: Hashable, edits: Sequence[dict[str, Any]]) -> bool:
        """The source's predicted entities carried through the edits equal the perturbed prediction's; an entity an edit
        cuts (a typo inside a predicted entity's boundary) is left out on both sides."""
        assert isinstance(source, frozenset) and isinstance(perturbed, frozenset)
        moved = {carried(Span("sentence", s, e, t), edits) for s, e, t in source}
        touched = [(e["new_start"], e["new_end"]) for e in edits]
        kept = {(s.start, s.end, s.label) for s in moved if s is not None}
        cut = {(s, e, t) for s, e, t in perturbed if any(a < e and s < b and not (s <= a and b <= e) for a, b in touched)}
        return kept == set(perturbed) - cut


class Ner(Task):
    facts = TaskFacts(
        name="ner",
        title="KLUE-NER named entity recognition",
        guid_prefix="klue-ner-v1",
        metrics=(Metric("entity_macro_f1", "Entity macro F1"), Metric("character_macro_f1", "Character macro F1")),
        hf_config="ner",
        official_folder="klue-ner-v1.1",
        official_ext="tsv",
        slices=(
            Slice("source", "Source"),
            Slice("sentence_length", "Sentence length"),
            Slice("n_entities", "Gold entities in sentence"),
            Slice("eojeols", "Eojeols in sentence"),
            Slice("label", "Entity type", level="entities"),
            Slice("length", "Entity length", level="entities"),
            Slice("script", "Entity script (Hangul, Hanja, Latin, digits)", level="entities"),
            Slice("particle", "Particle attached to the entity (경찰+은)", level="entities"),
            Slice("error_type", "Entity error type", level="entities"),
        ),
        signature_fields=frozenset({"entities", "tags", "ner_tags"}),
        bare_value_field="entities",
        unit="sentence",
        text_columns=("sentence",),
        confusion_label="entity type",
        error_tags=("boundary", "type confusion", "missed", "spurious", "nested/overlap", "gold error"),
        hf_has_guid=False,
        detail=DetailLevel("entities", "entity", "entities (gold and predicted)", ("guid", "start", "end", "label"), sided=True, spans=True),
    )
    surface = SurfaceForms(_surface_errors)
    svg_document = DrawingDocument(_drawing_document)
    view = ViewSettings(outcome_columns=(WRONG_BOUNDARY,))
    training = SeenInTraining("Entity seen in training", training_keys, unit_training_keys)
    prediction_fields = frozenset({"entities", "tags", "ner_tags"})
    answer_parser_version = 1
    probe = NerProbe()

    # ---- gold -------------------------------------------------------------------------------
    def read_official(self, text: str, name: str) -> tuple[list[dict], list[Problem]]:
        """Sentences of the official TSV: a `## guid<TAB>markup` line, then one `CHAR<TAB>TAG` line per character."""
        rows, problems = [], []
        headers = list(SENTENCE_HEADER.finditer(text))
        for k, header in enumerate(headers):
            guid, markup = header.group(1), header.group(2)
            body_end = headers[k + 1].start() if k + 1 < len(headers) else len(text)
            body = text[header.end() + 1:body_end].strip("\n")
            cells = body.replace("\n", "\t").split("\t")  # char, tag, char, tag, ...
            chars, tags = cells[0::2], cells[1::2]
            if len(chars) != len(tags) or len("".join(chars)) != len(chars) or not set(tags) <= TAG_ID.keys():
                lines = [line for line in body.split("\n") if line and line != "\t"]
                bad = next((line for line in lines if line[1:2] != "\t" or line[2:] not in TAG_ID), None)
                if bad is not None:
                    line_number = text.count("\n", 0, header.start()) + 2 + lines.index(bad)
                    problems.append(Problem(f"expected 'CHAR<TAB>TAG' with a KLUE-NER tag, found {bad[:40]!r}; sentence left out", line_number, guid, name))
                    continue
                chars, tags = [line[0] for line in lines], [line[2:] for line in lines]
            plain = "".join(chars)
            if plain != markup_to_plain(markup):
                problems.append(Problem("the characters do not spell the sentence of its ## line", text.count("\n", 0, header.start()) + 1, guid, name))
            rows.append(self._row(guid, plain, tag_bytes(tags)))
        if not rows:
            raise InputError(f"{name}: no sentence found; expected the official KLUE-NER TSV ('## guid<TAB>sentence' then 'char<TAB>tag' lines)")
        return rows, problems

    def looks_like_hf(self, record: dict) -> bool:
        return "ner_tags" in record or "tokens" in record

    def rows_from_hf(self, records: Iterable[dict], split: str = "dev") -> tuple[list[dict], list[Problem]]:
        rows, problems = [], []
        for k, record in enumerate(records):
            try:
                tokens = [str(t) for t in record["tokens"]]
                tags = tag_ids(record["ner_tags"], "ner_tags", len(tokens))
                guid = str(record.get("guid") or self.hf_guid(k, split))
                rows.append(self._row(guid, "".join(tokens), tags))
            except (KeyError, RecordError) as err:
                problems.append(Problem(f"gold record #{k + 1}: {record_fault(err)}"))
        return rows, problems

    @staticmethod
    def _row(guid: str, plain: str, tags: bytes) -> dict:
        source = sys.intern(guid.rsplit("-", 1)[1]) if guid.count("-") >= 3 else "(unknown)"
        return {"guid": guid, "sentence": plain, "tags": tags, "source": source}

    # ---- predictions ------------------------------------------------------------------------
    def normalise_record(self, record: dict) -> dict:
        """Tag names become tag ids as each record is read: a large file would otherwise hold a string per character."""
        record = super().normalise_record(record)
        for key in ("tags", "ner_tags"):
            if type(record.get(key)) is list:
                try:
                    record[key] = tag_bytes(record[key])
                except (KeyError, TypeError):
                    pass  # ids, or values that are no tag: parse_prediction reads them one by one and says what is wrong
        return record

    def parse_prediction(self, record: dict, gold: dict) -> bytes | Repaired:
        if record.get("entities") is not None and record.get("entities") != "":
            tags, notes, spans = tags_from_entities(gold["sentence"], record["entities"])
            return Repaired(overlapping(tags, spans), tuple(notes)) if notes else tags
        given = record.get("tags", record.get("ner_tags"))  # ner_tags: the Hugging Face field name
        if isinstance(given, bytes):  # tag names already turned into ids by normalise_record
            if len(given) != len(gold["sentence"]):
                raise RecordError(f"tags has {len(given)} tags, expected {len(gold['sentence'])} "
                                  "(one per character of the sentence, spaces included)")
            return given
        if given not in (None, ""):
            return tag_ids(given, "tags", len(gold["sentence"]))
        raise RecordError("missing field 'entities' (list of {start, end, label}) or 'tags' (one BIO tag per character)")

    def empty_prediction(self, gold: dict) -> bytes:
        return bytes([TAG_ID["O"]]) * len(gold["sentence"])

    def parse_answer(self, text: str, gold: dict) -> Answer:
        """Entities from a generated text, aligned to the gold sentence: KLUE markup (`<한국 교통대:OG>`, the sentence
        rewritten or the entities alone), a JSON list (`[{"text": "한국 교통대", "label": "OG"}]`, `[["한국 교통대", "OG"]]`),
        or one `text:TYPE` per line or comma. An entity whose text is not in the sentence is left out and listed;
        none found in the sentence, or no entity form at all, is unreadable. `없음` / `[]` is no entity."""
        sentence = gold["sentence"]
        start, end = strip_answer(text, brackets=False)
        core = text[start:end]
        if core.casefold() in NOTHING_FORMS or core.rstrip(".") == sentence.strip().rstrip("."):
            return Answer(text, {"entities": []}, (start, end) if core else None)
        found = [(m.group(1), m.group(2), m.start(), m.end()) for m in MARKUP_ENTITY.finditer(text, start, end)]
        items: list[tuple[str, str, int, int]] | None = [(t, label, a, b) for t, label, a, b in found if entity_type(label)]
        if not items:
            items = _json_entities(text, start, end) or _listed_entities(text, start, end)
        if items is None:
            return unreadable(text, "no entity in KLUE markup <text:TYPE>, JSON list or text:TYPE lines")
        if not items:
            return Answer(text, {"entities": []}, (start, end))
        return _aligned(text, sentence, items)

    # ---- results ----------------------------------------------------------------------------
    def row_statistics(self, gold: list[dict], predictions: list) -> Statistics:
        chars = Characters([row["sentence"] for row in gold], [row["tags"] for row in gold], predictions)
        tp, fp, fn = character_counts(chars.sentence, chars.gold, chars.pred, len(gold))
        return ner_statistics(len(gold), tp, fp, fn, *entity_kinds(ner_entity_table(chars.sentence, chars.gold, chars.pred)))

    def build_frames(self, gold: pd.DataFrame, predictions: list) -> Frames:
        sentences = gold["sentence"].tolist()
        given = [p.spans if isinstance(p, OverlappingSpans) else None for p in predictions]
        gold_tags = gold["tags"].tolist()
        chars = Characters(sentences, gold_tags, predictions)
        tp, fp, fn = character_counts(chars.sentence, chars.gold, chars.pred, len(sentences))
        gold_key = gold_content_key(sentences, gold_tags)
        sides = ner_entity_table(chars.sentence, chars.gold, chars.pred)
        offsets = chars.offsets()
        guids = gold["guid"].to_numpy()
        rows = GOLD_ENTITY_TEXTS.gold_rows(gold_frame_key(gold_key, guids),
                                           lambda: self._gold_rows(gold_key, guids, sentences, sides["gold"], offsets, len(chars.gold)))
        entities, sent = self._entity_frame(rows, guids, sentences, sides, offsets, len(chars.gold))

        # the run's columns after the gold's own, built apart and joined once (a column added at a time costs more)
        codes, n_guids = rows.guid_codes, rows.n_guids
        entity_code = codes[sent]
        gold_side = np.arange(len(entity_code)) < rows.n_gold
        wrong = ~entities["matched"].to_numpy(dtype=bool)
        added = pd.DataFrame(np.concatenate([tp, fp, fn], axis=1), index=gold.index,
                             columns=[c for kind in ("tp", "fp", "fn") for c in COUNT_COLUMNS[kind]])
        added.insert(0, "given_spans", pd.Series(given, index=gold.index, dtype=object))
        columns: dict[str, Any] = {"n_gold_entities": rows.n_gold_entities}
        columns["n_pred_entities"] = np.bincount(entity_code[~gold_side], minlength=n_guids).astype(np.int64)[codes]
        columns["n_errors"] = np.bincount(entity_code[wrong], minlength=n_guids).astype(np.int64)[codes]
        columns["correct"] = columns["n_errors"] == 0
        columns["error_type"] = joined(entity_code[wrong], entities["error_type"][wrong], n_guids, ", ", "correct")[codes].tolist()
        columns["gold_types"] = rows.gold_types
        columns["pred_types"] = joined(entity_code[~gold_side], entities["label"][~gold_side], n_guids, " ", "")[codes].tolist()
        columns["sentence_length"] = rows.sentence_length
        columns["eojeols"] = GOLD_ENTITY_TEXTS.eojeols(gold_key, gold["sentence"])
        columns["n_entities"] = rows.n_entities
        examples = pd.concat([gold.drop(columns=["tags"]), added, pd.DataFrame(columns, index=gold.index)], axis=1)
        return Frames(examples, {"entities": entities})

    @staticmethod
    def _gold_rows(gold_key: bytes, guids: np.ndarray, sentences: list[str], gold_side: dict[str, np.ndarray], offset_ns: np.ndarray,
                   n_chars: int) -> GoldRows:
        """What every run against this gold shares (`GoldRows`), from one run's gold side of `ner_entity_table`."""
        codes, uniques = pd.factorize(pd.Series(guids, dtype=object), use_na_sentinel=False)
        n_guids = len(uniques)
        sent = gold_side["sent"]
        ns_start, ns_end = gold_side["start"], gold_side["end"]
        starts, ends = offset_ns[ns_start], offset_ns[ns_end - 1] + 1
        spans = ns_start.astype(np.int64) * (n_chars + 1) + ns_end.astype(np.int64)
        known = GOLD_ENTITY_TEXTS.known(gold_key, sentences, sent, starts, ends, spans)
        texts = GOLD_ENTITY_TEXTS.lookup(known, sentences, sent, starts, ends, spans)
        guid_strings = pd.array(guids, dtype="string")
        entities = entity_rows_frame("gold", guid_strings, sent, gold_side["type"], starts, ends, ns_end - ns_start, texts)
        entity_code = codes[sent]
        n_gold_entities = np.bincount(entity_code, minlength=n_guids).astype(np.int64)[codes]
        lengths = pd.Series(np.fromiter(map(len, sentences), dtype=np.int64, count=len(sentences)))
        n_entities = bucket(pd.Series(n_gold_entities), [-1, 0, 2, 5, float("inf")], "entities").str.replace("0-0 entities", "no entities")
        return GoldRows(known, entities, guid_strings, codes, n_guids, len(sent), n_gold_entities,
                        joined(entity_code, entities["label"], n_guids, " ", "")[codes].tolist(),
                        bucket(lengths, [0, 30, 60, 100, float("inf")], "chars").array, n_entities.array)

    @staticmethod
    def _entity_frame(rows: GoldRows, guids: np.ndarray, sentences: list[str], sides: dict[str, dict[str, np.ndarray]],
                      offset_ns: np.ndarray, n_chars: int) -> tuple[pd.DataFrame, np.ndarray]:
        """One row per gold and per predicted entity (`sides`: `ner_entity_table`), with whether it is matched and, if not,
        how it fails; with each row's sentence (row of the gold frame). The gold rows come first: `rows.entities`, the
        same for every run against this gold, with this run's match columns added."""
        frames = {side: pd.DataFrame({"ns_start": e["start"], "ns_end": e["end"], "type": e["type"], "matched": e["matched"]})
                  for side, e in sides.items()}
        gold_errors, gold_other = classify_errors(frames["gold"], frames["pred"], "missed")
        pred_errors, pred_other = classify_errors(frames["pred"], frames["gold"], "spurious")
        pred = sides["pred"]
        ns_start, ns_end = pred["start"], pred["end"]
        starts, ends = offset_ns[ns_start], offset_ns[ns_end - 1] + 1
        spans = ns_start.astype(np.int64) * (n_chars + 1) + ns_end.astype(np.int64)
        texts = GOLD_ENTITY_TEXTS.lookup(rows.known, sentences, pred["sent"], starts, ends, spans)
        frame = pd.concat([rows.entities, entity_rows_frame("pred", rows.guid_strings, pred["sent"], pred["type"], starts, ends, ns_end - ns_start, texts)],
                          ignore_index=True)
        matched = np.concatenate([sides["gold"]["matched"], pred["matched"]])
        frame["matched"] = matched
        frame["correct"] = matched.copy()
        # text columns when both sides have entities, else object columns (what pd.concat made of an empty side's)
        text = "str" if len(gold_errors) and len(pred_errors) else object
        frame["error_type"] = few_strings(np.concatenate([gold_errors, pred_errors]), text)
        frame["other_label"] = few_strings(np.concatenate([gold_other, pred_other]), text)
        return frame, np.concatenate([sides["gold"]["sent"], pred["sent"]])

    def statistics_columns(self) -> dict[str, tuple[str, ...]]:
        return {"examples": (*(c for kind in ("tp", "fp", "fn") for c in COUNT_COLUMNS[kind]), "n_gold_entities", "n_pred_entities", "n_errors"),
                "entities": ("guid", "side", "matched", "label")}

    def statistics(self, frames: Frames) -> Statistics:
        """Character counts per tag (columns of the example frame) and each entity's tp/fp/fn (the entity frame)."""
        ex, ents = frames.examples, frames.details["entities"]
        counts = [ex[COUNT_COLUMNS[kind]].to_numpy(np.int64) for kind in ("tp", "fp", "fn")]
        sentence = entity_sentences(ex["guid"], ents["guid"])
        kind = entity_rows(ents)
        keep = (sentence >= 0) & (kind >= 0)
        types = type_codes(ents["label"])
        return ner_statistics(len(ex), counts[0], counts[1], counts[2], sentence[keep], types[keep], kind[keep])

    def detail_statistics_columns(self, level: str) -> tuple[str, ...] | None:
        return ("side", "matched") if level == "entities" else None

    def detail_statistics(self, level: str, frame: pd.DataFrame) -> Statistics:
        if level != "entities":
            return super().detail_statistics(level, frame)
        kind = entity_rows(frame)
        matched_pred = ((frame["side"] == "pred").to_numpy() & frame["matched"].to_numpy(dtype=bool)).astype(float)
        index, extra = np.arange(len(frame)), np.flatnonzero(matched_pred)
        rows, cols, values = coo([
            (index, ENTITY_ROWS.start("tp_gold"), (kind == 0).astype(float)),
            (index, ENTITY_ROWS.start("fp"), (kind == 1).astype(float)),
            (index, ENTITY_ROWS.start("fn"), (kind == 2).astype(float)),
            (extra, ENTITY_ROWS.start("tp_pred"), matched_pred[extra]),
        ])
        return Statistics(len(frame), ENTITY_ROWS.width, rows, cols, values, entity_slice_aggregate)

    def confusion(self, frames: Frames) -> pd.DataFrame:
        """Gold entity type against what was predicted there: the diagonal is exact matches only; a right type on
        the wrong span goes to the `wrong boundary` column, a missed entity to `none`, a spurious one to the `none` row."""
        ents = frames.details["entities"]
        gold_side = ents[ents["side"] == "gold"]
        spurious = ents[(ents["side"] == "pred") & (ents["error_type"] == "spurious")]
        predicted = gold_side["other_label"].where(gold_side["error_type"] != "wrong boundary", WRONG_BOUNDARY)
        return pd.DataFrame({
            "guid": pd.concat([gold_side["guid"], spurious["guid"]]),
            "gold": pd.concat([gold_side["label"], pd.Series(NONE, index=spurious.index)]),
            "pred": pd.concat([predicted, spurious["label"]]),
        }).reset_index(drop=True)

    def render(self, frames: Frames, guid: str) -> str:
        ex = frames.example(guid)
        ents = frames.rows(guid, "entities").to_dict("records")
        rows = []
        for side in ("gold", "pred"):
            spans = [
                mk.Span(int(e["start"]), int(e["end"]), str(e["label"]), status=str(e["error_type"]).replace(" ", "_"), extra=(("data-side", side),))
                for e in ents if e["side"] == side
            ]
            rows.append(mk.row(side, mk.highlight(ex["sentence"], spans)))
        if ex.get("given_spans") is not None:  # overlapping predicted spans: each one as given, scored as the pred row shows
            chips = [f'{mk.highlight(ex["sentence"][a:b], [mk.Span(0, b - a, label, status="given")])} <span class="kv-kv">{a}..{b}</span>'
                     for a, b, label in ex["given_spans"]]
            rows.append(mk.row("given", " ".join(chips)))
        wrong = [e for e in ents if not e["matched"]]
        if wrong:
            items = [f"{mk.badge(e['error_type'], 'wrong')}{mk.esc(e['text'])} <span class='kv-kv'>({mk.esc(e['side'])}: {mk.esc(e['label'])})</span>"
                     for e in wrong]
            rows.append(mk.row("errors", " ".join(items)))
        return mk.example("".join(rows), guid)

    # ---- discovery --------------------------------------------------------------------------
    def example_scores(self, frames: Frames) -> pd.Series:
        """The sentence's entity F1 on 0..1 (1 for a sentence without entities on either side), from the example columns:
        matched gold and matched predicted entities are equal in number, so 2tp + fp + fn = gold + predicted entities
        and 2tp = that minus the unmatched ones (`n_errors`); the same values as `entity_f1`, without a groupby."""
        ex = frames.examples
        both = (ex["n_gold_entities"] + ex["n_pred_entities"]).to_numpy(dtype=float)
        return pd.Series(np.where(both > 0, (both - ex["n_errors"].to_numpy(dtype=float)) / np.maximum(both, 1), 1.0), index=ex.index)

    def sort_orders(self) -> dict[str, Callable[[Frames], pd.Series]]:
        return {"most entity errors first": lambda f: -f.examples["n_errors"], "lowest entity F1 first": entity_f1}

    def suspect_text(self, row: dict, suspect: Suspect) -> str:
        """The sentence with the suspect's span marked as the official markup does (`<text:TYPE>`, the proposed type;
        `[text]` when the proposal removes the entity)."""
        sentence = row["sentence"]
        found = SPAN_ITEM.match(str(suspect.proposed).split(";")[0].strip())
        if found is None:
            return sentence
        start, end, label = int(found[1]), int(found[2]), found[3]
        if not 0 <= start < end <= len(sentence):
            return sentence
        marked = f"[{sentence[start:end]}]" if label == "O" else f"<{sentence[start:end]}:{label}>"  # O: the entity removed
        return (f"{sentence[:start]}{marked}{sentence[end:]}\n"
                f"span {start}-{end} '{sentence[start:end]}': gold {suspect.gold} -> proposed {suspect.proposed}")

    def find_suspects(self, results: Sequence[ScoredRun]) -> list[Suspect]:
        """Entity spans every run predicts alike against the gold (a span the gold lacks or types otherwise, `start-end:TYPE`),
        and gold entities every run misses (proposed removed, `start-end:O`)."""
        n = len(results)
        spans: dict[tuple, list[str]] = defaultdict(list)
        missed: dict[tuple, list[str]] = defaultdict(list)
        for r in results:
            ents = r.frames.details["entities"]
            wrong_pred = ents[(ents["side"] == "pred") & ~ents["matched"]]
            for key in wrong_pred[["guid", "start", "end", "label", "text"]].itertuples(index=False, name=None):
                spans[key].append(r.run)
            lost = ents[(ents["side"] == "gold") & (ents["error_type"] == "missed")]
            for key in lost[["guid", "start", "end", "label", "text"]].itertuples(index=False, name=None):
                missed[key].append(r.run)
        gold_ents = results[0].frames.details["entities"]
        gold_ents = gold_ents[gold_ents["side"] == "gold"]
        by_guid: dict[str, list] = defaultdict(list)
        for guid, start, end, label, text in gold_ents[["guid", "start", "end", "label", "text"]].itertuples(index=False, name=None):
            by_guid[guid].append((start, end, label, text))
        out = []
        for (guid, start, end, label, text), runs in spans.items():
            if len(runs) < n:
                continue
            overlapping = [f"{a}-{b}:{lab}" for a, b, lab, _ in by_guid.get(guid, []) if a < end and start < b]
            evidence = Evidence(n, n, runs, about={"text": text},
                                extra={"gold_entities": [f"{t} ({lab})" for a, b, lab, t in by_guid.get(guid, []) if a < end and start < b]})
            out.append(suspect_item(guid, "entity", "; ".join(overlapping) or f"{start}-{end}:O", f"{start}-{end}:{label}", n, evidence))
        for (guid, start, end, label, text), runs in missed.items():
            if len(runs) < n:
                continue
            evidence = Evidence(n, n, runs, about={"text": text}, extra={"gold_entities": [f"{text} ({label})"]})
            out.append(suspect_item(guid, "entity", f"{start}-{end}:{label}", f"{start}-{end}:O", n, evidence))
        return out

    def write_patch(self, official_text: str, name: str, corrections: dict[tuple[str, int | None], list[str]],
                    problems: list[Problem]) -> tuple[str, int]:
        """`start-end:TYPE` items (end exclusive) retag a span; `O` removes it, and an entity the span cuts into is replaced whole."""
        out, count = [], 0
        for guid, _header, body in tsv_blocks(official_text):
            items = correction_items(corrections, guid)
            if not items:
                continue
            chars = [line[0] if line else " " for line in body]
            tags = [line[2:] for line in body]
            sentence = "".join(chars)
            applied = 0
            for item in items:
                match = ENTITY_CORRECTION.match(item)
                start, end, label = (int(match[1]), int(match[2]), match[3]) if match else (0, 0, "")
                if not match or not 0 <= start < end <= len(tags) or label not in (*TYPES, "O"):
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
            out.append(f"## {guid}\t{tags_to_markup(sentence, tags)}\n" + "".join(f"{c}\t{t}\n" for c, t in zip(chars, tags)))
            count += 1
        return "\n".join(out), count


def classify_errors(this: pd.DataFrame, other: pd.DataFrame, missing_name: str) -> tuple[np.ndarray, np.ndarray]:
    """Error type of each entity of one side and the label it overlaps on the other side (its own label when matched).

    An unmatched entity is a `wrong type` when the other side has its exact span, a `wrong boundary` when an overlapping
    entity has its type, a `wrong type and boundary` (the label of the entity overlapping it most, the first of equals)
    when only other types overlap it, and `missing_name` (label `none`) when nothing does. Spans are over the non-space
    characters of all sentences (`ns_start`, `ns_end`), so an overlap is always within one sentence; the entities of one
    side never overlap each other, so those overlapping a span are one run of the other side's entities in start order.
    """
    errors = np.full(len(this), "correct", dtype=object)
    types = np.asarray(TYPES, dtype=object)
    other_labels = types[this["type"].to_numpy()] if len(this) else np.array([], dtype=object)
    unmatched = np.flatnonzero(~this["matched"].to_numpy(dtype=bool))
    a, b = this["ns_start"].to_numpy(np.int64)[unmatched], this["ns_end"].to_numpy(np.int64)[unmatched]
    t = this["type"].to_numpy(np.int64)[unmatched]
    oa, ob, ot = other["ns_start"].to_numpy(np.int64), other["ns_end"].to_numpy(np.int64), other["type"].to_numpy(np.int64)
    first = np.searchsorted(ob, a, side="right")  # the first other entity ending after the span starts
    count = np.maximum(np.searchsorted(oa, b, side="left") - first, 0)  # ... up to the first one starting at or after its end
    pair_row = np.repeat(np.arange(len(unmatched)), count)
    pair_other = np.repeat(first, count) + np.arange(int(count.sum())) - np.repeat(np.cumsum(count) - count, count)
    same_type = np.zeros(len(unmatched), dtype=bool)
    np.logical_or.at(same_type, pair_row, ot[pair_other] == t[pair_row])
    overlap = np.minimum(ob[pair_other], b[pair_row]) - np.maximum(oa[pair_other], a[pair_row])
    by_overlap = np.lexsort((pair_other, -overlap, pair_row))  # per row: the largest overlap first, then start order
    head = by_overlap[np.r_[True, np.diff(pair_row[by_overlap]) != 0]] if len(by_overlap) else by_overlap
    best = np.full(len(unmatched), -1, dtype=np.int64)
    best[pair_row[head]] = pair_other[head]
    single = count == 1
    same_span = single & (oa[np.where(single, first, 0)] == a) & (ob[np.where(single, first, 0)] == b) if len(oa) else single
    kind = np.select([same_span, same_type, count > 0], [0, 1, 2], 3)
    labels = other_labels[unmatched]
    labels[kind == 0] = types[ot[first[kind == 0]]]
    labels[kind == 2] = types[ot[best[kind == 2]]]
    labels[kind == 3] = NONE
    errors[unmatched] = np.array(["wrong type", "wrong boundary", "wrong type and boundary", missing_name], dtype=object)[kind]
    other_labels[unmatched] = labels
    return errors, other_labels


def gold_content_key(sentences: list[str], gold_tags: list[bytes]) -> bytes:
    """A digest of the gold sentences and their tags, in the order given: what the gold's own entity columns depend on."""
    digest = hashlib.blake2b(digest_size=20)
    digest.update(np.fromiter(map(len, sentences), dtype=np.int64, count=len(sentences)).tobytes())
    digest.update("".join(sentences).encode("utf-8", "surrogatepass"))
    digest.update(b"".join(gold_tags))
    return digest.digest()


def entity_texts(sentences: list[str], sent: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> dict[str, list[str]]:
    """Text, script mix and attached particle of entities (sentence row, start and end offsets, end exclusive)."""
    texts = [sentences[s][a:b] for s, a, b in zip(sent.tolist(), starts.tolist(), ends.tolist())]
    return {"text": texts, **entity_features(sentences, sent, starts, ends, texts)}


def gold_frame_key(gold_key: bytes, guids: np.ndarray) -> bytes:
    """`gold_content_key` with the guids, in the order given: what `GoldRows` depend on."""
    names = guids.tolist()
    digest = hashlib.blake2b(gold_key, digest_size=20)
    digest.update(np.fromiter(map(len, names), dtype=np.int64, count=len(names)).tobytes())
    digest.update("".join(names).encode("utf-8", "surrogatepass"))
    return digest.digest()


def few_strings(values: np.ndarray, dtype: str | type) -> pd.Series:
    """`pd.Series(values, dtype=dtype)` for a column of few distinct strings (error types, scripts): each distinct value
    is converted once and the column taken from them, instead of every cell converted on its own (`object`: the values
    as they are, a column pandas leaves untyped)."""
    if dtype is object:
        return pd.Series(values, dtype=object)
    codes, uniques = pd.factorize(values)
    return pd.Series(pd.array(uniques, dtype=dtype).take(codes, allow_fill=True))


def length_buckets(lengths: np.ndarray) -> pd.api.extensions.ExtensionArray:
    """`bucket` of entity lengths, computed for each distinct length once."""
    uniques, where = np.unique(lengths, return_inverse=True)
    return bucket(pd.Series(uniques), [0, 1, 3, 6, float("inf")], "chars").array.take(where.ravel())


def entity_rows_frame(side: str, guids: pd.api.extensions.ExtensionArray, sent: np.ndarray, types: np.ndarray, starts: np.ndarray,
                      ends: np.ndarray, lengths: np.ndarray, texts: dict[str, np.ndarray]) -> pd.DataFrame:
    """The entity frame's columns that do not depend on matching, for the entities of one side (`guids`: the examples'
    guids as strings; `texts`: the entities' text, script and particle; `lengths`: in non-space characters)."""
    return pd.DataFrame({
        "guid": guids.take(sent),
        "side": pd.array([side], dtype="str").take(np.zeros(len(sent), dtype=np.int64)),
        "label": pd.array(list(TYPES), dtype="string").take(types.astype(np.int64)),
        "start": starts.astype(np.int64), "end": ends.astype(np.int64),
        "text": pd.array(texts["text"], dtype="string"),
        "length": length_buckets(lengths),
        "script": few_strings(texts["script"], "string"),
        "particle": few_strings(texts["particle"], "string"),
    })


@dataclass(frozen=True)
class GoldRows:
    """What every run scored against one gold (`gold_frame_key`) has alike, made once: the gold half of the entity
    frame (all but the match columns), the gold entities' text lookup (`GoldEntityTexts.known`), each example's guid
    code and the example columns of the gold alone."""

    known: tuple[np.ndarray, dict[str, np.ndarray]]
    entities: pd.DataFrame
    guid_strings: pd.api.extensions.ExtensionArray
    guid_codes: np.ndarray
    n_guids: int
    n_gold: int
    n_gold_entities: np.ndarray
    gold_types: list[str]
    sentence_length: pd.api.extensions.ExtensionArray
    n_entities: pd.api.extensions.ExtensionArray


class GoldEntityTexts:
    """The text, script and particle of each gold entity, and each sentence's eojeol bucket, computed once per gold
    instead of once per run.

    Every run scored against one gold has the same gold entities, and a predicted entity on a gold entity's span has
    its text, script and particle too; so these are kept per gold content (`gold_content_key`: the sentences and tags
    in the order scored), for the last `size` golds, and only the other predicted spans are described per run. A span
    is its start and end in the non-space characters of all sentences, which fix its sentence and offsets for one key.
    The gold half of the frames (`GoldRows`) is kept here too, under `gold_frame_key` (the guids as well), for as many golds.
    """

    def __init__(self, size: int = 4) -> None:
        self.size = size
        self._golds: OrderedDict[bytes, tuple[np.ndarray, dict[str, np.ndarray]]] = OrderedDict()
        self._eojeols: OrderedDict[bytes, pd.api.extensions.ExtensionArray] = OrderedDict()
        self._rows: OrderedDict[bytes, GoldRows] = OrderedDict()
        self._lock = threading.Lock()  # the server scores runs of several sessions at once

    def _remember(self, kept: OrderedDict, key: bytes, value: Any) -> None:
        with self._lock:
            kept[key] = value
            kept.move_to_end(key)
            while len(kept) > self.size:
                kept.popitem(last=False)

    def eojeols(self, gold_key: bytes, sentences: pd.Series) -> pd.api.extensions.ExtensionArray:
        """`eojeol_bucket` of the gold sentences (in the order `gold_key` was made from), once per gold."""
        found = self._eojeols.get(gold_key)
        if found is None:
            found = eojeol_bucket(sentences).array
        self._remember(self._eojeols, gold_key, found)
        return found

    def known(self, gold_key: bytes, sentences: list[str], sent: np.ndarray, starts: np.ndarray, ends: np.ndarray,
              spans: np.ndarray) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """The gold entities' spans (sorted) and their text, script and particle, once per gold: `sent`, `starts`, `ends`
        and `spans` (start and end in the non-space characters of all sentences, as one number) of the gold entities."""
        known = self._golds.get(gold_key)
        if known is None:
            order = np.argsort(spans, kind="stable")
            values = entity_texts(sentences, sent[order], starts[order], ends[order])
            known = (spans[order], {column: np.asarray(v, dtype=object) for column, v in values.items()})
        self._remember(self._golds, gold_key, known)
        return known

    @staticmethod
    def lookup(known: tuple[np.ndarray, dict[str, np.ndarray]], sentences: list[str], sent: np.ndarray, starts: np.ndarray,
               ends: np.ndarray, spans: np.ndarray) -> dict[str, np.ndarray]:
        """Text, script and particle of entities: the gold's own (`known`) for a gold entity's span, computed for the others."""
        keys, columns = known
        at = np.minimum(np.searchsorted(keys, spans), max(len(keys) - 1, 0))
        found = (keys[at] == spans) if len(keys) else np.zeros(len(spans), dtype=bool)
        out = {column: np.empty(len(spans), dtype=object) for column in columns}
        rest = np.flatnonzero(~found)
        others = entity_texts(sentences, sent[rest], starts[rest], ends[rest])
        for column, kept in columns.items():
            out[column][found] = kept[at[found]]
            out[column][rest] = others[column]
        return out

    def gold_rows(self, frame_key: bytes, build: Callable[[], GoldRows]) -> GoldRows:
        """The `GoldRows` of a gold (`gold_frame_key`), built the first time it is scored."""
        found = self._rows.get(frame_key)
        if found is None:
            found = build()
        self._remember(self._rows, frame_key, found)
        return found


#: The gold entity columns of the last few golds scored (klue-viz runs add scores many runs against one gold).
GOLD_ENTITY_TEXTS = GoldEntityTexts()


def joined(groups: np.ndarray, values: pd.Series, n_groups: int, sep: str, empty: str) -> np.ndarray:
    """Per group 0..n_groups-1: the distinct values of its rows (`groups`: each value's group), sorted and joined by
    `sep`, or `empty` for a group without any. A groupby-agg through one bit per distinct value, for the few distinct
    values (error types, entity types) an entity column holds; ValueError for more than 62 or for a missing value."""
    codes, uniques = pd.factorize(values)
    if (codes < 0).any() or len(uniques) > 62:
        raise ValueError(f"joined needs at most 62 distinct values and none missing, found {len(uniques)} and {(codes < 0).sum()} missing")
    names = sorted(uniques.tolist())
    rank = np.array([names.index(u) for u in uniques.tolist()], dtype=np.int64)
    masks = np.zeros(n_groups, dtype=np.int64)
    np.bitwise_or.at(masks, groups, np.left_shift(np.int64(1), rank[codes]))
    distinct, where = np.unique(masks, return_inverse=True)
    texts = [sep.join(name for k, name in enumerate(names) if mask >> k & 1) if mask else empty for mask in distinct.tolist()]
    return np.asarray(texts, dtype=object)[where]


#: Entity-row columns: matched gold (tp), unmatched predicted (fp), unmatched gold (fn), matched predicted.
ENTITY_ROWS = Layout(tp_gold=1, fp=1, fn=1, tp_pred=1)


def entity_slice_aggregate(summed: np.ndarray) -> dict[str, np.ndarray]:
    """Precision, recall and F1 of a slice of entity rows, from matched gold, fp, fn and matched predicted counts.

    Precision counts the slice's predicted entities, recall its gold ones, so a slice holding one side only (the
    slice finder's 'side = pred') still has the precision of its predictions. F1 is the matched share of the slice's
    entities, (matched gold + matched predicted) / all: 2tp / (2tp + fp + fn) whenever both sides are in the slice
    alike (every slice the task defines), precision or recall when the slice holds one side only.
    """
    tp_gold, fp, fn, tp_pred = (ENTITY_ROWS.column(summed, name) for name in ("tp_gold", "fp", "fn", "tp_pred"))
    return {"precision": share(tp_pred, tp_pred + fp), "recall": share(tp_gold, tp_gold + fn),
            "f1": share(tp_gold + tp_pred, tp_gold + tp_pred + fp + fn)}


def entity_sentences(example_guids: pd.Series, entity_guids: pd.Series) -> np.ndarray:
    """Each entity's example row (-1 for a guid no example has): `pd.Index(example_guids).get_indexer(entity_guids)`,
    through one factorize of both columns (a kept frame's Arrow-backed strings are not converted to Python objects)."""
    if not example_guids.is_unique or example_guids.hasnans:
        return pd.Index(example_guids).get_indexer(entity_guids).astype(np.int64)  # raises as get_indexer does
    n = len(example_guids)
    codes, uniques = pd.factorize(pd.concat([example_guids, entity_guids], ignore_index=True))
    where = np.full(len(uniques) + 1, -1, dtype=np.int64)  # the last cell: a missing guid (code -1)
    where[codes[:n]] = np.arange(n)
    return where[codes[n:]]


def type_codes(labels: pd.Series) -> np.ndarray:
    """Each label's position in TYPES (-1 for another value or a missing one): `pd.Categorical(labels, categories=TYPES).codes`."""
    codes, uniques = pd.factorize(labels)
    lookup = np.array([TYPES.index(u) if u in TYPES else -1 for u in uniques] + [-1], dtype=np.int64)
    return lookup[codes]


def entity_rows(entities: pd.DataFrame) -> np.ndarray:
    """Each entity row's part in the counts: 0 tp (matched gold), 1 fp (unmatched prediction), 2 fn (unmatched gold), -1 none."""
    gold, matched = (entities["side"] == "gold").to_numpy(), entities["matched"].to_numpy(dtype=bool)
    return np.select([gold & matched, gold, ~matched], [0, 2, 1], -1).astype(np.int64)


def entity_f1(frames: Frames) -> pd.Series:
    """Entity F1 per sentence (0..100) from the entity rows; a sentence without entities on either side scores 100."""
    ents = frames.details["entities"]
    tp = ents[(ents["side"] == "gold") & ents["matched"]].groupby("guid").size()
    fn = ents[(ents["side"] == "gold") & ~ents["matched"]].groupby("guid").size()
    fp = ents[(ents["side"] == "pred") & ~ents["matched"]].groupby("guid").size()
    guids = frames.examples["guid"]
    tp, fn, fp = (s.reindex(guids).fillna(0).to_numpy() for s in (tp, fn, fp))
    return pd.Series(100.0 * f1(tp, fp, fn, undefined=1.0), index=frames.examples.index)


TASK = Ner()
