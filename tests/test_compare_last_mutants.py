"""The last mutation runs of klue_viz/compare/ (issue 31): tests for the survivors of `paired_resamples`,
`complementarity`, `run_table`, `run_sequence`, the gate's helpers and their `to_dict`s, the matrix orders and the
ranking's texts. Expected values are written out by hand (the texts column by column, counts from the patterns of
tests/test_ranking_mutants.py) or read independently of the code under test."""

from __future__ import annotations

import numpy as np
import pytest
from cases import gold_of, ner_tsv, nli, re_records
from conftest import jsonl
from test_compare import NLI, nli_gold, run_records
from test_gate import ner_sentence
from test_gate_mutants import re_auprc_by_hand
from test_ranking_mutants import PATTERNS, patterned_runs

from klue_viz.compare.gate import CoverageDrop, GateResult, gate
from klue_viz.compare.gate import Test as GateTest
from klue_viz.compare.ranking import (
    RankedRun,
    Ranking,
    difficulty,
    matrix_frame,
    matrix_rows,
    paired_resamples,
    ranking_text,
    run_sequence,
    run_table,
)
from klue_viz.core.results import Frames
from klue_viz.metrics.official import RE_RELATIONS
from klue_viz.scoring.bootstrap import resample_counts
from klue_viz.scoring.evaluate import evaluate_bytes
from klue_viz.tasks import get_task

STS = get_task("sts")


@pytest.fixture(scope="module")
def patterned():
    """The runs m-1..m-4 of tests/test_ranking_mutants.py's PATTERNS (R right, W wrong, - not scored), as results."""
    return patterned_runs()


def test_paired_resamples_of_a_single_run_at_the_default_seed(patterned):
    """One run alone (m-1, right on 5 of its 12 examples): its accuracy on the counts numpy's generator draws at seed 0,
    row 0 the observed 5/12."""
    (values,) = paired_resamples([run_table(patterned[:1]).stats[0]], 6)
    right = np.array([p[0] == "R" for p in PATTERNS], dtype=float)
    counts = resample_counts(np.random.default_rng(0), 12, 6)
    assert values["accuracy"] == pytest.approx(np.concatenate([[100 * 5 / 12], 100 * counts @ right / 12]))


def ranked(run: str, rank: int, interval: tuple[int, int], f1: float | None, f1_ci: tuple[float, float] | None, r: float,
           diff: float | None, diff_ci: tuple[float, float] | None, p: float | None, tied: bool, best: bool) -> RankedRun:
    return RankedRun(run, {"pearsonr": r, "f1": f1}, {"pearsonr": (r - 1.5, r + 2.25), "f1": f1_ci}, {"pearsonr": 0.0, "f1": diff},
                     {"pearsonr": (0.0, 0.0), "f1": diff_ci}, p, rank, tied, interval, best)


def test_ranking_text_column_by_column_ranked_by_the_second_metric():
    """Ranked by f1 (STS's second metric, so it comes first and pearsonr after); the runs given worst first, two tied at
    rank 2 in reverse name order (beta before bxx...), a name over 28 characters, an undefined f1 without intervals, p below 0.001. Every
    field is padded by hand here: right-aligned numbers, each column as wide as its header."""
    long_name = "b" + "x" * 29
    runs = [ranked("gamma", 4, (3, 4), None, None, 12.5, None, None, 0.0004, False, False),
            ranked(long_name, 2, (1, 3), 80.0, (75.0, 85.0), 100.0, -11.234, (-15.0, 0.5), 0.2, True, True),
            ranked("beta", 2, (1, 4), 80.0, (70.25, 89.5), -3.0, -11.234, (-20.5, -1.75), 0.0123, True, True),
            ranked("alpha", 1, (1, 2), 91.234, (88.5, 93.25), 5.0, 0.0, (0.0, 0.0), None, False, True)]
    method = "The method in one line."
    text = ranking_text(Ranking("f1", "alpha", 120, 1000, runs, method, ["alpha", long_name, "beta"]), STS)
    assert text.splitlines() == [
        "Ranked by f1; the difference to the best, its p, the ties and the rank intervals are on f1.",
        # rank(4) 95% rank(9)  run(28) f1(24)  diff [interval](28) p(8)  tied  best?  pearsonr(24)
        "rank" + " " + " 95% rank" + "  " + "run" + " " * 25 + " " + " " * 22 + "f1" + "  " + " " * 3 + "diff to best [paired 95%]"
        + " " + " " * 7 + "p" + "  tied  best?" + " " + " " * 16 + "pearsonr",
        "   1" + " " + "      1-2" + "  " + "alpha" + " " * 23 + " " + " " + "  91.23 [ 88.50, 93.25]" + "  " + "       +0.00"
        + " " + "[ +0.00, +0.00]" + " " + " " * 8 + "  " + "no  " + "  " + "yes  " + " " + " " + "   5.00 [  3.50,  7.25]",
        "   2" + " " + "      1-4" + "  " + "beta" + " " * 24 + " " + " " + "  80.00 [ 70.25, 89.50]" + "  " + "      -11.23"
        + " " + "[-20.50, -1.75]" + " " + "   0.012" + "  " + "yes " + "  " + "yes  " + " " + " " + "  -3.00 [ -4.50, -0.75]",
        "   2" + " " + "      1-3" + "  " + "b" + "x" * 27 + " " + " " + "  80.00 [ 75.00, 85.00]" + "  " + "      -11.23"
        + " " + "[-15.00, +0.50]" + " " + "   0.200" + "  " + "yes " + "  " + "yes  " + " " + " " + " 100.00 [ 98.50,102.25]",
        "   4" + " " + "      3-4" + "  " + "gamma" + " " * 23 + " " + " " + "    n/a" + " " * 16 + "  " + "         n/a"
        + " " + " " * 15 + " " + "  <0.001" + "  " + "no  " + "  " + "no   " + " " + " " + "  12.50 [ 11.00, 14.75]",
        "95% confidence set for the best: alpha, " + long_name + ", beta",
        method,
    ]


def test_paired_resamples_weigh_re_s_auprc_by_the_same_counts_as_its_sums():
    """RE's AUPRC does not sum over examples (the statistics' `unsummed`): on each resample it is computed on the examples
    drawn, as many times as drawn. Its values are scikit-learn's on those draws (KLUE's script), row 0 on every example
    once; micro F1 (a sum) is 100 for both runs, which label every example right."""
    re_task = get_task("re")
    labels = ["no_relation", "org:founded", "per:title"] * 10
    gold_ids = np.array([RE_RELATIONS.index(label) for label in labels])
    rng = np.random.default_rng(8)
    gold = gold_of("re", re_records(labels))
    runs, probs = [], []
    for name, sharp in (("sharp", 0.8), ("blunt", 0.3)):
        table = rng.uniform(0, 1 - sharp, (len(labels), len(RE_RELATIONS)))
        table[np.arange(len(labels)), gold_ids] = sharp + rng.uniform(0, 1 - sharp, len(labels))
        probs.append(table / table.sum(axis=1, keepdims=True))
        records = [{"guid": f"klue-re-v1_dev_{k:05d}", "label": labels[k], "probs": probs[-1][k].tolist()} for k in range(len(labels))]
        runs.append(evaluate_bytes(re_task, gold, jsonl(records), f"{name}.jsonl", run=name))
    found = paired_resamples(run_table(runs).stats, 4, seed=5)
    counts = resample_counts(np.random.default_rng(5), len(labels), 4)
    everything = np.arange(len(labels))
    draws = [everything] + [np.repeat(everything, row.astype(int)) for row in counts]
    for values, run_probs in zip(found, probs):
        assert values["micro_f1"] == pytest.approx([100.0] * 5)
        assert values["auprc"] == pytest.approx([re_auprc_by_hand(gold_ids, run_probs, d) for d in draws], rel=1e-9)


def test_paired_resamples_of_runs_that_share_no_example_are_undefined():
    """Two runs over disjoint halves share nothing: every resample of nothing has an undefined accuracy (0 of 0)."""
    gold = nli_gold(12)
    halves = [evaluate_bytes(NLI, gold, jsonl(run_records(set(), 12)[part]), f"{name}.jsonl", run=name)
              for name, part in (("first", slice(0, 6)), ("second", slice(6, 12)))]
    found = paired_resamples(run_table(halves).stats, 3)
    assert [v["accuracy"].shape for v in found] == [(4,), (4,)] and all(np.isnan(v["accuracy"]).all() for v in found)


def test_run_sequence_skips_a_slice_the_frames_lack_and_goes_on_with_the_next():
    """Frames without the `source` column (a kept run that stored no such column): no source slice, and the slices after
    it (annotator agreement, hypothesis length) are still there, over m-1's 12 examples."""
    gold = nli_gold(12)
    run = evaluate_bytes(NLI, gold, jsonl(run_records(set(), 12)), "all.jsonl", run="all")
    without = Frames(run.frames.examples.drop(columns=["source"]), run.frames.details)
    found = run_sequence(NLI, [run], frames=[without])
    assert "source" not in found.slices and "source" not in found.counts and "source" not in found.labels
    assert found.counts["agreement"] == {"(no votes)": [12]} and found.slices["agreement"]["(no votes)"]["accuracy"] == [100.0]
    assert sum(sizes[0] for sizes in found.counts["hypothesis_length"].values()) == 12


def test_run_sequence_counts_0_and_no_value_where_a_run_has_no_example_of_a_slice_value(patterned):
    """m-1 (12 examples) beside a run of the three airbnb examples only (0, 4, 8; right on all): policy, wikinews and
    wikipedia have 0 examples and no accuracy in the second run. m-1 (PATTERNS' first column) is right on 1 of airbnb's
    three (0, 4, 8), 1 of policy's (1, 5, 9), none of wikinews' (2, 6, 10) and all of wikipedia's (3, 7, 11)."""
    gold = nli_gold(12)
    airbnb = evaluate_bytes(NLI, gold, jsonl([r for k, r in enumerate(run_records(set(), 12)) if k % 4 == 0]), "a.jsonl", run="airbnb")
    found = run_sequence(NLI, [patterned[0], airbnb])
    assert found.counts["source"] == {"airbnb": [3, 3], "policy": [3, 0], "wikinews": [3, 0], "wikipedia": [3, 0]}
    assert list(found.slices["source"]) == ["airbnb", "policy", "wikinews", "wikipedia"]
    assert found.slices["source"]["airbnb"]["accuracy"] == pytest.approx([100 / 3, 100.0])
    for source, accuracy in (("policy", 100 / 3), ("wikinews", 0.0), ("wikipedia", 100.0)):
        assert found.slices["source"][source]["accuracy"] == [pytest.approx(accuracy), None]


def test_run_table_uses_the_statistics_it_is_given():
    """m-1's result with the statistics of a run right everywhere on the same 12 examples: the table's statistics are
    those given (accuracy 100 observed), not m-1's own (5 of 12)."""
    gold = nli_gold(12)
    m1_wrong = {k for k, p in enumerate(PATTERNS) if p[0] == "W"}
    m1 = evaluate_bytes(NLI, gold, jsonl(run_records(m1_wrong, 12)), "m-1.jsonl", run="m-1")
    right = evaluate_bytes(NLI, gold, jsonl(run_records(set(), 12)), "right.jsonl", run="right")
    (given,) = paired_resamples(run_table([m1], statistics=[NLI.statistics(right.frames)]).stats, 0)
    (own,) = paired_resamples(run_table([m1]).stats, 0)
    assert (given["accuracy"].tolist(), own["accuracy"].tolist()) == ([100.0], [pytest.approx(100 * 5 / 12)])


def test_ranking_text_of_a_task_with_four_metrics_puts_one_space_before_each_further_column():
    """DP has four metrics: ranked by UAS micro F1, the other three follow in the task's order, each right-aligned in
    24 characters after one space (nothing else between them)."""
    dp = get_task("dp")
    metrics = {"uas_macro_f1": 1.0, "uas_micro_f1": 2.0, "las_macro_f1": 3.0, "las_micro_f1": 4.0}
    run = RankedRun("only", metrics, dict.fromkeys(metrics), dict.fromkeys(metrics, 0.0), dict.fromkeys(metrics), None, 1, False, (1, 1), True)
    header, row = ranking_text(Ranking("uas_micro_f1", "only", 5, 1000, [run], "m", ["only"]), dp).splitlines()[1:3]
    assert header.endswith("best?" + " " + " " * 12 + "uas_macro_f1" + " " + " " * 12 + "las_macro_f1" + " " + " " * 12 + "las_micro_f1")
    cell = "{:>7} " + " " * 15
    assert row.endswith("yes  " + "".join(" " + " " + cell.format(v) for v in ("1.00", "3.00", "4.00")))


def test_gate_json_written_out_field_by_field():
    """gate.json from a result built by hand: a failing overall test, a passing slice test, a worse slice test (listed
    first among the regressions: the lower bound), one coverage drop (allowed) and one skipped feature."""
    overall = GateTest({}, "accuracy", 1234, 80.0, 77.5, -2.5, 1.0, "overall", "", "pairs", "Accuracy", 1.5, -1.0)
    fine = GateTest({"source": "airbnb"}, "accuracy", 40, 70.0, 71.0, 1.0, 2.0, "Source = airbnb", "Source", "pairs", "Accuracy", 1.5, 4.0)
    worse = GateTest({"source": "policy"}, "accuracy", 30, 90.0, 80.0, -10.0, 3.0, "Source = policy", "Source", "pairs", "Accuracy", 1.5,
                     -5.5)
    coverage = CoverageDrop({"source": "wikinews"}, "Source = wikinews", "Source", "pairs", 29, 27)
    result = GateResult("base", "cand", [overall, fine, worse], [2.1, 1.5], 100, 1234, ["Confidence: run-dependent"], [coverage], True)
    assert result.to_dict() == {
        "verdict": "fail", "checked": 3,
        "overall": [{"slice": {}, "name": "overall", "metric": "accuracy", "baseline": 80.0, "candidate": 77.5, "difference": -2.5,
                     "upper_bound": -1.0, "size": 1234, "unit": "pairs"}],
        "regressions": [
            {"slice": {"source": "policy"}, "name": "Source = policy", "metric": "accuracy", "baseline": 90.0, "candidate": 80.0,
             "difference": -10.0, "upper_bound": -5.5, "size": 30, "unit": "pairs"},
            {"slice": {}, "name": "overall", "metric": "accuracy", "baseline": 80.0, "candidate": 77.5, "difference": -2.5,
             "upper_bound": -1.0, "size": 1234, "unit": "pairs"}],
        "coverage_drops": [{"slice": {"source": "wikinews"}, "name": "Source = wikinews", "unit": "pairs", "baseline": 29, "candidate": 27,
                            "missing": 2}],
        "coverage_drop_allowed": True, "skipped": ["Confidence: run-dependent"]}


def test_the_first_value_of_an_entity_level_slice_is_tested_on_its_own_entities():
    """NER, 80 sentences, a PS entity in the even ones and an OG one in the odd ones (40 gold each: OG is the first value
    by name); the candidate misses every fourth sentence's PS. OG: F1 100 in both runs (nothing changed); PS 100 and
    2 * 20 / (2 * 20 + 20) by hand. A user column (the first and second 40 sentences) is tested on both NER metrics."""
    task = get_task("ner")
    sentences = [ner_sentence(k, person=k % 2 == 0) for k in range(80)]
    gold = gold_of("ner", ner_tsv(sentences))
    runs = []
    for name, missed in (("base", set()), ("cand", set(range(0, 80, 4)))):
        records = [{"guid": g, "tags": ["O" if k in missed and t.endswith("PS") else t for _, t in pairs]} for k, (g, pairs) in enumerate(sentences)]
        run = evaluate_bytes(task, gold, jsonl(records), f"{name}.jsonl", run=name)
        run.frames.examples["user:half"] = ["first" if k < 40 else "second" for k in range(80)]
        runs.append(run)
    found = gate(task, *runs, samples=200)
    # the user's column comes after NER's own slices, the last of which (error_type) describes the outcome and is passed over
    assert [t.slice for t in found.tests if "user:half" in t.slice] == [{"user:half": "first"}, {"user:half": "second"}] * 2
    by_type = {t.slice["label"]: t for t in found.tests if "label" in t.slice}
    assert list(by_type) == ["OG", "PS"]
    assert (by_type["OG"].size, by_type["OG"].baseline, by_type["OG"].candidate, by_type["OG"].difference) == (40, 100.0, 100.0, 0.0)
    assert (by_type["PS"].baseline, by_type["PS"].candidate) == pytest.approx((100.0, 200 / 3))


def test_examples_without_a_value_of_a_user_column_are_in_no_group_of_it():
    """60 NLI pairs with a user column `part`: first (0-29), second (30-49), none (50-59). The candidate breaks 50-59 only,
    so both groups' accuracies are unchanged (difference 0); only the overall one drops, by 10 of 60."""
    labels = ("entailment", "neutral", "contradiction")
    gold = gold_of("nli", nli([labels[k % 3] for k in range(60)]))
    runs = []
    for name, wrong in (("base", set()), ("cand", set(range(50, 60)))):
        records = [{"guid": f"klue-nli-v1_dev_{k:05d}", "label": labels[(k + 1) % 3] if k in wrong else labels[k % 3]} for k in range(60)]
        run = evaluate_bytes(NLI, gold, jsonl(records), f"{name}.jsonl", run=name)
        run.frames.examples["user:part"] = ["first" if k < 30 else "second" if k < 50 else None for k in range(60)]
        runs.append(run)
    found = gate(NLI, *runs, samples=200, min_size=20)
    part = [t for t in found.tests if "user:part" in t.slice]
    assert [(t.slice["user:part"], t.size, t.baseline, t.difference) for t in part] == [("first", 30, 100.0, 0.0), ("second", 20, 100.0, 0.0)]
    overall = next(t for t in found.tests if not t.slice)
    assert overall.difference == pytest.approx(-100 * 10 / 60)


def test_the_matrix_defaults_to_the_difficulty_order_and_one_run_s_miss_counts_whole():
    """Three examples: 0 right in both runs, 1 wrong in both, 2 scored by the second run only and wrong there (difficulty
    1 of 1, not 1 of 2). By default the rows are by difficulty, hardest first, ties in file order: 1, 2, 0."""
    gold = nli_gold(3)
    first = evaluate_bytes(NLI, gold, jsonl(run_records({1}, 3)[:2]), "first.jsonl", run="first")
    second = evaluate_bytes(NLI, gold, jsonl(run_records({1, 2}, 3)), "second.jsonl", run="second")
    table = run_table([first, second])
    assert difficulty(table).tolist() == [0.0, 1.0, 1.0]
    assert matrix_rows(table).tolist() == [1, 2, 0]
    frame = matrix_frame(table)
    assert frame.index.tolist() == [1, 2, 0] and frame["difficulty"].tolist() == [1.0, 1.0, 0.0]
