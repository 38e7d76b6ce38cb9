"""The regression gate: a candidate run against a baseline, on every official metric, overall and on every slice.

Every test is the paired difference candidate - baseline of one metric on one group of examples:
the whole shared set, each value of each slice the task defines (example-level slices, and the
detail-level ones: an entity type, a word's relation, a slot) and each stored error tag, when the
group holds at least `min_size` examples (units, for a detail slice). Both runs are weighed with the
same bootstrap resamples of the examples both scored; a detail slice is resampled by its examples
too (its units stay with their sentence or turn), so every test is on the same resamples.

With dozens of tests, some would look significant by chance alone. The gate controls the
family-wise error over all of them at once with the max-t bootstrap (a single-step Romano-Wolf /
Westfall-Young procedure): each difference is studentised by its bootstrap standard error, and the
95% quantile c of the largest |t| over all tests on each resample makes simultaneous intervals
d +- c * se. With probability at least 95% (asymptotically) every interval holds at once, so a
candidate that differs from the baseline only by chance fails (some interval wholly below 0) at
most 5% of the time, and in practice about half that, since only the lower side fails. Unlike Holm
over per-test p-values, the max-t quantile knows that overlapping slices and a slice's metrics
move together, so it is less conservative with many correlated tests (docs/compare.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TypeAlias

import numpy as np
import pandas as pd

from klue_viz.compare.ranking import PREDICTION_FEATURES, product_type
from klue_viz.drawing.markup import md
from klue_viz.metrics.official import Statistics
from klue_viz.scoring.bootstrap import resample_counts
from klue_viz.scoring.evaluate import RunResult
from klue_viz.scoring.user_features import user_slices
from klue_viz.tasks.base import Task

#: One behavioural test's cases both runs answered: their source guids, and whether the baseline and the candidate pass each.
PairedCases: TypeAlias = tuple[list[str], list[bool], list[bool]]
#: Simultaneous coverage of the intervals (and 1 - the family-wise error of the verdict).
LEVEL = 0.95
#: A test is left out when its metric is undefined on more than this share of the resamples.
MAX_UNDEFINED = 0.5
TAG_PREFIX = "tag: "
#: Resample counts held at once (resamples x examples).
CHUNK_CELLS = 4_000_000


@dataclass
class Test:
    """One metric on one group of examples: the observed values, the difference and its simultaneous interval."""

    slice: dict[str, str]
    metric: str
    size: int
    baseline: float
    candidate: float
    difference: float
    se: float
    low: float = float("nan")
    high: float = float("nan")

    @property
    def regression(self) -> bool:
        """Significantly worse after the correction: the whole simultaneous interval lies below 0."""
        return bool(self.high < 0)

    def to_dict(self) -> dict:
        """One regression as gate.json lists it."""
        return {"slice": self.slice, "metric": self.metric, "baseline": self.baseline, "candidate": self.candidate,
                "difference": self.difference, "ci95": [self.low, self.high], "size": self.size}


@dataclass
class GateResult:
    """Every test of the gate, the max-t critical value that made their simultaneous intervals, and what was skipped."""

    baseline: str
    candidate: str
    tests: list[Test]
    critical: float
    samples: int
    n_shared: int
    #: Slice features left out, with the reason (a feature whose values differ between the runs, such as confidence).
    skipped: list[str] = field(default_factory=list)

    @property
    def regressions(self) -> list[Test]:
        """The tests significantly worse after the correction, the clearest first."""
        return sorted((t for t in self.tests if t.regression), key=lambda t: t.high)

    @property
    def verdict(self) -> str:
        """'fail' when anything regressed, else 'pass'."""
        return "fail" if self.regressions else "pass"

    def to_dict(self) -> dict:
        """gate.json: {"verdict", "checked", "regressions": [{"slice", "metric", "baseline", "candidate", "difference", "ci95", "size"}]}."""
        return {"verdict": self.verdict, "checked": len(self.tests), "regressions": [t.to_dict() for t in self.regressions]}


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


def _expanded(stats: Statistics, codes: np.ndarray, groups: int) -> np.ndarray:
    """n x (groups * width): each example's statistics in its group's block of columns (`codes[i]` = -1: left out)."""
    group = codes[stats.rows]
    keep = group >= 0
    width = groups * stats.width
    flat = stats.rows[keep] * width + group[keep] * stats.width + stats.cols[keep]
    return np.bincount(flat, stats.values[keep], minlength=stats.n * width).reshape(stats.n, width)


def _metric_keys(task: Task, stats: Statistics) -> list[str]:
    """The metrics a group is tested on: the official ones its aggregate gives, else its F1, else all it gives."""
    given = list(stats.aggregate(np.zeros((1, stats.width))).keys())
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


def _groups(task: Task, runs: list[RunResult], shared: list[str], min_size: int, tags: dict[str, set[str]] | None,
            skipped: list[str]) -> list[_Group]:
    """The test groups: everything, each example-level slice, each detail-level slice, each error tag."""
    index = [pd.Index(r.frames.examples["guid"].astype(str)) for r in runs]
    positions = [ix.get_indexer(shared) for ix in index]
    stats = [task.statistics(r.frames).take(p) for r, p in zip(runs, positions)]
    n = len(shared)
    out = [_group(task, "", stats, np.zeros(n, dtype=np.int64), ["overall"], [n])]
    examples = [r.frames.examples.iloc[p].reset_index(drop=True) for r, p in zip(runs, positions)]
    specs = (*task.facts.slices, *user_slices(runs[0].frames))  # the user's own columns (--features) are slices too
    names = {spec.key for spec in specs if spec.level == "examples"}
    shared_index = pd.Index(shared)
    for spec in specs:
        if spec.key in PREDICTION_FEATURES:
            continue
        if spec.level == "examples":
            base, other = _strings(examples[0][spec.key]), _strings(examples[1][spec.key])
            if not all(a == b for a, b in zip(base, other)):
                skipped.append(f"{spec.key}: its values depend on the run's predictions, so the two runs' groups differ")
                continue
            codes, values, sizes = _codes(base, min_size)
            if values:
                out.append(_group(task, spec.key, stats, codes, values, sizes))
            continue
        feature = f"{spec.level}.{spec.key}" if spec.key in names else spec.key
        details = [r.frames.details[spec.level] for r in runs]
        example_rows = [shared_index.get_indexer(d["guid"].astype(str)) for d in details]
        base_values = _strings(details[0][spec.key])
        base_values[example_rows[0] < 0] = None  # units of examples the candidate did not score
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
        out.append(_Group(feature, values, sizes, _metric_keys(task, detail_stats[0]), arrays, detail_stats, np.zeros((0, n))))
    for tag in sorted({t for ts in (tags or {}).values() for t in ts}):
        tagged = np.array([tag in (tags or {}).get(g, ()) for g in shared])
        if tagged.sum() >= min_size:
            out.append(_group(task, TAG_PREFIX + tag, stats, np.where(tagged, 0, -1), ["yes"], [int(tagged.sum())]))
    return out


def _detail_expanded(stats: Statistics, codes: np.ndarray, groups: int, example_of_row: np.ndarray, n: int) -> np.ndarray:
    """A detail slice's statistics summed per example (rows of examples both runs scored), one column block per value."""
    row_example = example_of_row[stats.rows]
    group = codes[stats.rows]
    keep = (group >= 0) & (row_example >= 0)
    width = groups * stats.width
    flat = row_example[keep] * width + group[keep] * stats.width + stats.cols[keep]
    return np.bincount(flat, stats.values[keep], minlength=n * width).reshape(n, width)


def _group(task: Task, feature: str, stats: list[Statistics], codes: np.ndarray, values: list[str], sizes: list[int]) -> _Group:
    masks = np.stack([(codes == g).astype(np.float64) for g in range(len(values))]) if stats[0].unsummed is not None else np.zeros((0, len(codes)))
    arrays = [_expanded(s, codes, len(values)) for s in stats]
    return _Group(feature, values, sizes, _metric_keys(task, stats[0]), arrays, stats, masks)


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
         samples: int = 1000, seed: int = 0, level: float = LEVEL, behaviour: Mapping[str, PairedCases] | None = None) -> GateResult:
    """Test candidate - baseline on every official metric, overall and on every slice (and error tag) with at least
    `min_size` examples, with simultaneous `level` intervals from the max-t bootstrap (module docstring). `behaviour`:
    per behavioural test (klue_viz.probes.score.paired_outcomes), the cases' source guids and whether each run passes
    them; each test's pass rate joins the family, so a candidate failing a test significantly more often fails the gate."""
    base_guids = baseline.frames.examples["guid"].astype(str)
    own = set(candidate.frames.examples["guid"].astype(str))
    shared = [g for g in base_guids if g in own]
    if not shared:
        raise ValueError(f"{baseline.run} and {candidate.run} have no scored example in common")
    skipped: list[str] = []
    groups = _groups(task, [baseline, candidate], shared, min_size, tags, skipped)
    probes = _behaviour_columns(task, baseline, shared, behaviour or {}, min_size, skipped)
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
            tests.append(Test({} if not group.feature else {group.feature: value}, key, group.sizes[g], float(b_obs[g]), float(c_obs[g]),
                              float(d[0, g]), se))
            columns.append(resampled)
    for (name, key), parts in behaviour_differences.items():
        d = np.concatenate(parts)
        resampled = d[1:]
        defined = ~np.isnan(resampled)
        if np.isnan(d[0]) or defined.mean() < 1 - MAX_UNDEFINED:
            continue
        se = float(np.std(resampled[defined], ddof=1)) if defined.sum() > 1 else 0.0
        base_value, cand_value = behaviour_observed[(name, key)]
        tests.append(Test({BEHAVIOUR: name}, key, int(probes[name][:, 0].sum()), base_value, cand_value, float(d[0]), se))
        columns.append(resampled)
    critical = _critical(tests, columns, level)
    for test in tests:
        spread = critical * test.se
        test.low, test.high = test.difference - spread, test.difference + spread
    return GateResult(baseline.run, candidate.run, tests, critical, samples, n, skipped)


def _critical(tests: list[Test], columns: list[np.ndarray], level: float) -> float:
    """The `level` quantile over resamples of the largest studentised |d* - d| over all tests (NaN-defined ones skipped)."""
    usable = [k for k, t in enumerate(tests) if t.se > 0]
    if not usable:
        return 0.0
    t = np.column_stack([(columns[k] - tests[k].difference) / tests[k].se for k in usable])
    largest = np.nanmax(np.abs(t), axis=1)
    return float(np.quantile(largest[~np.isnan(largest)], level))


def slice_text(conditions: dict[str, str]) -> str:
    """A slice as a person reads it: `feature=value`, or `overall`."""
    return " & ".join(f"{k}={v}" for k, v in conditions.items()) or "overall"


def gate_text(result: GateResult) -> str:
    """The verdict and each regression, for the terminal."""
    head = (f"gate {result.verdict.upper()}: {result.candidate} against {result.baseline}, {len(result.tests)} tests on "
            f"{result.n_shared:,} shared examples ({result.samples} paired resamples, simultaneous 95% intervals, max-t critical "
            f"value {result.critical:.2f})")
    lines = [head]
    for t in result.regressions:
        lines.append(f"  regression: {slice_text(t.slice)} {t.metric}: {t.baseline:.2f} -> {t.candidate:.2f} ({t.difference:+.2f}, "
                     f"95% [{t.low:+.2f}, {t.high:+.2f}], size {t.size})")
    lines.extend(f"  skipped {s}" for s in result.skipped)
    return "\n".join(lines)


def gate_markdown(result: GateResult, task: Task) -> str:
    """gate.md: the verdict and a table of the regressions (or of the worst tests when none), ready for a pull request."""
    mark = "❌ **fail**" if result.regressions else "✅ **pass**"
    lines = [f"### klue-viz gate {task.facts.name.upper()}: {mark}", "",
             f"{md(result.candidate)} against {md(result.baseline)}: {len(result.tests)} tests (every official metric, overall and on "
             f"each slice with enough examples) on {result.n_shared:,} shared {task.facts.unit}s. Intervals are simultaneous 95% intervals of "
             f"candidate - baseline (paired bootstrap, {result.samples} resamples, max-t correction over all tests); a regression is an "
             f"interval wholly below 0.", ""]
    closest = sorted((t for t in result.tests if t.se > 0), key=lambda t: t.difference / t.se)
    rows = result.regressions or closest[:5]
    if not result.regressions:
        lines += ["No regression. The five tests closest to one:", ""]
    lines += ["| slice | metric | baseline | candidate | difference | 95% interval | size |", "|---|---|---:|---:|---:|---|---:|"]
    for t in rows:
        lines.append(f"| {md(slice_text(t.slice))} | {md(t.metric)} | {t.baseline:.2f} | {t.candidate:.2f} | {t.difference:+.2f} | "
                     f"[{t.low:+.2f}, {t.high:+.2f}] | {t.size} |")
    return "\n".join(lines) + "\n"
