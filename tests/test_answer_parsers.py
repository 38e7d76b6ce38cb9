"""Known answers for every task's answer parser (docs/answer-parsers.md): generated texts a model writes, and what
a reader makes of them by hand, unreadable and ambiguous answers included."""

from __future__ import annotations

import json

import pytest

from klue_viz.reading.answers import UNREADABLE, strip_answer
from klue_viz.reading.demo import DEMO_BENCHMARK
from klue_viz.scoring.evaluate import evaluate_bytes, load_gold
from klue_viz.scoring.llm_outputs import ANSWER_SLICE
from klue_viz.scoring.slicing import slice_table
from klue_viz.tasks import TASKS

NLI = [
    ("거짓입니다.", "contradiction"),
    ("정답: 참", "entailment"),
    ('답변: "중립"\n설명: 전제는 참이지만 가설은 알 수 없다', "neutral"),
    ("  Entailment. ", "entailment"),
    ("The answer is contradiction.", "contradiction"),
    ("[거짓]", "contradiction"),
    ("**중립**", "neutral"),
    ("예", "entailment"),
    ("아니요, 그렇지 않습니다.", "contradiction"),
    ("2", "contradiction"),  # a Hugging Face id as the whole answer
    ("neutral", "neutral"),
    ("중립입니다. 전제가 참이어도 가설이 참인지는 알 수 없습니다.", "neutral"),  # explanation after the first sentence
]
NLI_UNREADABLE = [
    ("참 또는 거짓", "names 2 labels"),
    ("lol", "names no label"),
    ("", "empty"),
    ("가설은 참이 아니다", "names no label"),  # 참 inside 참이 is not the answer 참
    ("참고로 이 문제는 어렵다", "names no label"),  # 참 is not 참고
    ("[invalid]", "names no label"),
    ("7", "names no label"),  # no label has id 7
]


@pytest.mark.parametrize(("text", "label"), NLI)
def test_nli_answers(text, label):
    task = TASKS["nli"]
    answer = task.parse_answer(text, {})
    assert answer.readable, answer.reason
    assert task.parse_prediction(answer.fields, {})["label"] == label


@pytest.mark.parametrize(("text", "reason"), NLI_UNREADABLE)
def test_nli_unreadable_answers(text, reason):
    answer = TASKS["nli"].parse_answer(text, {})
    assert not answer.readable and reason in answer.reason


def test_the_used_part_of_the_text_is_marked():
    text = '정답: "거짓"입니다. 전제에서 흡연은 가능하다.'
    answer = TASKS["nli"].parse_answer(text, {})
    start, end = answer.span
    assert text[start:end] == "거짓"


@pytest.mark.parametrize(("text", "label"), [
    ("스포츠", "스포츠"), ("주제: 정치", "정치"), ("IT/과학", "IT과학"), ("IT", "IT과학"), ("생활/문화 기사입니다", "생활문화"),
    ("It is about sports.", "스포츠"), ("World", "세계"), ("0", "IT과학"), ("경제입니다.\n증시 관련 기사이므로 경제와 관련이 깊다", "경제"),
])
def test_ynat_answers(text, label):
    task = TASKS["ynat"]
    answer = task.parse_answer(text, {})
    assert answer.readable, answer.reason
    assert task.parse_prediction(answer.fields, {})["label"] == label


@pytest.mark.parametrize("text", ["경제, 정치", "날씨", "스포츠 또는 사회"])
def test_ynat_unreadable(text):
    assert not TASKS["ynat"].parse_answer(text, {}).readable


@pytest.mark.parametrize(("text", "label"), [
    ("per:employee_of", "per:employee_of"), ("인물:소속", "per:employee_of"), ("employee of", "per:employee_of"),
    ("관계 없음", "no_relation"), ("org:founded_by", "org:founded_by"), ("단체:설립자입니다. 왜냐하면 그가 세웠기 때문", "org:founded_by"),
    ("조직:설립일", "org:founded"), ("place of birth", "per:place_of_birth"), ("정답: per:title", "per:title"), ("0", "no_relation"),
])
def test_re_answers(text, label):
    task = TASKS["re"]
    answer = task.parse_answer(text, {})
    assert answer.readable, answer.reason
    assert task.parse_prediction(answer.fields, {})["label"] == label


@pytest.mark.parametrize("text", ["product", "per:spouse 또는 per:siblings", "모르겠다"])
def test_re_unreadable(text):
    """`product` is both org:product and per:product: naming no single relation."""
    assert not TASKS["re"].parse_answer(text, {}).readable


@pytest.mark.parametrize(("text", "score"), [
    ("3.5", 3.5), ("3.5점", 3.5), ("유사도: 4점 (5점 만점)", 4.0), ("5점 만점에 3점입니다.", 3.0), ("2.5/5", 2.5),
    ("점수는 3.2입니다. 두 문장은 2개의 단어가 다르다.", 3.2), ("0", 0.0), ("Score: 4.8 out of 5", 4.8),
])
def test_sts_answers(text, score):
    task = TASKS["sts"]
    answer = task.parse_answer(text, {"gold": 1.0})
    assert answer.readable, answer.reason
    assert task.parse_prediction(answer.fields, {})["score"] == score


@pytest.mark.parametrize("text", ["3 또는 4", "없음", "비슷하다", ""])
def test_sts_unreadable(text):
    assert not TASKS["sts"].parse_answer(text, {"gold": 1.0}).readable


def test_sts_unreadable_answer_is_wrong_on_both_sides_of_the_threshold():
    task = TASKS["sts"]
    assert task.unreadable_prediction({"gold": 4.2}) == {"score": 0.0, "binary": 0}
    assert task.unreadable_prediction({"gold": 1.0}) == {"score": 5.0, "binary": 1}


@pytest.mark.parametrize(("text", "answer"), [
    ("정답: 서울(한국)입니다.\n설명: 본문 셋째 문장", "서울(한국)"), ('"뉴 740Li 25주년 에디션"', "뉴 740Li 25주년 에디션"),
    ("답 없음", ""), ("unanswerable", ""), ("", ""), ("1446년", "1446년"),
])
def test_mrc_answers(text, answer):
    task = TASKS["mrc"]
    parsed = task.parse_answer(text, {})
    assert parsed.readable and task.parse_prediction(parsed.fields, {}) == answer


SENTENCE = "한국 교통대는 3일 충주에서 행사를 열었다."


@pytest.mark.parametrize(("text", "entities"), [
    ("<한국 교통대:OG>는 <3일:DT> <충주:LC>에서 행사를 열었다.", [(0, 6, "OG"), (8, 10, "DT"), (11, 13, "LC")]),
    ("<한국 교통대:OG>, <충주:LC>", [(0, 6, "OG"), (11, 13, "LC")]),
    ('[{"text": "충주", "label": "LOC"}]', [(11, 13, "LC")]),
    ('[["한국 교통대", "ORG"], ["3일", "DATE"]]', [(0, 6, "OG"), (8, 10, "DT")]),
    ("한국 교통대:OG\n3일:DT", [(0, 6, "OG"), (8, 10, "DT")]),
    ("1. 한국 교통대 (기관)\n2. 충주 (장소)", [(0, 6, "OG"), (11, 13, "LC")]),
    ("개체명: 없음", []),
    (SENTENCE, []),  # the sentence echoed without markup: no entity
])
def test_ner_answers(text, entities):
    answer = TASKS["ner"].parse_answer(text, {"sentence": SENTENCE})
    assert answer.readable, answer.reason
    assert [(e["start"], e["end"], e["label"]) for e in answer.fields["entities"]] == entities
    for (start, end, _), (a, b) in zip(entities, answer.used_spans()):
        assert SENTENCE[start:end] in text[a:b]


def test_ner_entity_not_in_the_sentence_is_left_out_and_listed():
    answer = TASKS["ner"].parse_answer('[{"text": "충주", "label": "LC"}, {"text": "서울", "label": "LC"}]', {"sentence": SENTENCE})
    assert answer.fields == {"entities": [{"start": 11, "end": 13, "label": "LC"}]}
    assert len(answer.notes) == 1 and "서울" in answer.notes[0]


@pytest.mark.parametrize("text", ["lol", "[[\"부산\", \"LC\"]]", "<부산:LC>에 갔다"])
def test_ner_unreadable(text):
    assert not TASKS["ner"].parse_answer(text, {"sentence": SENTENCE}).readable


@pytest.mark.parametrize(("text", "state"), [
    ('["식당-가격대-저렴", "관광-이름-명동 쇼핑 거리"]', ["식당-가격대-저렴", "관광-이름-명동 쇼핑 거리"]),
    ("상태:\n식당-가격대-저렴\n관광 - 이름 - 명동", ["식당-가격대-저렴", "관광-이름-명동"]),
    ('{"식당-가격대": "dontcare"}', ["식당-가격대-dontcare"]),
    ("없음", []),
    ("[]", []),
])
def test_wos_answers(text, state):
    task = TASKS["wos"]
    answer = task.parse_answer(text, {})
    assert answer.readable, answer.reason
    assert task.parse_prediction(answer.fields, {}) == state


@pytest.mark.parametrize("text", ["lol", '["가격대-저렴"]', "식당 예약"])
def test_wos_unreadable(text):
    assert not TASKS["wos"].parse_answer(text, {}).readable


@pytest.mark.parametrize("text", [
    "1\t유희열이\t2\tNP_SBJ\n2\t웃었다\t0\tVP",
    "설명: CoNLL 형식\n1 유희열이 2 NP_SBJ\n2 웃었다 0 VP\n끝.",
    '{"head": [2, 0], "deprel": ["NP_SBJ", "VP"]}',
])
def test_dp_answers(text):
    task = TASKS["dp"]
    answer = task.parse_answer(text, {"n_words": 2})
    assert answer.readable, answer.reason
    assert task.parse_prediction(answer.fields, {"n_words": 2}) == {"heads": [2, 0], "deprels": ["NP_SBJ", "VP"]}


@pytest.mark.parametrize(("text", "reason"), [("1 유희열이 2 NP_SBJ", "1 arcs for a sentence of 2 words"), ("lol", "no arcs")])
def test_dp_unreadable(text, reason):
    answer = TASKS["dp"].parse_answer(text, {"n_words": 2})
    assert not answer.readable and reason in answer.reason


@pytest.mark.parametrize(("text", "core"), [
    ('답변: "정답: 참"', "참"), ("  (가) 또는 (나) ", "(가) 또는 (나)"), ("서울(한국)", "서울(한국)"), ("Answer: B.", "B"),
])
def test_strip_answer(text, core):
    start, end = strip_answer(text)
    assert text[start:end] == core


def test_every_task_has_a_versioned_parser():
    for task in TASKS.values():
        assert task.answer_parser_version >= 1, task.facts.name


# ---- scoring: an unreadable answer is the model's answer, scored as wrong ------------------------------

def test_unreadable_answers_are_scored_as_wrong_and_counted():
    """Four demo NLI pairs answered in text: two right, one wrong, one naming two labels (by hand: 2 of 4 right)."""
    gold = load_gold(TASKS["nli"], DEMO_BENCHMARK)
    rows = gold.rows[:4]
    wrong = {"entailment": "거짓", "neutral": "참", "contradiction": "중립"}
    korean = {"entailment": "참", "neutral": "중립", "contradiction": "거짓"}
    lines = [
        {"guid": rows[0]["guid"], "generation": f"정답: {korean[rows[0]['gold']]}입니다."},
        {"guid": rows[1]["guid"], "response": korean[rows[1]["gold"]]},
        {"guid": rows[2]["guid"], "output": wrong[rows[2]["gold"]]},
        {"guid": rows[3]["guid"], "text": "참 또는 거짓"},
    ]
    data = "\n".join(json.dumps(line, ensure_ascii=False) for line in lines).encode()
    result = evaluate_bytes(TASKS["nli"], gold, data, "gen.jsonl")
    assert result.scores.values["accuracy"] == 50.0
    assert result.coverage.n_scored == 4 and result.coverage.unreadable_answers == 1 and result.coverage.n_invalid == 0
    assert [p.line for p in result.problems if "unreadable answer" in p.message] == [4]
    ex = result.frames.examples.set_index("guid")
    assert ex.loc[rows[3]["guid"], "pred"] == UNREADABLE and ex.loc[rows[3]["guid"], "error_type"] == UNREADABLE
    assert list(ex["answer_status"]) == ["read", "read", "read", UNREADABLE]
    assert not ex.loc[rows[3]["guid"], "correct"]
    assert TASKS["nli"].score(result.frames).values == result.scores.values  # the frames' path agrees with the rows' path
    table = slice_table(TASKS["nli"], result.frames, ANSWER_SLICE).set_index("value")
    assert table.loc["read", "n"] == 3 and table.loc["read", "errors"] == 1
    assert table.loc[UNREADABLE, "n"] == 1 and table.loc[UNREADABLE, "errors"] == 1


def test_strict_does_not_touch_unreadable_answers():
    gold = load_gold(TASKS["nli"], DEMO_BENCHMARK)
    data = json.dumps({"guid": gold.rows[0]["guid"], "generation": "모르겠어요"}).encode()
    strict = evaluate_bytes(TASKS["nli"], gold, data, "gen.jsonl", strict=True)
    assert strict.coverage.unreadable_answers == 1
    assert strict.coverage.n_missing == len(gold.rows) - 1 and strict.coverage.n_scored == len(gold.rows)
    assert strict.scores.values["accuracy"] == 0.0


def test_unreadable_ner_answer_counts_its_gold_entities_as_missed():
    """A demo NER sentence answered `lol`: scored as no entities (every gold entity missed), counted unreadable."""
    gold = load_gold(TASKS["ner"], DEMO_BENCHMARK)
    row = next(r for r in gold.rows if any(t != TASKS["ner"].empty_prediction(r)[0] for t in r["tags"]))
    data = json.dumps({"guid": row["guid"], "generation": "lol"}).encode()
    result = evaluate_bytes(TASKS["ner"], gold, data, "ner.jsonl")
    assert result.coverage.unreadable_answers == 1 and result.scores.values["entity_macro_f1"] == 0.0
    assert result.frames.examples["error_type"].tolist() == [UNREADABLE]
    assert TASKS["ner"].score(result.frames).values == result.scores.values


def test_unreadable_sts_answer_is_scored_on_the_wrong_side():
    gold = load_gold(TASKS["sts"], DEMO_BENCHMARK)
    low = next(r for r in gold.rows if r["gold"] < 3)
    high = next(r for r in gold.rows if r["gold"] >= 3)
    lines = [{"guid": low["guid"], "generation": "비슷하다"}, {"guid": high["guid"], "generation": "정답: 4.5점"}]
    data = "\n".join(json.dumps(line, ensure_ascii=False) for line in lines).encode()
    result = evaluate_bytes(TASKS["sts"], gold, data, "sts.jsonl")
    ex = result.frames.examples.set_index("guid")
    assert ex.loc[low["guid"], "pred"] == 5.0 and not ex.loc[low["guid"], "correct"] and ex.loc[high["guid"], "pred"] == 4.5
    assert result.coverage.unreadable_answers == 1 and TASKS["sts"].score(result.frames).values == result.scores.values
