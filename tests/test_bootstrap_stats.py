"""Bootstrap intervals and paired comparisons: pairing, width, level, resample count, direction and shared examples.

Runs are NLI accuracy runs whose right/wrong pattern is chosen here, so the sampling distribution is
known in closed form (a share of examples drawn with replacement).
"""

from __future__ import annotations

import json
import math

import pytest

from klue_viz.cli.main import main
from klue_viz.core.results import Frames
from klue_viz.scoring.bootstrap import compare_runs, confidence_intervals
from klue_viz.scoring.evaluate import evaluate_bytes
from klue_viz.tasks import get_task
from tests import cases
from tests.conftest import jsonl

LABELS = ["entailment", "neutral", "contradiction"]
WRONG = {"entailment": "neutral", "neutral": "contradiction", "contradiction": "entailment"}


def nli_frames(n: int, wrong: set[int], covered: range | None = None) -> Frames:
    """Frames of an NLI run over n examples, wrong exactly on `wrong`, with predictions for `covered` only."""
    gold = [LABELS[k % 3] for k in range(n)]
    task = get_task("nli")
    records = [{"guid": f"klue-nli-v1_dev_{k:05d}", "label": WRONG[gold[k]] if k in wrong else gold[k]} for k in (covered or range(n))]
    return evaluate_bytes(task, cases.gold_of("nli", cases.nli(gold)), jsonl(records), "p.jsonl").frames


def width(interval) -> float:
    return interval[1] - interval[0]


def test_paired_comparison_resamples_both_runs_together():
    """Run B is wrong on every example A gets wrong plus 20 more (of 1,000): B is never better on any resample.

    Paired, the difference is 100 * (share of those 20 in the resample): mean 2, s.d. 100 * sqrt(.02 * .98 / 1000) = 0.44,
    so the 95% interval is about 1.7 wide and never below 0. Unpaired resampling would give s.d.
    100 * sqrt((.3 * .7 + .32 * .68) / 1000) = 2.07 (an interval about 8 wide reaching below -2) and A better in ~83%.
    """
    task = get_task("nli")
    a = nli_frames(1000, set(range(300)))
    b = nli_frames(1000, set(range(320)))
    (comparison,) = compare_runs(task, a, b, samples=150, seed=3)
    assert comparison.metric == "accuracy" and comparison.difference == pytest.approx(2.0)
    assert comparison.low >= 0.0 and comparison.first_better == 1.0
    assert width((comparison.low, comparison.high)) < 3.0
    assert comparison.low < 2.0 < comparison.high


def test_swapping_the_runs_mirrors_the_comparison():
    task = get_task("nli")
    a = nli_frames(400, set(range(0, 400, 5)))  # 80% right
    b = nli_frames(400, set(range(0, 400, 3)))  # 66.5% right (134 wrong)
    (ab,) = compare_runs(task, a, b, samples=100, seed=1)
    (ba,) = compare_runs(task, b, a, samples=100, seed=1)
    assert ab.difference == pytest.approx(100 * (134 - 80) / 400)
    assert ba.difference == pytest.approx(-ab.difference)
    assert (ba.low, ba.high) == (pytest.approx(-ab.high), pytest.approx(-ab.low))
    assert ab.first_better > 0.95 and ba.first_better < 0.05


def test_comparison_uses_only_the_examples_both_runs_scored():
    """A is right on 0-49 and wrong on 50-99; B only covers 50-149 and is right there.

    On the shared examples 50-99, A scores 0 and B 100: the difference is -100, not A's headline 50 minus 100.
    """
    task = get_task("nli")
    a = nli_frames(150, set(range(50, 100)), covered=range(100))
    b = nli_frames(150, set(), covered=range(50, 150))
    (comparison,) = compare_runs(task, a, b, samples=50, seed=0)
    assert comparison.difference == -100.0
    assert (comparison.low, comparison.high, comparison.first_better) == (-100.0, -100.0, 0.0)


def test_interval_width_shrinks_with_the_number_of_examples():
    """80% accuracy: the 95% width is about 2 * 1.96 * sqrt(.16 / n) * 100; 16 times the data -> a quarter of the width."""
    task = get_task("nli")
    small = confidence_intervals(task, nli_frames(100, set(range(0, 100, 5))), samples=200, seed=0)["accuracy"]
    large = confidence_intervals(task, nli_frames(1600, set(range(0, 1600, 5))), samples=200, seed=0)["accuracy"]
    assert width(small) == pytest.approx(2 * 1.96 * math.sqrt(0.16 / 100) * 100, rel=0.3)
    assert width(large) == pytest.approx(2 * 1.96 * math.sqrt(0.16 / 1600) * 100, rel=0.3)
    assert width(large) < width(small) / 2.5


def test_level_and_seed_are_respected():
    task = get_task("nli")
    frames = nli_frames(600, set(range(0, 600, 4)))  # 75% right
    wide = confidence_intervals(task, frames, samples=200, level=0.95, seed=5)["accuracy"]
    narrow = confidence_intervals(task, frames, samples=200, level=0.5, seed=5)["accuracy"]
    # The same seed draws the same resamples: the 50% interval lies inside the 95% one.
    assert wide[0] < narrow[0] < 75.0 < narrow[1] < wide[1]
    # Normal quantiles: 0.674 against 1.96 standard deviations -> a width ratio of about 0.34.
    assert width(narrow) / width(wide) == pytest.approx(0.674 / 1.96, rel=0.3)
    few = confidence_intervals(task, frames, samples=20, seed=5)["accuracy"]
    assert confidence_intervals(task, frames, samples=20, seed=5)["accuracy"] == few
    assert confidence_intervals(task, frames, samples=20, seed=6)["accuracy"] != few


def test_resample_count_zero_one_and_no_examples():
    task = get_task("nli")
    frames = nli_frames(300, set(range(0, 300, 2)))
    assert confidence_intervals(task, frames, samples=0) == {"accuracy": None}
    low, high = confidence_intervals(task, frames, samples=1, seed=2)["accuracy"]
    assert low == high  # one resample: one value
    empty = Frames(frames.examples.iloc[0:0], {})
    assert confidence_intervals(task, empty, samples=50) == {"accuracy": None}
    assert compare_runs(task, empty, frames, samples=50) == []


def test_cli_bootstrap_uses_the_requested_number_of_resamples(tmp_path):
    """`--bootstrap 1` is one resample (a single value, so low == high); without the flag there is no interval."""
    gold_labels = [LABELS[k % 3] for k in range(60)]
    gold = tmp_path / "klue-nli-v1.1_dev.json"
    gold.write_text(json.dumps(cases.nli(gold_labels), ensure_ascii=False), encoding="utf-8")
    pred = tmp_path / "p.jsonl"
    pred.write_bytes(jsonl({"guid": f"klue-nli-v1_dev_{k:05d}", "label": WRONG[g] if k % 4 == 0 else g} for k, g in enumerate(gold_labels)))
    out = tmp_path / "out.json"
    assert main(["evaluate", "--task", "nli", "--gold", str(gold), "--pred", str(pred), "--out", str(out), "--bootstrap", "1"]) == 0
    low, high = json.loads(out.read_text(encoding="utf-8"))["runs"][0]["ci95"]["accuracy"]
    assert low == high
    assert main(["evaluate", "--task", "nli", "--gold", str(gold), "--pred", str(pred), "--out", str(out), "--bootstrap", "100"]) == 0
    low, high = json.loads(out.read_text(encoding="utf-8"))["runs"][0]["ci95"]["accuracy"]
    assert low < 75.0 < high  # 45 of 60 right
    assert main(["evaluate", "--task", "nli", "--gold", str(gold), "--pred", str(pred), "--out", str(out)]) == 0
    assert "ci95" not in json.loads(out.read_text(encoding="utf-8"))["runs"][0]


def test_detail_level_metrics_resample_whole_sentences():
    """One perfect and one all-wrong sentence: a resample holds 0, 1 or 2 copies of each (p = 1/4, 1/2, 1/4),
    so the 2.5% and 97.5% points are the all-wrong (0) and the all-right (100) resamples. Words or entities that
    did not follow their sentence would leave the metric at its whole-run value."""
    dp_sentences = [
        ("klue-dp-v1_dev_00000_wikitree", [("가", 2, "NP_SBJ"), ("나", 0, "VP")]),
        ("klue-dp-v1_dev_00001_wikitree", [("다", 2, "NP_SBJ"), ("라", 0, "VP"), ("마", 2, "VP")]),
    ]
    dp_gold = cases.gold_of("dp", cases.dp_tsv(dp_sentences))
    dp_preds = [{"guid": dp_sentences[0][0], "head": [2, 0], "deprel": ["NP_SBJ", "VP"]},
                {"guid": dp_sentences[1][0], "head": [0, 1, 1], "deprel": ["NP_SBJ", "VP", "VP"]}]
    dp = evaluate_bytes(get_task("dp"), dp_gold, jsonl(dp_preds), "p.jsonl")
    assert dp.scores.values["uas_micro_f1"] == pytest.approx(40.0)  # 2 of 5 words
    intervals = confidence_intervals(get_task("dp"), dp.frames, samples=80, seed=0)
    assert intervals["uas_micro_f1"] == (0.0, 100.0) and intervals["las_micro_f1"] == (0.0, 100.0)

    ner_sentences = [
        ("klue-ner-v1_dev_00000-nsmc", [("김", "B-PS"), ("씨", "I-PS")]),
        ("klue-ner-v1_dev_00001-nsmc", [("서", "B-LC"), ("울", "I-LC")]),
    ]
    ner_gold = cases.gold_of("ner", cases.ner_tsv(ner_sentences))
    ner_preds = [{"guid": ner_sentences[0][0], "tags": ["B-PS", "I-PS"]}, {"guid": ner_sentences[1][0], "tags": ["O", "O"]}]
    ner = evaluate_bytes(get_task("ner"), ner_gold, jsonl(ner_preds), "p.jsonl")
    assert ner.scores.values["entity_macro_f1"] == 50.0  # PS 1, LC 0
    # All-LC resamples: LC missed -> 0; all-PS resamples: 100.
    assert confidence_intervals(get_task("ner"), ner.frames, samples=80, seed=0)["entity_macro_f1"] == (0.0, 100.0)
