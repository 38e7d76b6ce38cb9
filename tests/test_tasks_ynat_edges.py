"""YNAT's own code (tasks/ynat.py): which records are Hugging Face's, the gold row and the frame's two columns, on
records made by hand (issue 14's mutation run: each test pins what a survivor showed untested; values counted by hand)."""

from __future__ import annotations

import pandas as pd
import pytest

from klue_viz.tasks import get_task
from klue_viz.tasks.base import RecordError

TASK = get_task("ynat")


def test_looks_like_hf_needs_no_annotations_and_a_label_that_is_no_name():
    assert TASK.looks_like_hf({"label": 3}) is True
    assert TASK.looks_like_hf({}) is True  # no label at all: not the official shape either
    assert TASK.looks_like_hf({"label": "사회"}) is False  # the official files name the topic
    assert TASK.looks_like_hf({"label": 3, "annotations": {}}) is False  # only the official records carry annotations
    assert TASK.looks_like_hf({"annotations": None}) is False


def test_hf_row_every_field():
    record = {"guid": 17, "title": 123, "label": 5, "predefined_news_category": "스포츠", "date": "2016.06.30. 오전 10:36",
              "url": "https://a.b/c",
              "annotations": {"annotations": {"first-scope": ["스포츠", "스포츠", "세계"]}}}
    assert TASK.hf_row(record) == {
        "guid": "17", "title": "123", "gold": "스포츠",  # id 5 of IT과학, 경제, 사회, 생활문화, 세계, 스포츠, 정치
        "predefined_news_category": "스포츠", "date": "2016.06.30. 오전 10:36",
        "month": "2016.06",  # the first 8 characters "2016.06." without the final period
        "url": "https://a.b/c", "votes": ["스포츠", "스포츠", "세계"], "agreement": "2/3 agree"}


def test_hf_row_defaults():
    row = TASK.hf_row({"guid": "g", "title": "t", "label": "정치"})
    assert row == {"guid": "g", "title": "t", "gold": "정치", "predefined_news_category": "(unknown)", "date": "",
                   "month": "(unknown)", "url": "", "votes": [], "agreement": "(no votes)"}
    empty = TASK.hf_row({"guid": "g", "title": "t", "label": 0, "predefined_news_category": "", "date": None, "url": None,
                         "annotations": {"annotations": {"first-scope": None}}})
    assert (empty["gold"], empty["predefined_news_category"], empty["date"], empty["month"], empty["url"],
            empty["votes"], empty["agreement"]) == ("IT과학", "(unknown)", "", "(unknown)", "", [], "(no votes)")
    # annotations without their inner dict, and a month shorter than 8 characters kept whole but its final period
    short = TASK.hf_row({"guid": "g", "title": "t", "label": 1, "date": "2019.1.", "annotations": {"annotations": None}})
    assert (short["month"], short["votes"], short["agreement"]) == ("2019.1", [], "(no votes)")
    # only periods are peeled: a malformed date keeps its other last characters
    assert TASK.hf_row({"guid": "g", "title": "t", "label": 1, "date": "2019.0X"})["month"] == "2019.0X"
    # votes given as a tuple become a list; none agreeing is 0/2
    none = TASK.hf_row({"guid": "g", "title": "t", "label": 1, "annotations": {"annotations": {"first-scope": ("사회", "세계")}}})
    assert none["votes"] == ["사회", "세계"] and isinstance(none["votes"], list) and none["agreement"] == "0/2 agree"


def test_hf_row_refuses_a_bad_gold_label_by_its_name():
    with pytest.raises(RecordError) as err:
        TASK.hf_row({"guid": "g", "title": "t", "label": 7})
    assert str(err.value) == "gold label id 7 is outside 0..6 (YNAT topic classification has 7 labels)"
    with pytest.raises(KeyError):
        TASK.hf_row({"guid": "g", "label": 1})  # no title
    with pytest.raises(KeyError):
        TASK.hf_row({"title": "t", "label": 1})  # no guid


def test_build_frames_title_length_and_script_buckets():
    titles = ["가" * 20, "가" * 21, "a" * 30, "1" * 31, "漢" * 40, "가a1漢" * 10 + "!", "", "!!"]
    # lengths 20 | 21 | 30 | 31 | 40 | 41 | 0 | 2: buckets of (0, 20], (20, 30], (30, 40], (40, inf); 0 falls outside
    gold = pd.DataFrame({"guid": [f"g{k}" for k in range(len(titles))], "title": titles, "gold": ["사회"] * len(titles)})
    preds = [{"label": "사회", "probs": None} for _ in titles]
    frame = TASK.build_frames(gold, preds).examples
    assert list(frame["title_length"].astype(object).fillna("NA")) == [
        "1-20 chars", "21-30 chars", "21-30 chars", "31-40 chars", "31-40 chars", "41+ chars", "NA", "1-20 chars"]
    assert str(frame["title_length"].dtype) == "string"
    assert list(frame["title_script"]) == ["Hangul", "Hangul", "Latin", "digits", "Hanja", "Hangul+Hanja+Latin+digits",
                                           "other", "other"]
    assert str(frame["title_script"].dtype) == "string"
    assert list(frame["correct"]) == [True] * len(titles)
