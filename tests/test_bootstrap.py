"""Bootstrap intervals and paired comparisons behave as the statistics say they should."""

from __future__ import annotations

import math
import random
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import accuracy_score, auc, precision_recall_curve

from klue_viz.core.results import Frames
from klue_viz.metrics import official as metrics
from klue_viz.reading.demo import DEMO_BENCHMARK, demo_runs
from klue_viz.scoring import bootstrap
from klue_viz.scoring.bootstrap import Weighted, compare_runs, confidence_intervals
from klue_viz.scoring.evaluate import evaluate_bytes, evaluate_file, load_gold
from klue_viz.tasks import get_task
from tests.cases import nli_run
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


def test_paired_comparison_resamples_both_runs_alike(nli_gold):
    """B is A with 30 more errors: on every paired resample A >= B, so the paired interval starts at or above 0;
    resampling the runs independently would put it well below 0."""
    nli = get_task("nli")
    rng = random.Random(11)
    first = [r["gold"] if rng.random() < 0.8 else "neutral" for r in nli_gold.rows]
    right = [k for k, (r, p) in enumerate(zip(nli_gold.rows, first)) if r["gold"] == p and p != "contradiction"]
    second = list(first)
    for k in right[:30]:
        second[k] = "contradiction"
    runs = [evaluate_bytes(nli, nli_gold, jsonl({"guid": r["guid"], "label": p} for r, p in zip(nli_gold.rows, preds)), "p.jsonl") for preds in (first, second)]
    (paired,) = compare_runs(nli, runs[0].frames, runs[1].frames, samples=400)
    assert paired.difference == pytest.approx(100 * 30 / len(first))
    assert 0 <= paired.low < paired.difference < paired.high and paired.first_better > 0.99
    # Unpaired, the difference of two accuracies of ~80% on 3,000 pairs spreads about +-2 points.
    a = confidence_intervals(nli, runs[0].frames, samples=400)["accuracy"]
    assert a[1] - a[0] > 2 * (paired.high - paired.low)
    # The share of resamples is counted over exactly `samples` resamples.
    (few,) = compare_runs(nli, runs[0].frames, runs[1].frames, samples=7)
    assert (few.first_better * 7) == pytest.approx(round(few.first_better * 7))


def test_paired_comparison_uses_only_the_examples_both_runs_scored(nli_gold):
    nli = get_task("nli")
    rows = nli_gold.rows
    wrong = {"entailment": "neutral", "neutral": "contradiction", "contradiction": "entailment"}
    # Right on the first 1,000 pairs, wrong on the other 2,000; the second run covers only the first 1,000.
    labels = [r["gold"] if k < 1000 else wrong[r["gold"]] for k, r in enumerate(rows)]
    full = evaluate_bytes(nli, nli_gold, jsonl({"guid": r["guid"], "label": label} for r, label in zip(rows, labels)), "a.jsonl")
    half = evaluate_bytes(nli, nli_gold, jsonl({"guid": r["guid"], "label": "neutral"} for r in rows[999::-1]), "b.jsonl")
    (comparison,) = compare_runs(nli, full.frames, half.frames, samples=50)
    expected = 100 - 100 * accuracy_score([r["gold"] for r in rows[:1000]], ["neutral"] * 1000)
    assert comparison.difference == pytest.approx(expected)
    assert comparison.low > 0.9 * expected and comparison.first_better == 1.0


def test_paired_auprc_follows_each_run_s_examples_to_the_shared_ones():
    """AUPRC does not sum: its paired resamples carry each run's own probability rows, matched by guid."""
    re_task = get_task("re")
    gold = load_gold(re_task, DEMO_BENCHMARK)
    gen = np.random.default_rng(3)
    runs, tables = [], []
    for size in (len(gold.rows), 20):
        rows = gold.rows[:size][::-1] if size < len(gold.rows) else gold.rows
        probs = gen.dirichlet(np.ones(30), size=len(rows))
        runs.append(evaluate_bytes(re_task, gold, jsonl({"guid": r["guid"], "probs": p.tolist()} for r, p in zip(rows, probs)), "p.jsonl"))
        tables.append({r["guid"]: p for r, p in zip(rows, probs)})
    shared = [r["guid"] for r in gold.rows[:20]]
    labels = np.array([r["gold"] for r in gold.rows[:20]])

    def auprc(table):
        probs = np.array([table[g] for g in shared])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return 100 * np.mean([auc(*precision_recall_curve(labels == rel, probs[:, c])[1::-1]) for c, rel in enumerate(metrics.RE_RELATIONS)])

    comparisons = {c.metric: c for c in compare_runs(re_task, runs[0].frames, runs[1].frames, samples=30)}
    assert comparisons["auprc"].difference == pytest.approx(auprc(tables[0]) - auprc(tables[1]), abs=1e-9)
    assert comparisons["auprc"].low <= comparisons["auprc"].high


def test_a_metric_undefined_for_one_run_is_left_out_of_the_comparison(shared):
    sts = get_task("sts")
    gold = load_gold(sts, shared)
    constant = evaluate_bytes(sts, gold, jsonl({"guid": r["guid"], "score": 3.0} for r in gold.rows), "a.jsonl")
    rng = random.Random(2)
    noisy = evaluate_bytes(sts, gold, jsonl({"guid": r["guid"], "score": r["gold"] + rng.gauss(0, 1)} for r in gold.rows), "b.jsonl")
    assert [c.metric for c in compare_runs(sts, constant.frames, noisy.frames, samples=20)] == ["f1"]
    assert [c.metric for c in compare_runs(sts, noisy.frames, constant.frames, samples=20)] == ["f1"]


def test_one_resample_or_one_example_still_gives_an_interval(nli_gold):
    nli = get_task("nli")
    (result, hits) = nli_run(nli_gold, 0.3, 3, 50)
    low, high = confidence_intervals(nli, result.frames, samples=1)["accuracy"]
    assert low == high and 0 <= low <= 100
    assert len(compare_runs(nli, result.frames, result.frames, samples=1)) == 1
    one = evaluate_bytes(nli, nli_gold, jsonl([{"guid": nli_gold.rows[0]["guid"], "label": nli_gold.rows[0]["gold"]}]), "p.jsonl")
    assert confidence_intervals(nli, one.frames, samples=5)["accuracy"] == (100.0, 100.0)


def test_resamples_taken_in_chunks_are_the_same_resamples(nli_gold, monkeypatch):
    nli = get_task("nli")
    (first, _), (second, _) = nli_run(nli_gold, 0.3, 1, 500), nli_run(nli_gold, 0.4, 2, 500)
    whole_ci = confidence_intervals(nli, first.frames, samples=7, level=0.5)
    whole = compare_runs(nli, first.frames, second.frames, samples=7, level=0.5)
    monkeypatch.setattr(bootstrap, "CHUNK_CELLS", 3 * 500)  # three resamples per chunk: 3 + 3 + 1
    assert confidence_intervals(nli, first.frames, samples=7, level=0.5) == whole_ci
    assert compare_runs(nli, first.frames, second.frames, samples=7, level=0.5) == whole


def test_an_interval_is_none_where_the_metric_is_undefined_on_every_resample(shared):
    sts = get_task("sts")
    gold = load_gold(sts, shared)
    result = evaluate_bytes(sts, gold, jsonl({"guid": r["guid"], "score": 3.0} for r in gold.rows), "p.jsonl")
    intervals = confidence_intervals(sts, result.frames, samples=50)
    assert intervals["pearsonr"] is None and intervals["f1"] is not None


def test_intervals_equal_a_bootstrap_written_out_with_the_same_draws(nli_gold):
    """Accuracy on resamples drawn with numpy's seeded generator (n draws with replacement each), percentiles by hand."""
    nli = get_task("nli")
    (first, hits_a), (second, hits_b) = nli_run(nli_gold, 0.3, 1, 300), nli_run(nli_gold, 0.25, 2, 300)
    draws = np.random.default_rng(4).integers(0, 300, size=(200, 300))
    acc_a, acc_b = 100 * hits_a[draws].mean(axis=1), 100 * hits_b[draws].mean(axis=1)
    low, high = confidence_intervals(nli, first.frames, samples=200, level=0.9, seed=4)["accuracy"]
    assert (low, high) == (pytest.approx(np.percentile(acc_a, 5), abs=1e-9), pytest.approx(np.percentile(acc_a, 95), abs=1e-9))
    (c,) = compare_runs(nli, first.frames, second.frames, samples=200, level=0.8, seed=4)
    diff = acc_a - acc_b
    assert c.metric == "accuracy" and c.difference == pytest.approx(100 * (hits_a.mean() - hits_b.mean()), abs=1e-9)
    assert (c.low, c.high) == (pytest.approx(np.percentile(diff, 10), abs=1e-9), pytest.approx(np.percentile(diff, 90), abs=1e-9))
    assert c.first_better == pytest.approx(np.mean(diff > 0), abs=1e-12)


def test_paired_pearson_intervals_equal_a_bootstrap_written_out(shared):
    sts = get_task("sts")
    gold = load_gold(sts, shared)
    rng = random.Random(8)
    y = np.array([r["gold"] for r in gold.rows])
    xa = y + np.array([rng.gauss(0, 0.8) for _ in y])
    xb = y + np.array([rng.gauss(0, 1.0) for _ in y])
    runs = [evaluate_bytes(sts, gold, jsonl({"guid": r["guid"], "score": float(v)} for r, v in zip(gold.rows, x)), "p.jsonl") for x in (xa, xb)]
    draws = np.random.default_rng(6).integers(0, len(y), size=(100, len(y)))
    diff = 100 * np.array([np.corrcoef(xa[d], y[d])[0, 1] - np.corrcoef(xb[d], y[d])[0, 1] for d in draws])
    (c, _) = compare_runs(sts, runs[0].frames, runs[1].frames, samples=100, level=0.8, seed=6)
    assert c.metric == "pearsonr"
    assert (c.low, c.high) == (pytest.approx(np.percentile(diff, 10), abs=1e-9), pytest.approx(np.percentile(diff, 90), abs=1e-9))


def test_bootstrap_defaults_are_1000_resamples_at_95_percent_with_seed_0(shared):
    sts = get_task("sts")
    gold = load_gold(sts, shared)
    rng = random.Random(5)
    first, second = (evaluate_bytes(sts, gold, jsonl({"guid": r["guid"], "score": r["gold"] + rng.gauss(0, noise)} for r in gold.rows), "p.jsonl").frames
                     for noise in (0.7, 0.9))
    assert confidence_intervals(sts, first) == confidence_intervals(sts, first, samples=1000, level=0.95, seed=0)
    assert confidence_intervals(sts, first)["pearsonr"] != confidence_intervals(sts, first, samples=1001)["pearsonr"]
    assert confidence_intervals(sts, first)["pearsonr"] != confidence_intervals(sts, first, seed=1)["pearsonr"]
    assert confidence_intervals(sts, first)["pearsonr"] != confidence_intervals(sts, first, level=0.9)["pearsonr"]
    assert compare_runs(sts, first, second) == compare_runs(sts, first, second, samples=1000, level=0.95, seed=0)
    assert compare_runs(sts, first, second)[0] != compare_runs(sts, first, second, samples=999)[0]
    assert compare_runs(sts, first, second)[0] != compare_runs(sts, first, second, seed=1)[0]
    assert compare_runs(sts, first, second)[0] != compare_runs(sts, first, second, level=0.9)[0]
    assert confidence_intervals(sts, first, samples=0) == {"pearsonr": None, "f1": None}
    assert compare_runs(sts, first, second, samples=0) == []
