"""KLUE-MRC's task module (tasks/mrc.py) piece by piece on inputs made by hand (issue 14's mutation run: each test pins
what a survivor showed untested; every expected value is counted by hand in the test)."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from klue_viz.core.problems import InputError
from klue_viz.core.results import Frames
from klue_viz.metrics.official import scalar
from klue_viz.scoring.evaluate import evaluate_bytes
from klue_viz.tasks import get_task, mrc
from klue_viz.tasks.base import RecordError
from tests.cases import gold_of
from tests.conftest import jsonl

TASK = get_task("mrc")


def _guid(k: int) -> str:
    return f"klue-mrc-v1_dev_{k:05d}"


def _qa(k: int, answers: list[str], **extra) -> dict:
    return {"question": f"질문 {k}", "guid": _guid(k), "question_type": 1 if answers else 3, "is_impossible": not answers,
            "answers": [{"text": a, "answer_start": 0} for a in answers], **extra}


# ---- the official file and Hugging Face rows -------------------------------------------------------


def test_official_rows_take_each_field_and_its_default():
    data = {"data": [
        {"title": "제목", "source": "news", "news_category": "경제", "paragraphs": [
            {"context": "서울은 수도이다", "qas": [
                # answerable, but flagged impossible: the flag wins; the span is start .. start + len(text)
                {"question": "어디?", "guid": "g0", "question_type": 2, "is_impossible": True,
                 "answers": [{"text": "수도", "answer_start": 4}]},
                # no flag and no question type: answerable, type "0"
                {"question": "무엇?", "guid": "g1", "answers": [{"text": "서울", "answer_start": 0}]},
                {"question": "언제?", "guid": "g2", "question_type": 7, "answers": []},  # no answer: impossible, type "7"
            ]},
            {"context": "문맥"},  # a paragraph without questions
        ]},
        {"paragraphs": [{"context": "둘째", "qas": [{"question": "왜?", "guid": "g3", "question_type": 1,
                                                       "answers": [{"text": "둘", "answer_start": 0}]}]}]},
        {"title": "빈 문서"},  # a document without paragraphs
    ]}
    rows, problems = TASK.read_official_json(data, "dev.json")
    assert problems == []
    assert [(r["guid"], r["question_type"], r["is_impossible"]) for r in rows] == [
        ("g0", "multi-sentence reasoning", True), ("g1", "0", False), ("g2", "7", True), ("g3", "paraphrase", False)]
    assert rows[0]["answer_spans"] == [(4, 6)] and rows[1]["answer_spans"] == [(0, 2)]
    assert {k: rows[0][k] for k in ("title", "source", "news_category", "context", "question", "answers", "gold_norm")} == {
        "title": "제목", "source": "news", "news_category": "경제", "context": "서울은 수도이다", "question": "어디?",
        "answers": ["수도"], "gold_norm": ["수도"]}
    assert (rows[3]["title"], rows[3]["source"], rows[3]["news_category"]) == ("", "(unknown)", "(none)")
    assert rows[2]["gold_norm"] == [""] and rows[2]["answers"] == []


def test_official_json_refusals_and_a_question_without_a_field():
    for bad in ([], {"data": 5}, {"version": "v1"}):
        with pytest.raises(InputError) as err:
            TASK.read_official_json(bad, "dev.json")
        assert str(err.value) == "dev.json: expected the official KLUE-MRC JSON object with a 'data' list of documents"
    data = {"data": [{"paragraphs": [{"qas": [{"question": "q", "guid": "g0", "answers": []}]},
                                     {"context": "c", "qas": [{"guid": "g1", "answers": []}]}]}]}
    rows, problems = TASK.read_official_json(data, "dev.json")
    assert rows == []
    assert [(p.message, p.guid, p.file) for p in problems] == [
        ("question without field 'context'", "g0", "dev.json"), ("question without field 'question'", "g1", "dev.json")]


def test_hugging_face_rows_answers_impossible_and_missing_fields():
    assert TASK.looks_like_hf({"context": "c"}) and not TASK.looks_like_hf({"context": "c", "paragraphs": []})
    assert not TASK.looks_like_hf({"paragraphs": []}) and not TASK.looks_like_hf({})
    records = [
        {"guid": "h0", "context": "서울은 수도", "question": "어디?", "question_type": 1,
         "answers": {"text": ["서울", "서울은"], "answer_start": [0, 0]}},
        {"guid": "h1", "context": "c", "question": "q", "question_type": 3, "is_impossible": True,
         "answers": {"text": ["c"], "answer_start": [0]}},  # the loader's plausible answer: dropped
        {"guid": "h2", "context": "c", "question": "q"},  # no answers field at all: unanswerable
        {"guid": "h3", "question": "q"},
    ]
    rows, problems = TASK.rows_from_hf(records)
    assert [(r["guid"], r["answers"], r["answer_spans"], r["is_impossible"]) for r in rows] == [
        ("h0", ["서울", "서울은"], [(0, 2), (0, 3)], False), ("h1", [], [], True), ("h2", [], [], True)]
    assert rows[0]["context"] == "서울은 수도" and rows[0]["question_type"] == "paraphrase"
    assert [(p.message, p.guid) for p in problems] == [("gold record #4: missing field 'context'", "h3")]


def test_training_keys_are_every_gold_answer_and_the_first_per_question():
    rows = [{"answers": ["서울", "한양"]}, {"answers": []}, {"answers": ["부산"]}]
    assert list(mrc.training_keys(rows)) == ["서울", "한양", "부산"]
    units = pd.DataFrame({"answers": [["서울", "한양"], [], ["부산"]]})
    keys = mrc.unit_training_keys(units)
    assert keys[0] == "서울" and pd.isna(keys[1]) and keys[2] == "부산"


# ---- predictions and generated answers -------------------------------------------------------------


def test_parse_prediction_fields_and_refusals():
    assert TASK.parse_prediction({"prediction_text": "서울"}, {}) == "서울"
    assert TASK.parse_prediction({"answer": 12, "prediction_text": "x"}, {}) == "12"
    assert TASK.parse_prediction({"answer": ""}, {}) == ""
    with pytest.raises(RecordError) as err:
        TASK.parse_prediction({"guid": "g"}, {})
    assert str(err.value) == "missing field 'answer' (the answer text; \"\" for no answer)"
    with pytest.raises(RecordError) as err:
        TASK.parse_prediction({"answer": ["서울"]}, {})
    assert str(err.value) == "answer must be text, found list"


@pytest.mark.parametrize(("text", "answer", "span"), [
    ("TAX.", "TAX", (0, 3)),                 # only spaces and periods are peeled off the end
    ("서울 입니다", "서울", (0, 2)),            # the closing 입니다 and the space before it
    ("\n서울", "서울", (1, 3)),                # the first line is looked for from the answer's start
    ("답: 부산\n왜냐하면", "부산", (3, 5)),      # a prefix, an explanation on the next line
    ('답: "부산"\n왜냐하면', "부산", (4, 6)),    # quoted on its line: neither quote mark is part of the answer
    ("「부산입니다.」\n설명", "부산", (1, 3)),    # a quoted sentence on the first line: quotes, period and 입니다 peeled
    ("답 없음", "", (0, 4)),                   # no answer, said in words: the span is the words
    ("  ", "", None),                        # nothing at all: no span
])
def test_parse_answer_text_fields_and_span(text, answer, span):
    parsed = TASK.parse_answer(text, {})
    assert (parsed.text, parsed.fields, parsed.span) == (text, {"answer": answer}, span)


# ---- frames, statistics, confusion, scores -----------------------------------------------------------


def _case():
    """Seven questions, each in its own passage of a chosen length (the passage lengths hit each bucket edge)."""
    long_gold, long_pred = "가" + "다" * 149, "가" + "나" * 149  # one common character: ROUGE-W F1 = 2/300
    items = [  # (gold answers, passage length, prediction)
        (["서울"], 500, "서울"),                          # correct
        (["한국의 수도"], 501, ""),                        # answered nothing
        ([], 1000, "서울"),                               # should be unanswerable
        ([long_gold], 1001, long_pred),                   # partial overlap, ROUGE-W 0.67 (below 1 on 0..100)
        (["ABCDEFGHIJ", "abc"], 1500, "zzz"),             # wrong span
        (["12345678901"], 1501, "12345678901"),           # correct
        (["가"], 20, ""),                                  # answered nothing
    ]
    documents = [{"title": f"t{k}", "source": "wikipedia", "paragraphs": [
        {"context": "라" * length, "qas": [_qa(k, answers)]}]} for k, (answers, length, _) in enumerate(items)]
    gold = gold_of("mrc", {"version": "v1.1", "data": documents})
    preds = [{"guid": _guid(k), "answer": pred} for k, (_, _, pred) in enumerate(items)]
    return gold, preds


def test_frame_columns_of_seven_questions():
    gold, preds = _case()
    ex = evaluate_bytes(TASK, gold, jsonl(preds), "run.jsonl").frames.examples
    assert ex["error_type"].tolist() == ["correct", "answered nothing", "should be unanswerable", "partial overlap",
                                         "wrong span", "correct", "answered nothing"]
    assert ex["em"].tolist() == [100.0, 0.0, 0.0, 0.0, 0.0, 100.0, 0.0]
    assert ex["rouge_w"].tolist()[:3] == [100.0, 0.0, 0.0] and ex["rouge_w"].iloc[3] == pytest.approx(100 * 2 / 300)
    assert ex["correct"].tolist() == [True, False, False, False, False, True, False]
    assert ex["gold"].tolist() == ["서울", "한국의 수도", "(unanswerable)", "가" + "다" * 149, "ABCDEFGHIJ | abc",
                                   "12345678901", "가"]
    # lengths 2, 6, none, 150, 10, 11, 1 in the buckets (-1, 0], (0, 5], (5, 10], (10, 20], (20, inf)
    assert ex["answer_length"].tolist() == ["1-5 chars", "6-10 chars", "unanswerable", "21+ chars", "6-10 chars",
                                            "11-20 chars", "1-5 chars"]
    assert ex["answer_script"].tolist() == ["Hangul", "Hangul", "unanswerable", "Hangul", "Latin", "digits", "Hangul"]
    assert ex["answer_script"].dtype == "string" and ex["answer_length"].dtype == "string"
    assert ex["context_length"].tolist() == ["1-500 chars", "501-1000 chars", "501-1000 chars", "1001-1500 chars",
                                             "1001-1500 chars", "1501+ chars", "1-500 chars"]
    assert TASK.example_scores(Frames(ex)).tolist()[:3] == [1.0, 0.0, 0.0]
    confusion = TASK.confusion(Frames(ex))
    assert confusion.to_dict("list") == {"guid": [_guid(k) for k in range(7)],
                                         "gold": ["answerable", "answerable", "unanswerable"] + ["answerable"] * 4,
                                         "pred": ex["error_type"].tolist()}


def test_statistics_from_the_declared_columns_only():
    gold, preds = _case()
    run = evaluate_bytes(TASK, gold, jsonl(preds), "run.jsonl")
    columns = TASK.statistics_columns()
    assert set(columns) == {"examples"}
    only = Frames(run.frames.examples[list(columns["examples"])])
    # EM 2/7; ROUGE-W (1 + 0 + 0 + 2/300 + 0 + 1 + 0) / 7
    statistics = TASK.statistics(only)
    assert scalar(statistics, "exact_match") == pytest.approx(100 * 2 / 7)
    assert scalar(statistics, "rouge_w") == pytest.approx(100 * (2 + 2 / 300) / 7)


# ---- suspects -------------------------------------------------------------------------------------------


def test_suspects_are_answers_every_run_gives_alike_and_wrongly():
    gold = gold_of("mrc", {"data": [{"paragraphs": [{"context": "서울 부산 대구", "qas": [
        _qa(0, ["부산"]), _qa(1, ["대구"]), _qa(2, ["서울"]), _qa(3, ["부산"])]}]}]})
    first = [{"guid": _guid(0), "answer": "서울."}, {"guid": _guid(1), "answer": ""}, {"guid": _guid(2), "answer": "서울"},
             {"guid": _guid(3), "answer": "대구"}]
    second = [{"guid": _guid(0), "answer": "서울"}, {"guid": _guid(1), "answer": ""}, {"guid": _guid(2), "answer": "서울"},
              {"guid": _guid(3), "answer": "서울"}]
    runs = [evaluate_bytes(TASK, gold, jsonl(r), f"run{k}.jsonl", run=f"run{k}") for k, r in enumerate((first, second))]
    found = TASK.find_suspects(runs)
    # question 0: "서울." and "서울" normalise alike: the first run's own text is proposed; 1: both answer nothing;
    # 2: right; 3: the runs disagree
    assert [(s.guid, s.turn, s.unit, s.gold, s.proposed, s.score) for s in found] == [
        (_guid(0), None, "answer", "부산", "서울.", 2.0), (_guid(1), None, "answer", "대구", "(unanswerable)", 2.0)]
    assert [(s.evidence.agreeing, s.evidence.of, dict(s.evidence.runs)) for s in found] == [
        (2, 2, {"run0": "서울.", "run1": "서울"}), (2, 2, {"run0": "", "run1": ""})]


# ---- the patch ------------------------------------------------------------------------------------------------


def test_patch_answers_unanswerable_and_refusals():
    long_answer = "없는" * 23  # 46 characters: the refusal quotes the first 40
    data = {"version": "v1.1", "data": [
        {"title": "t", "paragraphs": [
            {"context": "서울 부산 서울", "qas": [
                {**_qa(0, []), "plausible_answers": [{"text": "부산", "answer_start": 3}]},
                _qa(1, ["부산"]),
                _qa(2, ["서울"]),
                _qa(3, ["부산"]),
                _qa(4, ["부산"]),
            ]},
            {"context": "다른 문맥"},
        ]},
        {"title": "no paragraphs"},
    ]}
    corrections = {(_guid(0), None): ["(unanswerable)"], (_guid(1), None): [long_answer], (_guid(2), None): ["대구", "서울"],
                   (_guid(3), None): ["(unanswerable)"], (_guid(4), None): ["부산"]}
    problems: list = []
    text, count = TASK.write_patch(json.dumps(data, ensure_ascii=False), "dev.json", corrections, problems)
    out = json.loads(text)
    assert count == 4 and out["version"] == "v1.1" and len(out["data"]) == 1 and len(out["data"][0]["paragraphs"]) == 1
    qas = out["data"][0]["paragraphs"][0]["qas"]
    assert [q["guid"] for q in qas] == [_guid(0), _guid(2), _guid(3), _guid(4)]
    # an unanswerable question keeps its distractors; one made unanswerable keeps its old answers as distractors
    assert (qas[0]["answers"], qas[0]["plausible_answers"], qas[0]["is_impossible"]) == ([], [{"text": "부산", "answer_start": 3}], True)
    assert (qas[2]["answers"], qas[2]["plausible_answers"], qas[2]["question_type"]) == ([], [{"text": "부산", "answer_start": 0}], 3)
    # the last correction counts; its first occurrence is the span, at 0 too
    assert qas[1]["answers"] == [{"text": "서울", "answer_start": 0}] and qas[1]["is_impossible"] is False
    assert qas[3]["answers"] == [{"text": "부산", "answer_start": 3}]
    assert [(p.message, p.guid, p.file) for p in problems] == [
        (f"corrected answer {long_answer[:40]!r} is not in the passage", _guid(1), "dev.json")]
    with pytest.raises(InputError) as err:
        TASK.write_patch("{", "dev.json", corrections, [])
    assert str(err.value).startswith("dev.json: invalid JSON at line 1")


def test_patch_of_a_file_without_data_and_of_a_question_without_distractors():
    assert TASK.write_patch("{}", "dev.json", {}, []) == ('{\n  "data": []\n}\n', 0)
    # "data" first in the file: the other fields come first in the patch, the corrected data last
    data = {"data": [{"paragraphs": [{"context": "문맥", "qas": [_qa(0, [])]}]}], "version": "v1.1"}
    text, count = TASK.write_patch(json.dumps(data), "dev.json", {(_guid(0), None): ["(unanswerable)"]}, [])
    out = json.loads(text)
    assert count == 1 and list(out) == ["version", "data"]
    assert out["data"][0]["paragraphs"][0]["qas"][0]["plausible_answers"] == []  # neither answers nor distractors
