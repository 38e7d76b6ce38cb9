"""The ranking's statistics at their edges (issue 31, mutation testing of klue_viz/compare/ranking.py).

Cases chosen to separate the documented procedure from its simpler neighbours: Holm against Bonferroni and against a
Holm that does not stop at its first acceptance, p exactly at a threshold, ties in both orders, a paired standard error
against an unpaired one, and the rank interval's two ends. Expected values come from outside the code: scipy's normal
tail, statsmodels' `multipletests(method="holm")`, or the variance of a hand-built resample matrix (Hadamard columns:
orthogonal, mean zero, so every covariance is known by hand)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.linalg import hadamard
from scipy.stats import norm
from statsmodels.stats.multitest import multipletests
from test_compare import nli_gold, nli_run

from klue_viz.compare.ranking import MIN_RESAMPLES, holm_rejections, normal_p_values, pairwise_tests, rank_runs, run_table


def test_holm_stops_at_its_first_acceptance_where_a_procedure_that_goes_on_would_reject_a_later_p():
    """Sorted 0.01, 0.03, 0.04, 0.045 against 0.05/4, 0.05/3, 0.05/2, 0.05/1: 0.03 > 0.0167 stops the procedure, though
    0.045 <= 0.05 would pass its own threshold."""
    p = [0.01, 0.03, 0.045, 0.04]
    assert holm_rejections(p).tolist() == [True, False, False, False]
    assert multipletests(p, alpha=0.05, method="holm")[0].tolist() == [True, False, False, False]


def test_holm_rejects_a_p_exactly_at_its_threshold():
    """Rejected while p <= alpha / (m - i): each p here equals its threshold."""
    p = [0.05 / 3, 0.05 / 2, 0.05 / 1]
    assert holm_rejections(p).tolist() == [True, True, True]
    assert holm_rejections([0.05 / 2 + 1e-12, 0.001, 0.5]).tolist() == [False, True, False]


@pytest.mark.parametrize("p, expected", [([0.02, 0.02, 0.01], [True, True, True]), ([0.01, 0.02, 0.02], [True, True, True]),
                                         ([0.03, 0.01, 0.03], [False, True, False]), ([0.03, 0.03, 0.01], [False, False, True])])
def test_holm_with_tied_p_values_in_either_order(p, expected):
    """Tied p-values pass or fail together whichever comes first (by hand: thresholds 0.0167, 0.025, 0.05)."""
    assert holm_rejections(p).tolist() == expected == multipletests(p, alpha=0.05, method="holm")[0].tolist()


def test_holm_at_another_family_wise_level_and_with_nothing_to_test():
    p = [0.04, 0.08]  # at 10%: 0.04 <= 0.05, then 0.08 <= 0.10; at 5%: 0.04 > 0.025
    assert holm_rejections(p, alpha=0.10).tolist() == [True, True]
    assert holm_rejections(p).tolist() == [False, False]
    assert holm_rejections([]).tolist() == []
    # a boolean mask (a float array of 0 and 1 reads the same through tolist() == [True, ...], but indexes differently)
    assert holm_rejections(p, alpha=0.10).dtype == np.bool_ and holm_rejections([]).dtype == np.bool_


def test_normal_p_values_are_scipy_s_two_sided_normal_tail_and_the_zero_standard_error_cases():
    d = np.array([1.96, -2.5, 0.3, 0.0, 0.4, -0.4, np.nan, 0.0])
    se = np.array([1.0, 1.25, 0.6, 0.5, 0.0, 0.0, 1.0, 0.0])
    expected = [2 * norm.sf(1.96), 2 * norm.sf(2.0), 2 * norm.sf(0.5), 1.0, 0.0, 0.0, 1.0, 1.0]
    assert normal_p_values(d, se) == pytest.approx(expected, rel=1e-12, abs=1e-300)
    assert normal_p_values(d, se)[0] == pytest.approx(0.04999579, abs=1e-8)


def hadamard_resamples(observed: list[float], common: float) -> np.ndarray:
    """B = 16 resamples of R runs: run r's resampled metric is observed[r] + common * h_1 + h_(r+2), where the h are
    columns of a 16 x 16 Hadamard matrix (entries +-1, mean zero, orthogonal). So every run's variance (ddof 1) is
    (common^2 + 1) * 16 / 15, every covariance common^2 * 16 / 15, and every paired difference's variance 2 * 16 / 15,
    whatever `common` is; an unpaired standard error (no covariance term) grows with it."""
    h = hadamard(16).astype(float)
    return np.column_stack([value + common * h[:, 1] + h[:, r + 2] for r, value in enumerate(observed)])


OBSERVED = [0.0, 3.0, 3.4, 4.0]
PAIRED_SE = np.sqrt(2 * 16 / 15)


@pytest.mark.parametrize("common", [0.0, 3.0])
def test_pairwise_p_values_use_the_paired_standard_error(common):
    """The same p-values with or without a component every run shares: the paired standard error cancels it."""
    tests = pairwise_tests(np.array(OBSERVED), hadamard_resamples(OBSERVED, common))
    difference = np.subtract.outer(OBSERVED, OBSERVED)
    expected = 2 * norm.sf(np.abs(difference) / PAIRED_SE)
    np.fill_diagonal(expected, 1.0)
    assert tests.p == pytest.approx(expected, rel=1e-9)


def test_rank_intervals_are_holm_within_each_run_s_comparisons_where_bonferroni_gives_narrower_ones():
    """Run 0 is 3.0, 3.4 and 4.0 below the others (p about 0.040, 0.020, 0.006 with the paired standard error):
    Holm rejects all three (so three runs are better and run 0 ranks 4 for sure), Bonferroni only the last
    (interval [2, 4]). Expected intervals from statsmodels' Holm on each run's column of p-values."""
    observed = np.array(OBSERVED)
    tests = pairwise_tests(observed, hadamard_resamples(OBSERVED, 3.0))
    p = 2 * norm.sf(np.abs(np.subtract.outer(observed, observed)) / PAIRED_SE)
    width = len(observed)
    better = np.zeros((width, width), dtype=bool)
    for k in range(width):
        others = [j for j in range(width) if j != k]
        rejected = multipletests(p[others, k], alpha=0.05, method="holm")[0]
        for j, r in zip(others, rejected):
            better[j, k] = bool(r) and observed[j] > observed[k]
    expected = [[1 + better[:, k].sum(), width - better[k, :].sum()] for k in range(width)]
    assert tests.better.tolist() == better.tolist()
    assert tests.rank_intervals.tolist() == expected
    assert expected[0] == [4, 4]  # all three better than run 0 by Holm
    assert multipletests(p[1:, 0], alpha=0.05, method="bonferroni")[0].tolist() == [False, False, True]
    assert expected[1:] == [[1, 3], [1, 3], [1, 3]]


def test_tied_runs_are_not_better_than_each_other_in_either_order():
    """Two equal runs (difference 0, p 1) and one far below: the equal ones share [1, 2], whichever is listed first."""
    for observed in ([5.0, 5.0, 0.0], [0.0, 5.0, 5.0]):
        resampled = hadamard_resamples(observed, 0.0)
        tests = pairwise_tests(np.array(observed), resampled)
        low = observed.index(0.0)
        intervals = tests.rank_intervals.tolist()
        assert intervals[low] == [3, 3]
        assert [intervals[k] for k in range(3) if k != low] == [[1, 2], [1, 2]]
        assert tests.p[[k for k in range(3) if k != low]][:, [k for k in range(3) if k != low]].tolist() == [[1.0, 1.0], [1.0, 1.0]]


def test_a_resample_where_one_run_s_metric_is_undefined_is_left_out_of_that_run_s_moments():
    """Run 1 undefined on the first resample: its mean and variance come from the other 15, and the covariance with
    run 0 from the 15 resamples both are defined (by hand below, as the docstring of pairwise_tests describes)."""
    observed = [0.0, 4.0]
    resampled = hadamard_resamples(observed, 0.0)
    resampled[0, 1] = np.nan
    tests = pairwise_tests(np.array(observed), resampled)
    a, b = resampled[:, 0], resampled[:, 1]
    both = ~np.isnan(b)
    a_centred, b_centred = a - a.mean(), b - b[both].mean()
    variance_a = (a_centred ** 2).sum() / 15
    variance_b = (b_centred[both] ** 2).sum() / 14
    covariance = (a_centred[both] * b_centred[both]).sum() / 14
    se = np.sqrt(variance_a + variance_b - 2 * covariance)
    assert tests.p[1, 0] == pytest.approx(2 * norm.sf(4.0 / se), rel=1e-9)
    assert tests.p[0, 1] == tests.p[1, 0]


def test_equal_runs_share_rank_one_and_the_set_for_the_best_lists_them_by_name_in_either_order():
    """Two runs with the same 40 errors and one with 120: whichever equal run comes first is the best, both rank 1,
    the set for the best is in name order, and the best's own difference is 0 with the interval (0, 0)."""
    gold = nli_gold()
    for names in (("b-run", "a-run"), ("a-run", "b-run")):
        runs = [nli_run(gold, names[0], set(range(40))), nli_run(gold, names[1], set(range(40))),
                nli_run(gold, "worse", set(range(200, 320)))]
        ranking = rank_runs(run_table(runs), samples=200)
        by_name = {r.run: r for r in ranking.runs}
        assert ranking.best == names[0]
        assert by_name["a-run"].rank == by_name["b-run"].rank == 1 and by_name["worse"].rank == 3
        assert ranking.best_set == ["a-run", "b-run"]
        best, other = by_name[names[0]], by_name[names[1]]
        assert best.p_value is None and best.difference["accuracy"] == 0.0 and best.difference_ci95["accuracy"] == (0.0, 0.0)
        assert other.p_value == 1.0 and other.tied_with_best and other.difference_ci95["accuracy"] == (0.0, 0.0)
        assert by_name["worse"].difference["accuracy"] == pytest.approx(-20.0)
        assert by_name["worse"].rank_ci95 == (3, 3) and not by_name["worse"].tied_with_best


def test_the_ranking_takes_exactly_the_minimum_resamples_and_refuses_one_fewer_naming_both():
    gold = nli_gold()
    table = run_table([nli_run(gold, "a", set(range(40))), nli_run(gold, "b", set(range(1, 41)))])
    assert rank_runs(table, samples=MIN_RESAMPLES).samples == 200
    with pytest.raises(ValueError, match=r"^199 resamples: the ranking's standard errors need at least 200 \(give --bootstrap 200"):
        rank_runs(table, samples=199)
    with pytest.raises(ValueError, match=r"^nli has no metric 'f1'; rank by one of accuracy$"):
        rank_runs(table, metric="f1")


def test_a_run_defined_on_one_resample_only_has_no_spread_of_its_own():
    """Run 1 is defined on one resample of 16: its mean is that value, so it contributes no variance and no covariance,
    and the pair's standard error is run 0's own (16 / 15 by the Hadamard construction)."""
    observed = [0.0, 2.0]
    resampled = hadamard_resamples(observed, 0.0)
    resampled[1:, 1] = np.nan
    tests = pairwise_tests(np.array(observed), resampled)
    assert tests.p[1, 0] == pytest.approx(2 * norm.sf(2.0 / np.sqrt(16 / 15)), rel=1e-9)


def test_a_run_defined_on_two_resamples_has_the_variance_of_those_two():
    """Run 1 defined on resamples 0 and 1 only: variance (a - b)^2 / 2 over n - 1 = 1, and its covariance with run 0
    over the same two resamples, also divided by 1 (written out below)."""
    observed = [0.0, 2.0]
    resampled = hadamard_resamples(observed, 0.0)
    resampled[2:, 1] = np.nan
    resampled[:2, 1] = [2.5, 0.5]
    tests = pairwise_tests(np.array(observed), resampled)
    run_0, run_1 = resampled[:, 0], resampled[:2, 1]
    variance_0 = ((run_0 - run_0.mean()) ** 2).sum() / 15
    variance_1 = (2.5 - 0.5) ** 2 / 2
    covariance = ((run_0[:2] - run_0.mean()) * (run_1 - run_1.mean())).sum() / 1
    se = np.sqrt(variance_0 + variance_1 - 2 * covariance)
    assert tests.p[1, 0] == pytest.approx(2 * norm.sf(2.0 / se), rel=1e-9)


@pytest.mark.parametrize("observed", [[0.0, 3.17], [0.0, 3.17, 0.0]])
def test_holm_counts_the_r_minus_1_comparisons_of_each_run(observed):
    """p = 0.030 between 0 and 3.17: with two runs there is one comparison (0.030 <= 0.05: run 1 is better, run 0 ranks 2);
    with three, two comparisons per run (0.030 > 0.05 / 2: nothing is better, every interval is [1, R] or [1, R - 1])."""
    tests = pairwise_tests(np.array(observed), hadamard_resamples(observed, 0.0))
    p = 2 * norm.sf(3.17 / PAIRED_SE)
    assert tests.p[1, 0] == pytest.approx(p) and 0.025 < p < 0.05
    expected = multipletests([p, 1.0][:len(observed) - 1], alpha=0.05, method="holm")[0][0]
    assert bool(tests.better[1, 0]) == expected == (len(observed) == 2)
    assert tests.rank_intervals.tolist()[0] == ([2, 2] if len(observed) == 2 else [1, 3])


def test_a_paired_standard_error_and_a_difference_below_one_are_not_floored():
    """The resamples scaled by 0.1: the paired standard error is 0.1 * sqrt(2 * 16 / 15), about 0.146."""
    observed = [0.0, 0.3]
    resampled = np.array(observed) + 0.1 * (hadamard_resamples(observed, 0.0) - np.array(observed))
    tests = pairwise_tests(np.array(observed), resampled)
    assert tests.p[1, 0] == pytest.approx(2 * norm.sf(0.3 / (0.1 * PAIRED_SE)), rel=1e-9)
    # p about 0.040 <= 0.05 for the one comparison: run 1 is better by 0.3 (a difference below 1 counts too)
    assert tests.better.tolist() == [[False, False], [True, False]] and tests.rank_intervals.tolist() == [[2, 2], [1, 1]]
