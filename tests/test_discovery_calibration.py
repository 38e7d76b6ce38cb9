"""Calibration: ECE/MCE known answers worked out by hand, the bin rule at its edges, and the CLI output."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from klue_viz.cli.main import main
from klue_viz.discovery.calibration import calibration, coverage_curve, predicted_confidence, run_calibration
from klue_viz.reading.demo import DEMO_BENCHMARK, demo_runs
from klue_viz.scoring.evaluate import evaluate_bytes, load_gold
from klue_viz.tasks import get_task
from klue_viz.tasks.kit import bin_of, confidence_bucket
from tests.conftest import jsonl


def test_ece_and_mce_by_hand():
    # bin 9: 0.95, 0.95, 1.0 -> accuracy 2/3, confidence 0.9667, gap 0.3; bin 8: 0.85 right (gap 0.15); bin 1: 0.15 wrong (gap 0.15)
    # ECE = 3/5 * 0.3 + 1/5 * 0.15 + 1/5 * 0.15 = 0.24 ; MCE = 0.3
    cal = calibration(np.array([0.95, 0.95, 0.85, 0.15, 1.0]), np.array([True, False, True, False, True]))
    assert cal.ece == pytest.approx(24.0)
    assert cal.mce == pytest.approx(30.0)
    assert [b["n"] for b in cal.bins] == [0, 1, 0, 0, 0, 0, 0, 0, 1, 3]
    assert cal.bins[9]["accuracy"] == pytest.approx(200 / 3) and cal.bins[9]["confidence"] == pytest.approx(290 / 3)
    assert cal.bins[0]["accuracy"] is None and (cal.bins[0]["low"], cal.bins[0]["high"]) == (0.0, 0.1)


def test_perfectly_calibrated_bins_give_zero():
    confidence = np.array([0.25] * 4 + [0.75] * 4)
    correct = np.array([True, False, False, False, True, True, True, False])
    cal = calibration(confidence, correct)
    assert cal.ece == pytest.approx(0.0) and cal.mce == pytest.approx(0.0)


def test_bin_rule_at_the_edges():
    # min(floor(10c), 9): 0.3 and 0.7 are not split by floating point, 1.0 joins the last bin
    assert bin_of(np.array([0.0, 0.0999, 0.1, 0.3, 0.7, 0.9999, 1.0])).tolist() == [0, 0, 1, 3, 7, 9, 9]
    assert calibration(np.array([]), np.array([], dtype=bool)) is None


def test_coverage_keeps_ties_together():
    curve = coverage_curve(np.array([0.9, 0.8, 0.8, 0.1]), np.array([True, False, True, False]), steps=4)
    assert curve["kept"].tolist() == [4, 3, 1]
    assert curve["accuracy"].tolist() == pytest.approx([50.0, 200 / 3, 100.0])


def test_confidence_is_the_probability_of_the_predicted_class():
    task = get_task("ynat")
    gold = load_gold(task, DEMO_BENCHMARK)
    rows = gold.rows[:2]
    probs = [0.6, 0.3, 0.1, 0, 0, 0, 0]
    records = [{"guid": rows[0]["guid"], "label": "경제", "probs": probs}, {"guid": rows[1]["guid"], "label": "IT과학", "probs": probs}]
    result = evaluate_bytes(task, gold, jsonl(records), "two.jsonl")
    cal = run_calibration(task, result.frames.examples)
    assert cal.n == 2
    assert cal.bins[3]["n"] == 1 and cal.bins[6]["n"] == 1  # 0.3 (the label given, not the argmax) and 0.6
    assert set(result.frames.examples["confidence_bin"]) == {"0.6-0.7"}  # the slice shows the top probability


def _independent_ece(gold_path, pred_path) -> tuple[float, int]:
    labels = ("IT과학", "경제", "사회", "생활문화", "세계", "스포츠", "정치")
    gold = {r["guid"]: r["label"] for r in json.loads(gold_path.read_text(encoding="utf-8"))}
    bins = [[] for _ in range(10)]
    for line in pred_path.read_text(encoding="utf-8").splitlines():
        r = json.loads(line)
        if r["guid"] not in gold or not r.get("probs"):
            continue
        c = r["probs"][labels.index(r["label"])] / math.fsum(r["probs"])  # rows are read scaled to sum 1 (docs/metrics.md)
        bins[min(math.floor(10 * c), 9)].append((c, r["label"] == gold[r["guid"]]))
    n = sum(len(b) for b in bins)
    return 100 * sum(len(b) / n * abs(sum(ok for _, ok in b) / len(b) - sum(c for c, _ in b) / len(b)) for b in bins if b), n


def test_evaluate_out_has_calibration_when_probabilities_are_given(tmp_path):
    run = next(demo_runs("ynat"))
    out = tmp_path / "out.json"
    assert main(["evaluate", "--task", "ynat", "--gold", str(DEMO_BENCHMARK), "--pred", str(run), "--out", str(out)]) == 0
    written = json.loads(out.read_text(encoding="utf-8"))["runs"][0]["calibration"]
    expected, n = _independent_ece(DEMO_BENCHMARK / "ynat-v1.1" / "ynat-v1.1_dev.json", run)
    assert written["ece"] == pytest.approx(expected) and sum(b["n"] for b in written["bins"]) == n
    assert set(written["bins"][0]) == {"low", "high", "n", "accuracy", "confidence"}
    ner = next(demo_runs("ner"))
    assert main(["evaluate", "--task", "ner", "--gold", str(DEMO_BENCHMARK), "--pred", str(ner), "--out", str(out)]) == 0
    assert "calibration" not in json.loads(out.read_text(encoding="utf-8"))["runs"][0]


# ---- Contracts the surviving mutants showed untested (docs/mutation.md) ------------------------------


def test_the_calibration_record_holds_ece_mce_n_and_the_bins_and_each_bin_its_edges():
    cal = calibration(np.array([0.35, 0.35]), np.array([True, False]))  # one bin: accuracy 0.5, confidence 0.35, gap 0.15
    record = cal.to_dict()
    assert set(record) == {"ece", "mce", "n", "bins"}
    assert (record["ece"], record["mce"], record["n"]) == (pytest.approx(15.0), pytest.approx(15.0), 2)
    assert [(b["low"], b["high"]) for b in record["bins"]] == [(k / 10, (k + 1) / 10) for k in range(10)]


def test_bins_are_integers_and_a_confidence_below_0_falls_in_the_first():
    bins = bin_of(np.array([-0.01, 0.55]))
    assert bins.tolist() == [0, 5] and bins.dtype.kind == "i"


def _examples(rows):
    return pd.DataFrame(rows, columns=["probs", "pred", "correct"])


def test_only_examples_with_probabilities_and_a_known_predicted_label_have_a_confidence():
    labels = ("a", "b")
    examples = _examples([
        ([0.9, 0.1], "(none)", False),  # a label the task does not have
        (None, "a", True),  # no probabilities
        ([0.2, 0.8], None, False),  # no prediction (--strict)
        ([0.3, 0.7], "b", True),
        ([0.6, 0.4], "a", False),
    ])
    confidence, correct = predicted_confidence(examples, labels)
    assert confidence.tolist() == [0.7, 0.6] and correct.tolist() == [True, False]


def test_a_task_without_labels_or_a_run_without_probabilities_has_no_calibration():
    assert run_calibration(get_task("ner"), _examples([([1.0], "a", True)])) is None
    ynat = get_task("ynat")
    assert run_calibration(ynat, pd.DataFrame({"pred": ["정치"], "correct": [True]})) is None


def test_the_coverage_curve_names_its_columns_and_counts_coverage_in_percent():
    empty = coverage_curve(np.array([]), np.array([], dtype=bool))
    assert list(empty.columns) == ["coverage", "accuracy", "threshold", "kept"] and empty.empty
    one = coverage_curve(np.array([0.7]), np.array([True]), steps=4)
    assert one.to_dict("records") == [{"coverage": 100.0, "accuracy": 100.0, "threshold": 0.7, "kept": 1}]
    confidence = np.linspace(0.99, 0.0, 100)  # 100 distinct confidences, most confident first
    correct = np.arange(100) < 60  # the 60 most confident are right
    curve = coverage_curve(confidence, correct, steps=4)
    assert list(curve.columns) == ["coverage", "accuracy", "threshold", "kept"]
    assert curve["kept"].tolist() == [100, 75, 50, 25] and curve["coverage"].tolist() == [100.0, 75.0, 50.0, 25.0]
    assert curve["accuracy"].tolist() == pytest.approx([60.0, 80.0, 100.0, 100.0])
    assert curve["threshold"].tolist() == pytest.approx([confidence[99], confidence[74], confidence[49], confidence[24]])
    # By default twenty steps of 5%.
    assert coverage_curve(confidence, correct)["kept"].tolist() == list(range(100, 0, -5))


def test_a_curve_with_ties_is_numbered_from_0():
    curve = coverage_curve(np.array([0.9, 0.8, 0.8, 0.1]), np.array([True, False, True, False]), steps=4)
    assert list(curve.index) == [0, 1, 2]


def test_confidence_buckets_are_strings_on_the_frames_index_and_name_what_has_no_probabilities():
    buckets = confidence_bucket(pd.Series([np.nan, 0.65, 1.0], index=[7, 3, 5]))
    assert buckets.tolist() == ["(no probabilities)", "0.6-0.7", "0.9-1.0"]
    assert buckets.index.tolist() == [7, 3, 5] and buckets.dtype == "string"
