"""Bootstrap intervals and paired comparisons behave as the statistics say they should."""

from __future__ import annotations

import math
import random
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import auc, precision_recall_curve

from klue_viz.bootstrap import Weighted, compare_runs, confidence_intervals
from klue_viz.demo import DEMO_BENCHMARK, demo_runs
from klue_viz.evaluate import evaluate_bytes, evaluate_file, load_gold
from klue_viz.results import Frames
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


def copied(frames: Frames, positions) -> Frames:
    """The reference resample: the examples at `positions` copied, each copy with its own detail rows and guid."""
    examples = frames.examples.iloc[list(positions)].reset_index(drop=True)
    examples["guid"] = [f"{g}#{k}" for k, g in enumerate(examples["guid"])]
    details = {}
    for name, detail in frames.details.items():
        parts = []
        for k, guid in enumerate(frames.examples["guid"].iloc[list(positions)]):
            rows = detail[detail["guid"] == guid].copy()
            rows["guid"] = f"{guid}#{k}"
            parts.append(rows)
        details[name] = pd.concat(parts, ignore_index=True)
    return Frames(examples, details)


@pytest.mark.parametrize("name", ["ynat", "sts", "nli", "ner", "re", "dp", "mrc", "wos"])
def test_a_resample_as_counts_scores_like_copies_of_its_examples(name):
    """Bootstrap as weights: a count vector over examples gives the metrics of the resample built by copying rows."""
    task = get_task(name)
    run = next(p for p in demo_runs(name) if name != "re" or "roberta" in p.name)  # the RE run that gives probabilities
    result = evaluate_file(task, load_gold(task, DEMO_BENCHMARK), run)
    n = len(result.frames.examples)
    positions = np.random.default_rng(5).integers(0, n, n)
    counts = np.bincount(positions, minlength=n)[None, :].astype(float)
    assert (counts == 0).any() and (counts > 1).any()
    weighted = Weighted(task.statistics(result.frames)).scores(counts)
    expected = task.score(copied(result.frames, positions)).values
    for key, value in expected.items():
        got = float(weighted[key][0])
        assert (value is None and np.isnan(got)) or got == pytest.approx(value, abs=1e-9), key
    if name == "re" and expected["auprc"] is not None:
        # AUPRC of the copies by scikit-learn, independently of klue-viz's weighted curve.
        ex = result.frames.examples.iloc[positions]
        probs = np.array(ex["probs"].tolist())
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            areas = [auc(*precision_recall_curve(ex["gold"].to_numpy() == label, probs[:, c])[1::-1]) for c, label in enumerate(task.labels)]
        assert float(weighted["auprc"][0]) == pytest.approx(100 * np.mean(areas), abs=1e-9)


def test_paired_comparison_of_the_two_demo_nli_runs():
    task = get_task("nli")
    gold = load_gold(task, DEMO_BENCHMARK)
    few_shot, roberta = (evaluate_file(task, gold, path) for path in demo_runs("nli"))
    (comparison,) = compare_runs(task, roberta.frames, few_shot.frames, samples=300)
    assert comparison.difference == pytest.approx(roberta.scores.values["accuracy"] - few_shot.scores.values["accuracy"])
    assert comparison.low <= comparison.difference <= comparison.high and comparison.first_better > 0.9
