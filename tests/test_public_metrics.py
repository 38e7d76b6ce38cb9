"""The public metric functions of `klue_viz.metrics` on plain lists, against values worked out by hand.

Scale 0..100, None where the metric is undefined. Each case is built so that the nearest wrong
variant of the official formula (named in the docstring) gives another number; the arithmetic is
in the comments. Skipped until the module exists.
"""

from __future__ import annotations

import math

import pytest

metrics = pytest.importorskip("klue_viz.metrics")

RELATIONS = (
    "no_relation", "org:dissolved", "org:founded", "org:place_of_headquarters", "org:alternate_names",
    "org:member_of", "org:members", "org:political/religious_affiliation", "org:product", "org:founded_by",
    "org:top_members/employees", "org:number_of_employees/members", "per:date_of_birth", "per:date_of_death",
    "per:place_of_birth", "per:place_of_death", "per:place_of_residence", "per:origin", "per:employee_of",
    "per:schools_attended", "per:alternate_names", "per:parents", "per:children", "per:siblings", "per:spouse",
    "per:other_family", "per:colleagues", "per:product", "per:religion", "per:title",
)  # relation_list.json order


def approx(value):
    return pytest.approx(value, abs=1e-9)


# ---- YNAT / NLI ---------------------------------------------------------------------------------

def test_ynat_macro_f1_over_gold_and_predicted_classes():
    """Not over gold classes only (66.67), nor over all 7 topics (9.52)."""
    # 정치: tp 1, fn 1 -> 2/3; 경제 (predicted only): fp 1 -> 0 -> 1/3.
    assert metrics.ynat_macro_f1(["정치", "정치"], ["정치", "경제"]) == approx(100 / 3)
    # 정치 tp1 fp1 fn1 -> 1/2; 경제 tp1 fp1 -> 2/3; 사회 fn1 -> 0.
    assert metrics.ynat_macro_f1(["정치", "정치", "경제", "사회"], ["정치", "경제", "경제", "정치"]) == approx(100 * (0.5 + 2 / 3) / 3)


def test_nli_accuracy():
    assert metrics.nli_accuracy(["entailment", "neutral", "contradiction", "neutral"],
                                ["entailment", "neutral", "neutral", "neutral"]) == approx(75.0)


# ---- STS ----------------------------------------------------------------------------------------

def test_sts_pearson_on_real_labels():
    # Deviations (x3 and x75): pred (1, -5, 4), gold (22, -125, 103) -> r = 1059 / sqrt(42 * 26718).
    assert metrics.sts_pearsonr([2.96, 1.0, 4.04], [3.0, 1.0, 4.0]) == approx(100 * 1059 / math.sqrt(42 * 26718))


def test_sts_pearson_is_undefined_for_constant_predictions():
    assert metrics.sts_pearsonr([1.0, 3.0, 4.5], [3.0, 3.0, 3.0]) is None


def test_sts_f1_thresholds_both_sides_at_three_inclusive():
    """Not `> 3` (F1 0 here), not on the rounded label (2.96 would become positive: 100)."""
    # gold (0, 0, 1), pred (1, 0, 1) -> P 1/2, R 1 -> 2/3.
    assert metrics.sts_f1([2.96, 1.0, 4.04], [3.0, 1.0, 4.0]) == approx(200 / 3)
    assert metrics.sts_f1([3.0, 1.0, 2.0], [3.0, 1.5, 2.5]) == approx(100.0)
    # No positive prediction -> 0 (not None).
    assert metrics.sts_f1([3.5, 1.0], [1.0, 1.0]) == approx(0.0)


# ---- RE -----------------------------------------------------------------------------------------

def test_re_micro_f1_without_no_relation():
    """Not accuracy (75), and a predicted no_relation is a miss, not a false positive (not 50)."""
    assert metrics.re_micro_f1(["no_relation"] * 3 + ["per:title"], ["no_relation"] * 3 + ["org:founded"]) == approx(0.0)
    # tp 1, fn 1 -> 2/3.
    assert metrics.re_micro_f1(["per:title", "per:title"], ["per:title", "no_relation"]) == approx(200 / 3)


def onehot(label):
    return [1.0 if r == label else 0.0 for r in RELATIONS]


def test_re_auprc_over_all_30_classes():
    """Absent classes score 1/2 (not left out: 100; not nan for all: None)."""
    # 2 classes ranked perfectly -> 1 each; 28 without gold -> 0.5 each: (2 + 14) / 30.
    assert metrics.re_auprc(["no_relation", "per:title"], [onehot("no_relation"), onehot("per:title")]) == approx(100 * 16 / 30)


def test_re_auprc_is_the_trapezoid_area():
    """Not step-wise average precision (5/6 for per:title)."""
    probs = []
    for title, none in ((0.9, 0.1), (0.8, 0.95), (0.1, 0.2)):
        row = [0.0] * 30
        row[RELATIONS.index("per:title")], row[RELATIONS.index("no_relation")] = title, none
        probs.append(row)
    # no_relation perfectly ranked -> 1; per:title points (R, P) (0, 1), (.5, 1), (.5, .5), (1, 2/3) -> 19/24; 28 x 0.5.
    assert metrics.re_auprc(["per:title", "no_relation", "per:title"], probs) == approx(100 * (1 + 19 / 24 + 14) / 30)


# ---- NER ----------------------------------------------------------------------------------------

def test_ner_entities_stay_inside_their_sentence():
    """An I-PS opening sentence 2 does not continue sentence 1's PS (joined: 0)."""
    gold = [["B-PS", "I-PS"], ["O", "O"]]
    pred = [["B-PS", "I-PS"], ["I-PS", "O"]]
    assert metrics.ner_entity_macro_f1(gold, pred) == approx(100.0)
    # O: gold 2 + 4 [CLS]/[SEP], pred 1 + 4 -> tp 5, fn 1 -> 10/11; B-PS 1; I-PS tp 1 fp 1 -> 2/3; 10 absent tags 1.
    assert metrics.ner_character_macro_f1(gold, pred) == approx(100 * (10 / 11 + 1 + 2 / 3 + 10) / 13)


def test_ner_character_f1_counts_13_tags_and_cls_sep_pairs():
    """Not over seen tags only, not with absent tags at 0, not without the [CLS]/[SEP] O pairs (O would be 4/5)."""
    # O: gold 1 + 2, pred 2 + 2 -> tp 3, fp 1 -> 6/7; B-LC 1; I-LC fn 1 -> 0; 10 absent tags 1 each.
    assert metrics.ner_character_macro_f1([["B-LC", "I-LC", "O"]], [["B-LC", "O", "O"]]) == approx(100 * (6 / 7 + 11) / 13)
    assert metrics.ner_entity_macro_f1([["B-LC", "I-LC", "O"]], [["B-LC", "O", "O"]]) == approx(0.0)


def test_ner_sentences_drop_space_characters():
    """With `sentences`, " " characters are left out as officially; without, they count."""
    gold, pred = [["B-PS", "I-PS", "I-PS", "I-PS"]], [["B-PS", "O", "I-PS", "I-PS"]]
    assert metrics.ner_entity_macro_f1(gold, pred, sentences=["박 지성"]) == approx(100.0)
    assert metrics.ner_character_macro_f1(gold, pred, sentences=["박 지성"]) == approx(100.0)
    # Spaces kept: PS (0, 4) vs PS (0, 1) -> 0; chars: the O on the space is a fp of O and a fn of I-PS.
    assert metrics.ner_entity_macro_f1(gold, pred) == approx(0.0)


def test_ner_entity_starting_on_a_space_is_not_a_gold_entity():
    """Strict IOB2 after dropping the space: the gold has no entity, the predicted QT is a false positive (lenient: 100)."""
    gold, pred = [["O", "B-QT", "I-QT", "I-QT", "I-QT"]], [["O", "O", "B-QT", "I-QT", "I-QT"]]
    assert metrics.ner_entity_macro_f1(gold, pred, sentences=["나 24살"]) == approx(0.0)
    # O 3/3 -> 1; I-QT gold 3 pred 2 -> 4/5; B-QT fp -> 0; 10 absent tags -> 11.8 / 13.
    assert metrics.ner_character_macro_f1(gold, pred, sentences=["나 24살"]) == approx(100 * 11.8 / 13)


def test_ner_entity_f1_is_undefined_without_entities():
    assert metrics.ner_entity_macro_f1([["O", "O"]], [["O", "O"]]) is None


# ---- DP -----------------------------------------------------------------------------------------

def test_dp_uas_and_las():
    gold_heads, gold_rels = [[2, 0, 2]], [["NP_SBJ", "VP", "VP_CMP"]]
    pred_heads, pred_rels = [[2, 0, 1]], [["NP_OBJ", "VP", "X_AJT"]]
    # UAS: 2 of 3 heads; head classes {2: tp 1 fn 1 -> 2/3, 0: 1, 1: fp 1 -> 0} -> 5/9.
    assert metrics.dp_uas_micro_f1(gold_heads, pred_heads) == approx(200 / 3)
    assert metrics.dp_uas_macro_f1(gold_heads, pred_heads) == approx(500 / 9)
    # LAS: only word 2 right -> 1/3; classes NP_SBJ 0, VP 1, others 0, NP_OBJ 0, PAD 0 -> 1/5.
    assert metrics.dp_las_micro_f1(gold_heads, gold_rels, pred_heads, pred_rels) == approx(100 / 3)
    assert metrics.dp_las_macro_f1(gold_heads, gold_rels, pred_heads, pred_rels) == approx(20.0)


def test_dp_las_merges_from_index_15():
    """VP_SBJ (index 14) stays its own class; VP_CMP, X_AJT, X_SBJ (>= 15) are all 'others'."""
    heads = [[2, 0, 2]]
    gold_rels, pred_rels = [["VP_SBJ", "VP", "VP_CMP"]], [["X_AJT", "VP", "X_SBJ"]]
    assert metrics.dp_las_micro_f1(heads, gold_rels, heads, pred_rels) == approx(200 / 3)
    # VP_SBJ 0, VP 1, others tp 1 fp 1 -> 2/3 -> 5/9.
    assert metrics.dp_las_macro_f1(heads, gold_rels, heads, pred_rels) == approx(500 / 9)


def test_dp_las_macro_pad_class_for_wrong_heads():
    """A wrong head makes the word's LAS class PAD (without PAD: 100 for NP_SBJ's class here)."""
    gold_heads, rels, pred_heads = [[2, 0]], [["NP_SBJ", "VP"]], [[0, 0]]
    # NP_SBJ fn -> 0, VP 1, PAD fp -> 0 -> 1/3; head classes 2 -> 0, 0 -> 2/3 -> 1/3.
    assert metrics.dp_las_macro_f1(gold_heads, rels, pred_heads, rels) == approx(100 / 3)
    assert metrics.dp_las_micro_f1(gold_heads, rels, pred_heads, rels) == approx(50.0)
    assert metrics.dp_uas_macro_f1(gold_heads, pred_heads) == approx(100 / 3)


# ---- MRC ----------------------------------------------------------------------------------------

def test_mrc_normalisation():
    """Case folded, whitespace collapsed, ASCII punctuation removed, Korean punctuation kept."""
    gold = [["Galaxy S21"], ["뉴 740Li 에디션"], ["(주)카카오"], ["한·중"]]
    pred = ["galaxy s21", "  뉴   740Li\t에디션 ", "주카카오", "한중"]
    assert metrics.mrc_exact_match(gold, pred) == approx(75.0)
    # "한·중" vs "한중": longest common substring 1 -> P 1/2, R 1/3 -> 0.4.
    assert metrics.mrc_rouge_w(gold, pred) == approx(100 * (3 + 0.4) / 4)


def test_mrc_rouge_w_longest_common_substring():
    """Not the longest common subsequence (5 chars -> 83.33)."""
    # "서울의 특별시" (7) vs "서울특별시" (5): "특별시" -> P 3/7, R 3/5 -> 1/2.
    assert metrics.mrc_rouge_w([["서울특별시"]], ["서울의 특별시"]) == approx(50.0)


def test_mrc_best_of_several_golds_and_unanswerable():
    """Max over golds (not the first: 75, not the mean: 82.95); unanswerable gold is "" ("." normalises to "")."""
    assert metrics.mrc_rouge_w([["특별시", "서울특별시청"]], ["서울특별시"]) == approx(1000 / 11)
    assert metrics.mrc_exact_match([["서울", "서울특별시"]], ["서울특별시"]) == approx(100.0)
    assert metrics.mrc_exact_match([[], [], []], ["", ".", "없음"]) == approx(200 / 3)
    assert metrics.mrc_rouge_w([[], [], []], ["", ".", "없음"]) == approx(200 / 3)


# ---- WoS ----------------------------------------------------------------------------------------

A, B, C = "식당-가격대-dontcare", "식당-지역-서울 동쪽", "식당-종류-일식당"


def test_wos_joint_goal_uses_sets():
    assert metrics.wos_joint_goal_acc([[A, B]], [[B, A, A]]) == approx(100.0)
    assert metrics.wos_slot_micro_f1([[A, B]], [[B, A, A]]) == approx(100.0)


def test_wos_slot_f1_is_a_mean_of_turn_f1():
    """Not pooled (tp 1, fp 0, fn 3 -> 40)."""
    assert metrics.wos_slot_micro_f1([[A], [A, B, C]], [[A], []]) == approx(50.0)
    assert metrics.wos_joint_goal_acc([[A], [A, B, C]], [[A], []]) == approx(50.0)


def test_wos_empty_gold_and_none_values():
    # Empty gold: 1 only for an empty prediction. A 'none' item is a false positive: P 2/3, R 1 -> 0.8.
    gold, pred = [[], [], [A, B]], [[], ["관광-이름-남산"], [A, B, "택시-도착지-none"]]
    assert metrics.wos_slot_micro_f1(gold, pred) == approx(100 * (1 + 0 + 0.8) / 3)
    assert metrics.wos_joint_goal_acc(gold, pred) == approx(100 / 3)
