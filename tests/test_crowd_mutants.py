"""klue_viz.core.crowd where a mutmut run of the file (docs/mutation.md, issue 31) found mutants no fast test caught:
the hand-written replacements for scipy (`average_ranks`, `incomplete_beta` and its continued fraction, `spearman`),
which only the slow tests/test_crowd.py reached, the held-out baseline's names, and numpy dtypes the divergences
depend on. Expected values from scipy (rankdata, betainc, spearmanr, entropy, jensenshannon) or by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.spatial.distance import jensenshannon
from scipy.special import betainc
from scipy.stats import entropy, rankdata, spearmanr

from klue_viz.core.crowd import (
    _beta_fraction,
    average_ranks,
    cross_entropy,
    divergences,
    incomplete_beta,
    spearman,
    vote_cross_entropy,
    vote_divergence,
    vote_held_out,
)

LABELS = ("a", "b", "c")


@pytest.mark.parametrize("values", [
    [3.0, 1.0, 2.0],  # no ties, unsorted
    [2.0, 2.0, 1.0, 3.0, 3.0, 3.0],  # a pair and a triple
    [5.0, 5.0, 5.0, 0.0],  # ties first in the input, last in order
    [0.0, 0.0, 1.0, 2.0, 2.0],  # ties at both ends of the order
    [4.0, 4.0, 4.0, 4.0],  # all tied
    [1.5, -0.5, 1.5, 7.0, -0.5, 1.5, 3.0],  # negatives, ties scattered
    [9.0],
])
def test_average_ranks_are_scipys_rankdata_average(values):
    found = average_ranks(np.asarray(values, dtype=np.float64))
    assert found.dtype == np.float64
    assert found.tolist() == rankdata(values, method="average").tolist()


def test_average_ranks_of_a_triple_tie_by_hand():
    # order 1.0 | 2.0 2.0 | 3.0 3.0 3.0 -> ranks 1 | 2.5 2.5 | 5 5 5
    assert average_ranks(np.asarray([3.0, 2.0, 1.0, 3.0, 2.0, 3.0])).tolist() == [5.0, 2.5, 1.0, 5.0, 2.5, 5.0]


def _grid():
    """(a, b, x) on both sides of the continued fraction's switch point (a + 1) / (a + b + 2), in both tails and at
    Spearman's b = 1/2, with a and b from 1/2 to 500."""
    for a in (0.5, 1.0, 2.5, 10.0, 50.0, 500.0):
        for b in (0.5, 1.0, 3.0, 10.0, 80.0):
            switch = (a + 1.0) / (a + b + 2.0)
            for x in (1e-9, 0.02, 0.3, switch * 0.9, switch * (1 - 1e-6), switch, switch * (1 + 1e-6),
                      switch + (1 - switch) * 0.1, 0.8, 0.99, 1 - 1e-7):
                if 0.0 < x < 1.0:
                    yield a, b, x


@pytest.mark.parametrize("a,b", sorted({(a, b) for a, b, _ in _grid()}))
def test_incomplete_beta_is_scipys_betainc_on_both_sides_of_the_switch(a, b):
    for aa, bb, x in _grid():
        if (aa, bb) != (a, b):
            continue
        expected = float(betainc(a, b, x))
        found = incomplete_beta(a, b, x)
        assert found == pytest.approx(expected, rel=1e-9, abs=1e-300), (a, b, x)
        # the upper tail too: 1 - I is what a p-value near 1 reads
        assert 1.0 - found == pytest.approx(1.0 - expected, rel=1e-6, abs=1e-15), (a, b, x)


@pytest.mark.parametrize("a,b,x", [
    (40.0, 0.5, 1e-3),  # far lower tail: about 1e-120, only the direct fraction keeps its digits
    (0.5, 40.0, 0.999),  # far upper tail: 1 - I about 1e-120, only the reflected fraction keeps them
    (200.0, 200.0, 0.35),
    (200.0, 200.0, 0.65),
])
def test_incomplete_beta_keeps_its_relative_digits_in_both_tails(a, b, x):
    expected = float(betainc(a, b, x))
    upper = float(betainc(b, a, 1.0 - x))  # 1 - I_x(a, b) = I_{1-x}(b, a)
    found = incomplete_beta(a, b, x)
    if expected < 0.5:
        assert found == pytest.approx(expected, rel=1e-9, abs=1e-300)
    else:
        assert incomplete_beta(b, a, 1.0 - x) == pytest.approx(upper, rel=1e-9, abs=1e-300)
        assert found == pytest.approx(expected, rel=1e-12)


def test_incomplete_beta_by_hand_and_at_its_ends():
    # I_x(1, 1) = x; I_x(a, 1) = x^a; I_x(1, b) = 1 - (1 - x)^b; I_x(1/2, 1/2) = (2 / pi) asin(sqrt(x))
    assert incomplete_beta(1.0, 1.0, 0.25) == pytest.approx(0.25, rel=1e-14)
    assert incomplete_beta(3.0, 1.0, 0.5) == pytest.approx(0.125, rel=1e-14)
    assert incomplete_beta(1.0, 4.0, 0.5) == pytest.approx(1 - 0.5 ** 4, rel=1e-14)
    assert incomplete_beta(0.5, 0.5, 0.1) == pytest.approx(2 / math.pi * math.asin(math.sqrt(0.1)), rel=1e-13)
    assert incomplete_beta(0.5, 0.5, 0.9) == pytest.approx(2 / math.pi * math.asin(math.sqrt(0.9)), rel=1e-13)
    assert incomplete_beta(2.0, 3.0, 0.0) == 0.0 and incomplete_beta(2.0, 3.0, -0.5) == 0.0
    assert incomplete_beta(2.0, 3.0, 1.0) == 1.0 and incomplete_beta(2.0, 3.0, 1.5) == 1.0


@pytest.mark.parametrize("x,expected", [(2 / 3, 6.0), (0.75, 10.0)])
def test_continued_fraction_steps_over_a_zero_denominator(x, expected):
    """The modified Lentz method replaces a denominator of exactly 0 by a tiny number and carries on (Numerical Recipes
    5.2). At a = 1, b = 2 (beyond the switch point 2/5, where incomplete_beta takes the other side, but the fraction
    still converges) x = 2/3 makes the first one, 1 - (a + b) x / (a + 1), 0.0 in floats, and x = 3/4 the one of the
    loop's first step, 1 + (b - 1) x / ((a + 1) (a + 2)) / (1 - 9/8). The fraction is a I_x(a, b) / (x^a (1 - x)^b /
    B(a, b)) with I_x(1, 2) = 1 - (1 - x)^2 and B(1, 2) = 1/2, by hand: (8/9) / (4/27) = 6 and (15/16) / (3/32) = 10."""
    assert _beta_fraction(1.0, 2.0, x) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("x,y", [
    ([1.0, 2.0, 3.0], [1.0, 3.0, 2.0]),  # n = 3: one degree of freedom
    ([1.0, 2.0, 3.0, 4.0], [2.0, 1.0, 4.0, 3.0]),
    ([0.0, 1.0, 1.0, 2.0, 5.0, 5.0, 5.0], [0.3, 0.1, 0.1, 0.9, 0.4, 0.8, 0.8]),  # ties in both
    ([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], [6.0, 5.0, 3.0, 4.0, 2.0, 1.0]),  # strong negative
    ([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0], [2.0, 7.0, 1.0, 8.0, 3.0, 6.0, 4.0, 5.0]),  # weak: p near 1
    ([1.0, 2.0, 3.0, 4.0, 5.0], [5.0, 4.0, 3.0, 2.0, 1.1]),  # rho exactly -1 from ranks
])
def test_spearman_is_scipys_spearmanr(x, y):
    expected = spearmanr(x, y)
    rho, p = spearman(x, y)
    assert rho == pytest.approx(float(expected[0]), abs=1e-14)
    assert p == pytest.approx(float(expected[1]), rel=1e-9, abs=1e-300)


def test_spearman_p_values_over_many_sizes_and_both_signs():
    rng = np.random.default_rng(31)
    for n in (3, 5, 12, 40, 250):
        for slope in (-3.0, -0.2, 0.0, 0.2, 3.0):
            x = rng.integers(0, 6, n).astype(float)  # an STS grid: ties
            y = slope * x + rng.normal(size=n)
            if np.ptp(x) == 0:
                continue
            expected = spearmanr(x, y)
            rho, p = spearman(x, y)
            assert rho == pytest.approx(float(expected[0]), abs=1e-12)
            assert p == pytest.approx(float(expected[1]), rel=1e-9, abs=1e-300)


def test_spearman_undefined_and_perfect_cases():
    assert spearman([1.0, 2.0, 3.0], [3.0, 2.0, 1.0]) == (-1.0, 0.0)
    assert spearman(np.asarray([1.0, 2.0, 3.0]), np.asarray([1.0, 5.0, 9.0])) == (1.0, 0.0)
    for x, y in [([1.0, 2.0], [2.0, 1.0]), ([1.0, 2.0, 3.0], [4.0, 4.0, 4.0]), ([7.0, 7.0, 7.0], [1.0, 2.0, 3.0]), ([], [])]:
        rho, p = spearman(x, y)
        assert math.isnan(rho) and math.isnan(p), (x, y)
    wrong = [False, True, True, True, False]  # a run's wrong-or-right as booleans: numbers to scipy, and so here
    for x, y in [([0.1, 0.5, 0.9, 1.2, 0.3], wrong), (wrong, [0.1, 0.5, 0.9, 1.2, 0.3])]:
        expected = spearmanr(x, y)
        rho, p = spearman(x, y)
        assert rho == pytest.approx(float(expected[0]), abs=1e-14) and p == pytest.approx(float(expected[1]), rel=1e-9)
    rho, p = spearman([1, 2, 3], [1, 3, 2])  # integers: ranks are taken as floats
    assert rho == pytest.approx(0.5, abs=1e-15) and p == pytest.approx(float(spearmanr([1, 2, 3], [1, 3, 2])[1]), rel=1e-9)


def test_held_out_baseline_names_its_metric_and_what_it_counts():
    found = vote_held_out([{"gold": "a", "votes": ["a", "a", "b"]}])
    # a vs {a, b}: 1/2 (x2); b vs {a, a}: 0 -> 1 of 3
    assert found is not None and found.metric == "accuracy" and found.value == pytest.approx(100 / 3) and found.n == 3
    assert found.counts == "votes, each against the majority of the others"
    assert found.text() == "accuracy 33.33 over 3 votes, each against the majority of the others"
    assert found.to_dict() == {"metric": "accuracy", "value": pytest.approx(100 / 3), "n": 3}


def _float32_probs():
    """Probabilities as numpy float32 (a softmax as a model writes them), one zero that a vote reads (the floor), each
    exact in float32 and summing to 1 so that only the arithmetic's precision, not the rescaling, can differ."""
    return [np.asarray([0.5, 0.25, 0.25], dtype=np.float32), np.asarray([0.0, 0.375, 0.625], dtype=np.float32)]


def test_float32_probabilities_are_computed_in_float64():
    votes = [["a", "a", "b"], ["b", "c", "c", "a"]]
    probs = _float32_probs()
    for given, p in zip(votes, probs):
        q = p.astype(np.float64)
        v = np.asarray([given.count(label) / len(given) for label in LABELS])
        kl, jsd, own = divergences(given, p, LABELS)
        floored = np.clip(q, 1e-12, None)
        assert kl == pytest.approx(float(entropy(v, floored)), rel=1e-14)
        assert jsd == pytest.approx(float(jensenshannon(v, q)), rel=1e-13)
        assert own == pytest.approx(float(entropy(v)), rel=1e-14)
        assert cross_entropy(given, p, LABELS) == pytest.approx(-sum(s * math.log(max(x, 1e-12)) for s, x in zip(v, q)), rel=1e-14)
    each = [divergences(given, p.astype(np.float64), LABELS) for given, p in zip(votes, probs)]
    found = vote_divergence(votes, probs, LABELS)
    assert found is not None and found["n"] == 2
    for key, column in zip(("kl", "jsd", "vote_entropy"), zip(*each)):
        assert found[key] == pytest.approx(sum(column) / 2, rel=1e-14)
    mean = vote_cross_entropy(votes, probs, LABELS)
    assert mean is not None and mean["value"] == pytest.approx(
        sum(cross_entropy(given, p.astype(np.float64), LABELS) for given, p in zip(votes, probs)) / 2, rel=1e-14)
