"""Known answers that tell each official formula apart from its nearest wrong neighbour.

Every expected value is worked out by hand (the arithmetic is in the comment) and each case is
built so that the plausible wrong variant named in its docstring gives a different number.
"""

from __future__ import annotations

import math

import pytest

from klue_viz.scoring.evaluate import evaluate_bytes
from klue_viz.tasks import get_task
from klue_viz.tasks.re import RELATIONS
from tests import cases
from tests.conftest import jsonl


def run(task: str, gold_content, records):
    return evaluate_bytes(get_task(task), cases.gold_of(task, gold_content), jsonl(records), "p.jsonl")


def values(task: str, gold_content, records) -> dict:
    return run(task, gold_content, records).scores.values


# ---- YNAT ---------------------------------------------------------------------------------------

def test_ynat_macro_runs_over_gold_and_predicted_classes_not_gold_only_or_all_seven():
    """Wrong neighbours: macro over gold classes only (66.67), over all 7 topics (9.52)."""
    preds = [{"guid": f"ynat-v1_dev_{k:05d}", "label": p} for k, p in enumerate(["정치", "경제"])]
    # 정치: tp 1, fn 1 -> 2/3; 경제 (predicted only): fp 1 -> 0; mean over {정치, 경제} = 1/3.
    assert values("ynat", cases.ynat(["정치", "정치"]), preds)["macro_f1"] == pytest.approx(100 / 3)


# ---- RE -----------------------------------------------------------------------------------------

def re_preds(labels, probs=None):
    out = []
    for k, label in enumerate(labels):
        record = {"guid": f"klue-re-v1_dev_{k:05d}", "label": label}
        if probs is not None and probs[k] is not None:
            record["probs"] = probs[k]
        out.append(record)
    return out


def test_re_micro_f1_ignores_agreeing_no_relation_pairs():
    """Wrong neighbour: no_relation counted as a class (= accuracy, 75)."""
    gold = ["no_relation", "no_relation", "no_relation", "per:title"]
    pred = ["no_relation", "no_relation", "no_relation", "org:founded"]
    # Without no_relation: tp 0, fp 1 (org:founded), fn 1 (per:title) -> 0. With it: 3 of 4 right -> 75.
    assert values("re", cases.re_records(gold), re_preds(pred))["micro_f1"] == 0.0


def test_re_micro_f1_no_relation_prediction_is_a_miss_not_a_false_positive():
    """Wrong neighbour: a predicted no_relation also counted as a false positive (50)."""
    gold = ["per:title", "per:title"]
    pred = ["per:title", "no_relation"]
    # tp 1, fp 0, fn 1 -> P 1, R 1/2 -> F1 2/3.
    assert values("re", cases.re_records(gold), re_preds(pred))["micro_f1"] == pytest.approx(200 / 3)


def onehot(label: str, weight: float = 1.0) -> list[float]:
    return [weight if r == label else 0.0 for r in RELATIONS]


def test_re_auprc_averages_all_30_classes_with_absent_classes_at_one_half():
    """Wrong neighbours: mean over the classes present in gold (100), nan for the whole mean (None)."""
    gold = ["no_relation", "per:title"]
    probs = [onehot("no_relation"), onehot("per:title")]
    # no_relation and per:title are ranked perfectly -> 1 each; the 28 classes without a gold example
    # get recall 1 at every threshold (scikit-learn >= 1.x, klue-tasks.md §5) -> 0.5 each: (2 + 14) / 30.
    assert values("re", cases.re_records(gold), re_preds(gold, probs))["auprc"] == pytest.approx(100 * 16 / 30)


def test_re_auprc_is_the_trapezoid_under_the_pr_curve_not_average_precision():
    """Wrong neighbour: step-wise average precision (per:title 5/6 instead of 19/24)."""
    gold = ["per:title", "no_relation", "per:title"]
    probs = []
    for title, none in ((0.9, 0.1), (0.05, 0.95), (0.01, 0.2)):  # each row a distribution: the rest on org:founded
        row = [0.0] * 30
        row[RELATIONS.index("per:title")], row[RELATIONS.index("no_relation")] = title, none
        row[RELATIONS.index("org:founded")] = 1.0 - title - none
        probs.append(row)
    # no_relation scores (.1, .95, .2) with the only positive on top -> 1.
    # per:title scores (.9, .05, .01), positives 1st and 3rd: points (R, P) = (0, 1), (.5, 1), (.5, .5), (1, 2/3);
    # trapezoids: .5 * 1 + 0 + .5 * (.5 + 2/3) / 2 = 1/2 + 7/24 = 19/24. 28 absent classes at 0.5.
    expected = (1 + 19 / 24 + 28 * 0.5) / 30
    assert values("re", cases.re_records(gold), re_preds(["per:title", "no_relation", "no_relation"], probs))["auprc"] == pytest.approx(100 * expected)


def test_re_auprc_is_undefined_with_a_reason_when_only_some_records_have_probs():
    """Wrong neighbours: AUPRC over the records that have probs (100), or 0."""
    gold = ["no_relation", "per:title", "org:founded"]
    probs = [onehot("no_relation"), onehot("per:title"), None]
    scores = run("re", cases.re_records(gold), re_preds(gold, probs)).scores
    assert scores.values["auprc"] is None and "probs" in scores.reasons["auprc"]
    assert scores.values["micro_f1"] == 100.0


# ---- MRC ----------------------------------------------------------------------------------------

def mrc_values(questions, answers):
    records = [{"guid": f"klue-mrc-v1_dev_{k:05d}", "answer": a} for k, a in enumerate(answers)]
    return values("mrc", cases.mrc(questions), records)


def test_mrc_folds_case_and_collapses_whitespace():
    """Wrong neighbours: case-sensitive match, whitespace kept as given (EM 0)."""
    assert mrc_values([["Galaxy S21"]], ["galaxy s21"]) == {"exact_match": 100.0, "rouge_w": 100.0}
    assert mrc_values([["뉴 740Li 에디션"]], ["  뉴   740Li\t에디션 "]) == {"exact_match": 100.0, "rouge_w": 100.0}


def test_mrc_removes_ascii_punctuation_only():
    """Wrong neighbour: removing every punctuation character, Korean middle dot included (EM 100, ROUGE 100)."""
    # ASCII: "(주)카카오" -> "주카카오" = prediction.
    assert mrc_values([["(주)카카오"]], ["주카카오"]) == {"exact_match": 100.0, "rouge_w": 100.0}
    # "한·중" keeps its middle dot; against "한중" the longest common substring is 1 character:
    # P 1/2, R 1/3 -> F1 2 * (1/6) / (5/6) = 0.4 (a subsequence would give 2: P 1, R 2/3 -> 0.8).
    assert mrc_values([["한·중"]], ["한중"]) == {"exact_match": 0.0, "rouge_w": pytest.approx(40.0)}


def test_mrc_rouge_w_uses_the_longest_common_substring_not_subsequence():
    """Wrong neighbour: longest common subsequence (5 chars -> 83.33)."""
    # "서울의 특별시" (7 chars) vs "서울특별시" (5): longest common substring "특별시" = 3 ->
    # P 3/7, R 3/5 -> F1 2 * (9/35) / (36/35) = 1/2.
    assert mrc_values([["서울특별시"]], ["서울의 특별시"]) == {"exact_match": 0.0, "rouge_w": pytest.approx(50.0)}


def test_mrc_takes_the_best_of_several_gold_answers():
    """Wrong neighbours: the first gold answer only (75), the mean over golds (82.95)."""
    # vs "특별시": substring 3 -> P 3/5, R 1 -> 3/4; vs "서울특별시청": 5 -> P 1, R 5/6 -> 10/11; max = 10/11.
    assert mrc_values([["특별시", "서울특별시청"]], ["서울특별시"]) == {"exact_match": 0.0, "rouge_w": pytest.approx(1000 / 11)}


def test_mrc_unanswerable_gold_is_the_empty_answer():
    """An unanswerable question is right only for an empty (normalised) answer; "." normalises to ""."""
    assert mrc_values([[], [], []], ["", ".", "없음"]) == {"exact_match": pytest.approx(200 / 3), "rouge_w": pytest.approx(200 / 3)}


# ---- NER ----------------------------------------------------------------------------------------

def tags_run(sentences, predicted):
    tsv = cases.ner_tsv(sentences)
    return values("ner", tsv, [{"guid": g, "tags": t} for (g, _), t in zip(sentences, predicted)])


def test_ner_entities_never_join_across_sentences():
    """Wrong neighbour: tags of all sentences in one sequence, so the I-PS opening sentence 2 extends sentence 1's PS (0)."""
    first = ("klue-ner-v1_dev_00000-nsmc", [("김", "B-PS"), ("씨", "I-PS")])
    second = ("klue-ner-v1_dev_00001-nsmc", [("가", "O"), ("다", "O")])
    # Sentence 1's PS is found; sentence 2's leading I-PS continues nothing (strict IOB2) -> PS tp 1 -> 100.
    result = tags_run([first, second], [["B-PS", "I-PS"], ["I-PS", "O"]])
    assert result["entity_macro_f1"] == 100.0
    # Characters: O gold 2 + 4 [CLS]/[SEP], pred 1 + 4 -> tp 5, fn 1 -> 10/11; B-PS 1; I-PS tp 1, fp 1 -> 2/3; 10 absent tags 1.
    assert result["character_macro_f1"] == pytest.approx(100 * (10 / 11 + 1 + 2 / 3 + 10) / 13)


def test_ner_spaces_are_dropped_before_scoring():
    """Wrong neighbour: spaces kept as characters (the O on the space would break the entity and the char F1)."""
    sentence = ("klue-ner-v1_dev_00000-wikitree", [("박", "B-PS"), (" ", "I-PS"), ("지", "I-PS"), ("성", "I-PS")])
    assert tags_run([sentence], [["B-PS", "O", "I-PS", "I-PS"]]) == {"entity_macro_f1": 100.0, "character_macro_f1": 100.0}


def test_ner_gold_entity_starting_on_a_space_is_not_an_entity():
    """Wrong neighbour: lenient IOB2 (an orphan I-QT starts an entity), which would match the prediction (100)."""
    sentence = ("klue-ner-v1_dev_00000-nsmc", [("나", "O"), (" ", "B-QT"), ("2", "I-QT"), ("4", "I-QT"), ("살", "I-QT")])
    tsv = cases.ner_tsv([sentence])
    result = values("ner", tsv, [{"guid": sentence[0], "entities": [{"start": 2, "end": 5, "label": "QT"}]}])
    # Without the space the gold is O I-QT I-QT I-QT: no gold entity; the predicted QT is a false positive -> 0.
    assert result["entity_macro_f1"] == 0.0
    # Chars with [CLS]/[SEP]: O 3/3 -> 1; I-QT gold 3, pred 2 -> 4/5; B-QT fp only -> 0; 10 absent tags 1 -> 11.8 / 13.
    assert result["character_macro_f1"] == pytest.approx(100 * 11.8 / 13)


def test_ner_character_f1_counts_all_13_tags_and_the_cls_sep_pairs():
    """Wrong neighbours: macro over seen tags only, absent tags at 0, no [CLS]/[SEP] pairs."""
    sentence = ("klue-ner-v1_dev_00000-nsmc", [("서", "B-LC"), ("울", "I-LC"), ("가", "O")])
    result = tags_run([sentence], [["B-LC", "O", "O"]])
    # O: gold 1 + 2, pred 2 + 2, tp 3, fp 1 -> 6/7; B-LC 1; I-LC fn 1 -> 0; 10 absent tags 1 each.
    assert result["character_macro_f1"] == pytest.approx(100 * (6 / 7 + 1 + 0 + 10) / 13)
    # LC entity "서울" vs predicted "서": no match -> 0.
    assert result["entity_macro_f1"] == 0.0


# ---- STS ----------------------------------------------------------------------------------------

def test_sts_gold_is_the_real_label_not_the_rounded_label():
    """Wrong neighbour: the rounded `label` (2.96 rounds to 3.0): Pearson 100 and F1 100."""
    gold = cases.sts([2.96, 1.0, 4.04], rounded=[3.0, 1.0, 4.0])
    preds = [{"guid": f"klue-sts-v1_dev_{k:05d}", "score": s} for k, s in enumerate([3.0, 1.0, 4.0])]
    result = values("sts", gold, preds)
    # Deviations from the means (x3 and x75): pred (1, -5, 4), gold (22, -125, 103):
    # r = (22 + 625 + 412) / sqrt(42 * 26718).
    assert result["pearsonr"] == pytest.approx(100 * 1059 / math.sqrt(42 * 26718), abs=1e-9)
    assert result["pearsonr"] < 99.99
    # Binary at >= 3 on both sides: gold (0, 0, 1), pred (1, 0, 1) (3.0 is inclusive) -> P 1/2, R 1 -> 2/3.
    assert result["f1"] == pytest.approx(200 / 3)


def test_sts_threshold_three_is_inclusive_on_gold_too():
    """Wrong neighbour: `> 3` (gold 3.0 negative, pred 3.0 negative -> F1 0)."""
    gold = cases.sts([3.0, 1.0, 2.0])
    preds = [{"guid": f"klue-sts-v1_dev_{k:05d}", "score": s} for k, s in enumerate([3.0, 1.5, 2.5])]
    # gold (1, 0, 0), pred (1, 0, 0) -> F1 1.
    assert values("sts", gold, preds)["f1"] == 100.0


# ---- DP -----------------------------------------------------------------------------------------

def test_dp_las_merges_exactly_the_relations_from_index_15():
    """Wrong neighbours: no merging (33.33), merging from index 14 so VP_SBJ joins 'others' (100)."""
    tsv = cases.dp_tsv([("klue-dp-v1_dev_00000_wikitree", [("가", 2, "VP_SBJ"), ("나", 0, "VP"), ("다", 2, "VP_CMP")])])
    pred = {"guid": "klue-dp-v1_dev_00000_wikitree", "head": [2, 0, 2], "deprel": ["X_AJT", "VP", "X_SBJ"]}
    result = values("dp", tsv, [pred])
    # Merged: gold (VP_SBJ, VP, others), pred (others, VP, others): words 2 and 3 right -> 2/3.
    assert result["las_micro_f1"] == pytest.approx(200 / 3)
    # Classes: VP_SBJ fn 1 -> 0; VP 1; others tp 1, fp 1 -> 2/3 -> (0 + 1 + 2/3) / 3 = 5/9.
    assert result["las_macro_f1"] == pytest.approx(500 / 9)
    assert result["uas_micro_f1"] == 100.0 and result["uas_macro_f1"] == 100.0


def test_dp_las_macro_adds_a_pad_class_for_wrong_heads():
    """Wrong neighbour: wrong-head words keep their relation (NP_SBJ right -> 100 for that class, no PAD)."""
    tsv = cases.dp_tsv([("klue-dp-v1_dev_00000_wikitree", [("가", 2, "NP_SBJ"), ("나", 0, "VP")])])
    pred = {"guid": "klue-dp-v1_dev_00000_wikitree", "head": [0, 0], "deprel": ["NP_SBJ", "VP"]}
    result = values("dp", tsv, [pred])
    # LAS classes: NP_SBJ fn 1 -> 0, VP 1, PAD fp 1 -> 0 -> 1/3. Micro 1/2.
    assert result["las_macro_f1"] == pytest.approx(100 / 3)
    assert result["las_micro_f1"] == 50.0
    # UAS head classes: 2 fn -> 0; 0: tp 1, fp 1 -> 2/3 -> (0 + 2/3) / 2 = 1/3.
    assert result["uas_macro_f1"] == pytest.approx(100 / 3)
    assert result["uas_micro_f1"] == 50.0


# ---- WoS ----------------------------------------------------------------------------------------

def wos_values(states, preds):
    records = [{"guid": "wos-v1_dev_00000", "turn": t, "state": s} for t, s in enumerate(preds)]
    return values("wos", cases.wos([states]), records)


def test_wos_joint_goal_compares_sets_not_lists():
    """Wrong neighbour: list equality (order and repeats matter -> 0)."""
    a, b = "식당-가격대-dontcare", "식당-지역-서울 동쪽"
    # Same set, other order, a repeat: joint 1; per-turn tp 2, fp 0, fn 0 -> F1 1.
    assert wos_values([[a, b]], [[b, a, a]]) == {"joint_goal_acc": 100.0, "slot_micro_f1": 100.0}


def test_wos_slot_f1_is_the_mean_of_per_turn_f1_not_pooled():
    """Wrong neighbour: one F1 from pooled counts (tp 1, fp 0, fn 3 -> 40)."""
    a, b, c = "식당-가격대-dontcare", "식당-지역-서울 동쪽", "식당-종류-일식당"
    # turn 0: gold {a}, pred {a} -> 1; turn 1: gold {a, b, c}, pred {} -> 0; mean 1/2.
    result = wos_values([[a], [a, b, c]], [[a], []])
    assert result == {"joint_goal_acc": 50.0, "slot_micro_f1": 50.0}



def test_wos_empty_gold_turn_scores_one_only_for_an_empty_prediction():
    """Wrong neighbour: an empty gold turn always scoring 1 (or being skipped): here 1/2 and 1 instead of 1/3."""
    a = "관광-이름-남산"
    # turn 0: {} vs {} -> 1; turn 1: {} vs {a} -> 0; turn 2: {a} vs {} -> 0. Joint: turn 0 only.
    assert wos_values([[], [], [a]], [[], [a], []]) == {"joint_goal_acc": pytest.approx(100 / 3), "slot_micro_f1": pytest.approx(100 / 3)}


def test_wos_predicted_none_value_is_a_false_positive():
    """Wrong neighbour: 'none' items dropped before scoring (joint 1, F1 1)."""
    a = "식당-가격대-dontcare"
    # gold {a}, pred {a, 택시-도착지-none}: P 1/2, R 1 -> 2/3; sets differ -> not joint.
    assert wos_values([[a]], [[a, "택시-도착지-none"]]) == {"joint_goal_acc": 0.0, "slot_micro_f1": pytest.approx(200 / 3)}


def test_ner_overlapping_spans_are_scored_with_the_later_span_winning():
    """Wrong neighbour: the sentence dropped (n_scored 0, its gold entities vanish from the score)."""
    sentence = ("klue-ner-v1_dev_00000-nsmc", [("박", "B-PS"), ("지", "I-PS"), ("성", "I-PS"), ("서", "B-LC"), ("울", "I-LC")])
    gold = cases.gold_of("ner", cases.ner_tsv([sentence]))
    pred = {"guid": sentence[0], "entities": [{"start": 0, "end": 3, "label": "PS"}, {"start": 2, "end": 5, "label": "LC"}]}
    result = evaluate_bytes(get_task("ner"), gold, jsonl([pred]), "p.jsonl")
    assert (result.coverage.n_scored, result.coverage.n_invalid) == (1, 0)
    assert any(p.line == 1 for p in result.problems)
    # Tags B-PS I-PS B-LC I-LC I-LC: PS (0, 2) and LC (2, 5) match neither gold entity -> 0.
    assert result.scores.values["entity_macro_f1"] == 0.0
    # Chars: O 1 ([CLS]/[SEP] only); B-PS 1; I-PS tp 1, fn 1 -> 2/3; B-LC fp 1, fn 1 -> 0; I-LC tp 1, fp 1 -> 2/3; 8 absent tags.
    assert result.scores.values["character_macro_f1"] == pytest.approx(100 * (1 + 1 + 2 / 3 + 0 + 2 / 3 + 8) / 13)
