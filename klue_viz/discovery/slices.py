"""Weak slices, found: the conjunctions of up to three conditions where a run fails most.

The unit is the finest row the task scores (an NER entity, a DP word, a WoS slot; otherwise the
example), described by every slice feature of the task at that level and at the example level
(joined by guid), plus the user's error tags. Each conjunction is scored with SliceLine's objective
(Sagadeeva & Boehm 2021, the `sliceline` package, which Zeno's slice finder builds on):

    score = alpha * (error_rate(slice) / error_rate(all) - 1) - (1 - alpha) * (N / size(slice) - 1)

i.e. how much worse than the whole run, weighted by size. SliceLine prunes a lattice of sparse
matrix products to stay tractable on wide data; KLUE's slice features are few and categorical, so
every conjunction of up to three conditions is counted exactly, with one `bincount` per feature
triple (30k NER units: well under a second, where `sliceline.Slicefinder` takes 17 CPU s at level 3).
The tests hold the two to the same top slices on data both can handle.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from klue_viz.core.results import Frames, ScoredRun
from klue_viz.scoring.bootstrap import compare_runs, confidence_intervals
from klue_viz.scoring.slicing import TAG_PREFIX
from klue_viz.scoring.user_features import user_slices
from klue_viz.tasks.base import Task

if TYPE_CHECKING:
    from klue_viz.store.annotations import Annotation as Remark  # a stored annotation, as read here

#: Features never used as conditions: they restate the error itself.
LEAKING = frozenset({"error_type", "correct", "matched", "status"})
#: The feature a sided detail level adds (klue_viz.tasks.base.DetailLevel.sided): the row's side, gold or predicted.
SIDE = "side"
MISSING = -1


@dataclass
class Units:
    """The rows a finder counts: features (strings, None where a condition does not apply) and errors."""

    level: str
    frame: pd.DataFrame  # the unit rows themselves (guid first)
    features: pd.DataFrame  # one column per feature, aligned with `frame`
    labels: dict[str, str] = field(default_factory=dict)  # feature -> readable name
    sources: dict[str, str] = field(default_factory=dict)  # feature -> the frame column it reads (task features only)
    fixing_columns: tuple[frozenset[str], ...] = ()  # the task's `error_fixing_columns`
    fixing_values: Mapping[str, frozenset[str]] = field(default_factory=dict)  # the task's `error_fixing_values`

    def fixes_error(self, conditions: Mapping[str, str]) -> bool:
        """Whether these conditions fix the slice's error rate by their definition (a confusion-matrix cell, an
        unreadable answer): such a slice says nothing about where the run is weak and is never ranked."""
        columns = {self.sources.get(name) for name in conditions}
        if any(group <= columns for group in self.fixing_columns):
            return True
        return any(value in self.fixing_values.get(self.sources.get(name, ""), ()) for name, value in conditions.items())


def unit_level(task: Task) -> str:
    """The detail level the task's slices describe (its `facts.detail`), or 'examples'."""
    return "examples" if task.facts.detail is None else task.facts.detail.name


def units(task: Task, frames: Frames, tags: dict[str, set[str]] | None = None, extra: pd.DataFrame | None = None) -> Units:
    """The unit rows of a run with their slice features; `tags` maps an example guid to its error tags."""
    level = unit_level(task)
    examples = frames.examples.reset_index(drop=True)
    frame = examples if level == "examples" else frames.details[level].reset_index(drop=True)
    columns, labels, sources = {}, {}, {}
    detail = task.facts.detail
    if detail is not None and detail.sided:
        # Both sides decide the detail F1: gold rows = recall errors, predicted rows = precision errors.
        columns[SIDE], labels[SIDE] = frame[SIDE].astype(str).to_numpy(), f"Gold or predicted {detail.row}"
    by_guid = examples.set_index("guid") if level != "examples" else None
    for spec in (*task.facts.slices, *user_slices(frames)):  # the user's own columns count like the task's features
        if spec.key in LEAKING:
            continue
        if spec.level == level:
            values = frame[spec.key]
        elif spec.level == "examples":
            values = frame["guid"].map(by_guid[spec.key]) if by_guid is not None else frame[spec.key]
        else:
            continue
        name = spec.key if spec.key not in columns else f"{spec.level}.{spec.key}"
        columns[name], labels[name] = _strings(values), spec.label
        sources[name] = spec.key
    for name, column, label in task.label_features:  # the gold and the predicted label of a label task
        if column in examples.columns:
            values = examples[column] if level == "examples" else frame["guid"].map(examples.set_index("guid")[column])
            columns[name], labels[name] = _strings(values.reset_index(drop=True) if level == "examples" else values), label
            sources[name] = column
    if extra is not None:
        for name in extra.columns:
            columns[name], labels[name] = _strings(extra[name].reset_index(drop=True)), name.replace("_", " ")
    for tag in sorted({t for ts in (tags or {}).values() for t in ts}):
        has = {g for g, ts in (tags or {}).items() if tag in ts}
        name = TAG_PREFIX + tag
        columns[name] = np.where(frame["guid"].isin(has).to_numpy(), "yes", "no").astype(object)  # has the tag / has it not
        labels[name] = f"Tagged '{tag}'"
    return Units(level, frame, pd.DataFrame(columns, index=frame.index), labels, sources, task.error_fixing_columns, task.error_fixing_values)


def _strings(values: pd.Series) -> np.ndarray:
    """Each value as text (an object array), None where it is missing."""
    if values.dtype != object and pd.api.types.is_string_dtype(values.dtype):  # text already: converted in one step
        return values.to_numpy(dtype=object, na_value=None)
    out = values.astype(object).to_numpy()
    return np.array([None if v is None or v is pd.NA or (isinstance(v, float) and np.isnan(v)) else str(v) for v in out], dtype=object)


@dataclass
class Candidate:
    conditions: dict[str, str]
    size: int
    errors: float
    score: float


def encode(features: pd.DataFrame) -> tuple[np.ndarray, list[np.ndarray]]:
    """Integer codes per feature (MISSING where None) and the value of each code."""
    codes, values = [], []
    for name in features.columns:
        if features[name].dtype != object and pd.api.types.is_string_dtype(features[name].dtype):
            code, uniques = _text_codes(features[name])
            codes.append(code)
            values.append(uniques)
            continue
        column = features[name].to_numpy(dtype=object)
        # None or NaN: the condition does not apply (pandas 3 stores a str column's None as NaN)
        present = ~pd.isna(column) if len(column) else np.zeros(0, dtype=bool)
        uniques, inverse = np.unique(column[present].astype(str), return_inverse=True) if present.any() else (np.array([], dtype=str), np.array([], dtype=int))
        code = np.full(len(column), MISSING, dtype=np.int64)
        code[present] = inverse
        codes.append(code)
        values.append(uniques)
    return (np.column_stack(codes) if codes else np.zeros((len(features), 0), dtype=np.int64)), values


def _text_codes(column: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """`encode`'s codes and values of a text column: what `np.unique` of its present values gives (sorted values, each
    row's position among them, MISSING where absent), through pandas' factorize of the Arrow strings instead of turning
    every row into a Python object first (the features of a NER run's 30,000 entities are nine such columns)."""
    found, distinct = pd.factorize(column, use_na_sentinel=True)
    uniques = np.asarray(list(distinct), dtype=str)
    order = np.argsort(uniques, kind="stable")
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order))
    code = np.where(found >= 0, rank[np.maximum(found, 0)] if len(rank) else MISSING, MISSING).astype(np.int64)
    return code, uniques[order]


def slice_scores(sizes: np.ndarray, errors: np.ndarray, n: int, average: float, alpha: float) -> np.ndarray:
    """SliceLine's score of slices with these sizes and error sums (the same formula as sliceline 0.3)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        scores = alpha * ((errors / sizes) / average - 1) - (1 - alpha) * (n / sizes - 1)
    return np.nan_to_num(scores, nan=-np.inf)


def search(features: pd.DataFrame, errors: np.ndarray, max_conditions: int = 3, min_size: int | None = None,
           alpha: float = 0.95, top: int = 10, fixes_error: Callable[[Mapping[str, str]], bool] | None = None) -> list[Candidate]:
    """The `top` conjunctions with the highest positive SliceLine score, counted exactly.

    A conjunction that selects exactly the same rows as one with fewer conditions is left out (it
    says nothing more), so the list shows distinct groups; so is one whose error rate `fixes_error` says its
    conditions fix by definition (`Units.fixes_error`).
    """
    errors = np.asarray(errors, dtype=float)
    n = len(errors)
    average = errors.mean() if n else 0.0
    if n == 0 or average == 0:
        return []
    min_size = min_size if min_size is not None else default_min_size(n)
    codes, values = encode(features)
    names = list(features.columns)
    cardinality = [max(len(v), 1) for v in values]
    stats: dict[frozenset, tuple[int, float]] = {}
    found: list[tuple[float, tuple]] = []
    for level in range(1, max_conditions + 1):
        for combo in combinations(range(len(names)), level):
            present = (codes[:, combo] >= 0).all(axis=1)
            key = np.zeros(int(present.sum()), dtype=np.int64)
            for j in combo:
                key = key * cardinality[j] + codes[present, j]
            bins = int(np.prod([cardinality[j] for j in combo]))
            if bins > 4_000_000:
                key_values, key = np.unique(key, return_inverse=True)
                bins = len(key_values)
            else:
                key_values = None
            sizes = np.bincount(key, minlength=bins)
            errs = np.bincount(key, weights=errors[present], minlength=bins)
            keep = np.flatnonzero(sizes >= min_size)
            scores = slice_scores(sizes[keep].astype(float), errs[keep], n, average, alpha)
            for k, score in zip(keep.tolist(), scores.tolist()):
                flat = key_values[k] if key_values is not None else k
                parts = []
                for j in reversed(combo):
                    parts.append((j, int(flat % cardinality[j])))
                    flat //= cardinality[j]
                condition = frozenset(parts)
                stats[condition] = (int(sizes[k]), float(errs[k]))
                if score > 0:
                    found.append((score, tuple(sorted(parts))))
    found.sort(key=lambda item: (-item[0], len(item[1]), item[1]))
    out: list[Candidate] = []
    for score, chosen in found:
        size, n_errors = stats[frozenset(chosen)]
        if any(stats.get(frozenset(sub)) == (size, n_errors) and _same_rows(codes, chosen, sub)
               for r in range(1, len(chosen)) for sub in combinations(chosen, r)):
            continue
        conditions = {names[j]: str(values[j][v]) for j, v in chosen}
        if fixes_error is not None and fixes_error(conditions):
            continue
        out.append(Candidate(conditions, size, n_errors, score))
        if len(out) == top:
            break
    return out


def _same_rows(codes: np.ndarray, parts: tuple, sub: tuple) -> bool:
    """Whether the extra conditions leave the rows of `sub` unchanged (equal counts can still differ in rows)."""
    return bool((mask_of(codes, parts) == mask_of(codes, sub)).all())


def mask_of(codes: np.ndarray, parts: Iterable[tuple[int, int]]) -> np.ndarray:
    mask = np.ones(len(codes), dtype=bool)
    for j, v in parts:
        mask &= codes[:, j] == v
    return mask


def default_min_size(n: int) -> int:
    """Smallest slice worth a line: 1% of the units, at least 10 (sliceline's default), at most 100."""
    return int(min(100, max(10, n // 100)))


def condition_mask(features: pd.DataFrame, conditions: dict[str, str]) -> np.ndarray:
    mask = np.ones(len(features), dtype=bool)
    for name, value in conditions.items():
        mask &= (features[name].to_numpy(dtype=object) == value)
    return mask


# ---- one run, two runs ---------------------------------------------------------------------------

@dataclass(frozen=True, kw_only=True)
class FoundSlice:
    """A slice the finder lists: its conditions (feature -> value) and their labels, the unit it counts (`examples`,
    `entities`, `words`, `slots`), its size in units and examples, the errors in it, the official metrics of its
    examples, the finder's score, and with resamples the metrics' 95% intervals."""

    conditions: dict[str, str]
    labels: dict[str, str]
    unit: str
    size: int
    examples: int
    errors: int
    error_rate: float
    metrics: dict[str, float | None]
    score: float
    ci95: Mapping[str, Sequence[float | None] | None] | None = None


@dataclass(frozen=True, kw_only=True)
class WeakSlice(FoundSlice):
    """A slice where one run fails most; below the example level, with the metrics of its detail rows."""

    detail_metrics: dict[str, float | None] | None = None

    def to_dict(self) -> dict[str, Any]:
        """The slice as the slices JSON writes it."""
        out: dict[str, Any] = {"conditions": self.conditions, "unit": self.unit, "size": self.size, "errors": self.errors,
                               "error_rate": self.error_rate, "examples": self.examples, "metrics": self.metrics}
        if self.detail_metrics is not None:
            out["detail_metrics"] = self.detail_metrics
        if self.ci95 is not None:
            out["ci95"] = self.ci95
        return {**out, "score": self.score, "labels": self.labels}


@dataclass(frozen=True, kw_only=True)
class PairedSlice(FoundSlice):
    """A slice where run `worse` is worse than run `better` (errors, error rate and metrics are the worse run's; `runs`
    has both); `difference`: the error rates' difference in points, `ci95`: the interval of better - worse."""

    worse: str
    better: str
    difference: float
    runs: dict[str, dict[str, Any]]

    def to_dict(self) -> dict[str, Any]:
        """The slice as the slices JSON writes it."""
        out = {"conditions": self.conditions, "labels": self.labels, "unit": self.unit, "size": self.size, "examples": self.examples,
               "worse": self.worse, "better": self.better, "score": self.score, "errors": self.errors, "error_rate": self.error_rate,
               "difference": self.difference, "runs": self.runs, "metrics": self.metrics}
        return out if self.ci95 is None else {**out, "ci95": self.ci95}


def describe(task: Task, frames: Frames, found: Units, conditions: dict[str, str], score: float, ci_samples: int = 0,
             metrics_of: Callable[[list[str]], dict[str, float | None]] | None = None) -> WeakSlice:
    """Size, errors, error rate, official metrics (and their interval) of the examples in one slice.

    `metrics_of(guids)` gives the official metrics of those examples (`slice_metrics` makes one from statistics
    computed once for all slices); without it they are scored from the frames restricted to the slice."""
    mask = condition_mask(found.features, conditions)
    rows = found.frame[mask]
    guids = sorted(set(rows["guid"].astype(str)))
    errors = int((~rows["correct"].astype(bool)).sum())
    ci95 = None
    if ci_samples:
        ci95 = {k: list(v) if v else None for k, v in confidence_intervals(task, frames.subset(guids), samples=ci_samples).items()}
    metrics = metrics_of(guids) if metrics_of is not None else task.score(frames.subset(guids)).values
    return WeakSlice(
        conditions=conditions, labels={k: found.labels.get(k, k) for k in conditions}, unit=found.level, size=int(mask.sum()),
        examples=len(guids), errors=errors, error_rate=100.0 * errors / max(int(mask.sum()), 1), metrics=metrics,
        score=score, ci95=ci95, detail_metrics=task.detail_scores(found.level, rows) if found.level != "examples" else None,
    )


def slice_metrics(task: Task, frames: Frames) -> Callable[[list[str]], dict[str, float | None]]:
    """The official metrics of any set of a run's examples, from the run's per-example statistics computed once.

    The same numbers as scoring the frames restricted to those examples (each example's statistics do not depend on
    the others), without restricting every frame for every slice: that was half the cost of a NER run's weak slices."""
    stats = task.statistics(frames)

    def metrics_of(guids: list[str]) -> dict[str, float | None]:
        rows = [frames.positions(guid) for guid in dict.fromkeys(guids)]  # every row of a guid (WoS: one per turn)
        return task.scores_of(stats.take(np.sort(np.concatenate(rows)) if rows else np.zeros(0, dtype=np.int64))).values
    return metrics_of


def weak_slices(task: Task, frames: Frames, tags: dict[str, set[str]] | None = None, extra: pd.DataFrame | None = None,
                top: int = 10, ci_samples: int = 0, **options: Any) -> list[WeakSlice]:
    """The slices where one run fails most, best first, each described with its metrics."""
    found = units(task, frames, tags, extra)
    errors = (~found.frame["correct"].astype(bool)).to_numpy(dtype=float)
    candidates = search(found.features, errors, top=top, fixes_error=found.fixes_error, **options)
    metrics_of = slice_metrics(task, frames) if candidates else None
    return [describe(task, frames, found, c.conditions, c.score, ci_samples, metrics_of) for c in candidates]


def paired_units(task: Task, first: Frames, second: Frames, tags: dict[str, set[str]] | None = None,
                 extra: pd.DataFrame | None = None) -> tuple[Units, np.ndarray, np.ndarray]:
    """The units both runs share (gold entities, words, examples), with each run's correctness on them."""
    detail = task.facts.detail
    keys = list(detail.pair_keys) if detail is not None else ["guid"]
    a = units(task, first, tags, extra)
    b = units(task, second, tags)  # only its rows and correctness are used; features come from the first run
    if not keys:  # rows that differ between runs (slots): compare on the examples instead
        keys = ["guid"]
        a = Units("examples", first.examples.reset_index(drop=True), _example_features(task, first.examples), {s.key: s.label for s in task.facts.slices})
        b = Units("examples", second.examples.reset_index(drop=True), _example_features(task, second.examples), a.labels)
        a.labels.update({s.key: s.label for s in user_slices(first)})
    sided = detail is not None and detail.sided and a.level == detail.name
    keep_a = a.frame[SIDE].eq("gold").to_numpy() if sided else np.ones(len(a.frame), dtype=bool)
    keep_b = b.frame[SIDE].eq("gold").to_numpy() if sided else np.ones(len(b.frame), dtype=bool)
    left = a.frame[keep_a][keys + ["correct"]].rename(columns={"correct": "ok_a"}).assign(row_a=np.flatnonzero(keep_a))
    right = b.frame[keep_b][keys + ["correct"]].rename(columns={"correct": "ok_b"})
    joined = left.merge(right, on=keys, how="inner")
    rows = joined["row_a"].to_numpy()
    shared = Units(a.level, a.frame.iloc[rows].reset_index(drop=True), a.features.iloc[rows].reset_index(drop=True), a.labels,
                   a.sources, a.fixing_columns, a.fixing_values)
    if SIDE in shared.features:
        shared.features = shared.features.drop(columns=SIDE)
    return shared, joined["ok_a"].to_numpy(dtype=bool), joined["ok_b"].to_numpy(dtype=bool)


def _example_features(task: Task, examples: pd.DataFrame) -> pd.DataFrame:
    specs = (*task.facts.slices, *user_slices(Frames(examples)))
    return pd.DataFrame({s.key: _strings(examples[s.key].reset_index(drop=True)) for s in specs
                         if s.level == "examples" and s.key not in LEAKING})


def paired_slices(task: Task, first: ScoredRun, second: ScoredRun, tags: dict[str, set[str]] | None = None, extra: pd.DataFrame | None = None,
                  top: int = 10, ci_samples: int = 0, **options: Any) -> list[PairedSlice]:
    """Slices where one run is worse than the other, ranked on the paired difference (both directions).

    `first` and `second` are RunResults, compared on the units both scored. For 'first is worse',
    SliceLine's search over the units where the first run is wrong and the second right proposes
    candidates; each is then ranked by the paired t statistic of the per-unit difference
    (first wrong - second wrong): the difference in error rate weighted by the slice's size.
    """
    shared, ok_a, ok_b = paired_units(task, first.frames, second.frames, tags, extra)
    found = []
    for worse, better, ok_w, ok_o in ((first, second, ok_a, ok_b), (second, first, ok_b, ok_a)):
        difference = (~ok_w).astype(float) - (~ok_o).astype(float)
        for c in search(shared.features, (~ok_w & ok_o).astype(float), top=max(3 * top, 30), fixes_error=shared.fixes_error, **options):
            mask = condition_mask(shared.features, c.conditions)
            d = difference[mask]
            if not len(d) or d.mean() <= 0:  # an empty slice never ranks
                continue
            spread = d.std(ddof=1) if len(d) > 1 else 0.0
            statistic = float("inf") if spread == 0 else float(d.mean() / (spread / np.sqrt(len(d))))
            found.append((statistic, int(mask.sum()), c, worse, better, ok_w, ok_o, mask))
    found.sort(key=lambda item: (-item[0], -item[1]))
    out, seen = [], set()
    for statistic, size, c, worse, better, ok_w, ok_o, mask in found:
        key = tuple(sorted(c.conditions.items()))
        if key in seen:
            continue
        seen.add(key)
        guids = sorted(set(shared.frame.loc[mask, "guid"].astype(str)))
        runs: dict[str, dict[str, Any]] = {}
        for run, ok in ((worse, ok_w), (better, ok_o)):
            wrong = int((~ok[mask]).sum())
            runs[run.run] = {"errors": wrong, "error_rate": 100.0 * wrong / size, "metrics": task.score(run.frames.subset(guids)).values}
        ci95 = None
        if ci_samples:
            # the interval of (better - worse) on each official metric, over the slice's examples
            ci95 = {x.metric: [x.low, x.high] for x in compare_runs(task, better.frames.subset(guids), worse.frames.subset(guids), samples=ci_samples)}
        out.append(PairedSlice(
            conditions=c.conditions, labels={k: shared.labels.get(k, k) for k in c.conditions}, unit=shared.level, size=size,
            examples=len(guids), worse=worse.run, better=better.run, score=statistic, errors=runs[worse.run]["errors"],
            error_rate=runs[worse.run]["error_rate"], difference=runs[worse.run]["error_rate"] - runs[better.run]["error_rate"],
            runs=runs, metrics=runs[worse.run]["metrics"], ci95=ci95,
        ))
        if len(out) == top:
            break
    return out


#: Values shown in words where the raw one says little (NER's entity side and particle; a tag's yes/no).
READABLE_VALUES = {"side": {"gold": "gold entity (recall)", "pred": "predicted entity (precision)"},
                   "particle": {"+other": "another particle", "whole eojeol": "none (the whole eojeol)"}}


def slice_name(item: FoundSlice) -> str:
    """One readable name of a found slice, the same in the app and the CLI: 'Entity = gold entity (recall) & Particle
    attached to the entity (경찰+은) = another particle' rather than 'side=gold & particle=+other'."""
    parts = []
    for key, value in item.conditions.items():
        label = "Entity" if key == "side" else item.labels.get(key, key)
        parts.append(f"{label} = {READABLE_VALUES.get(key, {}).get(value, value)}")
    return " & ".join(parts)


def slices_header(task: Task, runs: list[str], level: str) -> str:
    """What the list of found slices measures: which run, which error rate, in which unit."""
    detail = task.facts.detail
    unit = f"{task.facts.unit}s" if level == "examples" else (detail.heading if detail is not None and level == detail.name else level)
    if len(runs) == 1:
        return f"Weak slices of {runs[0]}: error rate (%) of the {unit} in the slice, ranked by SliceLine's score"
    return (f"Where one run is worse: {runs[0]} vs {runs[1]}, difference in error rate (percentage points) of the {unit} both "
            "runs share, ranked by the paired t statistic")


def error_tags(task: Task, run: str, items: Iterable[Remark]) -> dict[str, set[str]]:
    """The user's error tags of a run (on its examples or their gold) by example guid, from stored annotations."""
    tags: dict[str, set[str]] = {}
    for item in items:
        if item.task == task.facts.name and item.run in (run, "gold") and item.tags:
            tags.setdefault(task.example_guid(item.guid, item.turn), set()).update(item.tags)
    return tags


def slice_guids(task: Task, frames: Frames, conditions: dict[str, str], tags: dict[str, set[str]] | None = None,
                extra: pd.DataFrame | None = None) -> list[str]:
    """The example guids a found slice covers (what the app's filter restricts to)."""
    found = units(task, frames, tags, extra)
    return sorted(set(found.frame.loc[condition_mask(found.features, conditions), "guid"].astype(str)))
