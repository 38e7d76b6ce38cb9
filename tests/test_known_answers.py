"""Small cases whose official metric values were worked out by hand (the arithmetic is in the comments)."""

from __future__ import annotations

import json

import pytest

from klue_viz.scoring.evaluate import evaluate_bytes, gold_from_bytes
from klue_viz.tasks import get_task
from klue_viz.tasks.re import RELATIONS
from tests.conftest import jsonl


def gold_json(task: str, records) -> object:
    return gold_from_bytes(get_task(task), json.dumps(records, ensure_ascii=False).encode(), f"{task}-gold.json")


def ynat_record(k, label):
    return {"guid": f"ynat-v1_dev_{k:05d}", "title": f"제목 {k}", "label": label, "predefined_news_category": label, "url": "", "date": ""}


def test_ynat_macro_f1_by_hand():
    gold = gold_json("ynat", [ynat_record(k, g) for k, g in enumerate(["정치", "정치", "경제", "사회"])])
    preds = [{"guid": f"ynat-v1_dev_{k:05d}", "label": p} for k, p in enumerate(["정치", "경제", "경제", "정치"])]
    # 정치: tp1 fp1 fn1 -> 2/4; 경제: tp1 fp1 -> 2/3; 사회: fn1 -> 0; mean of the three classes seen.
    result = evaluate_bytes(get_task("ynat"), gold, jsonl(preds), "p.jsonl")
    assert result.scores.values["macro_f1"] == pytest.approx(100 * (0.5 + 2 / 3 + 0) / 3)


def test_ynat_all_correct_all_wrong_and_integer_ids():
    gold = gold_json("ynat", [ynat_record(k, g) for k, g in enumerate(["IT과학", "경제", "정치"])])
    ynat = get_task("ynat")
    ids = [{"guid": f"ynat-v1_dev_{k:05d}", "label": i} for k, i in enumerate([0, 1, 6])]  # HF order: 0 IT과학, 1 경제, 6 정치
    assert evaluate_bytes(ynat, gold, jsonl(ids), "p.jsonl").scores.values["macro_f1"] == 100.0
    wrong = [{"guid": f"ynat-v1_dev_{k:05d}", "label": "스포츠"} for k in range(3)]
    assert evaluate_bytes(ynat, gold, jsonl(wrong), "p.jsonl").scores.values["macro_f1"] == 0.0


def re_record(k, label):
    sentence = "홍길동은 한국대학교를 졸업했다."
    return {"guid": f"klue-re-v1_dev_{k:05d}", "sentence": sentence, "label": label, "source": "wikipedia",
            "subject_entity": {"word": "홍길동", "start_idx": 0, "end_idx": 2, "type": "PER"},
            "object_entity": {"word": "한국대학교", "start_idx": 5, "end_idx": 9, "type": "ORG"}}


def test_re_micro_f1_leaves_out_no_relation():
    gold = gold_json("re", [re_record(k, g) for k, g in enumerate(["per:title", "no_relation", "org:founded", "no_relation"])])
    preds = [{"guid": f"klue-re-v1_dev_{k:05d}", "label": p} for k, p in enumerate(["per:title", "per:title", "no_relation", "no_relation"])]
    # tp 1 (per:title), fp 1 (per:title for no_relation), fn 1 (org:founded missed); no_relation/no_relation counts nowhere.
    scores = evaluate_bytes(get_task("re"), gold, jsonl(preds), "p.jsonl").scores
    assert scores.values["micro_f1"] == pytest.approx(50.0)
    assert scores.values["auprc"] is None and "probs" in scores.reasons["auprc"]


def test_re_auprc_perfect_and_uninformative():
    gold = gold_json("re", [re_record(k, label) for k, label in enumerate(RELATIONS)])
    onehot = [{"guid": f"klue-re-v1_dev_{k:05d}", "label": label, "probs": [float(j == k) for j in range(30)]} for k, label in enumerate(RELATIONS)]
    assert evaluate_bytes(get_task("re"), gold, jsonl(onehot), "p.jsonl").scores.values["auprc"] == pytest.approx(100.0)
    # Equal probabilities: one threshold, precision 1/30 at recall 1, plus the (0, 1) end: (1 + 1/30) / 2 per class.
    flat = [{"guid": f"klue-re-v1_dev_{k:05d}", "probs": {label: 1 / 30 for label in RELATIONS}} for k in range(30)]
    scores = evaluate_bytes(get_task("re"), gold, jsonl(flat), "p.jsonl").scores
    assert scores.values["auprc"] == pytest.approx(100 * (1 + 1 / 30) / 2)


def mrc_gold(questions):
    data = {"version": "v1.1", "data": [{"title": "t", "source": "wikipedia", "paragraphs": [{"context": "뉴 740Li 25주년 에디션 (주)카카오 《토지》 서울특별시", "qas": [
        {"question": f"질문 {k}", "guid": f"klue-mrc-v1_dev_{k:05d}", "question_type": 3 if not answers else 1,
         "is_impossible": not answers, "answers": [{"text": a, "answer_start": 0} for a in answers]}
        for k, answers in enumerate(questions)]}]}]}
    return gold_from_bytes(get_task("mrc"), json.dumps(data, ensure_ascii=False).encode(), "mrc.json")


def test_mrc_exact_match_and_rouge_w_by_hand():
    gold = mrc_gold([["뉴 740Li 25주년 에디션"], [], [], ["(주)카카오"], ["《토지》"], ["서울", "서울특별시"]])
    answers = ["뉴 740Li", "", "abc", "주카카오", "토지", "서울특별시"]
    # 1: longest common substring 7 of 7 and 16 chars -> F1 2*(7/16)/(23/16) = 14/23; 2: "" vs "" -> 1; 3: answer to an
    # unanswerable -> 0; 4: ASCII '()' dropped -> EM; 5: 《》 kept -> EM 0, F1 2*(1*.5)/1.5; 6: best of two golds.
    result = evaluate_bytes(get_task("mrc"), gold, json.dumps({f"klue-mrc-v1_dev_{k:05d}": a for k, a in enumerate(answers)}, ensure_ascii=False).encode(), "predictions.json")
    assert result.scores.values["exact_match"] == pytest.approx(50.0)
    assert result.scores.values["rouge_w"] == pytest.approx(100 * (14 / 23 + 1 + 0 + 1 + 2 / 3 + 1) / 6)
    types = result.frames.examples.set_index("guid")["error_type"]
    assert types["klue-mrc-v1_dev_00002"] == "should be unanswerable"
    assert types["klue-mrc-v1_dev_00000"] == "partial overlap"


def test_mrc_hf_gold_treats_impossible_questions_as_empty_even_with_plausible_answers():
    mrc = get_task("mrc")
    record = {"title": "t", "context": "서울은 수도이다.", "news_category": None, "source": "wikipedia", "guid": "klue-mrc-v1_dev_00000",
              "is_impossible": True, "question_type": 3, "question": "부산은?", "answers": {"answer_start": [0], "text": ["서울"]}}
    gold = gold_from_bytes(mrc, jsonl([record]), "mrc-hf.jsonl")
    scores = evaluate_bytes(mrc, gold, jsonl([{"guid": "klue-mrc-v1_dev_00000", "answer": ""}]), "p.jsonl").scores
    assert scores.values == {"exact_match": 100.0, "rouge_w": 100.0}


def wos_gold(states):
    dialogue = []
    for state in states:
        dialogue += [{"role": "user", "text": "요청", "state": state}, {"role": "sys", "text": "응답"}]
    return gold_json("wos", [{"guid": "wos-v1_dev_00000", "domains": ["식당"], "dialogue": dialogue}])


def test_wos_joint_goal_and_mean_turn_f1_by_hand():
    both = ["식당-가격대-dontcare", "식당-지역-서울 동쪽"]
    gold = wos_gold([[], both, both])
    preds = [[], ["식당-가격대-dontcare"], both + ["택시-도착지-none"]]
    # turn 0: empty/empty -> joint, F1 1; turn 1: P 1, R 1/2 -> F1 2/3; turn 2: a 'none' item is a false positive -> P 2/3, R 1 -> F1 0.8
    result = evaluate_bytes(get_task("wos"), gold, jsonl({"guid": "wos-v1_dev_00000", "turn": t, "state": s} for t, s in enumerate(preds)), "p.jsonl")
    assert result.scores.values["joint_goal_acc"] == pytest.approx(100 / 3)
    assert result.scores.values["slot_micro_f1"] == pytest.approx(100 * (1 + 2 / 3 + 0.8) / 3)
    assert result.frames.examples["first_break"].tolist() == [False, True, False]
    slots = result.frames.details["slots"]
    assert sorted(slots["status"]) == ["correct", "correct", "correct", "extra", "missing"]


def test_wos_empty_gold_with_a_predicted_slot_scores_zero():
    gold = wos_gold([[]])
    result = evaluate_bytes(get_task("wos"), gold, json.dumps({"wos-v1_dev_00000-0": ["관광-이름-남산"]}, ensure_ascii=False).encode(), "p.json")
    assert result.scores.values == {"joint_goal_acc": 0.0, "slot_micro_f1": 0.0}


NER_TSV = "## 칼럼명 : CHAR\tNE_TAG\n## klue-ner-v1_dev_00000-wikitree\t<박지성:PS> <서울:LC>\n박\tB-PS\n지\tI-PS\n성\tI-PS\n \tO\n서\tB-LC\n울\tI-LC\n\n"


def test_ner_character_and_entity_f1_by_hand():
    ner = get_task("ner")
    gold = gold_from_bytes(ner, NER_TSV.encode(), "ner.tsv")
    pred = {"guid": "klue-ner-v1_dev_00000-wikitree", "entities": [{"start": 0, "end": 2, "label": "PS"}, {"start": 4, "end": 6, "label": "OG"}]}
    result = evaluate_bytes(ner, gold, jsonl([pred]), "p.jsonl")
    # No entity matches: PS, LC and OG each score 0.
    assert result.scores.values["entity_macro_f1"] == 0.0
    # With the [CLS]/[SEP] O pair: O 4/5, B-PS 1, I-PS 2/3, B-LC I-LC B-OG I-OG 0, six absent tags 1 each; over 13 tags.
    assert result.scores.values["character_macro_f1"] == pytest.approx(100 * (0.8 + 1 + 2 / 3 + 6) / 13)
    entities = result.frames.details["entities"].set_index(["side", "label"])["error_type"].to_dict()
    assert entities == {("gold", "PS"): "wrong boundary", ("gold", "LC"): "wrong type", ("pred", "PS"): "wrong boundary", ("pred", "OG"): "wrong type"}


def test_ner_orphan_inside_tags_are_not_entities_and_empty_prediction_is_nan_free():
    ner = get_task("ner")
    gold = gold_from_bytes(ner, NER_TSV.encode(), "ner.tsv")
    orphan = {"guid": "klue-ner-v1_dev_00000-wikitree", "tags": ["O", "I-PS", "I-PS", "O", "O", "O"]}
    result = evaluate_bytes(ner, gold, jsonl([orphan]), "p.jsonl")
    assert (result.frames.details["entities"]["side"] == "pred").sum() == 0
    empty = evaluate_bytes(ner, gold, jsonl([{"guid": "klue-ner-v1_dev_00000-wikitree", "entities": []}]), "p.jsonl")
    assert empty.scores.values["entity_macro_f1"] == 0.0


DP_TSV = "## 칼럼명 : INDEX\tWORD_FORM\tLEMMA\tPOS\tHEAD\tDEPREL\n## klue-dp-v1_dev_00000_wikitree\t철수가 밥을 먹다\n1\t철수가\t철수 가\tNNP+JKS\t2\tNP_SBJ\n2\t밥을\t밥 을\tNNG+JKO\t0\tVP\n3\t먹다\t먹 다\tVV+EF\t2\tVP_CMP\n\n"


def test_dp_four_metrics_by_hand():
    dp = get_task("dp")
    gold = gold_from_bytes(dp, DP_TSV.encode(), "dp.tsv")
    pred = {"guid": "klue-dp-v1_dev_00000_wikitree", "head": [2, 0, 1], "deprel": ["NP_OBJ", "VP", "X_AJT"]}
    values = evaluate_bytes(dp, gold, jsonl([pred]), "p.jsonl").scores.values
    # UAS: heads 2,0 right, 3rd wrong -> 2/3. Head classes {2: 2/3, 0: 1, 1: 0} -> 5/9.
    assert values["uas_micro_f1"] == pytest.approx(200 / 3)
    assert values["uas_macro_f1"] == pytest.approx(100 * 5 / 9)
    # LAS: only word 2 (VP) right -> 1/3; classes NP_SBJ 0, VP 1, others 0, NP_OBJ 0, PAD 0 -> 1/5.
    assert values["las_micro_f1"] == pytest.approx(100 / 3)
    assert values["las_macro_f1"] == pytest.approx(20.0)


def test_sts_constant_predictions_leave_pearson_undefined():
    records = [{"guid": f"klue-sts-v1_dev_{k:05d}", "source": "airbnb-rtt", "sentence1": "a", "sentence2": "b",
                "labels": {"label": g, "real-label": g, "binary-label": int(g >= 3)}} for k, g in enumerate([1.0, 3.0, 4.5])]
    gold = gold_json("sts", records)
    scores = evaluate_bytes(get_task("sts"), gold, jsonl({"guid": r["guid"], "score": 3.0} for r in records), "p.jsonl").scores
    assert scores.values["pearsonr"] is None and "constant" in scores.reasons["pearsonr"]
    # Threshold 3.0 inclusive on both sides: gold [0,1,1], pred [1,1,1] -> P 2/3, R 1 -> F1 0.8.
    assert scores.values["f1"] == pytest.approx(80.0)
