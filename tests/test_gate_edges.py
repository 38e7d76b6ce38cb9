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

from klue_viz.compare.gate import Test as GateTest
from klue_viz.compare.gate import minimum_resamples, step_down

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
