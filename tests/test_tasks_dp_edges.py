"""Edges of the DP task module that mutation testing showed untested (docs/mutation.md, "tasks/dp.py").

Expected values are counted by hand on small made-up sentences (each count in a comment), or come from
scikit-learn's F1 for the aggregate scores.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import f1_score

from klue_viz.compare.ranking import compared_columns
from klue_viz.core.problems import InputError, Problem
from klue_viz.core.results import Frames
from klue_viz.reading.answers import Answer
from klue_viz.tasks.base import RecordError
from klue_viz.tasks.dp import TASK, Dp
from klue_viz.tasks.kit import suspect_item

KEPT = ("NP", "NP_AJT", "VP", "NP_SBJ", "VP_MOD", "NP_OBJ", "AP", "NP_CNJ", "NP_MOD", "VNP", "DP", "VP_AJT", "VNP_MOD",
        "NP_CMP", "VP_SBJ")  # the first 15 relations of the baseline list (klue-tasks.md §6); the rest are 'others'

G1, G2, G3, G4 = ("klue-dp-v1_dev_00001_wikitree", "klue-dp-v1_dev_00002", "klue-dp-v1_dev_00003_news",
                  "klue-dp-v1_dev_00004_news")

# (word, lemma, pos, head, deprel) per word.
S1 = [("나는", "나 는", "NP+JX", 3, "NP_SBJ"), ("밥을", "밥 을", "NNG+JKO", 3, "NP_OBJ"), ("먹었다.", "먹 었 다 .", "VV+EP+EF+SF", 0, "VP")]
S2 = [("아주", "아주", "MAG", 2, "AP"), ("좋다", "좋 다", "VA+EF", 0, "VP")]
# Heads chosen for each distance bucket: |index - head| = 8, 7, 2, 3, 4, 3, 1, 1, root, 1.
S3_HEADS = [9, 9, 1, 1, 9, 9, 8, 9, 0, 9]
S3_RELS = ["NP_SBJ", "NP_OBJ", "NP_MOD", "VP_CMP", "NP_AJT", "VP_MOD", "DP", "NP", "VP", "X"]
S3 = [(f"w{k}", f"w{k}", "NNG", h, d) for k, (h, d) in enumerate(zip(S3_HEADS, S3_RELS), 1)]
S4 = [(f"v{k}", f"v{k}", "NNG", k + 1 if k < 21 else 0, "NP") for k in range(1, 22)]  # 21 words, a chain


def tsv(sentences) -> str:
    parts = ["## 칼럼명 : INDEX\tWORD_FORM\tLEMMA\tPOS\tHEAD\tDEPREL"]
    for guid, words in sentences:
        parts.append(f"## {guid}\t" + " ".join(w[0] for w in words))
        parts.extend(f"{k}\t{w}\t{lemma}\t{pos}\t{h}\t{d}" for k, (w, lemma, pos, h, d) in enumerate(words, 1))
        parts.append("")
    return "\n".join(parts) + "\n"


# Predictions: S1 word 2 on head 1 (right relation); S2 word 1 relation VP_AJT for AP; S3 word 4 VP_OBJ for VP_CMP
# (both 'others': right), word 5 on head 8 as NP_OBJ (head and label wrong), word 10 AP for X; S4 all right.
P1 = {"head": ["3", "1", "0"], "deprel": ["NP_SBJ", "NP_OBJ", "VP"]}  # heads as digit strings
P2 = {"head": [2, 0], "deprel": ["VP_AJT", "VP"]}
P3 = {"head": [9, 9, 1, 1, 8, 9, 8, 9, 0, 9], "deprel": ["NP_SBJ", "NP_OBJ", "NP_MOD", "VP_OBJ", "NP_OBJ", "VP_MOD", "DP", "NP", "VP", "AP"]}
P4 = {"head": [w[3] for w in S4], "deprel": ["NP"] * 21}


@pytest.fixture(scope="module")
def scored():
    rows, problems = TASK.read_official(tsv([(G1, S1), (G2, S2), (G3, S3), (G4, S4)]), "dev.tsv")
    assert problems == []
    predictions = [TASK.parse_prediction(p, row) for p, row in zip((P1, P2, P3, P4), rows)]
    return rows, predictions, TASK.build_frames(pd.DataFrame(rows), predictions)


def _flat(sentences, k):
    return [w[k] for s in sentences for w in s]


# ---- gold ------------------------------------------------------------------------------------------------
def test_read_official_rows_by_hand(scored):
    rows, _, _ = scored
    assert [r["guid"] for r in rows] == [G1, G2, G3, G4]
    assert rows[0] == {"guid": G1, "sentence": "나는 밥을 먹었다.", "words": ["나는", "밥을", "먹었다."], "lemmas": ["나 는", "밥 을", "먹 었 다 ."],
                       "pos": ["NP+JX", "NNG+JKO", "VV+EP+EF+SF"], "heads": [3, 3, 0], "deprels": ["NP_SBJ", "NP_OBJ", "VP"],
                       "source": "wikitree", "n_words": 3}
    assert rows[1]["source"] == "(unknown)"  # a guid of three parts has no source
    assert [r["n_words"] for r in rows] == [3, 2, 10, 21]


def test_read_official_skips_headers_and_keeps_the_first_tab_field_as_guid():
    text = "\n".join([
        "## note",                       # no tab: a header, its lines are not a sentence
        "1\tx\tx\tNNG\t0\tNP",
        "## a b\tc",                     # a guid with a space: a header too
        "1\ty\ty\tNNG\t0\tNP",
        "## klue-dp-v1_dev_00009_x\t가 나\t다",  # the sentence may hold a tab; the guid is the first field
        "1\t가\t가\tNNG\t0\tNP",
        "",
    ])
    rows, problems = TASK.read_official(text, "f.tsv")
    assert problems == []
    assert [(r["guid"], r["sentence"], r["words"]) for r in rows] == [("klue-dp-v1_dev_00009_x", "가 나\t다", ["가"])]


def test_read_official_reports_each_bad_line_and_reads_on():
    text = "\n".join([
        "## g1_a_b_c\ts",               # line 1
        "1\t가\t가\tNNG\t0",             # line 2: five fields
        "3\t나\t나\tNNG\t0\tNP",         # line 3: index 3 after none read
        "1\t다\t다\tNNG\tx\tNP",         # line 4: a head that is no number
        "",
        "## g2_a_b_c\tt",               # line 6
        "01\t라\t라 마\tNNG\t0\tNP\textra",  # line 7: index '01', seven fields: read line by line, fine
        "2\t바\t바\tNNG+JX\t1\tNP_SBJ",
        "## g3_a_b_c\tu",
        "1\t사\t사\tNNG\t3\tNP",          # head 3 in a sentence of 2 words
        "2\t아\t아\tNNG\t0\tVP",
        "",
    ])
    rows, problems = TASK.read_official(text, "f.tsv")
    assert problems == [
        Problem("expected 6 tab-separated fields (INDEX WORD_FORM LEMMA POS HEAD DEPREL), found 5", 2, "g1_a_b_c", "f.tsv"),
        Problem("word index 3 out of sequence", 3, "g1_a_b_c", "f.tsv"),
        Problem("invalid literal for int() with base 10: 'x'", 4, "g1_a_b_c", "f.tsv"),
        Problem("word 1 has head 3, outside 0..2 (the sentence has 2 words); sentence left out", None, "g3_a_b_c", "f.tsv"),
    ]
    assert len(rows) == 1
    row = rows[0]
    assert (row["guid"], row["words"], row["lemmas"], row["pos"], row["heads"], row["deprels"], row["source"]) == (
        "g2_a_b_c", ["라", "바"], ["라 마", "바"], ["NNG", "NNG+JX"], [0, 1], ["NP", "NP_SBJ"], "c")


def test_read_official_refuses_out_of_order_indices_that_are_otherwise_well_formed():
    text = "## g_a_b_c\ts\n2\t가\t가\tNNG\t0\tNP\n1\t나\t나\tNNG\t1\tNP\n## g2_a_b_c\tt\n1\t다\t다\tNNG\t0\tNP\n"
    rows, problems = TASK.read_official(text, "f.tsv")
    assert [r["guid"] for r in rows] == ["g2_a_b_c"]
    # Read line by line, the first line is out of sequence; the second is then word 1, in sequence.
    assert [(p.message, p.line) for p in problems] == [("word index 2 out of sequence", 2)]


def test_read_official_without_a_sentence():
    with pytest.raises(InputError) as err:
        TASK.read_official("## 칼럼명 : INDEX\tWORD_FORM\n", "empty.tsv")
    assert str(err.value) == "empty.tsv: no sentence found; expected the official KLUE-DP TSV ('## guid<TAB>sentence' then word lines)"


def test_word_columns_splits_on_tabs_only_and_takes_six_fields():
    lines = ["1\t나는\t나 는\tNP+JX\t2\tNP_SBJ\t-", "2\t간다\t가 ㄴ다\tVV+EF\t0\tVP\tmore"]
    assert Dp._word_columns(lines) == (["나는", "간다"], ["나 는", "가 ㄴ다"], ["NP+JX", "VV+EF"], [2, 0], ["NP_SBJ", "VP"])
    assert Dp._word_columns(["2\t가\t가\tNNG\t0\tNP"]) is None  # not from 1


def test_rows_from_hf_by_hand():
    records = [
        {"sentence": "가 나", "word_form": ["가", "나"], "lemma": ["가", "나 이"], "pos": ["NNG", "NNG+JKS"], "head": [2, 0],
         "deprel": ["NP", "VP"]},
        {"guid": "x_y_z_w", "sentence": "s", "word_form": ["a"], "lemma": ["a"], "pos": ["NNG"], "head": [0, 1], "deprel": ["NP"]},
        {"sentence": "s", "word_form": ["a"], "lemma": ["a"], "pos": ["NNG"], "head": [5], "deprel": ["NP"]},
        {"sentence": "s", "word_form": ["a"], "pos": ["NNG"], "head": [0], "deprel": ["NP"]},
        {"guid": "h_i_j_k", "sentence": "t", "word_form": ["b"], "lemma": ["b"], "pos": ["MAG"], "head": [0], "deprel": ["AP"]},
    ]
    rows, problems = TASK.rows_from_hf(records)
    assert rows == [
        {"guid": "klue-dp-v1_dev_00000", "sentence": "가 나", "words": ["가", "나"], "lemmas": ["가", "나 이"], "pos": ["NNG", "NNG+JKS"],
         "heads": [2, 0], "deprels": ["NP", "VP"], "source": "(unknown)", "n_words": 2},
        {"guid": "h_i_j_k", "sentence": "t", "words": ["b"], "lemmas": ["b"], "pos": ["MAG"], "heads": [0], "deprels": ["AP"],
         "source": "k", "n_words": 1},
    ]
    assert [p.message for p in problems] == [
        "gold record #2: missing or bad field head, deprel and word_form differ in length",
        "gold record #3: missing or bad field word 1 has head 5, outside 0..1 (the sentence has 1 words)",
        "gold record #4: missing or bad field 'lemma'",
    ]
    assert TASK.rows_from_hf(records[:1], "train")[0][0]["guid"] == "klue-dp-v1_train_00000"


def test_bad_head_names_the_word_from_one():
    assert Dp._bad_head({"words": ["a", "b"], "heads": [0, 1]}) is None
    assert Dp._bad_head({"words": ["a", "b"], "heads": [2, -1]}) == "word 2 has head -1, outside 0..2 (the sentence has 2 words)"


# ---- predictions -----------------------------------------------------------------------------------------
def test_parse_prediction_reads_digit_strings_and_refuses_each_bad_field():
    gold = {"n_words": 2}
    assert TASK.parse_prediction({"head": ["2", 0], "deprel": ["NP", "VP"]}, gold) == {"heads": [2, 0], "deprels": ["NP", "VP"]}
    assert TASK.parse_prediction({"head": ["2", "0"], "deprel": ["NP", "VP"]}, gold) == {"heads": [2, 0], "deprels": ["NP", "VP"]}
    cases = [
        ({"deprel": ["NP", "VP"]}, "missing field 'head' (one head index per word, 0 = root)"),
        ({"head": "", "deprel": ["NP", "VP"]}, "missing field 'head' (one head index per word, 0 = root)"),
        ({"head": [2, 0]}, "missing field 'deprel' (one relation per word)"),
        ({"head": [2, 0], "deprel": ""}, "missing field 'deprel' (one relation per word)"),
        ({"head": 5, "deprel": ["NP", "VP"]}, "head must be a JSON list, found int: '5'"),
        ({"head": [2, 0], "deprel": "NP"}, "deprel must be a JSON list, found str: 'NP'"),
        ({"head": [2, "x"], "deprel": ["NP", "VP"]}, "head[1] must be an integer, found 'x'"),
        ({"head": [2], "deprel": ["NP", "VP"]}, "head has 1 and deprel 2 entries, expected 2 (one per word of the sentence)"),
        ({"head": [3, 4], "deprel": ["NP", "VP"]}, "head 3 is outside 0..2"),
        # Integers are taken as they are: a huge one is outside the sentence (not out of as_int's 32-bit range).
        ({"head": [10**13, 0], "deprel": ["NP", "VP"]}, "head 10000000000000 is outside 0..2"),
        ({"head": [2, 0], "deprel": ["ZZ", "AA"]}, "deprel 'AA' is not a KLUE-DP relation (e.g. NP_SBJ, VP, NP_OBJ)"),
    ]
    for record, message in cases:
        with pytest.raises(RecordError) as err:
            TASK.parse_prediction(record, gold)
        assert str(err.value) == message, record


def test_parse_answer_json_and_arc_lines():
    gold = {"n_words": 3}
    body = '{"head": [3, 3, 0], "deprel": ["NP_SBJ", "NP_OBJ", "VP"]}'
    text = "답: " + body + " 끝"
    start = text.index("{")
    assert TASK.parse_answer(text, gold) == Answer(text, {"head": [3, 3, 0], "deprel": ["NP_SBJ", "NP_OBJ", "VP"]},
                                                   (start, start + len(body)))
    # Arc lines; a repeated line gets its own span; trailing spaces are not in the span; other lines are skipped.
    lines = ["풀이:", "3 NP_SBJ", "3 NP_SBJ", "3\t먹었다.\t0\tVP  ", "끝"]
    text = "\n".join(lines)
    at = [0, 4, 13, 22]  # where lines 2..4 start: 3 + 1, 4 + 8 + 1, 13 + 8 + 1
    assert [text.index(line, a) for line, a in zip(lines[1:4], at[1:])] == at[1:]
    answer = TASK.parse_answer(text, gold)
    assert answer == Answer(text, {"head": [3, 3, 0], "deprel": ["NP_SBJ", "NP_SBJ", "VP"]}, None, "",
                            ((4, 12), (13, 21), (22, 22 + len("3\t먹었다.\t0\tVP"))))
    assert TASK.parse_answer("모르겠다", gold) == Answer(
        "모르겠다", None, None, "no arcs: expected one line per word ending in its head and relation, or {head, deprel}")
    assert TASK.parse_answer("1 NP\n0 VP", gold) == Answer("1 NP\n0 VP", None, None, "2 arcs for a sentence of 3 words")


def test_empty_prediction():
    assert TASK.empty_prediction({"n_words": 2}) == {"heads": [-1, -1], "deprels": ["others", "others"]}


# ---- frames ----------------------------------------------------------------------------------------------
def test_word_frame_by_hand(scored):
    _, _, frames = scored
    words = frames.details["words"]
    first = words.iloc[:15]  # S1, S2, S3
    assert list(words["index"]) == [1, 2, 3, 1, 2, *range(1, 11), *range(1, 22)]
    assert list(first["last_pos"]) == ["JX", "JKO", "SF", "MAG", "EF", *["NNG"] * 10]
    assert list(first["head_ok"]) == [True, False, True, True, True, *[True] * 4, False, *[True] * 5]
    assert list(first["gold_class"]) == ["NP_SBJ", "NP_OBJ", "VP", "AP", "VP", "NP_SBJ", "NP_OBJ", "NP_MOD", "others", "NP_AJT",
                                         "VP_MOD", "DP", "NP", "VP", "others"]
    assert list(first["pred_class"]) == ["NP_SBJ", "PAD", "VP", "VP_AJT", "VP", "NP_SBJ", "NP_OBJ", "NP_MOD", "others", "PAD",
                                         "VP_MOD", "DP", "NP", "VP", "AP"]
    assert list(first["label_ok"]) == [True, True, True, False, True, True, True, True, True, False, True, True, True, True, False]
    assert list(first["error_type"]) == ["correct", "wrong head", "correct", "wrong label", "correct", "correct", "correct", "correct",
                                         "correct", "wrong head and label", "correct", "correct", "correct", "correct", "wrong label"]
    assert list(first["distance"]) == ["2-3", "1", "root", "1", "root", "8+", "4-7", "2-3", "2-3", "4-7", "2-3", "1", "1", "root", "1"]
    assert words["correct"].sum() == 2 + 1 + 8 + 21  # S1 w1 w3, S2 w2, S3 all but w5 w10, S4 all 21
    assert words["index"].dtype.kind == "i" and words["gold_head"].dtype.kind == "i"


def test_example_frame_by_hand(scored):
    _, _, frames = scored
    ex = frames.examples
    assert list(ex["guid"]) == [G1, G2, G3, G4]
    assert list(ex["source"]) == ["wikitree", "(unknown)", "news", "news"]
    assert list(ex["head_errors"]) == [1, 0, 1, 0]
    assert list(ex["errors"]) == [1, 1, 2, 0]
    assert np.allclose(ex["uas"], [200 / 3, 100, 90, 100]) and np.allclose(ex["las"], [200 / 3, 50, 80, 100])
    assert list(ex["correct"]) == [False, False, False, True]
    assert list(ex["error_type"]) == ["head errors", "label errors only", "head errors", "correct"]
    assert list(ex["sentence_length"]) == ["1-5 words", "1-5 words", "6-10 words", "21+ words"]
    assert ex["gold_deprels"][0] == "NP_SBJ NP_OBJ VP" and ex["pred_deprels"][1] == "VP_AJT VP"
    assert np.allclose(TASK.example_scores(frames), [2 / 3, 0.5, 0.8, 1.0])
    orders = TASK.sort_orders()
    assert list(orders) == ["most word errors first", "lowest sentence UAS first", "lowest sentence LAS first"]
    assert list(orders["most word errors first"](frames)) == [-1, -1, -2, 0]
    assert np.allclose(orders["lowest sentence UAS first"](frames), [200 / 3, 100, 90, 100])
    assert np.allclose(orders["lowest sentence LAS first"](frames), [200 / 3, 50, 80, 100])


def test_confusion_puts_a_right_relation_on_a_wrong_head_apart(scored):
    _, _, frames = scored
    confusion = TASK.confusion(frames)
    assert list(confusion.columns) == ["guid", "gold", "pred"]
    assert list(confusion["guid"][:3]) == [G1] * 3
    assert list(confusion["pred"][:5]) == ["NP_SBJ", "wrong head", "VP", "VP_AJT", "VP"]
    assert confusion["pred"][9] == "NP_OBJ"  # S3 word 5: wrong head with another relation keeps it


# ---- statistics ------------------------------------------------------------------------------------------
def _reference(sentences, predictions):
    gold_head = _flat(sentences, 3)
    pred_head = [h for p in predictions for h in p["heads"]]
    merged = [d if d in KEPT else "others" for d in _flat(sentences, 4)]
    pred = [(d if d in KEPT else "others") if g == h else "PAD"
            for d, g, h in zip((d for p in predictions for d in p["deprels"]), gold_head, pred_head)]
    return {
        "uas_macro_f1": 100 * f1_score(gold_head, pred_head, average="macro"),
        "uas_micro_f1": 100 * np.mean(np.equal(gold_head, pred_head)),
        "las_macro_f1": 100 * f1_score(merged, pred, average="macro"),
        "las_micro_f1": 100 * np.mean(np.equal(merged, pred)),
    }


def _scores(stats):
    return {k: float(v[0]) for k, v in stats.scores(stats.totals()).items()}


def test_statistics_on_every_path_match_scikit_learn(scored):
    rows, predictions, frames = scored
    expected = _reference([S1, S2, S3, S4], predictions)
    assert expected["uas_micro_f1"] == pytest.approx(100 * 34 / 36)  # two heads wrong of 36 words
    assert expected["las_micro_f1"] == pytest.approx(100 * 32 / 36)  # and two labels more
    words = frames.details["words"]
    for stats, n in ((TASK.statistics(frames), 4), (TASK.row_statistics(rows, predictions), 4),
                     (TASK.detail_statistics("words", words), 36)):
        assert stats.n == n
        assert _scores(stats) == pytest.approx(expected)
    # Per sentence (S2 alone: every head right, one label of two wrong) and per word (S1 word 2 alone).
    assert _scores(TASK.statistics(frames).take(np.array([1])))["las_micro_f1"] == pytest.approx(50)
    assert _scores(TASK.detail_statistics("words", words.iloc[[1]]))["uas_micro_f1"] == 0
    with pytest.raises(KeyError, match="dp has no detail level 'entities'"):
        TASK.detail_statistics("entities", words)


def test_the_columns_kept_for_comparison_are_enough_for_statistics_and_scores(scored):
    """A compared run keeps only `compared_columns` of each level (klue_viz.compare.ranking): statistics and example scores
    must come out the same from those."""
    _, predictions, frames = scored
    keep = compared_columns(TASK)
    slim = Frames(frames.examples[list(keep["examples"])], {"words": frames.details["words"][list(keep["words"])]})
    assert _scores(TASK.statistics(slim)) == pytest.approx(_reference([S1, S2, S3, S4], predictions))
    assert np.allclose(TASK.example_scores(slim), [2 / 3, 0.5, 0.8, 1.0])


# ---- discovery -------------------------------------------------------------------------------------------
def _run(name, rows, predictions):
    return SimpleNamespace(run=name, frames=TASK.build_frames(pd.DataFrame(rows), predictions))


def test_find_suspects_by_hand(scored):
    rows = scored[0][:2]  # S1 (3 words), S2 (2 words)
    a = _run("a", rows, [{"heads": [3, 1, 0], "deprels": ["NP_OBJ", "NP_SBJ", "VP"]}, {"heads": [2, 0], "deprels": ["AP", "VNP"]}])
    b = _run("b", rows[:1], [{"heads": [3, 1, 0], "deprels": ["NP_OBJ", "NP_SBJ", "VP"]}])  # has no S2
    c = _run("c", rows, [{"heads": [3, 1, 0], "deprels": ["NP_OBJ", "NP_OBJ", "VP"]}, {"heads": [0, 0], "deprels": ["AP", "VP"]}])
    found = TASK.find_suspects([a, b, c])
    # S1 word 1: every run right head 3 but NP_OBJ for NP_SBJ -> a relation suspect; word 2: every run head 1 for 3, the
    # relations differ (NP_SBJ, NP_SBJ, NP_OBJ) -> a head suspect keeping the gold relation, not the first run's;
    # word 3 agrees with the gold.
    assert [(s.guid, s.turn, s.unit, s.gold, s.proposed, s.score) for s in found] == [
        (G1, None, "relation", "1:3:NP_SBJ", "1:3:NP_OBJ", 3.0),
        (G1, None, "head", "2:3:NP_OBJ", "2:1:NP_OBJ", 3.0),
    ]
    ev = found[1].evidence
    assert (ev.agreeing, ev.of, list(ev.runs), dict(ev.about), dict(ev.extra)) == (
        3, 3, ["a", "b", "c"], {"word": "밥을"}, {"pred_deprels": ["NP_OBJ", "NP_SBJ"]})
    # Without run b, S2 is shared: word 1 heads differ (2, 0), word 2 right head but relations differ (VNP, VP): none.
    assert [s.proposed for s in TASK.find_suspects([a, c])] == ["1:3:NP_OBJ", "2:1:NP_OBJ"]


def test_suspect_text_names_words_root_and_indices_outside():
    row = {"sentence": "나는 밥을 먹었다.", "words": ["나는", "밥을", "먹었다."]}

    def text(gold, proposed):
        return TASK.suspect_text(row, suspect_item("g", "head", gold, proposed, 1.0, None))

    assert text("2:3:NP_OBJ", "2:0:VP") == "나는 밥을 먹었다.\nword 2 '밥을': gold head 3 '먹었다.' NP_OBJ -> proposed head ROOT VP"
    assert text("1:4:A:B", "1:0:C:D") == "나는 밥을 먹었다.\nword 1 '나는': gold head 4 A:B -> proposed head ROOT C:D"
    assert text("3:-1:X", "3:1:Y") == "나는 밥을 먹었다.\nword 3 '먹었다.': gold head -1 X -> proposed head 1 '나는' Y"
    assert text("1:2", "1:3:VP") == "나는 밥을 먹었다."  # not index:head:DEPREL: the sentence alone


def test_write_patch_by_hand():
    official = tsv([(G4, S4), (G1, S1), (G2, S2), (G3, S3[:2])])  # S4 has no correction: left out, the rest read on
    corrections = {
        (G1, None): ["2:1:NP_OBJ;9:0:VP", "3:4:VP; x ;1:0:NP"],  # 9: no word 9; 3:4: no word 4 to be the head
        (G3, None): ["2:2:AP"],
        (G2, None): ["0:1:AP"],  # no word 0: nothing changes, S2 is left out
    }
    problems: list[Problem] = []
    text, count = TASK.write_patch(official, "dev.tsv", corrections, problems)
    assert count == 2
    assert text == (f"## {G1}\t나는 밥을 먹었다.\n1\t나는\t나 는\tNP+JX\t0\tNP\n2\t밥을\t밥 을\tNNG+JKO\t1\tNP_OBJ\n"
                    f"3\t먹었다.\t먹 었 다 .\tVV+EP+EF+SF\t0\tVP\n"
                    f"\n## {G3}\tw1 w2\n1\tw1\tw1\tNNG\t9\tNP_SBJ\n2\tw2\tw2\tNNG\t2\tAP\n")
    assert problems == [
        Problem("correction '9:0:VP' is not 'index:head:DEPREL' within the sentence", guid=G1, file="dev.tsv"),
        Problem("correction '3:4:VP' is not 'index:head:DEPREL' within the sentence", guid=G1, file="dev.tsv"),
        Problem("correction 'x' is not 'index:head:DEPREL' within the sentence", guid=G1, file="dev.tsv"),
        Problem("correction '0:1:AP' is not 'index:head:DEPREL' within the sentence", guid=G2, file="dev.tsv"),
    ]
    # The last word and the last head are within the sentence.
    text, count = TASK.write_patch(tsv([(G2, S2)]), "dev.tsv", {(G2, None): ["2:2:VP"]}, [])
    assert (count, text.split("\n")[2]) == (1, "2\t좋다\t좋 다\tVA+EF\t2\tVP")
