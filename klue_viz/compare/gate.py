"""The regression gate: a candidate run against a baseline, on every official metric, overall and on every slice.

Every test is the paired difference candidate - baseline of one metric on one group of examples:
the whole shared set, each value of each slice the task defines (example-level slices, and the
detail-level ones: an entity type, a word's relation, a slot) and each stored error tag, when the
group holds at least `min_size` examples (units, for a detail slice). Both runs are weighed with the
same bootstrap resamples of the examples both scored; a detail slice is resampled by its examples
too (its units stay with their sentence or turn), so every test is on the same resamples.

With dozens of tests, some would look significant by chance alone. The gate controls the
family-wise error over all of them at once with the one-sided step-down max-t bootstrap (Romano and
Wolf 2005): each difference is studentised by its bootstrap standard error, t = -d / se (large when the
candidate is worse); the 95% quantile c of the largest centred t* over the tests still in play on each
resample is the critical value; every test with t > c is a regression, and the quantile is taken again
over the tests left until no new one is found. A candidate that differs from the baseline only by
chance fails at most 5% of the time (asymptotically), whatever the correlation between tests, and the
step-down and the one-sided question (only a drop fails) make it more powerful than the two-sided
single step it replaces at the same error rate (docs/compare.md).

Coverage is checked apart from the tests: an example the baseline scored and the candidate did not is
missing, counted overall and on each value of each example-level slice; a drop fails the gate with its
own line unless `allow_coverage_drop` (the tests compare only the examples both runs scored, so a
candidate that stops predicting a slice would otherwise pass).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TypeAlias

import numpy as np
import pandas as pd

from klue_viz.compare.ranking import PREDICTION_FEATURES, percent, product_type
from klue_viz.core.results import Frames
from klue_viz.drawing.markup import md_inline
from klue_viz.metrics.official import Statistics
from klue_viz.scoring.bootstrap import resample_counts
from klue_viz.scoring.evaluate import RunResult
from klue_viz.scoring.slicing import TAG_PREFIX
from klue_viz.scoring.user_features import user_slices
from klue_viz.tasks.base import Slice, Task

#: How a detail slice's metrics (an entity type's, a relation's) are named.
DETAIL_METRIC_LABELS = {"f1": "F1", "precision": "Precision", "recall": "Recall", "accuracy": "Accuracy"}
#: One behavioural test's cases both runs answered: their source guids, and whether the baseline and the candidate pass each.
PairedCases: TypeAlias = tuple[list[str], list[bool], list[bool]]
#: 1 - the family-wise error of the verdict (the quantile of the largest t that is the critical value).
LEVEL = 0.95
#: Resamples the critical value needs beyond it: at least this many of the largest t* lie above the quantile.
TAIL_RESAMPLES = 10
#: Slices computed from a run's own confidence: the two runs' groups are different examples, and when neither run has
#: probabilities each is one group equal to overall. Never tested (nor are the outcome features of PREDICTION_FEATURES).
RUN_DEPENDENT = frozenset({"confidence_bin", "crowd_view"})
#: A test is left out when its metric is undefined on more than this share of the resamples.
MAX_UNDEFINED = 0.5
TAG_LABEL = "Error tag"
#: Resample counts held at once (resamples x examples).
CHUNK_CELLS = 4_000_000


@dataclass
class Test:
    """One metric on one group of examples: the observed values, the difference and its one-sided 95% upper bound."""

    slice: dict[str, str]
    metric: str
    size: int
    baseline: float
    candidate: float
    difference: float
    se: float
    #: The group as a person reads it (`Entity type = PS`, `overall`), the feature's readable name ('' overall) and the
    #: unit its size counts (`sentences`, `entities`).
    name: str = "overall"
    feature: str = ""
    unit: str = "examples"
    #: The metric as the app names it (`Entity macro F1`; a detail slice's `F1`).
    metric_label: str = ""
    #: The critical value that decided the test (the step-down's step at which it was found, else the last one) and the
    #: upper bound d + critical * se: a regression when it is below 0.
    critical: float = float("nan")
    bound: float = float("nan")

    @property
    def regression(self) -> bool:
        """Significantly worse after the correction: the one-sided upper bound lies below 0."""
        return bool(self.bound < 0)

    @property
    def t(self) -> float:
        """The studentised drop -d / se (large when the candidate is worse; +-inf or 0 when se is 0)."""
        if self.se > 0:
            return -self.difference / self.se
        return 0.0 if self.difference == 0 else math.copysign(math.inf, -self.difference)

    def to_dict(self) -> dict:
        """One test as gate.json lists it."""
        return {"slice": self.slice, "name": self.name, "metric": self.metric, "baseline": self.baseline, "candidate": self.candidate,
                "difference": self.difference, "upper_bound": self.bound, "size": self.size, "unit": self.unit}


@dataclass
class CoverageDrop:
    """Examples the baseline scored and the candidate did not, overall or in one slice value (counted in the baseline)."""

    slice: dict[str, str]
    name: str
    feature: str
    unit: str
    baseline: int
    candidate: int

    @property
    def missing(self) -> int:
        """How many of the baseline's examples the candidate has no prediction for."""
        return self.baseline - self.candidate

    def to_dict(self) -> dict:
        """One coverage drop as gate.json lists it."""
        return {"slice": self.slice, "name": self.name, "unit": self.unit, "baseline": self.baseline, "candidate": self.candidate,
                "missing": self.missing}


@dataclass
class GateResult:
    """Every test of the gate, the step-down's critical values, the coverage drops and what was skipped."""

    baseline: str
    candidate: str
    tests: list[Test]
    #: The critical value of each step of the step-down (the first is the single step's).
    criticals: list[float]
    samples: int
    n_shared: int
    #: Slice features left out, with the reason (a feature whose values depend on the run, such as confidence).
    skipped: list[str] = field(default_factory=list)
    coverage: list[CoverageDrop] = field(default_factory=list)
    #: Whether a coverage drop is reported without failing the gate (`--allow-coverage-drop`).
    allow_coverage_drop: bool = False
    #: B x K: each test's resampled difference (column order of `tests`), for checking the procedure against others.
    resampled: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)), repr=False)
    unit: str = "examples"
    #: 1 - the family-wise error the gate was run at (`gate`'s `level`): the level of every upper bound.
    level: float = LEVEL

    @property
    def critical(self) -> float:
        """The last step's critical value (the one every test that is not a regression was held to)."""
        return self.criticals[-1] if self.criticals else 0.0

    @property
    def regressions(self) -> list[Test]:
        """The tests significantly worse after the correction, the clearest first."""
        return sorted((t for t in self.tests if t.regression), key=lambda t: (t.bound, t.name, t.metric))

    @property
    def overall(self) -> list[Test]:
        """The tests on every shared example (one per metric)."""
        return [t for t in self.tests if not t.slice]

    @property
    def coverage_fails(self) -> bool:
        """A coverage drop that fails the gate (not allowed by the flag)."""
        return bool(self.coverage) and not self.allow_coverage_drop

    @property
    def verdict(self) -> str:
        """'fail' when anything regressed or the coverage dropped (unless allowed), else 'pass'."""
        return "fail" if self.regressions or self.coverage_fails else "pass"

    def to_dict(self) -> dict:
        """gate.json: {"verdict", "checked", "overall", "regressions", "coverage_drops", "skipped"}."""
        return {"verdict": self.verdict, "checked": len(self.tests), "overall": [t.to_dict() for t in self.overall],
                "regressions": [t.to_dict() for t in self.regressions], "coverage_drops": [c.to_dict() for c in self.coverage],
                "coverage_drop_allowed": self.allow_coverage_drop, "skipped": self.skipped}


@dataclass
class _Group:
    """Tests that share one layout: each kept value of one feature, as blocks of an expanded statistics matrix."""

    feature: str
    values: list[str]
    sizes: list[int]
    metrics: list[str]
    #: Per run: the expanded n x (G * width) array and the statistics it came from (for the aggregate).
    arrays: list[np.ndarray]
    stats: list[Statistics]
    #: Per kept value, the examples it holds (0/1 over the shared examples), for metrics that do not sum (AUPRC).
    masks: np.ndarray
    #: The feature's readable name ('' overall) and the unit its sizes count.
    label: str = ""
    unit: str = "examples"


def _expanded(stats: Statistics, codes: np.ndarray, groups: int) -> np.ndarray:
    """n x (groups * width): each example's statistics in its group's block of columns (`codes[i]` = -1: left out)."""
    group = codes[stats.rows]
    keep = group >= 0
    width = groups * stats.width
    flat = stats.rows[keep] * width + group[keep] * stats.width + stats.cols[keep]
    return np.bincount(flat, stats.values[keep], minlength=stats.n * width).reshape(stats.n, width)


def _metric_keys(task: Task, stats: Statistics) -> list[str]:
    """The metrics a group is tested on: the official ones its statistics give (those that sum, and those that do not:
    RE's AUPRC), else its F1, else all it gives."""
    given = list(stats.scores(np.zeros((1, stats.width))).keys())
    official = [m.key for m in task.facts.metrics if m.key in given]
    return official or (["f1"] if "f1" in given else given)


def _strings(values: pd.Series) -> np.ndarray:
    return values.astype(object).where(values.notna(), None).to_numpy(dtype=object, copy=True)


def _codes(values: np.ndarray, min_size: int) -> tuple[np.ndarray, list[str], list[int]]:
    """Group codes of the values with at least `min_size` rows (largest first), -1 for the others and for None."""
    present = np.array([v is not None for v in values], dtype=bool)
    codes = np.full(len(values), -1)
    if not present.any():
        return codes, [], []
    uniques, inverse, counts = np.unique(values[present].astype(str), return_inverse=True, return_counts=True)
    kept = [k for k in np.lexsort((uniques, -counts)) if counts[k] >= min_size]
    remap = np.full(len(uniques), -1)
    remap[kept] = np.arange(len(kept))
    codes[present] = remap[inverse]
    return codes, [str(uniques[k]) for k in kept], [int(counts[k]) for k in kept]


def unit_name(task: Task, level: str) -> str:
    """The unit a group's size counts, plural: the task's example unit (`pairs`, `sentences`) or the detail level
    (`entities`, `words`, `slots`)."""
    return f"{task.facts.unit}s" if level == "examples" else level


def tested_slices(task: Task, frames: Frames, skipped: list[str]) -> list[Slice]:
    """The slices the gate tests: the task's and the user's columns, without those computed from the outcome or from
    the run's own confidence (each named once in `skipped`, with the reason)."""
    out = []
    for spec in (*task.facts.slices, *user_slices(frames)):  # the user's own columns (--features) are slices too
        if spec.key in PREDICTION_FEATURES:
            continue
        if spec.key in RUN_DEPENDENT:
            skipped.append(f"{spec.label}: its values come from each run's own confidence, so the two runs' groups are not the "
                           "same examples")
            continue
        out.append(spec)
    return out


def _groups(task: Task, runs: list[RunResult], shared: list[str], min_size: int, tags: dict[str, set[str]] | None,
            skipped: list[str]) -> list[_Group]:
    """The test groups: everything, each example-level slice, each detail-level slice, each error tag."""
    index = [pd.Index(r.frames.examples["guid"].astype(str)) for r in runs]
    positions = [ix.get_indexer(shared) for ix in index]
    stats = [task.statistics(r.frames).take(p) for r, p in zip(runs, positions)]
    n = len(shared)
    examples_unit = unit_name(task, "examples")
    out = [_group(task, "", stats, np.zeros(n, dtype=np.int64), ["overall"], [n], "", examples_unit)]
    examples = [r.frames.examples.iloc[p].reset_index(drop=True) for r, p in zip(runs, positions)]
    specs = tested_slices(task, runs[0].frames, skipped)
    names = {spec.key for spec in specs if spec.level == "examples"}
    shared_index = pd.Index(shared)
    for spec in specs:
        if spec.level == "examples":
            base, other = _strings(examples[0][spec.key]), _strings(examples[1][spec.key])
            if not all(a == b for a, b in zip(base, other)):
                skipped.append(f"{spec.label}: its values depend on the run's predictions, so the two runs' groups differ")
                continue
            codes, values, sizes = _codes(base, min_size)
            if values:
                out.append(_group(task, spec.key, stats, codes, values, sizes, spec.label, examples_unit))
            continue
        feature = f"{spec.level}.{spec.key}" if spec.key in names else spec.key
        details = [r.frames.details[spec.level] for r in runs]
        example_rows = [shared_index.get_indexer(d["guid"].astype(str)) for d in details]
        base_values = _strings(details[0][spec.key])
        base_values[example_rows[0] < 0] = None  # units of examples the candidate did not score
        sided = task.facts.detail is not None and task.facts.detail.sided and spec.level == task.facts.detail.name
        if sided:  # a group's size and minimum count its gold rows (40 gold PS entities), not gold and predicted alike
            base_values[details[0]["side"].to_numpy() != "gold"] = None
        _, values, sizes = _codes(base_values, min_size)
        if not values:
            continue
        kept = pd.Index(values)
        arrays, detail_stats = [], []
        for d, rows in zip(details, example_rows):
            codes = kept.get_indexer(d[spec.key].astype(object).where(d[spec.key].notna(), None)).astype(np.int64)  # -1: not kept
            s = task.detail_statistics(spec.level, d)
            arrays.append(_detail_expanded(s, codes, len(values), rows, n))
            detail_stats.append(s)
        out.append(_Group(feature, values, sizes, _metric_keys(task, detail_stats[0]), arrays, detail_stats, np.zeros((0, n)), spec.label,
                          ("gold " if sided else "") + unit_name(task, spec.level)))
    for tag in sorted({t for ts in (tags or {}).values() for t in ts}):
        tagged = np.array([tag in (tags or {}).get(g, ()) for g in shared])
        if tagged.sum() >= min_size:
            out.append(_group(task, TAG_PREFIX + tag, stats, np.where(tagged, 0, -1), ["yes"], [int(tagged.sum())], f"{TAG_LABEL} {tag}",
                              examples_unit))
    return out


def _detail_expanded(stats: Statistics, codes: np.ndarray, groups: int, example_of_row: np.ndarray, n: int) -> np.ndarray:
    """A detail slice's statistics summed per example (rows of examples both runs scored), one column block per value."""
    row_example = example_of_row[stats.rows]
    group = codes[stats.rows]
    keep = (group >= 0) & (row_example >= 0)
    width = groups * stats.width
    flat = row_example[keep] * width + group[keep] * stats.width + stats.cols[keep]
    return np.bincount(flat, stats.values[keep], minlength=n * width).reshape(n, width)


def _group(task: Task, feature: str, stats: list[Statistics], codes: np.ndarray, values: list[str], sizes: list[int], label: str,
           unit: str) -> _Group:
    masks = np.stack([(codes == g).astype(np.float64) for g in range(len(values))]) if stats[0].unsummed is not None else np.zeros((0, len(codes)))
    arrays = [_expanded(s, codes, len(values)) for s in stats]
    return _Group(feature, values, sizes, _metric_keys(task, stats[0]), arrays, stats, masks, label, unit)


def _scores(group: _Group, run: int, counts: np.ndarray, summed: np.ndarray) -> dict[str, np.ndarray]:
    """Each metric of one run's groups on each resample (`summed`: counts times the group's expanded array): B x G."""
    stats = group.stats[run]
    b, g = len(counts), len(group.values)
    values = stats.aggregate(summed.reshape(b * g, stats.width))
    out = {key: values[key].reshape(b, g) for key in group.metrics if key in values}
    if stats.unsummed is not None and group.masks.shape[0]:
        weights = (counts[:, None, :] * group.masks[None, :, :]).reshape(b * g, -1)
        for key, column in stats.unsummed(weights).items():
            if key in group.metrics:
                out[key] = column.reshape(b, g)
    return out


def minimum_resamples(level: float = LEVEL) -> int:
    """The fewest resamples the gate accepts: its critical value is the `level` quantile of the largest t* over the
    tests, and at least TAIL_RESAMPLES resamples must lie beyond it (200 at 95%) for that quantile, and the standard
    errors it divides by, to mean anything. Fewer gave zero-width intervals (0, 1 or 2 resamples) that failed runs
    differing only by chance. The number does not grow with the family: max-t takes one quantile of the maximum over
    all tests, where Bonferroni or Holm over bootstrap p-values would need B + 1 >= K / alpha."""
    return math.ceil(TAIL_RESAMPLES / (1 - level) - 1e-9)


#: The gate's name of a behavioural test's metric: the share of its cases that pass, 0..100.
PASS_RATE = "pass rate"
BEHAVIOUR = "behaviour"


def _behaviour_columns(task: Task, run: RunResult, shared: list[str], behaviour: Mapping[str, PairedCases], min_size: int,
                       skipped: list[str]) -> dict[str, np.ndarray]:
    """Per behavioural test with at least `min_size` cases: an n x 3 array over the shared examples of [cases, baseline
    passes, candidate passes], each case counted at its source example (a WoS dialogue: at its first turn), so that the
    cases are resampled with the examples they were made from and join the same max-t family as the slices."""
    if task.probe is None or not behaviour:
        return {}
    rows = {str(row["guid"]): row for row in run.frames.examples.to_dict("records")}
    position: dict[str, int] = {}
    for k, guid in enumerate(shared):
        position.setdefault(task.probe.unit_of({**rows[guid], "guid": guid}), k)
    columns = {}
    for test, (sources, first, second) in behaviour.items():
        array = np.zeros((len(shared), 3))
        for source, a, b in zip(sources, first, second):
            at = position.get(source)
            if at is not None:
                array[at] += (1.0, float(a), float(b))
        if array[:, 0].sum() < min_size:
            skipped.append(f"behaviour {test}: {int(array[:, 0].sum())} case(s) on the shared examples, fewer than {min_size}")
            continue
        columns[test] = array
    return columns


def _pass_rates(array: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Baseline and candidate pass rates (0..100) of one behavioural test on each row of resample counts."""
    sums = counts @ array
    with np.errstate(divide="ignore", invalid="ignore"):
        return 100 * sums[:, 1] / sums[:, 0], 100 * sums[:, 2] / sums[:, 0]


def gate(task: Task, baseline: RunResult, candidate: RunResult, min_size: int = 30, tags: dict[str, set[str]] | None = None,
         samples: int = 1000, seed: int = 0, level: float = LEVEL, allow_coverage_drop: bool = False,
         behaviour: Mapping[str, PairedCases] | None = None) -> GateResult:
    """Test candidate - baseline on every official metric, overall and on every slice (and error tag) with at least
    `min_size` examples, with the one-sided step-down max-t bootstrap at family-wise error 1 - `level` (module
    docstring), and count the examples the candidate stopped predicting. `behaviour`: per behavioural test
    (klue_viz.probes.score.paired_outcomes), the cases' source guids and whether each run passes them; each test's pass
    rate joins the family, so a candidate failing a test significantly more often fails the gate. ValueError for fewer resamples than
    `minimum_resamples(level)` or runs with no scored example in common."""
    base_guids = baseline.frames.examples["guid"].astype(str)
    own = set(candidate.frames.examples["guid"].astype(str))
    shared = [g for g in base_guids if g in own]
    if not shared:
        raise ValueError(f"{baseline.run} and {candidate.run} have no scored example in common")
    skipped: list[str] = []
    groups = _groups(task, [baseline, candidate], shared, min_size, tags, skipped)
    probes = _behaviour_columns(task, baseline, shared, behaviour or {}, min_size, skipped)
    needed = minimum_resamples(level)
    if samples < needed:
        tested = sum(len(g.values) * len(g.metrics) for g in groups) + len(probes)
        raise ValueError(f"--bootstrap {samples}: the gate's {level:.0%} critical value over its {tested} tests needs at least {needed} "
                         f"resamples ({TAIL_RESAMPLES} beyond the quantile); give --bootstrap {needed} or more (default 1000)")
    n = len(shared)
    rng = np.random.default_rng(seed)
    blocks = [np.ones((1, n))]
    chunk = max(1, CHUNK_CELLS // n)
    done = 0
    while done < samples:
        blocks.append(resample_counts(rng, n, min(chunk, samples - done)))
        done += len(blocks[-1])
    # per group and metric: differences on every row (row 0: observed), B+1 x G
    differences: dict[tuple[int, str], list[np.ndarray]] = {}
    observed: dict[tuple[int, str], tuple[np.ndarray, np.ndarray]] = {}
    # every group of a run side by side: one matrix product per chunk of counts and run (float32 where exact)
    behaviour_differences: dict[tuple[str, str], list[np.ndarray]] = {}
    behaviour_observed: dict[tuple[str, str], tuple[float, float]] = {}
    max_count = max(float(b.max(initial=1)) for b in blocks)
    stacked: list[np.ndarray] = []
    kinds: list[np.dtype] = []
    for run in (0, 1):
        arrays = [group.arrays[run] for group in groups]
        kinds.append(product_type(arrays, max_count))
        stacked.append(np.hstack(arrays).astype(kinds[-1]))
    edges = [np.cumsum([0] + [group.arrays[run].shape[1] for group in groups]) for run in (0, 1)]  # widths differ (DP's heads)
    for counts in blocks:
        sums = [(counts.astype(kind) @ array).astype(np.float64) for kind, array in zip(kinds, stacked)]
        for k, group in enumerate(groups):
            base, cand = (_scores(group, run, counts, sums[run][:, edges[run][k]:edges[run][k + 1]]) for run in (0, 1))
            for key in group.metrics:
                if key not in base:
                    continue
                if (k, key) not in observed:
                    observed[(k, key)] = (base[key][0], cand[key][0])
                differences.setdefault((k, key), []).append(cand[key] - base[key])
        for name, array in probes.items():
            base_rate, cand_rate = _pass_rates(array, counts)
            if (name, PASS_RATE) not in behaviour_observed:
                behaviour_observed[(name, PASS_RATE)] = (float(base_rate[0]), float(cand_rate[0]))
            behaviour_differences.setdefault((name, PASS_RATE), []).append(cand_rate - base_rate)
    examples_unit = unit_name(task, "examples")
    official = {m.key: m.label for m in task.facts.metrics}
    tests, columns = [], []
    for (k, key), parts in differences.items():
        group = groups[k]
        d = np.concatenate(parts)  # (B + 1) x G
        b_obs, c_obs = observed[(k, key)]
        for g, value in enumerate(group.values):
            resampled = d[1:, g]
            defined = ~np.isnan(resampled)
            if np.isnan(d[0, g]) or defined.mean() < 1 - MAX_UNDEFINED:
                continue
            se = float(np.std(resampled[defined], ddof=1)) if defined.sum() > 1 else 0.0
            name = f"{group.label} = {value}" if group.feature else "overall"
            label = official.get(key, key) if group.unit == examples_unit else DETAIL_METRIC_LABELS.get(key, key)
            tests.append(Test({} if not group.feature else {group.feature: value}, key, group.sizes[g], float(b_obs[g]), float(c_obs[g]),
                              float(d[0, g]), se, name, group.label, group.unit, label))
            columns.append(resampled)
    for (name, key), parts in behaviour_differences.items():
        d = np.concatenate(parts)
        resampled = d[1:]
        defined = ~np.isnan(resampled)
        if np.isnan(d[0]) or defined.mean() < 1 - MAX_UNDEFINED:
            continue
        se = float(np.std(resampled[defined], ddof=1)) if defined.sum() > 1 else 0.0
        base_value, cand_value = behaviour_observed[(name, key)]
        tests.append(Test({BEHAVIOUR: name}, key, int(probes[name][:, 0].sum()), base_value, cand_value, float(d[0]), se,
                          f"Behaviour = {name}", "Behaviour", "cases", "Pass rate"))
        columns.append(resampled)
    resampled_all = np.column_stack(columns) if columns else np.zeros((samples, 0))
    criticals = step_down(tests, resampled_all, level)
    coverage = coverage_drops(task, baseline, candidate, min_size, skipped)
    return GateResult(baseline.run, candidate.run, tests, criticals, samples, n, skipped, coverage, allow_coverage_drop, resampled_all,
                      unit_name(task, "examples"), level)


def step_down(tests: list[Test], resampled: np.ndarray, level: float = LEVEL) -> list[float]:
    """The one-sided step-down max-t procedure (Romano and Wolf 2005, algorithm 4.1, with studentised statistics): sets
    each test's `critical` and `bound` and returns the critical value of each step.

    t_k = -d_k / se_k; on each resample b, t*_kb = -(d*_kb - d_k) / se_k (centred at the observed difference, so the
    resamples describe the null of no change). Step 1: c = the `level` quantile of max_k t*_kb over every test; each
    test with t_k > c is a regression. Step j: the quantile is taken over the tests not yet found only; stop when a
    step finds nothing new. A test with se = 0 (every resample gives the same difference) is a regression when its
    difference is below 0 and stays out of the quantile. NaN (a metric undefined on a resample) counts as no evidence."""
    with np.errstate(divide="ignore", invalid="ignore"):
        usable = np.array([t.se > 0 for t in tests], dtype=bool)
        scale = np.array([t.se if t.se > 0 else 1.0 for t in tests])
        observed = np.array([t.difference for t in tests])
        centred = -(resampled - observed[None, :]) / scale[None, :] if len(tests) else resampled
    statistic = np.array([t.t for t in tests])
    found = np.zeros(len(tests), dtype=bool)
    criticals: list[float] = []
    while True:
        active = usable & ~found
        if not active.any():
            if not criticals:
                criticals.append(0.0)
            break
        largest = np.nanmax(np.where(np.isnan(centred[:, active]), -np.inf, centred[:, active]), axis=1)
        largest = largest[np.isfinite(largest)]
        critical = float(np.quantile(largest, level)) if len(largest) else 0.0
        criticals.append(critical)
        new = active & (statistic > critical)
        for position in np.flatnonzero(new).tolist():
            tests[position].critical = critical
        found |= new
        if not new.any():
            break
    last = criticals[-1]
    for k, test in enumerate(tests):
        if not usable[k]:
            test.critical, test.bound = 0.0, test.difference
        elif not found[k]:
            test.critical = last
        if usable[k]:
            test.bound = test.difference + test.critical * test.se
    return criticals


def coverage_drops(task: Task, baseline: RunResult, candidate: RunResult, min_size: int, skipped: list[str]) -> list[CoverageDrop]:
    """The examples the baseline scored and the candidate did not: overall, and per value (with at least `min_size`
    examples in the baseline) of each example-level slice whose values do not depend on the run, most missing first."""
    examples = baseline.frames.examples.reset_index(drop=True)
    own = set(candidate.frames.examples["guid"].astype(str))
    missing = ~examples["guid"].astype(str).isin(own).to_numpy()
    if not missing.any():
        return []
    unit = unit_name(task, "examples")
    drops = [CoverageDrop({}, "overall", "", unit, len(examples), int((~missing).sum()))]
    found = []
    for spec in tested_slices(task, baseline.frames, []):
        if spec.level != "examples" or any(s.startswith(f"{spec.label}:") for s in skipped):
            continue
        values = _strings(examples[spec.key])
        present = np.array([v is not None for v in values], dtype=bool)
        if not present.any():
            continue
        frame = pd.DataFrame({"value": values[present].astype(str), "missing": missing[present]})
        counted = frame.groupby("value", sort=True)["missing"].agg(["size", "sum"])
        for value, row in counted.iterrows():
            if row["size"] >= min_size and row["sum"] > 0:
                found.append(CoverageDrop({spec.key: str(value)}, f"{spec.label} = {value}", spec.label, unit, int(row["size"]),
                                          int(row["size"] - row["sum"])))
    found.sort(key=lambda c: (-c.missing / c.baseline, -c.missing, c.name))
    return drops + found


def _size(count: int, unit: str) -> str:
    return f"{count:,} {unit}"


def _test_line(t: Test, level: float) -> str:
    return (f"{t.name} {t.metric_label or t.metric}: {t.baseline:.2f} -> {t.candidate:.2f} ({t.difference:+.2f}, {percent(level)} upper bound "
            f"{t.bound:+.2f}), "
            f"{_size(t.size, t.unit)}")


def _coverage_line(c: CoverageDrop) -> str:
    return f"{c.name}: the candidate scored {c.candidate:,} of the {_size(c.baseline, c.unit)} the baseline scored ({c.missing:,} missing)"


def gate_text(result: GateResult) -> str:
    """The verdict, the overall line(s), the coverage drops and each regression, for the terminal."""
    head = (f"gate {result.verdict.upper()}: {result.candidate} against {result.baseline}, {len(result.tests)} tests on "
            f"{_size(result.n_shared, result.unit)} both scored ({result.samples} paired resamples; one-sided step-down max-t, "
            f"family-wise error {percent(1 - result.level)}; critical value {result.critical:.2f})")
    lines = [head]
    lines += [f"  {'regression: ' if t.regression else ''}{_test_line(t, result.level)}" for t in result.overall]
    flag = " (allowed by --allow-coverage-drop)" if result.allow_coverage_drop else ""
    lines += [f"  coverage drop{flag}: {_coverage_line(c)}" for c in result.coverage]
    lines += [f"  regression: {_test_line(t, result.level)}" for t in result.regressions if t.slice]
    lines.extend(f"  skipped {s}" for s in result.skipped)
    return "\n".join(lines)


def _test_head(level: float) -> list[str]:
    """A Markdown table's head for tests whose upper bounds are at `level`."""
    return [f"| slice | metric | baseline | candidate | difference | {percent(level)} upper bound | size |", "|---|---|---:|---:|---:|---:|---:|"]


def _test_row(t: Test, bold: bool = False) -> str:
    name = f"**{md_inline(t.name)}**" if bold else md_inline(t.name)
    return (f"| {name} | {md_inline(t.metric_label or t.metric)} | {t.baseline:.2f} | {t.candidate:.2f} | "
            f"{t.difference:+.2f} | {t.bound:+.2f} | {md_inline(_size(t.size, t.unit))} |")


def by_feature(tests: list[Test]) -> list[list[Test]]:
    """Regressions grouped by feature (a feature's metrics and values together), the group with the worst test first,
    and within a group the worst first."""
    groups: dict[str, list[Test]] = {}
    for t in sorted(tests, key=lambda t: (t.bound, t.name, t.metric)):
        groups.setdefault(t.feature, []).append(t)
    return list(groups.values())


def gate_markdown(result: GateResult, task: Task) -> str:
    """gate.md for a pull-request comment that also reads in a terminal: the verdict, the overall line first (also when
    it did not regress), the coverage drops, then the regressions grouped by feature, the worst of each feature in the
    table and every other one folded in a <details> block. Only what Markdown would read is escaped (md_inline)."""
    failed = result.verdict == "fail"
    head = _test_head(result.level)
    lines = [f"### klue-viz gate {task.facts.name.upper()}: {'❌ **fail**' if failed else '✅ **pass**'}", "",
             f"{md_inline(result.candidate)} against {md_inline(result.baseline)}: {len(result.tests)} tests (every official metric, "
             f"overall and on each slice with at least the minimum size) on {md_inline(_size(result.n_shared, result.unit))} both runs "
             f"scored. A regression is a drop whose one-sided {percent(result.level)} upper bound is below 0 (paired bootstrap, {result.samples} resamples, "
             f"step-down max-t over all tests: a candidate that differs only by chance fails at most {percent(1 - result.level)} of the time).", ""]
    lines += head + [_test_row(t, bold=True) for t in result.overall] + [""]
    if result.coverage:
        allowed = " (allowed: it does not fail the gate)" if result.allow_coverage_drop else ""
        lines += [f"**Coverage drop{allowed}**: the candidate has no prediction for these {md_inline(result.unit)}.", "",
                  "| slice | baseline | candidate | missing |", "|---|---:|---:|---:|"]
        lines += [f"| {md_inline(c.name)} | {c.baseline:,} | {c.candidate:,} | {c.missing:,} |" for c in result.coverage[:6]]
        if len(result.coverage) > 6:
            lines += ["", f"<details><summary>{len(result.coverage) - 6} more slices lost coverage</summary>", "",
                      "| slice | baseline | candidate | missing |", "|---|---:|---:|---:|"]
            lines += [f"| {md_inline(c.name)} | {c.baseline:,} | {c.candidate:,} | {c.missing:,} |" for c in result.coverage[6:]]
            lines += ["", "</details>"]
        lines.append("")
    sliced = [t for t in result.regressions if t.slice]
    if sliced:
        groups = by_feature(sliced)
        lines += [f"**Regressions**: {len(sliced)} in {len(groups)} feature(s), the worst of each:", ""] + head
        lines += [_test_row(group[0]) for group in groups]
        rest = [group for group in groups if len(group) > 1]
        if rest:
            lines += ["", f"<details><summary>The other {sum(len(g) - 1 for g in rest)} regressions, by feature</summary>", ""]
            for group in rest:
                lines += [f"**{md_inline(group[0].feature)}**", ""] + head + [_test_row(t) for t in group[1:]] + [""]
            lines.append("</details>")
    elif not any(t.regression for t in result.overall):
        closest = sorted((t for t in result.tests if t.se > 0 and t.slice), key=lambda t: t.difference / t.se)[:5]
        if closest:
            lines += ["No slice regressed. The five slices closest to a regression:", ""] + head + [_test_row(t) for t in closest]
    if result.skipped:
        lines += ["", "Not tested: " + "; ".join(md_inline(s) for s in result.skipped) + "."]
    return "\n".join(lines).rstrip("\n") + "\n"
