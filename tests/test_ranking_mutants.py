"""The ranking written out by hand (issue 31, mutation testing of `rank_runs` and the rest of klue_viz/compare/ranking.py).

`rank_runs` is checked against an independent reading of the procedure docs/compare.md documents: the resample counts
drawn again with the same seed, every run's Pearson r and binary F1 on every resample from weighted sums written
out below (checked against scipy and scikit-learn on the observed row), the paired standard error as the spread of the
resampled differences, p from scipy's normal tail, the ties by statsmodels' Holm, each run's rank interval by Holm over
its own comparisons. The case is chosen so that its simpler neighbours give other answers (asserted in the test):
Holm and Bonferroni disagree at the family-wise level picked (10%), and so do 10% and the default 5%; the best run on
the ranking metric is not the best on the other metric; the level of the intervals is 90%, not the default 95%."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from cases import gold_of, sts
from conftest import jsonl
from scipy.stats import norm, pearsonr
from sklearn.metrics import f1_score
from statsmodels.stats.multitest import multipletests
from test_compare import NLI, guid, nli_gold, nli_run, run_records

from klue_viz.compare import ranking
from klue_viz.compare.ranking import (
    complementarity,
    difficulty,
    matrix_frame,
    matrix_rows,
    p_text,
    paired_resamples,
    rank_runs,
    run_sequence,
    run_table,
    trajectories,
)
from klue_viz.scoring.bootstrap import resample_counts
from klue_viz.scoring.evaluate import evaluate_bytes
from klue_viz.tasks import get_task

STS = get_task("sts")
N = 60
#: Seeds of the planted case (found by a search for a case that separates the neighbours; the test asserts it does).
DATA_SEED, SAMPLES, RESAMPLE_SEED, LEVEL, ALPHA = 243, 300, 3, 0.90, 0.10
NAMES = ["run-a", "run-b", "run-c", "run-d"]


def planted_sts() -> tuple[np.ndarray, list[np.ndarray]]:
    """Gold similarities on 0..5 and four runs: the gold plus normal noise of growing width, clipped to 0..5."""
    rng = np.random.default_rng(DATA_SEED)
    gold = np.round(rng.uniform(0, 5, N), 1)
    return gold, [np.clip(np.round(gold + rng.normal(0, width, N), 2), 0, 5) for width in (0.9, 1.0, 1.1, 1.4)]


def sts_metrics_by_hand(gold: np.ndarray, pred: np.ndarray, counts: np.ndarray) -> dict[str, np.ndarray]:
    """Pearson r and the binary F1 (both at 3.0) on 0..100 of each row of example counts, as weighted sums."""
    total = counts.sum(axis=1)
    mean_pred, mean_gold = counts @ pred / total, counts @ gold / total
    covariance = counts @ (pred * gold) - total * mean_pred * mean_gold
    var_pred = counts @ (pred * pred) - total * mean_pred ** 2
    var_gold = counts @ (gold * gold) - total * mean_gold ** 2
    similar, predicted = gold >= 3, pred >= 3
    tp, fp, fn = counts @ (similar & predicted), counts @ (~similar & predicted), counts @ (similar & ~predicted)
    return {"pearsonr": 100 * covariance / np.sqrt(var_pred * var_gold), "f1": 100 * 2 * tp / (2 * tp + fp + fn)}


def paired_p(values: list[dict[str, np.ndarray]], j: int, k: int, metric: str) -> float:
    """Two-sided normal p of run j - run k from the spread (ddof 1) of their paired resampled differences."""
    d = values[j][metric] - values[k][metric]
    return float(2 * norm.sf(abs(d[0]) / np.std(d[1:], ddof=1)))


@pytest.fixture(scope="module")
def planted():
    gold, preds = planted_sts()
    gold_file = gold_of("sts", sts(gold.tolist()))
    results = [evaluate_bytes(STS, gold_file, jsonl([{"guid": f"klue-sts-v1_dev_{k:05d}", "score": float(s)} for k, s in enumerate(pred)]),
                              f"{name}.jsonl", run=name) for name, pred in zip(NAMES, preds)]
    counts = np.vstack([np.ones(N), resample_counts(np.random.default_rng(RESAMPLE_SEED), N, SAMPLES)])
    values = [sts_metrics_by_hand(gold, pred, counts) for pred in preds]
    return gold, preds, results, values


def test_the_by_hand_metrics_are_scipy_s_and_scikit_learn_s_on_the_observed_row(planted):
    gold, preds, _, values = planted
    for pred, value in zip(preds, values):
        assert value["pearsonr"][0] == pytest.approx(100 * pearsonr(gold, pred).statistic, rel=1e-12)
        assert value["f1"][0] == pytest.approx(100 * f1_score(gold >= 3, pred >= 3), rel=1e-12)


def test_the_planted_case_separates_holm_from_bonferroni_and_the_level_picked_from_the_default(planted):
    """Against the best (run-a): p about 0.082, 0.028, 0.005. Holm at 10% rejects all three; Bonferroni at 10% (0.033
    each) not the first; Holm at 5% (0.017, 0.025, 0.05) only the last."""
    values = planted[3]
    p = [paired_p(values, k, 0, "pearsonr") for k in (1, 2, 3)]
    assert multipletests(p, alpha=ALPHA, method="holm")[0].tolist() == [True, True, True]
    assert multipletests(p, alpha=ALPHA, method="bonferroni")[0].tolist() == [False, True, True]
    assert multipletests(p, alpha=0.05, method="holm")[0].tolist() == [False, False, True]
    observed = {key: [v[key][0] for v in values] for key in ("pearsonr", "f1")}
    assert int(np.argmax(observed["pearsonr"])) == 0 and int(np.argmax(observed["f1"])) == 1


def test_rank_runs_is_the_documented_procedure_written_out(planted):
    """Every number of the ranking at alpha 10%: the ties, the rank intervals and the set for the best are at 90%
    confidence, and the method line says so (it said 95% whatever alpha was)."""
    _, _, results, values = planted
    ranking = rank_runs(run_table(results), samples=SAMPLES, level=LEVEL, seed=RESAMPLE_SEED, alpha=ALPHA)
    width = len(NAMES)
    observed = np.array([v["pearsonr"][0] for v in values])
    best = int(np.argmax(observed))
    assert (ranking.metric, ranking.best, ranking.n_shared, ranking.samples) == ("pearsonr", NAMES[best], N, SAMPLES)
    others = [k for k in range(width) if k != best]
    tied = dict(zip(others, (~multipletests([paired_p(values, k, best, "pearsonr") for k in others], alpha=ALPHA, method="holm")[0]).tolist()))
    better = np.zeros((width, width), dtype=bool)
    for k in range(width):
        rivals = [j for j in range(width) if j != k]
        rejected = multipletests([paired_p(values, j, k, "pearsonr") for j in rivals], alpha=ALPHA, method="holm")[0]
        for j, r in zip(rivals, rejected):
            better[j, k] = bool(r) and observed[j] > observed[k]
    tail = 100 * (1 - LEVEL) / 2
    by_run = {r.run: r for r in ranking.runs}
    assert [r.run for r in ranking.runs] == NAMES
    for k, name in enumerate(NAMES):
        run = by_run[name]
        assert run.rank == 1 + int((observed > observed[k]).sum())
        assert run.rank_ci95 == (1 + int(better[:, k].sum()), width - int(better[k, :].sum()))
        assert run.could_be_best == (not better[:, k].any())
        assert run.tied_with_best == (k == best or tied[k])
        assert run.p_value == (None if k == best else pytest.approx(paired_p(values, k, best, "pearsonr"), rel=1e-6))
        for key in ("pearsonr", "f1"):
            own, difference = values[k][key], values[k][key] - values[best][key]
            assert run.metrics[key] == pytest.approx(own[0], rel=1e-9)
            assert run.ci95[key] == pytest.approx((np.percentile(own[1:], tail), np.percentile(own[1:], 100 - tail)), rel=1e-9)
            assert run.difference[key] == pytest.approx(difference[0], rel=1e-9, abs=1e-9)
            expected_ci = (0.0, 0.0) if k == best else (np.percentile(difference[1:], tail), np.percentile(difference[1:], 100 - tail))
            assert run.difference_ci95[key] == pytest.approx(expected_ci, rel=1e-9, abs=1e-9)
    # the best's F1 difference is to itself; the others' F1 differences are to the best on Pearson r, not on F1
    assert by_run["run-b"].difference["f1"] > 0
    expected_set = [NAMES[k] for k in sorted(range(width), key=lambda k: -observed[k]) if not better[:, k].any()]
    assert ranking.best_set == expected_set
    assert ranking.correction == (
        "Tied with the best: not different from run-a on pearsonr by a paired test (300 bootstrap resamples of the 60 pairs "
        "every run scored give the standard error; p from the normal approximation), Holm-corrected over the 3 run(s) compared "
        f"(family-wise error 10%). Rank interval: the ranks a run may hold with 90% confidence (Holm over its own 3 comparisons); "
        f"the {len(expected_set)} run(s) whose interval starts at 1 form the 90% confidence set for the best.")


def test_rank_runs_by_the_second_metric_and_at_the_default_levels(planted):
    """Ranked by F1 with the defaults (seed 0, 95%, Holm at 5%): the best is run-b, and every number follows."""
    gold, preds, results, _ = planted
    counts = np.vstack([np.ones(N), resample_counts(np.random.default_rng(0), N, 1000)])
    values = [sts_metrics_by_hand(gold, pred, counts) for pred in preds]
    ranking = rank_runs(run_table(results), metric="f1")
    observed = [v["f1"][0] for v in values]
    assert ranking.best == "run-b" and ranking.samples == 1000 and ranking.metric == "f1"
    others = [0, 2, 3]
    expected_tied = (~multipletests([paired_p(values, k, 1, "f1") for k in others], alpha=0.05, method="holm")[0]).tolist()
    by_run = {r.run: r for r in ranking.runs}
    assert [by_run[NAMES[k]].tied_with_best for k in others] == expected_tied
    for k in others:
        run = by_run[NAMES[k]]
        assert run.p_value == pytest.approx(paired_p(values, k, 1, "f1"), rel=1e-6)
        d = values[k]["pearsonr"] - values[1]["pearsonr"]
        assert run.difference["pearsonr"] == pytest.approx(d[0], rel=1e-9)
        assert run.difference_ci95["pearsonr"] == pytest.approx((np.percentile(d[1:], 2.5), np.percentile(d[1:], 97.5)), rel=1e-9)
        assert run.rank == 1 + sum(o > observed[k] for o in observed)
    assert "on f1 by a paired test (1000 bootstrap resamples" in ranking.correction and "(family-wise error 5%)" in ranking.correction


@pytest.mark.parametrize("names", [("step-10", "step-9"), ("step-9", "step-10")])
def test_the_set_for_the_best_lists_tied_runs_in_natural_order_whichever_comes_first(names):
    """Two runs with the same errors (rank 1 both) named step-9 and step-10: the set lists step-9 first (numbers read as
    numbers), where a plain string order would put step-10 first; the best is the first listed."""
    gold = nli_gold()
    runs = [nli_run(gold, names[0], set(range(30))), nli_run(gold, names[1], set(range(30))), nli_run(gold, "other", set(range(20, 54)))]
    ranking = rank_runs(run_table(runs), samples=200)
    assert ranking.best == names[0]
    assert [r.rank for r in ranking.runs] == [1, 1, 3]
    assert ranking.best_set[:2] == ["step-9", "step-10"]


def test_an_undefined_metric_ranks_below_a_negative_one_and_the_best_s_own_interval_is_zero():
    """Gold on 0..2.9 (no similar pair, so F1 is undefined for every run on every resample). "anti" predicts 2.9 - gold
    (Pearson r -100 by hand: an exact decreasing line), "constant" 2.5 everywhere (r undefined): the undefined r ranks
    last even below a negative one (read as 0 it would rank first). The best's own difference on F1 is None (the
    metric is undefined) and its interval stays the documented (0, 0); the other run's is None (no resample defines it)."""
    gold = [round(2.9 * k / 59, 3) for k in range(60)]
    gold_file = gold_of("sts", sts(gold))
    runs = [evaluate_bytes(STS, gold_file, jsonl([{"guid": f"klue-sts-v1_dev_{k:05d}", "score": s} for k, s in enumerate(scores)]),
                           f"{name}.jsonl", run=name)
            for name, scores in (("constant", [2.5] * 60), ("anti", [round(2.9 - g, 3) for g in gold]))]
    ranking = rank_runs(run_table(runs), samples=200)
    by_run = {r.run: r for r in ranking.runs}
    assert ranking.best == "anti" and by_run["anti"].metrics["pearsonr"] == pytest.approx(-100.0, abs=1e-6)
    assert (by_run["anti"].rank, by_run["constant"].rank) == (1, 2) and by_run["constant"].metrics["pearsonr"] is None
    assert by_run["anti"].metrics["f1"] is None and by_run["anti"].difference["f1"] is None
    assert by_run["anti"].difference_ci95 == {"pearsonr": (0.0, 0.0), "f1": (0.0, 0.0)}
    assert by_run["constant"].difference_ci95["f1"] is None and by_run["constant"].ci95["f1"] is None


# ---- the example x run matrix, complementarity and the paired resamples, on a table written out by hand --------------

#: Each example along the runs m-1..m-4: R right, W wrong, - not scored (m-1 scores every example, so rows are in file
#: order). Difficulty (share wrong of the runs that scored it), trajectory and the orders below are worked out by hand.
PATTERNS = ["RRRR", "WWWW", "WRRR", "RRWW", "WRWR", "RWRW", "W-W-", "RW--", "WWR-", "WRWW", "WW-R", "R---"]
RUNS = ["m-1", "m-2", "m-3", "m-4"]


def patterned_runs() -> list:
    """The runs m-1..m-4 of PATTERNS as evaluated results (a wrong example predicted wrong, a '-' not predicted)."""
    gold = nli_gold(len(PATTERNS))
    runs = []
    for column, name in enumerate(RUNS):
        wrong = {k for k, p in enumerate(PATTERNS) if p[column] == "W"}
        records = [r for k, r in enumerate(run_records(wrong, len(PATTERNS))) if PATTERNS[k][column] != "-"]
        runs.append(evaluate_bytes(NLI, gold, jsonl(records), f"{name}.jsonl", run=name))
    return runs
DIFFICULTY = [0, 1, 1 / 4, 1 / 2, 1 / 2, 1 / 2, 1, 1 / 2, 2 / 3, 3 / 4, 2 / 3, 0]
#: solved at / forgotten at (run index), -1 for neither.
SOLVED = [-1, -1, 1, -1, 3, -1, -1, -1, 2, -1, 3, -1]
FORGOTTEN = [-1, -1, -1, 2, -1, 3, -1, 1, -1, 2, -1, -1]
ORDERS = {
    "difficulty": [1, 6, 9, 8, 10, 3, 4, 5, 7, 2, 0, 11],  # ties (1; 2/3; 1/2; 0) in file order
    "wrong for every run": [1, 6],
    "right for only one run": [7, 8, 9, 10, 11],
    # forgotten, latest first (5 at m-4; 9 and 3 at m-3, the harder first; 7), solved, latest first (10 and 4 at m-4, the
    # harder first; 8; 2), then the rest by difficulty (1 and 6 in file order, then 0 and 11)
    "solved late / forgotten": [5, 9, 3, 7, 10, 4, 8, 2, 1, 6, 0, 11],
    "file order": list(range(12)),
}


@pytest.fixture(scope="module")
def matrix_table():
    gold = nli_gold(len(PATTERNS))
    runs = []
    for column, name in enumerate(RUNS):
        scored = [k for k, p in enumerate(PATTERNS) if p[column] != "-"]
        wrong = {k for k, p in enumerate(PATTERNS) if p[column] == "W"}
        records = [r for k, r in enumerate(run_records(wrong, len(PATTERNS))) if k in scored]
        runs.append(evaluate_bytes(NLI, gold, jsonl(records), f"{name}.jsonl", run=name))
    return run_table(runs)


def test_the_table_difficulty_and_trajectories_are_the_hand_counted_ones(matrix_table):
    expected = np.array([[{"R": 1.0, "W": 0.0, "-": np.nan}[c] for c in p] for p in PATTERNS])
    np.testing.assert_array_equal(matrix_table.correct, expected)
    assert matrix_table.guids == [guid(k) for k in range(12)] and matrix_table.shared.tolist() == [0, 1, 2, 3, 4, 5, 9]
    assert difficulty(matrix_table) == pytest.approx(DIFFICULTY)
    solved, forgotten = trajectories(matrix_table)
    assert (solved.tolist(), forgotten.tolist()) == (SOLVED, FORGOTTEN)


@pytest.mark.parametrize("how", list(ORDERS))
def test_each_matrix_order_is_the_hand_sorted_one(matrix_table, how):
    assert matrix_rows(matrix_table, how).tolist() == ORDERS[how]


def test_an_unknown_matrix_order_is_refused_naming_the_orders(matrix_table):
    with pytest.raises(ValueError, match=r"^unknown matrix order 'hardest'; expected one of difficulty, wrong for every run, right for "
                                         r"only one run, solved late / forgotten, file order$"):
        matrix_rows(matrix_table, "hardest")


def test_the_matrix_frame_in_an_order_with_runs_picked_and_a_limit(matrix_table):
    frame = matrix_frame(matrix_table, "solved late / forgotten", runs=["m-4", "m-2"], limit=5)
    rows = ORDERS["solved late / forgotten"][:5]
    assert frame.index.tolist() == rows and frame.columns.tolist() == ["guid", "turn", "difficulty", "trajectory", "m-4", "m-2"]
    assert frame["guid"].tolist() == [guid(k) for k in rows] and frame["turn"].tolist() == [None] * 5
    assert frame["difficulty"].tolist() == pytest.approx([DIFFICULTY[k] for k in rows])
    assert frame["trajectory"].tolist() == ["forgotten at m-4", "forgotten at m-3", "forgotten at m-3", "forgotten at m-2", "solved at m-4"]
    cell = {"R": True, "W": False, "-": None}
    for name, column in (("m-4", 3), ("m-2", 1)):
        assert [None if v is pd.NA else bool(v) for v in frame[name]] == [cell[PATTERNS[k][column]] for k in rows]
    whole = matrix_frame(matrix_table, "file order")
    assert whole.columns.tolist()[4:] == RUNS and len(whole) == 12 and whole["trajectory"][0] == "" and whole["trajectory"][2] == "solved at m-2"


def test_complementarity_on_the_shared_examples_with_a_tie_for_the_best_pair(matrix_table):
    """Shared: examples 0-5 and 9. Right: m-1 3 of 7, m-2 5, m-3 3, m-4 3; some run right on all but example 1; the pairs
    (m-1, m-2) and (m-2, m-3) both cover 6 of 7, and the first in run order is named."""
    found = complementarity(matrix_table)
    assert found.n == 7 and found.oracle == pytest.approx(6 / 7) and found.common_errors == [guid(1)]
    assert found.best_single == ("m-2", pytest.approx(5 / 7))
    assert found.best_pair == ("m-1", "m-2", pytest.approx(6 / 7))
    one = complementarity(run_table([matrix_table.results[1]]))
    assert one.best_pair is None and one.best_single == ("m-2", pytest.approx(5 / 10)) and one.n == 10
    assert one.oracle == pytest.approx(5 / 10) and one.common_errors == [guid(k) for k in (1, 5, 7, 8, 10)]
    # m-3 and m-4 share examples 0-5 and 9, each right on 3 of them (a tie: the first is named) and together on 4
    two = complementarity(run_table([matrix_table.results[2], matrix_table.results[3]]))
    assert two.n == 7 and two.best_single == ("m-3", pytest.approx(3 / 7)) and two.best_pair == ("m-3", "m-4", pytest.approx(4 / 7))
    gold = nli_gold(len(PATTERNS))
    halves = [evaluate_bytes(NLI, gold, jsonl(run_records(set(), len(PATTERNS))[part]), f"{name}.jsonl", run=name)
              for name, part in (("first", slice(0, 6)), ("second", slice(6, 12)))]
    apart = complementarity(run_table(halves))
    assert (apart.n, apart.best_single[0], apart.best_pair, apart.common_errors) == (0, "first", None, [])
    assert np.isnan(apart.oracle) and np.isnan(apart.best_single[1])


@pytest.mark.parametrize("chunk_cells, stack_cells", [(2_000_000, 8_000_000), (14, 2)])
def test_paired_resamples_are_the_hand_weighted_accuracies_whatever_the_chunks_and_stacks(matrix_table, monkeypatch, chunk_cells,
                                                                                        stack_cells):
    """Each run's accuracy on the shared examples under the same counts (seed 2): 100 * counts @ right / 7, row 0 the
    observed one; in chunks of two resamples and one run per stack the numbers are the same."""
    monkeypatch.setattr(ranking, "CHUNK_CELLS", chunk_cells)
    monkeypatch.setattr(ranking, "STACK_CELLS", stack_cells)
    counts = resample_counts(np.random.default_rng(2), 7, 9)
    right = matrix_table.correct[matrix_table.shared]
    found = paired_resamples(matrix_table.stats, 9, seed=2)
    for column, values in enumerate(found):
        assert list(values) == ["accuracy"]
        assert values["accuracy"] == pytest.approx(np.concatenate([[100 * right[:, column].mean()], 100 * counts @ right[:, column] / 7]))
    unobserved = paired_resamples(matrix_table.stats, 9, seed=2, observed=False)
    assert unobserved[3]["accuracy"] == pytest.approx(100 * counts @ right[:, 3] / 7)
    with pytest.raises(ValueError, match="^paired resamples need statistics over the same examples$"):
        paired_resamples([matrix_table.stats[0], matrix_table.stats[0].take(np.arange(6))], 9)


def test_p_text_at_its_edges():
    assert [p_text(p) for p in (None, 0.0009999, 0.001, 0.0123, 1.0)] == ["", "<0.001", "0.001", "0.012", "1.000"]


def test_run_table_of_runs_that_cover_different_examples_lists_them_first_seen_with_their_owner(matrix_table):
    """The runs in reverse (m-4 first): m-4's examples in its order, then those m-3, m-2 and m-1 add; each row is owned
    by the first run that scored it, at that run's position (counted by hand from PATTERNS)."""
    runs = matrix_table.results[::-1]
    table = run_table(runs)
    rows = [0, 1, 2, 3, 4, 5, 9, 10, 6, 8, 7, 11]
    assert table.runs == RUNS[::-1] and table.guids == [guid(k) for k in rows]
    assert table.owner.tolist() == [[0, p] for p in range(8)] + [[1, 6], [1, 7], [2, 6], [3, 11]]
    expected = np.array([[{"R": 1.0, "W": 0.0, "-": np.nan}[PATTERNS[k][c]] for c in (3, 2, 1, 0)] for k in rows])
    np.testing.assert_array_equal(table.correct, expected)
    assert table.shared.tolist() == [0, 1, 2, 3, 4, 5, 6] and table.score is None
    assert [s.n for s in table.stats] == [7] * 4
    assert table.keys == [(guid(k), None) for k in rows] and table.key(8) == (guid(6), None) and table.label(10) == guid(7)
    observed = [values["accuracy"][0] for values in paired_resamples(table.stats, 0)]
    assert observed == pytest.approx([100 * np.mean(expected[:7, c]) for c in range(4)])


def test_run_table_refusals_name_what_is_wrong(matrix_table):
    first = matrix_table.results[0]
    with pytest.raises(ValueError, match="^no run to compare$"):
        run_table([])
    with pytest.raises(ValueError, match=r"^run names must be distinct to be compared: \['m-1', 'm-1'\]$"):
        run_table([first, first])
    with pytest.raises(ValueError, match="^1 frames for 2 runs$"):
        run_table(matrix_table.results[:2], frames=[first.frames])
    sts_gold = gold_of("sts", sts([1.0, 4.0]))
    sts_run = evaluate_bytes(STS, sts_gold, jsonl([{"guid": f"klue-sts-v1_dev_{k:05d}", "score": 2.0} for k in range(2)]), "s.jsonl", run="s")
    with pytest.raises(ValueError, match="^runs of different tasks cannot be compared: nli, sts$"):
        run_table([first, sts_run])


def source_numbers(column: int) -> dict[str, tuple[float | None, int]]:
    """A run's accuracy and size per source (example k's source is SOURCES[k % 4]), counted from PATTERNS."""
    out = {}
    for s, source in enumerate(("airbnb", "policy", "wikinews", "wikipedia")):
        marks = [p[column] for k, p in enumerate(PATTERNS) if k % 4 == s and p[column] != "-"]
        out[source] = (100 * marks.count("R") / len(marks) if marks else None, len(marks))
    return out


def test_run_sequence_per_source_is_counted_by_hand_largest_first(matrix_table):
    """Sources over the four runs: policy 12 scored, airbnb 11, wikinews 9, wikipedia 7 (largest first, not by name)."""
    found = run_sequence(NLI, matrix_table.results)
    assert found.runs == RUNS and found.overall_n == [12, 10, 9, 8]
    assert found.overall["accuracy"] == pytest.approx([100 * p.count("R") / (len(p) - p.count("-")) for p in zip(*PATTERNS)])
    assert list(found.slices["source"]) == list(found.counts["source"]) == ["policy", "airbnb", "wikinews", "wikipedia"]
    for column in range(4):
        for source, (accuracy, size) in source_numbers(column).items():
            assert found.counts["source"][source][column] == size
            assert found.slices["source"][source]["accuracy"][column] == pytest.approx(accuracy)
    assert found.labels["source"] == "Source" and set(found.labels) == set(found.slices) == set(found.counts)
    assert found.to_dict() == {"overall": found.overall, "slices": found.slices}


def test_run_sequence_reads_the_frames_and_statistics_it_is_given(matrix_table):
    """m-1's result with m-4's frames: the overall score is m-1's own (5 of 12, from its result), the slices are read
    from the frames given (m-4's numbers)."""
    m1, m4 = matrix_table.results[0], matrix_table.results[3]
    found = run_sequence(NLI, [m1], frames=[m4.frames])
    assert found.overall["accuracy"] == [pytest.approx(100 * 5 / 12)] and found.overall_n == [12]
    assert {s: (found.slices["source"][s]["accuracy"][0], found.counts["source"][s][0]) for s in found.counts["source"]} == {
        s: v for s, v in source_numbers(3).items() if v[1]}
    # the statistics given are used as they are: those of a run right everywhere, on m-1's frames (the same 12 examples)
    right = evaluate_bytes(NLI, nli_gold(len(PATTERNS)), jsonl(run_records(set(), len(PATTERNS))), "right.jsonl", run="right")
    given = run_sequence(NLI, [m1], statistics=[NLI.statistics(right.frames)])
    assert {s: given.slices["source"][s]["accuracy"][0] for s in given.slices["source"]} == {s: 100.0 for s in source_numbers(0)}
    assert given.counts["source"] == {s: [3] for s in ("airbnb", "policy", "wikinews", "wikipedia")}
