"""`--strict`: a gold example without a prediction counts as an empty (wrong) prediction, never as its gold answer.

For every task: a small gold set, a file that leaves out one example and gets the others right,
the value without --strict (the covered examples only: 100) and with it (worked out by hand). The
same numbers are checked through `evaluate_bytes(strict=True)` and through `klue-viz evaluate --strict`.
"""

from __future__ import annotations

import json
import math

import pytest
from seqeval.metrics import f1_score as seqeval_f1
from seqeval.scheme import IOB2
from sklearn.metrics import f1_score

from klue_viz.cli.main import main
from klue_viz.scoring.evaluate import evaluate_bytes, load_gold
from klue_viz.tasks import get_task
from tests import cases
from tests.conftest import jsonl
from tests.official import dp_sentences, ner_sentences

NER_SENTENCES = [
    ("klue-ner-v1_dev_00000-wikitree", [("박", "B-PS"), ("지", "I-PS"), ("성", "I-PS"), (" ", "O"), ("서", "B-LC"), ("울", "I-LC")]),
    ("klue-ner-v1_dev_00001-wikitree", [("김", "B-PS"), ("연", "I-PS"), ("아", "I-PS")]),
]
DP_SENTENCES = [
    ("klue-dp-v1_dev_00000_wikitree", [("철수가", 2, "NP_SBJ"), ("밥을", 0, "VP"), ("먹다", 2, "VP_CMP")]),
    ("klue-dp-v1_dev_00001_wikitree", [("가", 2, "NP_SBJ"), ("나", 0, "VP")]),
]
A, B = "식당-가격대-dontcare", "식당-지역-서울 동쪽"

#: task -> (gold content, prediction records that leave one example out, values without and with --strict)
CASES = {
    "ynat": (
        cases.ynat(["정치", "경제", "사회"]),
        [{"guid": "ynat-v1_dev_00000", "label": "정치"}, {"guid": "ynat-v1_dev_00001", "label": "경제"}],
        {"macro_f1": 100.0},
        # 사회 missed (fn 1, F1 0); "no label" is a miss, not a class (docs/metrics.md); 정치, 경제 1 -> 2/3.
        {"macro_f1": 200 / 3},
    ),
    "nli": (
        cases.nli(["entailment", "neutral", "contradiction", "neutral"]),
        [{"guid": f"klue-nli-v1_dev_{k:05d}", "label": g} for k, g in enumerate(["entailment", "neutral", "contradiction"])],
        {"accuracy": 100.0},
        {"accuracy": 75.0},  # 3 of 4
    ),
    "sts": (
        cases.sts([1.0, 4.0, 2.0, 4.5]),
        [{"guid": f"klue-sts-v1_dev_{k:05d}", "score": s} for k, s in enumerate([1.0, 4.0, 2.0])],
        {"pearsonr": 100.0, "f1": 100.0},
        # The missing pair scores 0: pred (1, 4, 2, 0) vs gold (1, 4, 2, 4.5). Deviations x4 / x8: (-3, 9, 1, -7) and
        # (-15, 9, -7, 13): r = 28 / sqrt(140 * 524). Binary: gold (0, 1, 0, 1), pred (0, 1, 0, 0) -> F1 2/3.
        {"pearsonr": 100 * 28 / math.sqrt(140 * 524), "f1": 200 / 3},
    ),
    "ner": (
        cases.ner_tsv(NER_SENTENCES),
        [{"guid": NER_SENTENCES[0][0], "tags": [t for _, t in NER_SENTENCES[0][1]]}],
        {"entity_macro_f1": 100.0, "character_macro_f1": 100.0},
        # Entities: PS tp 1, fn 1 -> 2/3; LC 1 -> 5/6. Characters (spaces dropped, 4 [CLS]/[SEP] O): O tp 4, fp 3 -> 8/11;
        # B-PS tp 1, fn 1 -> 2/3; I-PS tp 2, fn 2 -> 2/3; B-LC, I-LC 1; 8 absent tags 1 each.
        {"entity_macro_f1": 100 * 5 / 6, "character_macro_f1": 100 * (8 / 11 + 2 / 3 + 2 / 3 + 10) / 13},
    ),
    "re": (
        cases.re_records(["per:title", "no_relation", "org:founded"]),
        [{"guid": "klue-re-v1_dev_00000", "label": "per:title"}, {"guid": "klue-re-v1_dev_00001", "label": "no_relation"}],
        {"micro_f1": 100.0, "auprc": None},
        {"micro_f1": 200 / 3, "auprc": None},  # org:founded missed: tp 1, fn 1 -> 2/3
    ),
    "dp": (
        cases.dp_tsv(DP_SENTENCES),
        [{"guid": DP_SENTENCES[0][0], "head": [2, 0, 2], "deprel": ["NP_SBJ", "VP", "VP_CMP"]}],
        {"uas_macro_f1": 100.0, "uas_micro_f1": 100.0, "las_macro_f1": 100.0, "las_micro_f1": 100.0},
        # The missing sentence has no arcs: its 2 words are wrong -> UAS = LAS = 3/5. Head classes: 2 (gold 3, pred 2) -> 4/5,
        # 0 (gold 2, pred 1) -> 2/3; "no head" is a miss, not a class: 11/15. LAS classes: NP_SBJ 2/3, VP 2/3, others 1,
        # PAD 0 (the official wrong-head class) -> 7/12.
        {"uas_macro_f1": 100 * 11 / 15, "uas_micro_f1": 60.0, "las_macro_f1": 100 * 7 / 12, "las_micro_f1": 60.0},
    ),
    "mrc": (
        cases.mrc([["서울"], [], ["부산광역시"]]),
        [{"guid": "klue-mrc-v1_dev_00000", "answer": "서울"}, {"guid": "klue-mrc-v1_dev_00001", "answer": ""}],
        {"exact_match": 100.0, "rouge_w": 100.0},
        {"exact_match": 200 / 3, "rouge_w": 200 / 3},  # the missing answerable question gets "" -> EM 0, ROUGE-W 0
    ),
    "wos": (
        cases.wos([[[A], [A, B]]]),
        [{"guid": "wos-v1_dev_00000", "turn": 0, "state": [A]}],
        {"joint_goal_acc": 100.0, "slot_micro_f1": 100.0},
        {"joint_goal_acc": 50.0, "slot_micro_f1": 50.0},  # turn 1 gets the empty state: not joint, F1 0
    ),
}


def assert_values(actual: dict, expected: dict) -> None:
    assert set(actual) == set(expected)
    for key, value in expected.items():
        if value is None:
            assert actual[key] is None, key
        else:
            assert actual[key] == pytest.approx(value, abs=1e-9), key


@pytest.mark.parametrize("task_name", list(CASES))
def test_strict_scores_a_missing_example_as_an_empty_prediction(task_name):
    gold_content, records, lenient, strict = CASES[task_name]
    task, gold = get_task(task_name), cases.gold_of(task_name, gold_content)
    n = len(records) + 1  # every case leaves out exactly one gold example (WoS: one user turn)
    plain = evaluate_bytes(task, gold, jsonl(records), "p.jsonl")
    assert_values(plain.scores.values, lenient)
    assert (plain.coverage.n_gold, plain.coverage.n_scored, plain.coverage.n_missing) == (n, n - 1, 1)
    hard = evaluate_bytes(task, gold, jsonl(records), "p.jsonl", strict=True)
    assert_values(hard.scores.values, strict)
    assert (hard.coverage.n_scored, hard.coverage.n_missing) == (n, 1)
    assert hard.frames.examples["has_prediction"].sum() == n - 1


@pytest.mark.parametrize("task_name", list(CASES))
def test_cli_strict_writes_the_same_values(task_name, tmp_path):
    gold_content, records, lenient, strict = CASES[task_name]
    gold_path = tmp_path / cases.OFFICIAL_NAMES[task_name]
    gold_path.write_text(cases.gold_text(task_name, gold_content), encoding="utf-8")
    pred = tmp_path / "p.jsonl"
    pred.write_bytes(jsonl(records))
    for flag, expected in (([], lenient), (["--strict"], strict)):
        out = tmp_path / "out.json"
        assert main(["evaluate", "--task", task_name, "--gold", str(gold_path), "--pred", str(pred), "--out", str(out), *flag]) == 0
        payload = json.loads(out.read_text(encoding="utf-8"))
        assert payload["strict"] is bool(flag)
        assert_values(payload["metrics"], expected)
        assert payload["runs"][0]["coverage"]["n_missing"] == 1


@pytest.mark.slow
def test_strict_on_the_ner_dev_set_matches_seqeval_with_empty_sentences(shared):
    """Half the dev sentences predicted (gold tags), half missing: --strict scores the missing ones as all-O."""
    path = shared / "klue-ner-v1.1" / "klue-ner-v1.1_dev.tsv"
    official = ner_sentences(path)
    records = [{"guid": s["guid"], "tags": s["tags"]} for s in official[::2]]
    result = evaluate_bytes(get_task("ner"), load_gold(get_task("ner"), path), jsonl(records), "p.jsonl", strict=True)
    gold = [[t for c, t in zip(s["chars"], s["tags"]) if c != " "] for s in official]
    pred = [g if k % 2 == 0 else ["O"] * len(g) for k, g in enumerate(gold)]
    tags = ["B-PS", "I-PS", "B-LC", "I-LC", "B-OG", "I-OG", "B-DT", "I-DT", "B-TI", "I-TI", "B-QT", "I-QT", "O"]
    character = f1_score([t for s in gold for t in ["O", *s, "O"]], [t for s in pred for t in ["O", *s, "O"]], labels=tags, average="macro", zero_division=1)
    assert result.coverage.n_missing == 2500 and result.coverage.n_scored == 5000
    assert result.scores.values["entity_macro_f1"] == pytest.approx(100 * seqeval_f1(gold, pred, average="macro", mode="strict", scheme=IOB2), abs=1e-9)
    assert result.scores.values["character_macro_f1"] == pytest.approx(100 * character, abs=1e-9)


def test_strict_on_the_dp_dev_set_counts_every_word_of_a_missing_sentence_wrong(shared):
    path = shared / "klue-dp-v1.1" / "klue-dp-v1.1_dev.tsv"
    official = dp_sentences(path)
    records = [{"guid": s["guid"], "head": s["heads"], "deprel": s["deprels"]} for s in official[:1500]]
    gold = load_gold(get_task("dp"), path)
    result = evaluate_bytes(get_task("dp"), gold, jsonl(records), "p.jsonl", strict=True)
    right = sum(len(s["heads"]) for s in official[:1500])
    total = sum(len(s["heads"]) for s in official)
    assert result.scores.values["uas_micro_f1"] == pytest.approx(100 * right / total, abs=1e-9)
    assert result.scores.values["las_micro_f1"] == pytest.approx(100 * right / total, abs=1e-9)
    lenient = evaluate_bytes(get_task("dp"), gold, jsonl(records), "p.jsonl")
    assert lenient.scores.values["uas_micro_f1"] == 100.0 and lenient.coverage.n_missing == 500
