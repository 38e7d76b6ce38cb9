"""The public metric functions of `klue_viz.metrics.official` on plain lists, against values worked out by hand
and against scikit-learn and seqeval (also on the real dev sets); the module's doctests and imports.

Scale 0..100, None where the metric is undefined. Each case is built so that the nearest wrong
variant of the official formula (named in the docstring) gives another number; the arithmetic is
in the comments.
"""

from __future__ import annotations

import doctest
import math
import random
import subprocess
import sys
import warnings

import numpy as np
import pytest
from seqeval.metrics import f1_score as seqeval_f1
from seqeval.scheme import IOB2
from sklearn.metrics import accuracy_score, auc, f1_score, precision_recall_curve

from klue_viz.metrics import official as metrics
from tests.conftest import REPO

NER_TAGS = list(metrics.NER_TAGS)

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


# ---- Against scikit-learn and seqeval, and the module itself -----------------------------------


def test_the_metric_examples_in_the_docstrings_hold():
    result = doctest.testmod(metrics, optionflags=doctest.ELLIPSIS)
    assert result.attempted >= 18 and result.failed == 0


def test_metrics_import_without_pandas_sklearn_scipy_or_streamlit():
    code = "import sys, klue_viz.metrics.official; print([m for m in ('pandas', 'sklearn', 'scipy', 'streamlit') if m in sys.modules])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=True).stdout
    assert out.strip() == "[]"


def read_ner_file(path):
    """The official TSV read independently: per sentence its characters and tags."""
    sentences, tags = [], []
    for block in path.read_text(encoding="utf-8").split("\n\n"):
        lines = [line for line in block.split("\n") if line and not line.startswith("##")]
        if lines:
            sentences.append("".join(line[0] for line in lines))
            tags.append([line.split("\t")[1] for line in lines])
    return sentences, tags


@pytest.mark.slow
def test_public_ner_functions_match_seqeval_and_sklearn_on_dev(shared):
    sentences, gold = read_ner_file(shared / "klue-ner-v1.1" / "klue-ner-v1.1_dev.tsv")
    assert len(sentences) == 5000
    rng = random.Random(3)
    pred = [[t if rng.random() > 0.05 else rng.choice(NER_TAGS) for t in tags] for tags in gold]
    g_seq = [[t for c, t in zip(s, tags) if c != " "] for s, tags in zip(sentences, gold)]
    p_seq = [[t for c, t in zip(s, tags) if c != " "] for s, tags in zip(sentences, pred)]
    entity = seqeval_f1(g_seq, p_seq, average="macro", mode="strict", scheme=IOB2) * 100
    chars_g = [t for seq in g_seq for t in ["O", *seq, "O"]]
    chars_p = [t for seq in p_seq for t in ["O", *seq, "O"]]
    character = f1_score(chars_g, chars_p, labels=NER_TAGS, average="macro", zero_division=True) * 100
    assert metrics.ner_entity_macro_f1(gold, pred, sentences) == pytest.approx(entity, abs=1e-9)
    assert metrics.ner_character_macro_f1(gold, pred, sentences) == pytest.approx(character, abs=1e-9)
    ids = [[metrics.NER_TAG_ID[t] for t in tags] for tags in pred]
    assert metrics.ner_entity_macro_f1(gold, ids, sentences) == pytest.approx(entity, abs=1e-9)


@pytest.mark.slow
def test_public_dp_functions_match_sklearn_on_dev(shared):
    heads, rels = [], []
    for line in (shared / "klue-dp-v1.1" / "klue-dp-v1.1_dev.tsv").read_text(encoding="utf-8").split("\n"):
        if line.startswith("## klue-dp"):
            heads.append([])
            rels.append([])
        elif line and not line.startswith("##"):
            fields = line.split("\t")
            heads[-1].append(int(fields[4]))
            rels[-1].append(fields[5])
    rng = random.Random(4)
    pred_heads = [[h if rng.random() > 0.1 else rng.randint(0, len(hs)) for h in hs] for hs in heads]
    pred_rels = [[r if rng.random() > 0.1 else rng.choice(metrics.DP_RELATIONS) for r in rs] for rs in rels]
    gh, ph = sum(heads, []), sum(pred_heads, [])
    kept = set(metrics.DP_RELATIONS[:15])
    gc = [r if r in kept else "others" for r in sum(rels, [])]
    pc = [(r if r in kept else "others") if g == p else "PAD" for r, g, p in zip(sum(pred_rels, []), gh, ph)]
    assert metrics.dp_uas_macro_f1(heads, pred_heads) == pytest.approx(100 * f1_score(gh, ph, average="macro"), abs=1e-9)
    assert metrics.dp_uas_micro_f1(heads, pred_heads) == pytest.approx(100 * accuracy_score(gh, ph), abs=1e-9)
    assert metrics.dp_las_macro_f1(heads, rels, pred_heads, pred_rels) == pytest.approx(100 * f1_score(gc, pc, average="macro"), abs=1e-9)
    las = np.mean([g == p and a == b for g, p, a, b in zip(gh, ph, gc, pc)]) * 100
    assert metrics.dp_las_micro_f1(heads, rels, pred_heads, pred_rels) == pytest.approx(las, abs=1e-9)


def test_public_functions_give_none_where_undefined():
    assert metrics.sts_pearsonr([1.0], [2.0]) is None
    assert metrics.sts_pearsonr([1.0, 2.0, 3.0], [2.0, 2.0, 2.0]) is None
    assert metrics.ner_entity_macro_f1([["O", "O"]], [["O", "O"]]) is None
    assert metrics.ynat_macro_f1([], []) is None
    assert metrics.wos_joint_goal_acc([], []) == 0.0 and metrics.wos_slot_micro_f1([], []) is None


def test_re_auprc_matches_scikit_learn_on_random_probabilities():
    rng = np.random.default_rng(1)
    gold = rng.choice(30, size=200, p=np.r_[0.5, np.full(29, 0.5 / 29)])
    gold[gold == 7] = 8  # relation 7 never occurs in gold: its curve is the 0.5 case
    probs = rng.dirichlet(np.ones(30), size=200)
    probs[:, 3] = np.round(probs[:, 3], 2)  # ties in one column
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        areas = [auc(*precision_recall_curve(gold == c, probs[:, c])[1::-1]) for c in range(30)]
    assert metrics.re_auprc(gold.tolist(), probs) == pytest.approx(100 * np.mean(areas), abs=1e-9)
    names = [metrics.RE_RELATIONS[k] for k in gold]
    assert metrics.re_auprc(names, probs.tolist()) == pytest.approx(100 * np.mean(areas), abs=1e-9)
    assert metrics.re_auprc([], np.zeros((0, 30))) is None
    with pytest.raises(ValueError):
        metrics.re_auprc(names, probs[:, :29])
    with pytest.raises(ValueError):
        metrics.re_auprc(["per:nothing"] + names[1:], probs)


def test_public_functions_refuse_mismatched_or_unknown_input():
    with pytest.raises(ValueError, match=r"^gold has 1 labels and pred 2$"):
        metrics.ynat_macro_f1(["정치"], ["정치", "경제"])
    with pytest.raises(ValueError, match=r"^gold label id 7 is outside 0\.\.6$"):
        metrics.ynat_macro_f1([7], ["정치"])  # YNAT ids are 0..6
    with pytest.raises(ValueError, match=r"^predicted label id -1 is outside 0\.\.2$"):
        metrics.nli_accuracy(["neutral"], [-1])
    assert metrics.nli_accuracy([2], ["contradiction"]) == 100.0 and metrics.nli_accuracy(["neutral"], ["entailment"]) == 0.0
    with pytest.raises(ValueError, match=r"^1 questions but 2 predictions$"):
        metrics.mrc_exact_match([["a"]], ["a", "b"])
    with pytest.raises(ValueError, match=r"^1 gold turns but 0 predicted$"):
        metrics.wos_joint_goal_acc([[]], [])
    with pytest.raises(ValueError, match=r"^gold has 2 scores and pred 1$"):
        metrics.sts_pearsonr([1.0, 2.0], [1.0])
    with pytest.raises(ValueError, match=r"^sentence 0: gold, prediction \(and sentence\) differ in length$"):
        metrics.ner_entity_macro_f1([["O"]], [["O", "O"]])
    with pytest.raises(ValueError, match=r"^gold_tags, pred_tags \(and sentences\) must have one entry per sentence$"):
        metrics.ner_entity_macro_f1([["O"]], [["O"], ["O"]])
    with pytest.raises(ValueError, match=r"^gold sentence 0: 'B-XX' is not a KLUE-NER tag name or id 0\.\.12$"):
        metrics.ner_entity_macro_f1([["O", "B-XX"]], [["O", "O"]])
    with pytest.raises(ValueError, match=r"^sentence 0: gold, prediction \(and sentence\) differ in length$"):
        metrics.ner_character_macro_f1([["O", "O"]], [["O", "O"]], sentences=["abc"])
    with pytest.raises(ValueError, match=r"^sentence 0: 2 gold heads, 1 predicted$"):
        metrics.dp_uas_micro_f1([[0, 1]], [[0]])
    with pytest.raises(ValueError, match=r"^gold_heads and pred_heads must have one entry per sentence$"):
        metrics.dp_uas_micro_f1([[0, 1]], [])
    with pytest.raises(ValueError, match=r"^heads are word indices from 1, or 0 for the root$"):
        metrics.dp_uas_micro_f1([[0, 1]], [[0, -1]])
    with pytest.raises(ValueError, match=r"^deprels must have one relation per word$"):
        metrics.dp_las_micro_f1([[0]], [["VP", "NP"]], [[0]], [["VP"]])
    with pytest.raises(ValueError, match=r"^probs must be 2 x 30 \(one row of relation probabilities per example\)$"):
        metrics.re_auprc(["no_relation", "per:title"], [[1.0] * 30])
    with pytest.raises(ValueError, match=r"^gold label 'per:nothing' is not a KLUE-RE relation$"):
        metrics.re_auprc(["per:nothing"], [[1.0] * 30])
    with pytest.raises(ValueError, match=r"^predicted sentence 0: 13 is not a KLUE-NER tag name or id 0\.\.12$"):
        metrics.ner_entity_macro_f1([[12]], [[13]])
    assert metrics.ner_character_macro_f1([[12, 0]], [["O", "B-DT"]]) == 100.0


def test_public_functions_on_empty_input():
    assert metrics.ynat_macro_f1([], []) is None and metrics.nli_accuracy([], []) is None and metrics.re_micro_f1([], []) is None
    assert metrics.sts_f1([], []) is None and metrics.sts_pearsonr([], []) is None
    assert metrics.ner_character_macro_f1([], []) is None and metrics.dp_uas_micro_f1([], []) is None
    assert metrics.dp_las_macro_f1([], [], [], []) is None and metrics.mrc_rouge_w([], []) is None


def test_public_known_answers_that_tell_close_formulas_apart():
    # Pearson: two pairs suffice; a tiny but real spread is not "constant"; a perfect inverse is -100.
    assert metrics.sts_pearsonr([1.0, 2.0], [1.0, 3.0]) == pytest.approx(100.0)
    assert metrics.sts_pearsonr([1.0, 2.0, 3.0], [3.0, 3.001, 3.002]) == pytest.approx(100.0)
    assert metrics.sts_pearsonr([1.0, 2.0, 4.0], [4.0, 3.0, 1.0]) == pytest.approx(-100.0)
    # STS F1: 3.0 itself is positive on both sides.
    assert metrics.sts_f1([3.0, 1.0], [3.0, 1.0]) == 100.0 and metrics.sts_f1([2.99, 1.0], [3.0, 1.0]) == 0.0
    # WoS: the set of items decides the joint goal; per-turn F1 with tp = fp = 1 is 0.5; a missed state scores 0.
    assert metrics.wos_joint_goal_acc([["a-b-1", "a-c-2"], ["a-b-1"]], [["a-c-2", "a-b-1"], ["a-b-2"]]) == 50.0
    assert metrics.wos_slot_micro_f1([["a-b-1", "a-c-2"]], [["a-b-1", "a-d-3"]]) == pytest.approx(50.0)
    assert metrics.wos_slot_micro_f1([["a-b-1"]], [[]]) == 0.0 and metrics.wos_slot_micro_f1([[]], [["a-b-1"]]) == 0.0
    assert metrics.wos_slot_micro_f1([[], ["a-b-1"]], [[], ["a-b-1"]]) == 100.0
    # RE micro F1 leaves no_relation out on both sides; macro F1 of YNAT averages over the classes seen.
    assert metrics.re_micro_f1(["no_relation", "no_relation"], ["no_relation", "per:title"]) == 0.0
    assert metrics.re_micro_f1(["per:title", "no_relation"], ["per:title", "no_relation"]) == 100.0
    assert metrics.ynat_macro_f1(["정치", "경제"], ["정치", "정치"]) == pytest.approx(100 * (2 / 3 + 0) / 2)
    # NER: an I- after O starts nothing; the [CLS]/[SEP] pair is counted; spaces are dropped with `sentences`.
    assert metrics.ner_entity_macro_f1([["O", "I-PS"]], [["O", "O"]]) is None
    assert metrics.ner_entity_macro_f1([["B-PS", "O", "I-PS"]], [["B-PS", "I-PS", "I-PS"]]) == 0.0
    assert metrics.ner_entity_macro_f1([["B-PS", "I-PS", "I-PS"]], [["B-PS", "O", "I-PS"]], sentences=["가 나"]) == 100.0
    # DP: UAS macro F1 over head values; LAS puts PAD on a word with a wrong head.
    assert metrics.dp_uas_macro_f1([[0, 1]], [[0, 1]]) == 100.0
    assert metrics.dp_las_macro_f1([[0, 1]], [["VP", "NP"]], [[0, 0]], [["VP", "NP"]]) == pytest.approx(100 * (1 + 0 + 0) / 3)


def test_mrc_public_functions_normalise_and_take_the_best_gold():
    # Case and ASCII punctuation are dropped, whitespace collapsed; Korean punctuation stays.
    assert metrics.mrc_exact_match([["Seoul  City!"]], ["seoul city"]) == 100.0
    assert metrics.mrc_exact_match([["《서울》"]], ["서울"]) == 0.0
    # The best of several golds counts; an unanswerable question is matched only by "".
    assert metrics.mrc_exact_match([["서울", "서울특별시"], []], ["서울특별시", ""]) == 100.0
    assert metrics.mrc_rouge_w([[]], ["서울"]) == 0.0
    # Longest common substring, not subsequence: "서울특별시" in "서울의 특별시" matches 3 characters, F1 = 0.5.
    assert metrics.mrc_rouge_w([["서울특별시", "부산"]], ["서울의 특별시"]) == pytest.approx(50.0)


def test_label_metrics_match_scikit_learn_on_random_labels():
    rng = np.random.default_rng(7)
    ynat = list(metrics.YNAT_LABELS)
    gold, pred = rng.choice(ynat, 500).tolist(), rng.choice(ynat[:5] + ["(none)"], 500).tolist()
    assert metrics.ynat_macro_f1(gold, pred) == pytest.approx(100 * f1_score(gold, pred, average="macro"), abs=1e-9)
    assert metrics.nli_accuracy(gold, pred) == pytest.approx(100 * accuracy_score(gold, pred), abs=1e-9)
    relations = list(metrics.RE_RELATIONS)
    weights = np.r_[0.4, np.full(29, 0.6 / 29)]
    gold, pred = rng.choice(relations, 800, p=weights).tolist(), rng.choice(relations + ["other"], 800, p=np.r_[weights * 0.9, 0.1]).tolist()
    expected = 100 * f1_score(gold, pred, average="micro", labels=relations[1:], zero_division=0)
    assert metrics.re_micro_f1(gold, pred) == pytest.approx(expected, abs=1e-9)


def test_re_micro_f1_counts_only_the_29_relations():
    # no_relation hits count nowhere; a label outside the relation list is never a false positive.
    assert metrics.re_micro_f1(["per:title", "no_relation"], ["org:founded", "no_relation"]) == 0.0
    assert metrics.re_micro_f1(["per:title", "per:title"], ["per:title", "other"]) == pytest.approx(100 * 2 / 3)
    assert metrics.re_micro_f1(["org:dissolved", "per:title"], ["org:dissolved", "no_relation"]) == pytest.approx(100 * 2 / 3)


def test_re_auprc_of_a_single_record():
    # per:title ranks its only (positive) example first: area 1; 29 relations without a positive score 0.5 each.
    onehot = [0.0] * 29 + [1.0]
    assert metrics.re_auprc(["per:title"], [onehot]) == pytest.approx(100 * (1 + 29 * 0.5) / 30)


def test_official_answer_normalisation():
    # Lower case; ASCII punctuation dropped, other punctuation kept; the official bracket pattern ('()‘’ after a quote) is a space.
    assert metrics.normalise_answer("  Seoul,   CITY! ") == "seoul city"
    assert metrics.normalise_answer("《서울》·부산") == "《서울》·부산"
    assert metrics.normalise_answer("a'()‘’b") == "a b"


def test_turn_prf_counts():
    assert metrics.turn_prf([], []) == (0, 0, 0, 1.0)
    assert metrics.turn_prf([], ["a-b-c"]) == (0, 1, 0, 0.0)
    assert metrics.turn_prf(["a-b-c", "a-d-e"], ["a-b-c", "a-f-g", "a-h-i"]) == (1, 2, 1, pytest.approx(0.4))


def test_re_auprc_names_the_bad_gold_id():
    with pytest.raises(ValueError, match="gold label id 30 is outside 0..29"):
        metrics.re_auprc([30], [[1.0] * 30])


def test_ner_entities_in_the_shortest_inputs():
    # A two-character corpus still joins B-PS I-PS into one entity; a sentence of no characters has none.
    assert metrics.ner_entity_macro_f1([["B-PS", "I-PS"]], [["B-PS", "O"]]) == 0.0
    assert metrics.ner_entity_macro_f1([[]], [[]]) is None and metrics.ner_character_macro_f1([[]], [[]]) == 100.0


def test_f1_with_nothing_to_find_is_undefined_not_zero_nor_100():
    # scikit-learn returns 0 with an "ill-defined" warning; klue-viz reports undefined (docs/metrics.md, convention 2).
    assert metrics.re_micro_f1(["no_relation"], ["no_relation"]) is None
    assert metrics.sts_f1([1.0, 2.0], [1.0, 2.5]) is None
    # one positive anywhere makes it defined again: a false positive alone is 0.
    assert metrics.re_micro_f1(["no_relation"], ["per:title"]) == 0.0
    assert metrics.sts_f1([1.0, 2.0], [1.0, 3.5]) == 0.0
