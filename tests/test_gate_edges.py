"""The gate's step-down at its edges (issue 31, mutation testing of klue_viz/compare/gate.py).

`step_down` is fed tests and resampled differences built by hand, so every critical value is a number read off the
resamples: with B = 21 resamples numpy's default (linear) 95% quantile sits exactly on the 20th smallest value (position
0.95 x 20 = 19), the second largest. The cases separate the documented procedure (one-sided, step-down, centred at the
observed difference, studentised by each test's own standard error) from a single step, a two-sided test and an
uncentred one."""

from __future__ import annotations

import math

import numpy as np
import pytest
from cases import gold_of, nli
from conftest import jsonl
from test_gate import NLI, labels, nli_records, source_of

from klue_viz.compare.gate import Test as GateTest
from klue_viz.compare.gate import coverage_drops, minimum_resamples, step_down
from klue_viz.scoring.evaluate import evaluate_bytes

B = 21


def make_test(name: str, difference: float, se: float) -> GateTest:
    return GateTest({"feature": name}, "accuracy", 100, 80.0, 80.0 + difference, difference, se, name=name)


def resampled_from(tests: list[GateTest], centred: list[np.ndarray]) -> np.ndarray:
    """The resampled differences whose centred, studentised drops -(d* - d) / se are `centred` (one column per test)."""
    return np.column_stack([t.difference - z * t.se for t, z in zip(tests, centred)])


def three_tests() -> tuple[list[GateTest], np.ndarray]:
    """A: t = 5, its t* = 0, 0.1, ..., 2.0; B: t = 1.5, t* = 1 on every resample; C: t = -0.5 (the candidate is better),
    t* = 0. Step 1 over all: max t* = max(b / 10, 1), second largest 1.9; A (5 > 1.9) is found. Step 2 over B and C:
    max t* = 1, so c = 1 and B (1.5 > 1) is found. Step 3 over C: c = 0 and -0.5 is not above it: stop."""
    tests = [make_test("A", -10.0, 2.0), make_test("B", -1.5, 1.0), make_test("C", 0.5, 1.0)]
    centred = [np.arange(B) / 10, np.ones(B), np.zeros(B)]
    return tests, resampled_from(tests, centred)


def test_the_step_down_finds_a_regression_the_single_step_misses():
    tests, resampled = three_tests()
    criticals = step_down(tests, resampled)
    assert criticals == pytest.approx([1.9, 1.0, 0.0])
    a, b, c = tests
    assert (a.critical, b.critical, c.critical) == pytest.approx((1.9, 1.0, 0.0))
    assert a.bound == pytest.approx(-10.0 + 1.9 * 2.0) and a.regression
    assert b.bound == pytest.approx(-1.5 + 1.0) and b.regression  # the single step's bound -1.5 + 1.9 = 0.4 passes
    assert c.bound == pytest.approx(0.5) and not c.regression


def test_a_large_improvement_is_never_a_regression_one_sided():
    """C improves by 30 standard errors: a two-sided test would find it at every step; the gate's one-sided one never."""
    tests = [make_test("A", -10.0, 2.0), make_test("C", 30.0, 1.0)]
    resampled = resampled_from(tests, [np.arange(B) / 10, np.zeros(B)])
    criticals = step_down(tests, resampled)
    assert criticals == pytest.approx([1.9, 0.0])
    assert tests[0].regression and not tests[1].regression
    assert tests[1].critical == 0.0 and tests[1].bound == pytest.approx(30.0)


def test_the_resamples_are_centred_at_the_observed_difference():
    """Every resample equals the observed difference: the centred t* is 0 everywhere, so c = 0 and a drop of 1.5
    standard errors is found. Uncentred, t* would be 1.5 everywhere and nothing would be found."""
    tests = [make_test("A", -1.5, 1.0), make_test("B", 0.2, 1.0)]
    resampled = np.column_stack([np.full(B, -1.5), np.full(B, 0.2)])
    assert step_down(tests, resampled) == pytest.approx([0.0, 0.0])
    assert tests[0].regression and tests[0].bound == pytest.approx(-1.5)
    assert not tests[1].regression and tests[1].critical == 0.0


def test_each_test_is_studentised_by_its_own_standard_error():
    """A drop of 3 with se 2 (t = 1.5) and a drop of 3 with se 1 (t = 3), both with t* = b / 10 (second largest 1.9):
    the same difference, only the second is a regression."""
    tests = [make_test("wide", -3.0, 2.0), make_test("narrow", -3.0, 1.0)]
    resampled = resampled_from(tests, [np.arange(B) / 10, np.arange(B) / 10])
    assert step_down(tests, resampled) == pytest.approx([1.9, 1.9])
    assert tests[0].bound == pytest.approx(-3.0 + 1.9 * 2.0) and not tests[0].regression
    assert tests[1].bound == pytest.approx(-3.0 + 1.9) and tests[1].regression


def test_a_standard_error_below_one_studentises_too():
    """se = 0.5 and t* = b / 10: the critical value is 1.9 (not 0.95, the quantile of the unscaled t* / 2)."""
    tests = [make_test("A", -0.8, 0.5)]
    resampled = resampled_from(tests, [np.arange(B) / 10])
    assert step_down(tests, resampled) == pytest.approx([1.9])
    assert tests[0].bound == pytest.approx(-0.8 + 1.9 * 0.5) and not tests[0].regression


def test_a_test_whose_standard_error_is_zero_fails_on_its_sign_and_stays_out_of_the_quantile():
    """se = 0: its bound is its difference (critical 0); its resamples (any values) do not enter the maximum."""
    tests = [make_test("broken", -0.1, 0.0), make_test("same", 0.0, 0.0), make_test("better", 0.1, 0.0),
             make_test("A", -1.5, 1.0)]
    resampled = np.column_stack([np.full(B, 100.0), np.full(B, -100.0), np.full(B, 100.0), -1.5 - np.arange(B) / 10])
    assert step_down(tests, resampled) == pytest.approx([1.9])
    broken, same, better, a = tests
    assert broken.regression and (broken.critical, broken.bound) == (0.0, -0.1)
    assert not same.regression and (same.critical, same.bound) == (0.0, 0.0)
    assert not better.regression and (better.critical, better.bound) == (0.0, 0.1)
    assert not a.regression and a.critical == pytest.approx(1.9) and a.bound == pytest.approx(-1.5 + 1.9)


def test_an_undefined_resample_is_no_evidence():
    """NaN where a metric is undefined counts as -inf in the maximum; a resample undefined for every test drops out.
    A's t* = 0..2.0 but NaN on the resample where it is 2.0: the largest left is 1.9, the quantile over the 20 others
    (position 0.95 x 19 = 18.05) is 1.8 + 0.05 x 0.1 = 1.805."""
    tests = [make_test("A", -4.0, 2.0)]
    resampled = resampled_from(tests, [np.arange(B) / 10])
    resampled[B - 1, 0] = np.nan
    assert step_down(tests, resampled) == pytest.approx([1.805])
    assert tests[0].bound == pytest.approx(-4.0 + 1.805 * 2.0)


def test_an_undefined_resample_of_one_test_leaves_the_others_maximum():
    """A is undefined on the last resample, where B's t* is 1.95: that resample's maximum is B's 1.95 (NaN counts as
    -inf), so the quantile over all 21 is 1.9; dropping the resample instead would give 1.805."""
    tests = [make_test("A", -4.0, 2.0), make_test("B", 0.0, 1.0)]
    b_centred = np.zeros(B)
    b_centred[B - 1] = 1.95
    resampled = resampled_from(tests, [np.arange(B) / 10, b_centred])
    resampled[B - 1, 0] = np.nan
    assert step_down(tests, resampled)[0] == pytest.approx(1.9)


def test_every_resample_undefined_gives_a_critical_value_of_zero():
    """No resample tells anything about the null: c = 0 and the observed drop (t = 1.5 > 0) decides."""
    tests = [make_test("A", -1.5, 1.0)]
    assert step_down(tests, np.full((B, 1), np.nan)) == [0.0]
    assert tests[0].regression and tests[0].bound == -1.5


def test_a_t_exactly_at_the_critical_value_is_not_found():
    """t_k > c, strictly: A's t = 4.75 equals c_1 (t* = b / 4, exact in binary), so A is not found, no second step is
    taken, and B (t = 1, above the 0.5 a second step over B alone would give) is held to c_1 too."""
    tests = [make_test("A", -4.75, 1.0), make_test("B", -1.0, 1.0)]
    resampled = resampled_from(tests, [np.arange(B) / 4, np.full(B, 0.5)])
    assert step_down(tests, resampled) == [4.75]
    assert not tests[0].regression and not tests[1].regression and tests[1].bound == pytest.approx(3.75)


def test_no_tests_and_another_level():
    assert step_down([], np.zeros((B, 0))) == [0.0]
    tests = [make_test("A", -4.0, 2.0)]
    resampled = resampled_from(tests, [np.arange(B) / 10])
    assert step_down(tests, resampled, level=0.5) == pytest.approx([1.0])  # the median of 0..2.0


@pytest.mark.parametrize("difference, se, t", [(-3.0, 2.0, 1.5), (3.0, 2.0, -1.5), (0.0, 0.0, 0.0), (-0.1, 0.0, math.inf),
                                               (0.1, 0.0, -math.inf)])
def test_the_studentised_drop(difference, se, t):
    assert make_test("x", difference, se).t == t


def test_a_bound_of_exactly_zero_is_not_a_regression():
    test = make_test("x", -1.0, 1.0)
    test.bound = 0.0
    assert not test.regression
    test.bound = -1e-12
    assert test.regression


@pytest.mark.parametrize("level, resamples", [(0.95, 200), (0.9, 100), (0.99, 1000), (0.8, 50)])
def test_minimum_resamples_puts_ten_beyond_the_quantile(level, resamples):
    """10 / (1 - level), rounded up; 10 / (1 - 0.99) is 1000.0000000000009 in floating point, still 1000."""
    assert minimum_resamples(level) == resamples


def coverage_runs(missing: set[int], n: int = 120):
    """NLI runs on n pairs whose sources cycle airbnb, policy, wikinews, wikipedia (n / 4 each): the baseline predicts
    every pair, the candidate all but `missing`."""
    gold = gold_of("nli", nli(labels(n), [source_of(k) for k in range(n)]))
    records = nli_records(n, set())
    baseline = evaluate_bytes(NLI, gold, jsonl(records), "base.jsonl", run="base")
    kept = [r for k, r in enumerate(records) if k not in missing]
    return baseline, evaluate_bytes(NLI, gold, jsonl(kept), "cand.jsonl", run="cand")


# 10 airbnb pairs (k % 4 == 0), 10 policy ones (k % 4 == 1), every wikinews one (k % 4 == 2) and one wikipedia one missing
MISSING = {4 * j for j in range(10)} | {4 * j + 1 for j in range(10, 20)} | {k for k in range(120) if k % 4 == 2} | {3}


def source_drops(drops) -> list[tuple[str, int, int]]:
    return [(d.name, d.baseline, d.candidate) for d in drops if d.feature == "Source"]


def test_coverage_drops_most_missing_first_ties_by_name_and_a_slice_value_at_exactly_the_minimum_size():
    """Counted by hand: wikinews 30 of 30 missing, airbnb and policy 10 of 30 each (tied: by name), wikipedia 1 of 30."""
    baseline, candidate = coverage_runs(MISSING)
    drops = coverage_drops(NLI, baseline, candidate, 30, [])
    assert (drops[0].name, drops[0].baseline, drops[0].candidate, drops[0].missing) == ("overall", 120, 69, 51)
    assert drops[0].slice == {} and drops[0].feature == "" and drops[0].unit == "pairs"
    assert source_drops(drops) == [("Source = wikinews", 30, 0), ("Source = airbnb", 30, 20), ("Source = policy", 30, 20),
                                   ("Source = wikipedia", 30, 29)]
    assert [d.slice for d in drops if d.feature == "Source"] == [{"source": "wikinews"}, {"source": "airbnb"}, {"source": "policy"},
                                                                 {"source": "wikipedia"}]
    assert {d.unit for d in drops} == {"pairs"}
    assert source_drops(coverage_drops(NLI, baseline, candidate, 31, [])) == []  # 30 pairs each: below 31


def test_coverage_drops_leave_out_a_skipped_feature_only_and_nothing_is_missing():
    """The test gold's other example-level slices hold one value each over all 120 pairs (agreement: no votes)."""
    baseline, candidate = coverage_runs(MISSING)
    kept = coverage_drops(NLI, baseline, candidate, 30, ["Source: left out for this test"])
    assert source_drops(kept) == []
    assert "Annotator agreement = (no votes)" in [d.name for d in kept]  # the features after Source are still counted
    assert source_drops(coverage_drops(NLI, baseline, candidate, 30, ["Sources: another feature"])) != []
    whole, same = coverage_runs(set())
    assert coverage_drops(NLI, whole, same, 30, []) == []


def test_coverage_drops_with_a_tie_in_share_broken_by_the_count_then_the_name():
    """10 airbnb, 10 policy and 20 wikinews pairs missing: 40 of 120 overall. Wikinews (2/3) first; then a third missing
    in the three one-value slices (40 of 120 each: by name) before airbnb and policy (10 of 30 each: by name)."""
    missing = {4 * j for j in range(10)} | {4 * j + 1 for j in range(10)} | {4 * j + 2 for j in range(20)}
    baseline, candidate = coverage_runs(missing)
    assert [(d.name, d.missing) for d in coverage_drops(NLI, baseline, candidate, 30, [])] == [
        ("overall", 40), ("Source = wikinews", 20), ("Annotator agreement = (no votes)", 40),
        ("Hypothesis length = 1-15 chars", 40), ("Hypothesis words found in premise = low (<50%)", 40),
        ("Source = airbnb", 10), ("Source = policy", 10)]
