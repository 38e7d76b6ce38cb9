"""KLUE-RE's task module (tasks/re.py) piece by piece on inputs made by hand (issue 14's mutation run: each test pins
what a survivor showed untested; every expected value is counted by hand in the test)."""

from __future__ import annotations

import pandas as pd
import pytest

import klue_viz.tasks.re as re_task
from klue_viz.scoring.evaluate import evaluate_bytes
from klue_viz.tasks import get_task
from klue_viz.tasks.base import RecordError
from tests.cases import gold_of
from tests.conftest import jsonl

TASK = get_task("re")


def test_relation_forms_names_tails_and_korean_names():
    forms = re_task.relation_forms()
    assert forms["org:top members/employees"] == "org:top_members/employees"
    # a tail only one relation has, with and without underscores; a tail two relations share is no form
    assert forms["top_members/employees"] == forms["top members/employees"] == "org:top_members/employees"
    assert forms["founded"] == "org:founded" and forms["date of birth"] == "per:date_of_birth"
    assert "alternate_names" not in forms and "alternate names" not in forms and "product" not in forms
    assert "no_relation" not in forms and forms["no relation"] == "no_relation"  # no_relation's own tail is left out
    # the Korean names, 단체:/인물: also written 조직:/사람:
    assert forms["단체:주요 구성원"] == forms["조직:주요 구성원"] == forms["대표"] == "org:top_members/employees"
    assert forms["인물:생년월일"] == forms["사람:생년월일"] == "per:date_of_birth"
    assert "조직:생년월일" not in forms and "사람:설립일" not in forms


def test_entity_offsets_inclusive_python_syntax_and_refusals():
    record = {"sentence": "가나다", "subject_entity": "{'word': '가나', 'start_idx': 0, 'end_idx': 1, 'type': 'PER'}",
              "object_entity": {"word": "다", "start_idx": 2, "end_idx": 2, "type": "ORG"}}
    assert re_task.entity(record, "subject_entity") == {"word": "가나", "start": 0, "end": 2, "type": "PER"}
    assert re_task.entity(record, "object_entity") == {"word": "다", "start": 2, "end": 3, "type": "ORG"}  # one character

    def refusal(value) -> str:
        with pytest.raises(RecordError) as err:
            re_task.entity({**record, "object_entity": {"word": "x", "type": "ORG", **value}}, "object_entity")
        return str(err.value)

    assert refusal({"start_idx": 1, "end_idx": 3}) == "object_entity offsets 1..3 fall outside the sentence"
    assert refusal({"start_idx": 2, "end_idx": 1}) == "object_entity offsets 2..1 fall outside the sentence"
    assert refusal({"start_idx": "x", "end_idx": 1}) == "object_entity.start_idx must be an integer, found 'x'"
    assert refusal({"start_idx": 0, "end_idx": "y"}) == "object_entity.end_idx must be an integer, found 'y'"


def test_training_keys_overlap_and_the_hugging_face_test():
    rows = [{"subject": {"word": "홍길동"}, "object": {"word": "한국대학교"}}, {"subject": {"word": "가"}, "object": {"word": "나"}}]
    assert list(re_task.training_keys(rows)) == [("홍길동", "한국대학교"), ("가", "나")]
    units = pd.DataFrame({"subject": [r["subject"] for r in rows], "object": [r["object"] for r in rows]})
    assert re_task.unit_training_keys(units) == [("홍길동", "한국대학교"), ("가", "나")]
    span = {"start": 0, "end": 3}
    assert re_task._overlap(span, {"start": 2, "end": 5}) and re_task._overlap({"start": 2, "end": 5}, span)
    assert not re_task._overlap(span, {"start": 3, "end": 5}) and not re_task._overlap({"start": 3, "end": 5}, span)  # touching
    assert not re_task._overlap(span, {"start": 5, "end": 7}) and not re_task._overlap({"start": 5, "end": 7}, span)
    assert TASK.looks_like_hf({"label": 3}) and not TASK.looks_like_hf({"label": "no_relation"})


def _record(k: int, sentence: str, label, **extra) -> dict:
    return {"guid": f"klue-re-v1_dev_{k:05d}", "sentence": sentence, "label": label,
            "subject_entity": {"word": sentence[0], "start_idx": 0, "end_idx": 0, "type": "PER"},
            "object_entity": {"word": sentence[1], "start_idx": 1, "end_idx": 1, "type": "ORG"}, **extra}


def test_hugging_face_row_fields_and_the_gold_label_refusal():
    row = TASK.hf_row(_record(0, "가나다", "org:founded"))
    assert (row["sentence"], row["source"], row["type_pair"], row["relation_group"]) == ("가나다", "(unknown)", "PER-ORG", "org")
    row = TASK.hf_row(_record(1, "가나다", 0, source="wikitree"))
    assert (row["gold"], row["source"], row["relation_group"]) == ("no_relation", "wikitree", "no_relation")
    with pytest.raises(RecordError) as err:
        TASK.hf_row(_record(2, "가나다", "friend"))
    assert str(err.value).startswith("gold label 'friend' is not a RE label")


def test_frame_error_types_and_sentence_lengths():
    lengths = [50, 51, 100, 101, 150, 151]
    golds = ["org:founded", "org:founded", "no_relation", "per:origin", "no_relation", "org:founded"]
    preds = ["org:founded", "no_relation", "per:origin", "org:founded", "no_relation", "per:origin"]
    records = [_record(k, "가나" + "다" * (n - 2), g, source="wikipedia") for k, (n, g) in enumerate(zip(lengths, golds))]
    gold = gold_of("re", records)
    data = jsonl([{"guid": r["guid"], "label": p} for r, p in zip(records, preds)])
    ex = evaluate_bytes(TASK, gold, data, "run.jsonl").frames.examples
    assert ex["error_type"].tolist() == ["correct", "missed relation", "spurious relation", "wrong relation", "correct",
                                         "wrong relation"]
    assert ex["sentence_length"].tolist() == ["1-50 chars", "51-100 chars", "51-100 chars", "101-150 chars",
                                              "101-150 chars", "151+ chars"]
