"""Many runs of one task on one gold, compared example by example with paired statistics (no Streamlit).

Every view starts from a `RunTable`: the runs' per-example correctness (the `correct` column the
example list shows; for WoS a unit is a turn), their per-example score where the task has one
(`Task.example_scores`), and each run's sufficient statistics on the examples *every* run scored.

The ranking resamples those shared examples once (one matrix of resample counts) and weighs every
run's statistics with the same counts, so the difference between two runs on a resample is a
paired difference; each run's official metrics on each resample come from the task's own
aggregate over the B x width sums (`klue_viz.metrics.official`). The p-value of a difference is normal,
from its paired bootstrap standard error (it does not floor at 2 / (B + 1), so the decisions hold at any
number of runs); which runs cannot be told apart from the best is decided by Holm's step-down correction
over the runs compared, each run's 95% rank interval by Holm over its own comparisons, and the runs whose
interval starts at 1 form the confidence set for the best (docs/compare.md).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, cast

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from klue_viz.core.lazy import lazy_module
from klue_viz.core.results import Frames
from klue_viz.core.steps import natural_key
from klue_viz.metrics.official import Statistics
from klue_viz.scoring.bootstrap import CHUNK_CELLS, percentile_interval, resample_counts
from klue_viz.scoring.evaluate import RunResult
from klue_viz.scoring.slicing import group_scores
from klue_viz.tasks.base import Task

if TYPE_CHECKING:
    from scipy import special
else:
    special = lazy_module("scipy.special")  # the normal tail of the ranking's p-values

#: The family-wise error level of "not distinguishable from the best" (Holm over the runs compared).
ALPHA = 0.05
#: The fewest resamples a ranking accepts: the standard error of a difference from B resamples is off by about
#: 1 / sqrt(2 B) of itself (5% at 200), and the p-values and rank intervals divide by it.
MIN_RESAMPLES = 200
#: Integer sums below this are exact in float32, whose matrix products are twice as fast as float64's.
FLOAT32_EXACT = 2**24
#: The orders the example x run matrix offers.
MATRIX_ORDERS = ("difficulty", "wrong for every run", "right for only one run", "solved late / forgotten", "file order")


# ---- the runs side by side ------------------------------------------------------------------------

def order_runs(names: Sequence[str], by: str = "name", uploaded: dict[str, str] | None = None) -> list[str]:
    """Run names in display order: by model and step read naturally (`name`), or by upload time (`time`; ISO
    timestamps, runs without one last in name order)."""
    if by == "time":
        times = uploaded or {}
        return sorted(names, key=lambda n: (n not in times, times.get(n, ""), natural_key(n)))
    return sorted(names, key=natural_key)


@dataclass
class RunTable:
    """Runs of one task side by side: one row per example any run scored, one column per run."""

    task: Task
    runs: list[str]
    #: Example-frame guids (a WoS turn: `dialogue-turn`), first-seen order (the gold order when runs cover the gold).
    guids: list[str]
    #: n x R: 1.0 right, 0.0 wrong, NaN where the run has no such example.
    correct: np.ndarray
    #: n x R per-example scores on 0..1 (NaN where not scored), or None for tasks without one.
    score: np.ndarray | None
    #: Row positions of the examples every run scored, and each run's statistics on them (in that order).
    shared: np.ndarray
    stats: list[Statistics] = field(repr=False)
    results: list[RunResult] = field(repr=False)
    #: Per row, a run that scored it and the example's position in that run's frames (for its key and drawing).
    owner: np.ndarray = field(repr=False, default_factory=lambda: np.zeros((0, 2), dtype=np.int64))
    #: The frames the table was built from, per run (cut to what it reads: `compared_columns`); drawings read `results`.
    frames: list[Frames] = field(repr=False, default_factory=list)

    @property
    def scored(self) -> np.ndarray:
        """n x R: whether each run scored each example."""
        return ~np.isnan(self.correct)

    def column(self, run: str) -> int:
        """The column of a run."""
        return self.runs.index(run)

    def key(self, row: int) -> tuple[str, int | None]:
        """(guid, turn) of one example as the app and the annotations name it (turn: WoS only, else None)."""
        run, position = self.owner[row]
        return self.task.annotation_key(self.frames[run].examples.iloc[int(position)].to_dict())

    @cached_property
    def keys(self) -> list[tuple[str, int | None]]:
        """(guid, turn) of every example, in row order: each owning run's columns are read as arrays once."""
        out: list[tuple[str, int | None]] = [("", None)] * len(self.guids)
        for run in np.unique(self.owner[:, 0]).tolist():
            rows = np.flatnonzero(self.owner[:, 0] == run)
            columns = _Columns(self.frames[run].examples)
            for row, position in zip(rows.tolist(), self.owner[rows, 1].tolist()):
                # annotation_key reads fields by name only: a mapping over the columns serves it without a dict per row
                out[row] = self.task.annotation_key(cast(dict, _Row(columns, position)))
        return out

    def label(self, row: int) -> str:
        """An example as a person reads it: its guid, and the turn for WoS."""
        guid, turn = self.key(row)
        return guid if turn is None else f"{guid} turn {turn}"


class _Columns:
    """A frame's columns as numpy arrays, each converted on first use (reading one field of every row is then cheap)."""

    def __init__(self, frame: pd.DataFrame) -> None:
        self.frame = frame
        self.arrays: dict[str, np.ndarray] = {}

    def value(self, column: str, position: int) -> object:
        """The value of `column` in the row at `position`."""
        if column not in self.arrays:
            self.arrays[column] = self.frame[column].to_numpy(dtype=object)
        return self.arrays[column][position]


class _Row(Mapping):
    """One example row as a read-only mapping over `_Columns` (what `Task.annotation_key` reads), built without a dict."""

    def __init__(self, columns: _Columns, position: int) -> None:
        self.columns, self.position = columns, position

    def __getitem__(self, column: str) -> object:
        if column not in self.columns.frame.columns:
            raise KeyError(column)
        return self.columns.value(column, self.position)

    def __iter__(self) -> Iterator[str]:
        return iter(self.columns.frame.columns)

    def __len__(self) -> int:
        return len(self.columns.frame.columns)


def compared_columns(task: Task) -> dict[str, tuple[str, ...]] | None:
    """The frame columns `run_table` reads of each run, by level (None: all): the examples' guid and correctness and
    what the task's statistics, per-example scores and annotation keys read (`Task.statistics_columns`)."""
    own = task.statistics_columns()
    if own is None:
        return None
    return {**own, "examples": ("guid", "correct", *own.get("examples", ()))}


def run_table(results: Sequence[RunResult], statistics: Sequence[Statistics] | None = None,
              frames: Sequence[Frames] | None = None) -> RunTable:
    """The runs (of one task, on one gold, with distinct names) side by side, in the order given. `statistics`: each
    run's `task.statistics(frames)` when already at hand, else computed here. `frames`: each run's frames holding at
    least `compared_columns(task)` (kept_scoring.column_frames reads only those of a kept run), else the runs' own frames."""
    if not results:
        raise ValueError("no run to compare")
    task = results[0].task
    if any(r.task.facts.name != task.facts.name for r in results):
        raise ValueError("runs of different tasks cannot be compared: " + ", ".join(sorted({r.task.facts.name for r in results})))
    names = [r.run for r in results]
    if len(set(names)) != len(names):
        raise ValueError(f"run names must be distinct to be compared: {names}")
    frames = [r.frames for r in results] if frames is None else list(frames)
    if len(frames) != len(results):
        raise ValueError(f"{len(frames)} frames for {len(results)} runs")
    own = [f.examples["guid"].to_numpy(dtype=object) for f in frames]
    same = all(len(g) == len(own[0]) and np.array_equal(g, own[0]) for g in own[1:])
    guids = own[0] if same else pd.unique(np.concatenate(own))
    index = None if same else pd.Index(guids)
    n, width = len(guids), len(results)
    correct = np.full((n, width), np.nan)
    scores = np.full((n, width), np.nan)
    owner = np.full((n, 2), -1, dtype=np.int64)
    has_score = False
    positions = []
    for k, (run_frames, ex_guids) in enumerate(zip(frames, own)):
        rows = np.arange(n) if index is None else index.get_indexer(ex_guids)
        positions.append(rows)
        correct[rows, k] = run_frames.examples["correct"].to_numpy(dtype=bool)
        score = task.example_scores(run_frames)
        if score is not None:
            has_score = True
            scores[rows, k] = np.asarray(score, dtype=float)
        free = owner[rows, 0] < 0
        owner[rows[free]] = np.column_stack([np.full(int(free.sum()), k), np.flatnonzero(free)])
    shared = np.flatnonzero(~np.isnan(correct).any(axis=1))
    stats = []
    for k, run_frames in enumerate(frames):
        full = statistics[k] if statistics is not None else task.statistics(run_frames)
        if index is None:
            stats.append(full)
        else:
            inverse = np.full(n, -1)
            inverse[positions[k]] = np.arange(len(positions[k]))
            stats.append(full.take(inverse[shared]))
    return RunTable(task, names, [str(g) for g in guids], correct, scores if has_score else None, shared, stats, list(results), owner,
                    frames)


# ---- paired resampling of many runs --------------------------------------------------------------

def dense(stats: Statistics) -> np.ndarray:
    """The statistics as an n x width array (the products below are dense: BLAS beats a sparse product here)."""
    flat = stats.rows * stats.width + stats.cols
    return np.bincount(flat, stats.values, minlength=stats.n * stats.width).reshape(stats.n, stats.width)


def product_type(arrays: Sequence[np.ndarray], max_count: float) -> np.dtype:
    """float32 when every sum of a resample is an integer below 2**24 (exact in float32), else float64."""
    for array in arrays:
        if not np.array_equal(array, np.round(array)) or np.abs(array).sum(axis=0).max(initial=0) * max_count >= FLOAT32_EXACT:
            return np.dtype(np.float64)
    return np.dtype(np.float32)


def paired_resamples(stats: Sequence[Statistics], samples: int, seed: int = 0, observed: bool = True) -> list[dict[str, np.ndarray]]:
    """Every metric of each run on the same resamples of their shared examples (row 0: all examples once, when
    `observed`), so that run a minus run b on a row is a paired difference.

    The runs' statistics are laid side by side (n x sum of widths, in blocks of at most STACK_CELLS) so each chunk of
    resample counts is one matrix product for many runs; float32 where that is exact (integer statistics). The products
    run on one BLAS thread: on a server shared by sessions (2 cores here) OpenBLAS's second thread spent more CPU waiting
    than it saved (1.50 against 0.84 CPU s for 50 NER dev runs, bench/bench_compare.py), and every sum is exact either way."""
    n = stats[0].n
    if any(s.n != n for s in stats):
        raise ValueError("paired resamples need statistics over the same examples")
    rng = np.random.default_rng(seed)
    chunk = max(1, CHUNK_CELLS // max(n, 1))
    blocks = [np.ones((1, n))] if observed else []
    start = 0
    while start < samples:
        size = min(chunk, samples - start)
        blocks.append(resample_counts(rng, n, size))
        start += size
    max_count = max(float(b.max(initial=1)) for b in blocks)
    parts: list[list[dict[str, np.ndarray]]] = [[] for _ in stats]
    with threadpool_limits(limits=1, user_api="blas"):
        for group in _stacks(stats):
            arrays = [dense(stats[k]) for k in group]
            kind = product_type(arrays, max_count)
            stacked = np.hstack(arrays).astype(kind)
            edges = np.cumsum([0] + [a.shape[1] for a in arrays])
            for counts in blocks:
                summed = (counts.astype(kind) @ stacked).astype(np.float64)
                for k, lo, hi in zip(group, edges[:-1], edges[1:]):
                    parts[k].append(stats[k].scores(summed[:, lo:hi], counts if stats[k].unsummed is not None else None))
    return [{key: np.concatenate([p[key] for p in part]) for key in part[0]} for part in parts]


#: Largest stacked statistics array (examples x columns of several runs) multiplied at once.
STACK_CELLS = 8_000_000


def _stacks(stats: Sequence[Statistics]) -> list[list[int]]:
    """Runs grouped so each group's stacked statistics hold at most STACK_CELLS cells (one run at least)."""
    groups: list[list[int]] = [[]]
    cells = 0
    for k, s in enumerate(stats):
        size = s.n * s.width
        if groups[-1] and cells + size > STACK_CELLS:
            groups.append([])
            cells = 0
        groups[-1].append(k)
        cells += size
    return groups


# ---- the ranking ---------------------------------------------------------------------------------

@dataclass
class RankedRun:
    """One run in the ranking: its metrics on the shared examples, their intervals, its paired difference to the best and
    where it may rank on the population the examples were drawn from."""

    run: str
    metrics: dict[str, float | None]
    ci95: dict[str, tuple[float, float] | None]
    #: This run minus the best run, per metric (0 for the best itself), with its paired 95% interval.
    difference: dict[str, float | None]
    difference_ci95: dict[str, tuple[float, float] | None]
    #: Two-sided p-value of "no difference to the best" on the ranking metric (normal, from the paired bootstrap's
    #: standard error; None for the best).
    p_value: float | None
    rank: int
    tied_with_best: bool
    #: The ranks this run may hold with 95% confidence (best rank first): 1 + the runs significantly better, R - the
    #: runs significantly worse (Holm over its R - 1 paired comparisons).
    rank_ci95: tuple[int, int] = (1, 1)
    #: In the 95% confidence set for the best run: no run is significantly better (rank_ci95 starts at 1).
    could_be_best: bool = True


@dataclass
class Ranking:
    """The runs ranked on `metric` (an official metric's key) over `n_shared` examples, and the correction in one line."""

    metric: str
    best: str
    n_shared: int
    samples: int
    runs: list[RankedRun]
    correction: str
    #: The 1 - `alpha` confidence set for the best run (every run no other run is significantly better than), best first.
    best_set: list[str] = field(default_factory=list)
    #: The level of the metric and difference intervals, and the family-wise error of the ties and rank intervals.
    level: float = 0.95
    alpha: float = ALPHA


def percent(share: float) -> str:
    """A share as a percentage with the decimals it has and no more (0.95 `95%`, 0.975 `97.5%`, 0.025 `2.5%`): the
    confidence level or error rate a text names, which `:.0%` would round (97.5% to 98%)."""
    return f"{100 * share:g}%"


def holm_rejections(p_values: Sequence[float] | np.ndarray, alpha: float = ALPHA) -> np.ndarray:
    """Holm's step-down procedure: which hypotheses are rejected with family-wise error at most `alpha`."""
    p = np.asarray(p_values, dtype=float)
    rejected = np.zeros(len(p), dtype=bool)
    for step, k in enumerate(np.argsort(p, kind="stable")):
        if p[k] > alpha / (len(p) - step):
            break
        rejected[k] = True
    return rejected


def normal_p_values(differences: np.ndarray, standard_errors: np.ndarray) -> np.ndarray:
    """Two-sided p-values of "no difference" for observed paired differences and their bootstrap standard errors,
    from the normal approximation: 2 * (1 - Phi(|d| / se)). Unlike the share of resamples on one side of 0, this
    does not floor at 2 / (B + 1), so Holm's smallest threshold alpha / (R - 1) can be reached at any number of runs.
    A zero standard error (every resample gives the same difference) gives 1 for no difference and 0 otherwise."""
    d = np.asarray(differences, dtype=float)
    se = np.asarray(standard_errors, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(se > 0, np.abs(d) / np.where(se > 0, se, 1.0), np.where(d == 0, 0.0, np.inf))
    p = 2.0 * special.ndtr(-z)
    return np.where(np.isnan(d), 1.0, p)


@dataclass
class PairwiseTests:
    """Every run against every other on one metric: p[j, k] of "run j and run k do not differ", better[j, k] when run j
    is significantly better than run k after Holm's correction within column k (the R - 1 comparisons of run k)."""

    p: np.ndarray
    better: np.ndarray

    @property
    def rank_intervals(self) -> np.ndarray:
        """R x 2: each run's 95% rank interval, [1 + runs significantly better, R - runs significantly worse]."""
        width = len(self.p)
        return np.column_stack([1 + self.better.sum(axis=0), width - self.better.sum(axis=1)])


def pairwise_tests(observed: np.ndarray, resampled: np.ndarray, alpha: float = ALPHA) -> PairwiseTests:
    """Paired tests of every pair of runs from their observed metric (R) and its values on the same resamples (B x R).

    The variance of run j - run k over the resamples is var_j + var_k - 2 cov_jk (one B x R by R x B product for all
    pairs, so 1,000 runs cost one 1,000 x 1,000 matrix product); a resample where a run's metric is undefined is left
    out of that run's moments. Each run's column of R - 1 p-values is then Holm-corrected on its own: the rank
    interval of a run holds with 95% for that run (Mogstad, Romano, Shaikh and Wilhelm 2024, marginal confidence
    intervals for ranks, with Holm in place of their max-t), not for all runs at once."""
    width = len(observed)
    defined = ~np.isnan(resampled)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.nansum(resampled, axis=0) / np.maximum(defined.sum(axis=0), 1)
    centred = np.where(defined, resampled - mean, 0.0)
    pairs = defined.T.astype(np.float64) @ defined.astype(np.float64)  # resamples where both runs are defined
    with threadpool_limits(limits=1, user_api="blas"):
        covariance = (centred.T @ centred) / np.maximum(pairs - 1, 1)
    variance = np.diag(covariance)
    spread = np.sqrt(np.clip(variance[:, None] + variance[None, :] - 2 * covariance, 0.0, None))
    difference = observed[:, None] - observed[None, :]
    p = normal_p_values(difference, spread)
    np.fill_diagonal(p, np.inf)  # a run is not compared with itself: sorted last, never rejected
    tested = max(width - 1, 1)
    order = np.argsort(p, axis=0, kind="stable")
    ranked = np.take_along_axis(p, order, axis=0)
    thresholds = alpha / np.maximum(tested - np.arange(width), 1)
    rejected_sorted = np.logical_and.accumulate(ranked <= thresholds[:, None], axis=0)
    rejected = np.zeros_like(rejected_sorted)
    np.put_along_axis(rejected, order, rejected_sorted, axis=0)
    np.fill_diagonal(p, 1.0)
    return PairwiseTests(p, rejected & (np.nan_to_num(difference, nan=0.0) > 0))


def _value(x: float) -> float | None:
    return None if np.isnan(x) else float(x)


def rank_runs(table: RunTable, samples: int = 1000, level: float = 0.95, seed: int = 0, alpha: float = ALPHA,
              metric: str | None = None) -> Ranking:
    """Runs ranked by `metric` (an official metric's key; the task's first one by default) on the examples all of them
    scored, each with 95% intervals and its paired difference to the best on every metric; the best, the p-values,
    the runs Holm's correction cannot tell from the best (`tied_with_best`), each run's rank interval and the
    confidence set for the best are those of `metric`. ValueError for a metric the task has not, or fewer than
    MIN_RESAMPLES resamples."""
    task = table.task
    keys = [m.key for m in task.facts.metrics]
    metric = keys[0] if metric is None else metric
    if metric not in keys:
        raise ValueError(f"{task.facts.name} has no metric {metric!r}; rank by one of {', '.join(keys)}")
    if samples < MIN_RESAMPLES:
        raise ValueError(f"{samples} resamples: the ranking's standard errors need at least {MIN_RESAMPLES} (give --bootstrap "
                         f"{MIN_RESAMPLES} or more; default 1000)")
    values = paired_resamples(table.stats, samples, seed)
    point = [{m.key: float(v[m.key][0]) for m in task.facts.metrics} for v in values]
    primary = np.array([p[metric] for p in point])
    ranked = np.nan_to_num(primary, nan=-np.inf)  # an undefined metric ranks last
    best = int(np.argmax(ranked))
    resampled = np.column_stack([v[metric][1:] for v in values])
    tests = pairwise_tests(primary, resampled, alpha)
    intervals = tests.rank_intervals
    others = [k for k in range(len(table.runs)) if k != best]
    worse = dict(zip(others, holm_rejections(tests.p[others, best], alpha).tolist()))
    runs = []
    for k, name in enumerate(table.runs):
        diff, diff_ci = {}, {}
        for m in task.facts.metrics:
            d = values[k][m.key] - values[best][m.key]
            diff[m.key] = _value(d[0])
            diff_ci[m.key] = percentile_interval(d[1:], level) if k != best else (0.0, 0.0)
        rank = 1 + int(np.sum(ranked > ranked[k]))
        # a run whose metric is undefined ranks last and is never in the set for the best (nothing to test it on)
        interval = (int(intervals[k, 0]), int(intervals[k, 1])) if not np.isnan(primary[k]) else (rank, len(table.runs))
        runs.append(RankedRun(name, {m.key: _value(point[k][m.key]) for m in task.facts.metrics},
                              {m.key: percentile_interval(values[k][m.key][1:], level) for m in task.facts.metrics}, diff, diff_ci,
                              None if k == best else float(tests.p[k, best]), rank, not worse.get(k, False), interval,
                              interval[0] == 1))
    best_set = [r.run for r in sorted(runs, key=lambda r: (r.rank, natural_key(r.run))) if r.could_be_best]
    compared = len(table.runs) - 1
    correction = (f"Tied with the best: not different from {table.runs[best]} on {metric} by a paired test ({samples} bootstrap "
                  f"resamples of the {len(table.shared):,} {task.facts.unit}s every run scored give the standard error; p from the normal "
                  f"approximation), Holm-corrected over the {compared} run(s) compared (family-wise error {percent(alpha)}). Rank interval: the "
                  f"ranks a run may hold with {percent(1 - alpha)} confidence (Holm over its own {compared} comparisons); the {len(best_set)} "
                  f"run(s) whose interval starts at 1 form the {percent(1 - alpha)} confidence set for the best.")
    return Ranking(metric, table.runs[best], len(table.shared), samples, runs, correction, best_set, level, alpha)


def ranking_text(ranking: Ranking, task: Task) -> str:
    """The ranking as a plain-text table, best first: what the ranking is about (rank and its interval, the ranking
    metric, the difference to the best, p, tied, in the set for the best) first, the other metrics after, and the
    method in one line under it. The levels are the ranking's own (`level` for the intervals, 1 - `alpha` for the rank
    intervals and the set for the best)."""
    keys = [ranking.metric] + [m.key for m in task.facts.metrics if m.key != ranking.metric]
    rank_head = f"{percent(1 - ranking.alpha)} rank"
    wide = max(9, len(rank_head))  # 9 at 95%; one more for a level with a decimal (97.5%)
    lines = [f"Ranked by {ranking.metric}; the difference to the best, its p, the ties and the rank intervals are on {ranking.metric}.",
             f"{'rank':>4} {rank_head:>{wide}}  {'run':<28} {keys[0]:>24}  {f'diff to best [paired {percent(ranking.level)}]':>28} {'p':>8}  tied  best?"
             + "".join(f" {k:>24}" for k in keys[1:])]
    for run in sorted(ranking.runs, key=lambda r: (r.rank, r.run)):
        cells = []
        for key in keys:
            value, ci = run.metrics[key], run.ci95[key]
            cells.append(f"{'n/a' if value is None else f'{value:.2f}':>7} " + (f"[{ci[0]:6.2f},{ci[1]:6.2f}]" if ci else " " * 15))
        diff, diff_ci = run.difference[ranking.metric], run.difference_ci95[ranking.metric]
        low, high = run.rank_ci95
        lines.append(f"{run.rank:>4} {f'{low}-{high}':>{wide}}  {run.run[:28]:<28} {cells[0]:>24}  {'n/a' if diff is None else f'{diff:+.2f}':>12} "
                     + (f"[{diff_ci[0]:+6.2f},{diff_ci[1]:+6.2f}]" if diff_ci else " " * 15)
                     + f" {p_text(run.p_value):>8}  {'yes' if run.tied_with_best else 'no':<4}  {'yes' if run.could_be_best else 'no':<5}"
                     + "".join(f" {c:>24}" for c in cells[1:]))
    lines.append(f"{percent(1 - ranking.alpha)} confidence set for the best: {', '.join(ranking.best_set)}")
    lines.append(ranking.correction)
    return "\n".join(lines)


def p_text(p: float | None) -> str:
    """A p-value as the ranking shows it: three decimals, or `<0.001`, or nothing for the best run."""
    if p is None:
        return ""
    return "<0.001" if p < 0.001 else f"{p:.3f}"


# ---- the example x run matrix ---------------------------------------------------------------------

def difficulty(table: RunTable) -> np.ndarray:
    """Per example, the share of the runs that scored it that got it wrong (0..1)."""
    scored = table.scored.sum(axis=1)
    wrong = np.nansum(1.0 - table.correct, axis=1)
    return np.where(scored > 0, wrong / np.maximum(scored, 1), np.nan)


def trajectories(table: RunTable) -> tuple[np.ndarray, np.ndarray]:
    """Along the runs in table order, per example: where it was solved for good (the first run of the final streak of
    right answers after a wrong one) and where it was forgotten (the first run of the final streak of wrong answers
    after a right one); -1 where neither happened. Runs that did not score an example are skipped."""
    scored = table.scored
    n, width = scored.shape
    columns = np.arange(width)
    last_column = width - 1 - np.argmax(scored[:, ::-1], axis=1)
    last = table.correct[np.arange(n), last_column]
    differs = scored & (table.correct != last[:, None])
    changed = differs.any(axis=1)
    last_change = np.where(changed, width - 1 - np.argmax(differs[:, ::-1], axis=1), width)
    after = scored & (columns[None, :] > last_change[:, None])
    start = np.where(changed, np.argmax(after, axis=1), -1)
    solved = np.where(changed & (last == 1), start, -1)
    forgotten = np.where(changed & (last == 0), start, -1)
    return solved, forgotten


def matrix_rows(table: RunTable, how: str = "difficulty") -> np.ndarray:
    """Row positions of the matrix in the order `how` names (MATRIX_ORDERS); the two filters keep only their examples:
    'wrong for every run' (every run that scored it) and 'right for only one run'. Ties keep file order."""
    rows = np.arange(len(table.guids))
    right = np.nansum(table.correct, axis=1)
    hard = difficulty(table)
    if how == "difficulty":
        return rows[np.lexsort((rows, -np.nan_to_num(hard)))]
    if how == "wrong for every run":
        return rows[right == 0]
    if how == "right for only one run":
        return rows[right == 1]
    if how == "solved late / forgotten":
        solved, forgotten = trajectories(table)
        # forgotten ones first (latest forgetting first), then the latest solved; the rest after, by difficulty
        group = np.where(forgotten >= 0, 0, np.where(solved >= 0, 1, 2))
        at = np.where(forgotten >= 0, forgotten, solved)
        return rows[np.lexsort((rows, -np.nan_to_num(hard), -at, group))]
    if how == "file order":
        return rows
    raise ValueError(f"unknown matrix order {how!r}; expected one of {', '.join(MATRIX_ORDERS)}")


def matrix_frame(table: RunTable, how: str = "difficulty", runs: Sequence[str] | None = None, limit: int | None = None) -> pd.DataFrame:
    """The matrix as a table: guid, turn, difficulty, how the example went along the runs, then one column per run
    (`runs` order) holding True/False (None where not scored), in the order `how` names."""
    rows = matrix_rows(table, how)[:limit]
    names = list(runs or table.runs)
    solved, forgotten = trajectories(table)
    frame = pd.DataFrame({
        "guid": [table.keys[r][0] for r in rows],
        "turn": [table.keys[r][1] for r in rows],
        "difficulty": difficulty(table)[rows],
        "trajectory": [_trajectory(table, solved[r], forgotten[r]) for r in rows],
    })
    for name in names:
        values = table.correct[rows, table.column(name)]
        frame[name] = pd.arrays.BooleanArray(np.nan_to_num(values) > 0, np.isnan(values))
    frame.index = rows
    return frame


def _trajectory(table: RunTable, solved: int, forgotten: int) -> str:
    if forgotten >= 0:
        return f"forgotten at {table.runs[forgotten]}"
    if solved >= 0:
        return f"solved at {table.runs[solved]}"
    return ""


# ---- what changed --------------------------------------------------------------------------------

@dataclass
class Change:
    """Examples (guids of the example frames) fixed and broken going from one run to another, on those both scored."""

    first: str
    second: str
    fixed: list[str]
    broke: list[str]

    def to_dict(self) -> dict:
        """As `klue-viz compare --out` writes it: {"from", "to", "fixed", "broke"}."""
        return {"from": self.first, "to": self.second, "fixed": self.fixed, "broke": self.broke}


def change(table: RunTable, first: str, second: str) -> Change:
    """What `second` fixed (wrong in `first`, right in `second`) and broke (the reverse)."""
    a, b = table.correct[:, table.column(first)], table.correct[:, table.column(second)]
    guids = np.asarray(table.guids, dtype=object)
    return Change(first, second, guids[(a == 0) & (b == 1)].tolist(), guids[(a == 1) & (b == 0)].tolist())


def consecutive_changes(table: RunTable, runs: Sequence[str] | None = None) -> list[Change]:
    """The changes between each run and the next, in `runs` order (the table's by default)."""
    names = list(runs or table.runs)
    return [change(table, a, b) for a, b in zip(names, names[1:])]


@dataclass
class RunSequence:
    """Each official metric of each run in order, overall and per value of each slice the task defines (those that do
    not describe the outcome itself): one list per metric, one value per run (None where undefined or where the run
    has no such value). `n` beside each: examples (or units) scored, per run."""

    runs: list[str]
    overall: dict[str, list[float | None]]
    overall_n: list[int]
    #: slice key -> value -> metric -> one value per run.
    slices: dict[str, dict[str, dict[str, list[float | None]]]]
    #: slice key -> value -> its size in each run (0 where the run has none).
    counts: dict[str, dict[str, list[int]]]
    #: slice key -> the label a person reads (the task's Slice.label).
    labels: dict[str, str]

    def to_dict(self) -> dict:
        """`klue-viz compare --out`'s "sequence": {"overall": {metric: [...]}, "slices": {feature: {value: {metric: [...]}}}}."""
        return {"overall": self.overall, "slices": self.slices}


def sequence_columns(task: Task) -> dict[str, tuple[str, ...]] | None:
    """The frame columns `run_sequence` reads of each run, by level (None: all): what the task's statistics and detail
    statistics read, and each slice's own column; a kept run's texts stay on disk (klue_viz.store.kept_scoring.column_frames)."""
    own = task.statistics_columns()
    if own is None:
        return None
    columns = {level: list(wanted) for level, wanted in own.items()}
    columns.setdefault("examples", [])
    columns["examples"] += ["guid", "correct"]
    for spec in task.facts.slices:
        if spec.key in PREDICTION_FEATURES:
            continue
        if spec.level != "examples":
            detail = task.detail_statistics_columns(spec.level)
            if detail is None:
                return None
            columns.setdefault(spec.level, []).extend(detail)
        columns.setdefault(spec.level, []).append(spec.key)
    return {level: tuple(dict.fromkeys(wanted)) for level, wanted in columns.items()}


def run_sequence(task: Task, results: Sequence[RunResult], frames: Sequence[Frames] | None = None,
                 statistics: Sequence[Statistics] | None = None) -> RunSequence:
    """Each official metric of each run in the order given, overall (the run's own scores) and per slice value (the
    slice table's numbers: `klue_viz.scoring.slicing.group_scores` over the same statistics). `frames`: each run's frames
    holding at least `sequence_columns(task)` (kept_scoring.column_frames reads only those of a kept run), else its own;
    `statistics`: each run's `task.statistics` of those frames when already at hand (`klue-viz compare` ranks with them).

    Each run's statistics are computed once per level, not once per slice (a NER run has four example-level and four
    entity-level slices), and no table is built per slice: 30 NER dev runs take about a second (bench/bench_sequence.py)."""
    width = len(results)
    keys = [m.key for m in task.facts.metrics]
    overall: dict[str, list[float | None]] = {key: [_defined(r.scores.values.get(key)) for r in results] for key in keys}
    specs = [spec for spec in task.facts.slices if spec.key not in PREDICTION_FEATURES]
    slices: dict[str, dict[str, dict[str, list[float | None]]]] = {spec.key: {} for spec in specs}
    counts: dict[str, dict[str, list[int]]] = {spec.key: {} for spec in specs}
    for k, result in enumerate(results):
        run_frames = result.frames if frames is None else frames[k]
        stats: dict[str, Statistics] = {} if statistics is None else {"examples": statistics[k]}
        for spec in specs:
            frame = run_frames.examples if spec.level == "examples" else run_frames.details.get(spec.level)
            if frame is None or spec.key not in frame.columns:
                continue
            if spec.level not in stats:
                stats[spec.level] = task.statistics(run_frames) if spec.level == "examples" else task.detail_statistics(spec.level, frame)
            _, names, sizes, values = group_scores(stats[spec.level], frame[spec.key])
            for g, name in enumerate(names):
                metrics = slices[spec.key].setdefault(name, {})
                for key, column in values.items():
                    metrics.setdefault(key, [None] * width)[k] = _defined(column[g])
                counts[spec.key].setdefault(name, [0] * width)[k] = int(sizes[g])
    for spec in specs:  # values largest first (over all runs), as the slice tables list them
        order = sorted(counts[spec.key], key=lambda v: (-sum(counts[spec.key][v]), v))
        slices[spec.key] = {v: slices[spec.key][v] for v in order}
        counts[spec.key] = {v: counts[spec.key][v] for v in order}
    return RunSequence([r.run for r in results], overall, [r.coverage.n_scored for r in results],
                       {key: found for key, found in slices.items() if found}, {key: found for key, found in counts.items() if found},
                       {spec.key: spec.label for spec in specs if slices[spec.key]})


def _defined(value: float | None) -> float | None:
    return None if value is None or np.isnan(value) else float(value)


#: Slice features that describe the outcome itself, never a fixed group of examples (klue_viz.discovery.slices.LEAKING).
PREDICTION_FEATURES = frozenset({"error_type", "correct", "matched", "status"})


# ---- complementarity -----------------------------------------------------------------------------

@dataclass
class Complementarity:
    """How much the runs' successes overlap, on the examples every run scored (shares 0..1)."""

    n: int
    oracle: float
    best_single: tuple[str, float]
    best_pair: tuple[str, str, float] | None
    common_errors: list[str]


def complementarity(table: RunTable) -> Complementarity:
    """The oracle (share some run gets right), the best single run and the best pair by their oracle, and the
    examples every run gets wrong (ExplainaBoard's common errors)."""
    right = table.correct[table.shared] > 0
    n = len(table.shared)
    if not n:
        return Complementarity(0, float("nan"), (table.runs[0], float("nan")), None, [])
    single = right.mean(axis=0)
    best = int(np.argmax(single))
    pair = None
    if len(table.runs) > 1:
        wrong = (~right).astype(np.float64)
        both_wrong = wrong.T @ wrong  # R x R: examples both runs miss
        union = 1.0 - both_wrong / n
        np.fill_diagonal(union, -1.0)
        flat = int(np.argmax(union))
        first, second = sorted((flat // union.shape[1], flat % union.shape[1]))
        pair = (table.runs[first], table.runs[second], float(union[first, second]))
    guids = np.asarray(table.guids, dtype=object)[table.shared]
    return Complementarity(n, float(right.any(axis=1).mean()), (table.runs[best], float(single[best])), pair, guids[~right.any(axis=1)].tolist())


# ---- the CLI's file ------------------------------------------------------------------------------

def compare_payload(table: RunTable, ranking: Ranking, changes: Sequence[Change], sequence: RunSequence | None = None) -> dict:
    """`klue-viz compare --out`: {"task", "ranking": {"metric", "best", "best_set", "n_shared", "samples", "method"},
    "runs": [{"run", "metrics", "ci95", "rank", "rank_ci95", "difference", "difference_ci95", "p_value", "tied_with_best",
    "could_be_best"}], "examples": [{"guid", "turn", "correct", "difficulty"}], "changes": [{"from", "to", "fixed", "broke"}]},
    and with `sequence` its "sequence": {"overall": {metric: [...]}, "slices": {feature: {value: {metric: [...]}}}}."""
    hard = difficulty(table)
    examples = []
    for row, (guid, turn) in enumerate(table.keys):
        examples.append({"guid": guid, "turn": turn, "correct": [None if np.isnan(v) else bool(v) for v in table.correct[row]],
                         "difficulty": _value(hard[row])})
    return {
        "task": table.task.facts.name,
        "ranking": {"metric": ranking.metric, "best": ranking.best, "best_set": ranking.best_set, "n_shared": ranking.n_shared,
                    "samples": ranking.samples, "method": ranking.correction},
        "runs": [{"run": r.run, "metrics": r.metrics, "ci95": _pairs(r.ci95), "rank": r.rank, "rank_ci95": list(r.rank_ci95),
                  "difference": r.difference, "difference_ci95": _pairs(r.difference_ci95), "p_value": r.p_value,
                  "tied_with_best": r.tied_with_best, "could_be_best": r.could_be_best} for r in ranking.runs],
        "examples": examples,
        "changes": [c.to_dict() for c in changes],
    } | ({"sequence": sequence.to_dict()} if sequence is not None else {})


def _pairs(intervals: Mapping[str, tuple[float, float] | None]) -> dict[str, list[float] | None]:
    return {k: list(v) if v else None for k, v in intervals.items()}


def frames_of(table: RunTable, run: str) -> Frames:
    """The frames of one run of the table (to draw an example with the task's own render)."""
    return table.results[table.column(run)].frames
