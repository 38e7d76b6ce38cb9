"""Bootstrap intervals and paired comparisons behave as the statistics say they should."""

from __future__ import annotations

import math
import random

import pytest

from klue_viz.bootstrap import compare_runs, confidence_intervals, resample
from klue_viz.demo import DEMO_BENCHMARK, demo_runs
from klue_viz.evaluate import evaluate_bytes, evaluate_file, load_gold
from klue_viz.tasks import get_task
from tests.conftest import jsonl


@pytest.fixture(scope="module")
def nli_gold(shared):
    return load_gold(get_task("nli"), shared / "klue-nli-v1.1" / "klue-nli-v1.1_dev.json")


def test_accuracy_interval_matches_the_normal_approximation(nli_gold):
    rng = random.Random(1)
    preds = [{"guid": r["guid"], "label": r["gold"] if rng.random() < 0.8 else "neutral"} for r in nli_gold.rows]
    result = evaluate_bytes(get_task("nli"), nli_gold, jsonl(preds), "p.jsonl")
    p = result.scores.values["accuracy"] / 100
    low, high = confidence_intervals(get_task("nli"), result.frames, samples=400)["accuracy"]
    half_width = 1.96 * math.sqrt(p * (1 - p) / len(preds)) * 100
    assert low < 100 * p < high
    assert (high - low) / 2 == pytest.approx(half_width, rel=0.2)


def test_a_perfect_run_has_a_degenerate_interval_and_identical_runs_do_not_differ(nli_gold):
    perfect = evaluate_bytes(get_task("nli"), nli_gold, jsonl({"guid": r["guid"], "label": r["gold"]} for r in nli_gold.rows[:300]), "p.jsonl")
    assert confidence_intervals(get_task("nli"), perfect.frames, samples=50)["accuracy"] == (100.0, 100.0)
    (same,) = compare_runs(get_task("nli"), perfect.frames, perfect.frames, samples=50)
    assert (same.difference, same.low, same.high, same.first_better) == (0.0, 0.0, 0.0, 0.0)


def test_resampling_carries_detail_rows_with_their_examples():
    task = get_task("ner")
    result = evaluate_file(task, load_gold(task, DEMO_BENCHMARK), next(demo_runs("ner")))
    first = result.frames.examples["guid"].iloc[0]
    doubled = resample(result.frames, [0, 0])
    entities = result.frames.details["entities"]
    assert len(doubled.details["entities"]) == 2 * int((entities["guid"] == first).sum())
    # Scoring a sample made of every example once gives the headline numbers back.
    assert task.score(resample(result.frames, list(range(len(result.frames.examples))))).values == result.scores.values


def test_paired_comparison_of_the_two_demo_nli_runs():
    task = get_task("nli")
    gold = load_gold(task, DEMO_BENCHMARK)
    few_shot, roberta = (evaluate_file(task, gold, path) for path in demo_runs("nli"))
    (comparison,) = compare_runs(task, roberta.frames, few_shot.frames, samples=300)
    assert comparison.difference == pytest.approx(roberta.scores.values["accuracy"] - few_shot.scores.values["accuracy"])
    assert comparison.low <= comparison.difference <= comparison.high and comparison.first_better > 0.9
