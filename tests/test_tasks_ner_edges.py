"""Edges of the NER task module that mutation testing showed untested (docs/mutation.md, "tasks/ner.py").

Expected values are hand counts on small made-up sentences, or the real dev TSV read independently here.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from klue_viz.scoring.evaluate import evaluate_bytes, gold_from_bytes
from klue_viz.tasks import get_task
from klue_viz.tasks.base import RecordError
from klue_viz.tasks.ner import (
    TAGS,
    entity_f1,
    entity_rows,
    entity_sentences,
    entity_slice_aggregate,
    markup_to_plain,
    tag_ids,
    tag_list,
    tags_from_entities,
    tags_to_markup,
    type_codes,
)
from tests.conftest import jsonl

GUID = "klue-ner-v1_dev_{:05d}-wikitree"


def tsv(sentences: list[tuple[str, str, list[str]]]) -> str:
    """An official KLUE-NER TSV of (guid, markup, tags) sentences; the characters come from the markup's plain text."""
    out = ["## 칼럼명 : CHAR\tNE_TAG"]
    for guid, markup, tags in sentences:
        out.append(f"## {guid}\t{markup}")
        # The plain text: the markup without its <...:TYPE> brackets, written out by hand in each test.
        plain = markup
        for t in ("PS", "LC", "OG", "DT", "TI", "QT"):
            plain = plain.replace(f":{t}>", "")
        plain = plain.replace("<", "")
        assert len(plain) == len(tags), (plain, tags)
        out.extend(f"{c}\t{t}" for c, t in zip(plain, tags))
        out.append("")
    return "\n".join(out) + "\n"


def read_dev_tsv(path) -> list[tuple[str, str, list[str], list[str]]]:
    """(guid, markup, characters, tags) of each sentence of the official TSV, read line by line."""
    out, current = [], None
    for line in path.read_text(encoding="utf-8").split("\n"):
        if line.startswith("## klue-ner"):
            guid, markup = line[3:].split("\t", 1)
            current = (guid, markup, [], [])
            out.append(current)
        elif line.startswith("##") or not line:
            continue
        else:
            char, tag = line.split("\t")
            current[2].append(char)
            current[3].append(tag)
    return out


@pytest.fixture(scope="module")
def dev_sentences(shared):
    return read_dev_tsv(shared / "klue-ner-v1.1" / "klue-ner-v1.1_dev.tsv")


# ---- markup ------------------------------------------------------------------------------------
def test_tags_to_markup_by_hand():
    sentence = "경찰은 서울 박씨"
    tags = ["B-OG", "I-OG", "O", "O", "B-LC", "I-LC", "O", "B-PS", "O"]
    assert tags_to_markup(sentence, tags) == "<경찰:OG>은 <서울:LC> <박:PS>씨"
    # An entity that runs to the end of the sentence, and two entities side by side.
    assert tags_to_markup("서울시", ["B-LC", "I-LC", "I-LC"]) == "<서울시:LC>"
    assert tags_to_markup("박김", ["B-PS", "B-PS"]) == "<박:PS><김:PS>"
    # An I- of another type ends the entity; an orphan I- is plain text.
    assert tags_to_markup("서울역", ["B-LC", "I-LC", "I-OG"]) == "<서울:LC>역"
    assert tags_to_markup("역이", ["I-LC", "O"]) == "역이"


def test_tags_to_markup_gives_the_dev_sets_own_markup(dev_sentences):
    """Every sentence of the real dev TSV: its characters and tags give back the markup of its `##` line."""
    differ = [guid for guid, markup, chars, tags in dev_sentences if tags_to_markup("".join(chars), tags) != markup]
    assert len(dev_sentences) == 5000
    assert differ == []


def test_markup_to_plain_by_hand_and_on_the_dev_set(dev_sentences):
    assert markup_to_plain("<경찰:OG>은 <박:PS>씨") == "경찰은 박씨"
    # Brackets that are no entity are kept: no colon, a type that is no KLUE type, no closing bracket.
    assert markup_to_plain("a<b>c") == "a<b>c"
    assert markup_to_plain("<x:AB> <서울:LC>") == "<x:AB> 서울"
    assert markup_to_plain("<서울:LC> a<b") == "서울 a<b"
    assert markup_to_plain("<a:b:LC>") == "a:b"  # the type is after the last colon
    assert markup_to_plain("") == ""
    differ = [guid for guid, markup, chars, _ in dev_sentences if markup_to_plain(markup) != "".join(chars)]
    assert differ == []


# ---- tag ids -----------------------------------------------------------------------------------
def test_tag_ids_reads_names_ids_and_digit_strings():
    assert tag_ids(["B-PS", "I-PS", "O"], "tags", 3) == bytes([TAGS.index("B-PS"), TAGS.index("I-PS"), TAGS.index("O")])
    assert tag_ids([0, 12, 1], "ner_tags", 3) == bytes([0, 12, 1])
    assert tag_ids(["3", " 4 ", "O"], "tags", 3) == bytes([3, 4, TAGS.index("O")])


def test_tag_ids_refuses_what_is_no_tag_naming_its_position():
    with pytest.raises(RecordError) as err:
        tag_ids(["O", "B-XX", "O"], "tags", 3)
    assert str(err.value) == "tags[1] 'B-XX' is not a KLUE-NER tag (B-/I- with DT, LC, OG, PS, QT, TI, or O, or an id 0..12)"
    for bad in (13, -1, None, "1.5", 2.0, [1]):
        with pytest.raises(RecordError, match=r"ner_tags\[0\]"):
            tag_ids([bad, 0], "ner_tags", 2)
    with pytest.raises(RecordError) as err:
        tag_ids(["O", "O"], "tags", 3)
    assert str(err.value) == "tags has 2 tags, expected 3 (one per character of the sentence, spaces included)"
    with pytest.raises(RecordError) as err:
        tag_ids([0, 1, 2, 3], "ner_tags", 3)
    assert str(err.value).startswith("ner_tags has 4 tags, expected 3")


# ---- spans -------------------------------------------------------------------------------------
def test_tags_from_entities_by_hand():
    tags, notes, spans = tags_from_entities("박지성 서울", [{"start": 0, "end": 3, "label": "PS"}, {"start": 4, "end": 6, "type": "LC"}])
    assert tag_list(tags) == ["B-PS", "I-PS", "I-PS", "O", "B-LC", "I-LC"]
    assert notes == [] and spans == [(0, 3, "PS"), (4, 6, "LC")]
    # One-character entity at the very end.
    tags, _, _ = tags_from_entities("서울 박", [{"start": 3, "end": 4, "label": "PS"}])
    assert tag_list(tags) == ["O", "O", "O", "B-PS"]


def test_tags_from_entities_overlaps_are_noted_later_span_on_top():
    entities = [{"start": 0, "end": 3, "label": "PS"}, {"start": 2, "end": 5, "label": "LC"}, {"start": 1, "end": 2, "label": "DT"}]
    tags, notes, spans = tags_from_entities("abcdef", entities)
    assert tag_list(tags) == ["B-PS", "B-DT", "B-LC", "I-LC", "I-LC", "O"]
    assert notes == [
        "entities[1] 2..5 overlaps entities[0] 0..3; scored with the later span's tags where they overlap",
        "entities[2] 1..2 overlaps entities[0] 0..3; scored with the later span's tags where they overlap",
    ]
    assert spans == [(0, 3, "PS"), (2, 5, "LC"), (1, 2, "DT")]
    # Touching spans (end exclusive) do not overlap.
    _, notes, _ = tags_from_entities("abcd", [{"start": 0, "end": 2, "label": "PS"}, {"start": 2, "end": 4, "label": "PS"}])
    assert notes == []


@pytest.mark.parametrize(("entity", "message"), [
    ("x", "entities[0] must be an object {start, end, label}"),
    ({"start": 0, "end": 1, "label": "XX"}, "entities[0].label 'XX' is not one of DT, LC, OG, PS, QT, TI"),
    ({"start": 0, "end": 1}, "entities[0].label None is not one of DT, LC, OG, PS, QT, TI"),
    ({"start": 2, "end": 2, "label": "PS"}, "entities[0] span 2..2 is outside the sentence of 4 characters (end is exclusive)"),
    ({"start": -1, "end": 2, "label": "PS"}, "entities[0] span -1..2 is outside the sentence of 4 characters (end is exclusive)"),
    ({"start": 0, "end": 5, "label": "PS"}, "entities[0] span 0..5 is outside the sentence of 4 characters (end is exclusive)"),
])
def test_tags_from_entities_refusals(entity, message):
    with pytest.raises(RecordError) as err:
        tags_from_entities("abcd", [entity])
    assert str(err.value) == message
    tags, _, _ = tags_from_entities("abcd", [{"start": 0, "end": 4, "label": "QT"}])  # the whole sentence is inside
    assert tag_list(tags) == ["B-QT", "I-QT", "I-QT", "I-QT"]


# ---- per-sentence and per-entity scores ---------------------------------------------------------
SENTENCES = [
    # 0: gold PS 0..2, LC 3..5; predicted PS 0..2 (right), LC 3..5 as OG (wrong type): tp 1, fp 1, fn 1 -> F1 0.5.
    (GUID.format(0), "<박씨:PS> <서울:LC>", ["B-PS", "I-PS", "O", "B-LC", "I-LC"]),
    # 1: no entity in gold nor prediction -> F1 1 (100).
    (GUID.format(1), "그냥 말", ["O", "O", "O", "O"]),
    # 2: gold QT 0..2, missed; nothing predicted: tp 0, fn 1 -> 0.
    (GUID.format(2), "<32:QT>세", ["B-QT", "I-QT", "O"]),
    # 3: nothing in gold, a spurious DT 0..2: fp 1 -> 0.
    (GUID.format(3), "오늘 비", ["O", "O", "O", "O"]),
    # 4: gold OG 0..3, DT 4..6, TI 7..9; all three right, plus a spurious PS 10..11: tp 3, fp 1 -> 6/7.
    (GUID.format(4), "<한국은행:OG> <오늘:DT> <세시:TI> 김", ["B-OG", "I-OG", "I-OG", "I-OG", "O", "B-DT", "I-DT", "O", "B-TI", "I-TI", "O", "O"]),
]
PREDICTIONS = [
    {"guid": GUID.format(0), "entities": [{"start": 0, "end": 2, "label": "PS"}, {"start": 3, "end": 5, "label": "OG"}]},
    {"guid": GUID.format(1), "entities": []},
    {"guid": GUID.format(2), "entities": []},
    {"guid": GUID.format(3), "entities": [{"start": 0, "end": 2, "label": "DT"}]},
    {"guid": GUID.format(4), "entities": [{"start": 0, "end": 4, "label": "OG"}, {"start": 5, "end": 7, "label": "DT"},
                                         {"start": 8, "end": 10, "label": "TI"}, {"start": 11, "end": 12, "label": "PS"}]},
]
F1_BY_HAND = [0.5, 1.0, 0.0, 0.0, 6 / 7]


@pytest.fixture(scope="module")
def result():
    ner = get_task("ner")
    gold = gold_from_bytes(ner, tsv(SENTENCES).encode(), "small.tsv")
    return evaluate_bytes(ner, gold, jsonl(PREDICTIONS), "p.jsonl")


def test_entity_f1_and_example_scores_by_hand(result):
    ner = get_task("ner")
    assert entity_f1(result.frames).tolist() == pytest.approx([100 * v for v in F1_BY_HAND])
    assert ner.example_scores(result.frames).tolist() == pytest.approx(F1_BY_HAND)
    assert list(entity_f1(result.frames).index) == list(result.frames.examples.index)
    assert list(ner.example_scores(result.frames).index) == list(result.frames.examples.index)
    orders = ner.sort_orders()
    assert orders["lowest entity F1 first"](result.frames).tolist() == pytest.approx([100 * v for v in F1_BY_HAND])
    assert (-orders["most entity errors first"](result.frames)).tolist() == [2, 0, 1, 1, 1]


def test_example_counts_by_hand(result):
    ex = result.frames.examples.set_index("guid")
    assert ex["n_gold_entities"].tolist() == [2, 0, 1, 0, 3]
    assert ex["n_pred_entities"].tolist() == [2, 0, 0, 1, 4]
    assert ex["n_errors"].tolist() == [2, 0, 1, 1, 1]
    assert ex["correct"].tolist() == [False, True, False, False, False]
    assert ex["error_type"].tolist() == ["wrong type", "correct", "missed", "spurious", "spurious"]
    assert ex["gold_types"].tolist() == ["LC PS", "", "QT", "", "DT OG TI"]
    assert ex["pred_types"].tolist() == ["OG PS", "", "", "DT", "DT OG PS TI"]
    assert ex["source"].tolist() == ["wikitree"] * 5


def test_entity_rows_and_types_by_hand(result):
    ents = result.frames.details["entities"]
    # gold rows first: PS tp, LC fn, QT fn, OG DT TI tp; then pred: PS matched, OG fp, DT fp, OG DT TI matched, PS fp
    # (a matched prediction is no row of the counts: its gold twin is the tp).
    assert ents["side"].tolist() == ["gold"] * 6 + ["pred"] * 7
    assert entity_rows(ents).tolist() == [0, 2, 2, 0, 0, 0, -1, 1, 1, -1, -1, -1, 1]
    # Hugging Face's type order: DT LC OG PS QT TI.
    assert type_codes(ents["label"]).tolist() == [3, 1, 4, 2, 0, 5, 3, 2, 0, 2, 0, 5, 3]
    frame = pd.DataFrame({"side": ["gold", "pred", "gold", "pred"], "matched": [True, True, False, False]})
    assert entity_rows(frame).tolist() == [0, -1, 2, 1]
    assert type_codes(pd.Series(["QT", "XX", None, "PS", "QT"])).tolist() == [4, -1, -1, 3, 4]


def test_entity_slice_aggregate_by_hand(result):
    ner = get_task("ner")
    ents = result.frames.details["entities"]
    stats = ner.detail_statistics("entities", ents)
    scores = {k: float(v[0]) for k, v in stats.scores(stats.totals()).items()}
    # matched gold 4, unmatched pred 3, unmatched gold 2, matched pred 4.
    assert scores["precision"] == pytest.approx(100 * 4 / 7)
    assert scores["recall"] == pytest.approx(100 * 4 / 6)
    assert scores["f1"] == pytest.approx(100 * 8 / 13)
    pred_only = ents[ents["side"] == "pred"].reset_index(drop=True)
    stats = ner.detail_statistics("entities", pred_only)
    scores = {k: float(v[0]) for k, v in stats.scores(stats.totals()).items()}
    assert scores["precision"] == pytest.approx(100 * 4 / 7)
    assert np.isnan(scores["recall"])
    summed = np.array([[3.0, 1.0, 2.0, 3.0], [0.0, 0.0, 0.0, 0.0]])
    out = entity_slice_aggregate(summed)
    assert out["precision"][0] == pytest.approx(75.0) and out["recall"][0] == pytest.approx(60.0)
    assert out["f1"][0] == pytest.approx(100 * 6 / 9)
    assert all(np.isnan(out[k][1]) for k in ("precision", "recall", "f1"))


def test_entity_sentences_by_hand():
    examples = pd.Series(["a", "b", "c"])
    assert entity_sentences(examples, pd.Series(["c", "a", "x", "c"])).tolist() == [2, 0, -1, 2]
    assert entity_sentences(examples, pd.Series([], dtype=object)).tolist() == []
    strings = pd.Series(["a", "b", "c"], dtype="string")
    assert entity_sentences(strings, pd.Series(["b", None, "a"], dtype="string")).tolist() == [1, -1, 0]
    # Repeated example guids: get_indexer's own answer (it refuses a non-unique index).
    with pytest.raises(Exception, match="unique"):
        entity_sentences(pd.Series(["a", "a"]), pd.Series(["a"]))
    assert entity_sentences(pd.Series(["a", None]), pd.Series(["a", "z"])).tolist() == [0, -1]


def test_tags_from_entities_names_a_field_that_is_no_list_or_no_integer():
    with pytest.raises(RecordError) as err:
        tags_from_entities("abcd", "PS")
    assert str(err.value) == "entities must be a JSON list, found str: 'PS'"
    with pytest.raises(RecordError) as err:
        tags_from_entities("abcd", [{"start": "a", "end": 2, "label": "PS"}])
    assert str(err.value).startswith("entities[0].start must be an integer")
    with pytest.raises(RecordError) as err:
        tags_from_entities("abcd", [{"start": 0, "end": [2], "label": "PS"}])
    assert str(err.value).startswith("entities[0].end must be an integer")


def test_markup_to_plain_keeps_a_bracket_that_is_never_closed():
    assert markup_to_plain("<서울:LCx") == "<서울:LCx"
    assert markup_to_plain("a <서울:LC") == "a <서울:LC"


def test_entity_offsets_and_texts_in_later_sentences(result):
    """Each entity's start/end are positions in its own sentence (spaces counted), not in the run's characters."""
    ents = result.frames.details["entities"]
    gold = ents[ents["side"] == "gold"]
    assert list(zip(gold["guid"], gold["start"], gold["end"], gold["text"])) == [
        (GUID.format(0), 0, 2, "박씨"), (GUID.format(0), 3, 5, "서울"), (GUID.format(2), 0, 2, "32"),
        (GUID.format(4), 0, 4, "한국은행"), (GUID.format(4), 5, 7, "오늘"), (GUID.format(4), 8, 10, "세시"),
    ]


def test_entity_rows_sentences_and_types_are_integer_positions():
    """They index the statistics' rows and columns, so they are integers (a float array cannot index)."""
    frame = pd.DataFrame({"side": ["gold", "pred"], "matched": [True, False]})
    assert entity_rows(frame).dtype == np.int64
    assert type_codes(pd.Series(["PS", "XX"])).dtype == np.int64
    assert entity_sentences(pd.Series(["a", "b"]), pd.Series(["b", "q"])).dtype == np.int64
    assert entity_sentences(pd.Series(["a", None]), pd.Series(["a", "z"])).dtype == np.int64


# ---- second mutation run: the prediction reader, the gold row, the characters, scores on part of a run -------------
# Tag ids by hand from NER_TAGS' order: B-DT 0, I-DT 1, B-LC 2, I-LC 3, B-OG 4, I-OG 5, B-PS 6, I-PS 7, ..., O 12.


def _refused(call) -> str:
    with pytest.raises(RecordError) as err:
        call()
    return str(err.value)


def test_parse_prediction_each_field_and_refusal():
    ner = get_task("ner")
    gold = {"sentence": "박씨 말"}  # four characters, the space included
    # entities first: a clean list gives the tags themselves, not a Repaired
    clean = ner.parse_prediction({"entities": [{"start": 0, "end": 2, "label": "PS"}]}, gold)
    assert type(clean) is bytes and clean == bytes([6, 7, 12, 12])
    # empty entities ("" or None) fall through to the tags
    for empty in ("", None):
        assert ner.parse_prediction({"entities": empty, "tags": ["B-LC", "I-LC", "O", "O"]}, gold) == bytes([2, 3, 12, 12])
    # Hugging Face's field name, with ids; tags win over ner_tags
    assert ner.parse_prediction({"ner_tags": [4, 5, 12, 12]}, gold) == bytes([4, 5, 12, 12])
    assert ner.parse_prediction({"tags": [0, 1, 12, 12], "ner_tags": [4, 5, 12, 12]}, gold) == bytes([0, 1, 12, 12])
    assert ner.parse_prediction({"tags": bytes([6, 7, 12, 12])}, gold) == bytes([6, 7, 12, 12])
    assert _refused(lambda: ner.parse_prediction({"tags": bytes([12] * 3)}, gold)) == (
        "tags has 3 tags, expected 4 (one per character of the sentence, spaces included)")
    assert _refused(lambda: ner.parse_prediction({"tags": ["O", "O", "X-PS", "O"]}, gold)) == (
        "tags[2] 'X-PS' is not a KLUE-NER tag (B-/I- with DT, LC, OG, PS, QT, TI, or O, or an id 0..12)")
    assert _refused(lambda: ner.parse_prediction({"tags": [12, 12, 12]}, gold)) == (
        "tags has 3 tags, expected 4 (one per character of the sentence, spaces included)")
    missing = "missing field 'entities' (list of {start, end, label}) or 'tags' (one BIO tag per character)"
    for record in ({}, {"tags": ""}, {"tags": None}, {"entities": "", "ner_tags": ""}):
        assert _refused(lambda record=record: ner.parse_prediction(record, gold)) == missing


def test_tag_ids_names_a_field_that_is_no_list():
    assert _refused(lambda: tag_ids("OOO", "ner_tags", 3)) == "ner_tags must be a JSON list, found str: 'OOO'"


def test_gold_row_source_needs_three_dashes():
    ner = get_task("ner")
    assert ner._row("klue-ner-v1_dev_00001-wikitree", "a", b"\x0c")["source"] == "wikitree"
    assert ner._row("ner-v1_dev_00001-news", "a", b"\x0c")["source"] == "(unknown)"  # two dashes only
    assert ner._row("x", "a", b"\x0c") == {"guid": "x", "sentence": "a", "tags": b"\x0c", "source": "(unknown)"}


def test_characters_skip_spaces_and_keep_sentence_numbers_small():
    from klue_viz.tasks.ner import Characters

    chars = Characters(["가 나", "다"], [bytes([6, 12, 7]), bytes([2])], [bytes([12, 12, 12]), bytes([3])])
    assert chars.sentence.tolist() == [0, 0, 1] and chars.gold.tolist() == [6, 7, 2] and chars.pred.tolist() == [12, 12, 3]
    assert chars.sentence.dtype == np.int32  # a run holds tens of millions of characters
    assert chars.offsets().tolist() == [0, 2, 0]


def test_scores_of_part_of_a_run_keep_its_index(result):
    from klue_viz.core.results import Frames

    ner = get_task("ner")
    part = Frames(result.frames.examples.iloc[[0, 4]], result.frames.details)  # sentences 0 and 4: F1 0.5 and 6/7
    assert list(ner.example_scores(part).items()) == [(0, pytest.approx(0.5)), (4, pytest.approx(6 / 7))]
    assert list(entity_f1(part).items()) == [(0, pytest.approx(50.0)), (4, pytest.approx(600 / 7))]
