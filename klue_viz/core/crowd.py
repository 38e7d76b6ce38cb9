"""The annotators' own labels in the gold: human baselines, a run's distance to the votes, and crowd views.

The KLUE dev files keep every annotator: NLI has five votes per pair (`author`, `label2`..`label5`,
`gold_label` their majority), STS 5-7 scores per pair with the annotators' ids (`labels.real-label`
their mean). The task modules keep them on the gold rows (`votes`, and STS's `annotators`); this module
turns them into numbers comparable to a run's metrics. Pure numpy: the CLI scores without pandas.

* Vote agreement (a label task whose rows carry votes): the share of all individual votes, over the
  examples scored, that equal the gold label, 0..100, as a run's accuracy is. Optimistic: each vote is
  scored against a gold it helped elect (the figure KLUE documents).
* Held-out vote agreement, the page's headline: each vote against the majority of the *other* votes of
  its example, a tie for most split (1/k when the vote is one of k tied labels): an annotator judged as a
  run is, against a gold they had no part in (92.53 on the NLI dev set, where the documented one is 94.05).
* Annotator Pearson r (rows whose votes are scores): over every (pair, annotator) couple of the pairs
  with at least two scores, Pearson r between the annotator's score and the mean of the others' scores
  on the same pair, 0..100, as the official STS Pearson r is. Held out by construction; not the same
  comparison as a run's, which is correlated with the mean of *all* the annotators (a less noisy target).
* Vote cross-entropy of a run that gave probabilities: the mean over examples of `-sum_k v_k ln q_k`,
  `v` the vote shares and `q` the run's probabilities clipped below at 1e-12. It is KL(v || q) plus the
  votes' own entropy, and on a confident run depends mostly on the floor; so beside it:
* Vote divergences (as ChaosNLI reports them, in nats, on the run's probabilities as a distribution): the
  mean KL(v || q) (`scipy.stats.entropy(v, q)`, q clipped at the same floor: infinite otherwise where a
  run gives 0 to a label an annotator chose), the mean Jensen-Shannon distance (`scipy.spatial.distance.
  jensenshannon(v, q)`, the square root of the divergence: bounded by sqrt(ln 2), needs no floor) and
  the mean entropy of the votes themselves (the part of the cross-entropy no run can remove).
* Spearman's rho of a run's error against the annotators' spread, with its two-sided p-value, as
  `scipy.stats.spearmanr` gives them (tests/test_crowd.py holds them equal): written here because importing
  scipy.stats costs `evaluate --out` about 0.3 CPU s, more than scoring a whole dev set.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass

import numpy as np

#: Probabilities below this are taken as this in the vote cross-entropy (ln 0 is -inf).
PROBABILITY_FLOOR = 1e-12
#: A run is confident when its top probability is at least this, unsure when below UNSURE.
CONFIDENT = 0.9
UNSURE = 0.6
#: The crowd views of an example (a slice of NLI's frames).
CONFIDENT_SPLIT = "run confident (p ≥ 0.9), annotators split (≤ 3 of 5 for the gold)"
AGREE_UNSURE = "annotators unanimous, run unsure (p < 0.6)"
NEITHER = "neither"
NO_PROBABILITIES = "(run gave no probabilities)"
NO_VOTES = "(no votes)"
#: Standard deviation buckets of the STS annotators' scores on a pair.
SPREAD_EDGES = (0.0, 0.5, 1.0)
SPREAD_LABELS = ("std < 0.5", "0.5 ≤ std < 1", "std ≥ 1")


@dataclass(frozen=True)
class HumanBaseline:
    """How well the annotators agree, on the scale of the run metric named by `metric`; `n` votes or couples used."""

    metric: str
    value: float | None
    n: int
    #: What `n` counts ("votes", "annotator-pair couples").
    counts: str

    def to_dict(self) -> dict:
        """The `--out` form: metric, value and n."""
        out = asdict(self)
        out.pop("counts")
        return out

    def text(self) -> str:
        """One line for a terminal or a caption."""
        value = "n/a" if self.value is None else f"{self.value:.2f}"
        return f"{self.metric} {value} over {self.n:,} {self.counts}"


def vote_agreement(rows: Iterable[dict]) -> HumanBaseline | None:
    """Share (0..100) of all individual votes equal to their row's `gold`; None when no row carries votes."""
    agree = total = 0
    for row in rows:
        votes = row.get("votes") or []
        agree += sum(str(v) == row["gold"] for v in votes)
        total += len(votes)
    if not total:
        return None
    return HumanBaseline("accuracy", 100.0 * agree / total, total, "votes")


def vote_held_out(rows: Iterable[dict]) -> HumanBaseline | None:
    """Each vote against the majority of the other votes of its row (0..100), a tie for most split: a vote that is one of
    k labels tied for most counts 1/k. Rows with fewer than two votes have no others; None when no row has two.

    A row's credits depend only on its votes in order, and a dev set repeats a few dozen such sequences (NLI: five votes
    over three labels), so each sequence's credits are worked out once and added vote by vote, in the same order (the
    same float sum) as one pass over every vote would."""
    agree = 0.0
    total = 0
    credits_of: dict[tuple, tuple[float, ...]] = {}
    for row in rows:
        given = tuple(row.get("votes") or ())
        if len(given) < 2:
            continue
        credits = credits_of.get(given)
        if credits is None:
            credits = credits_of[given] = _held_out_credits([str(v) for v in given])
        for credit in credits:
            agree += credit
        total += len(given)
    if not total:
        return None
    return HumanBaseline("accuracy", 100.0 * agree / total, total, "votes, each against the majority of the others")


def _held_out_credits(votes: list[str]) -> tuple[float, ...]:
    """Each vote's credit against the majority of the others: 1 for their majority, 1/k when one of k tied for most, else 0."""
    counts = Counter(votes)
    credits = []
    for vote in votes:
        counts[vote] -= 1  # the others' votes
        top = max(counts.values())
        tied = sum(1 for c in counts.values() if c == top)
        credits.append(1.0 / tied if counts[vote] == top else 0.0)
        counts[vote] += 1
    return tuple(credits)


def annotator_couples(rows: Iterable[dict]) -> tuple[np.ndarray, np.ndarray]:
    """(an annotator's score, the mean of the other annotators' scores on the same pair), one per couple of the
    rows with at least two numeric votes."""
    own: list[float] = []
    others: list[float] = []
    for row in rows:
        scores = [float(v) for v in row.get("votes") or []]
        if len(scores) < 2:
            continue
        total = sum(scores)
        for score in scores:
            own.append(score)
            others.append((total - score) / (len(scores) - 1))
    return np.asarray(own, dtype=np.float64), np.asarray(others, dtype=np.float64)


def pearson(x: np.ndarray, y: np.ndarray) -> float | None:
    """Pearson r of two samples, 0..100; None with fewer than two values or a constant one."""
    if len(x) < 2 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return None
    return 100.0 * float(np.corrcoef(x, y)[0, 1])


def annotator_pearson(rows: Iterable[dict]) -> HumanBaseline | None:
    """Pearson r (0..100) between each annotator's score and the mean of the others', over all couples; None without votes."""
    own, others = annotator_couples(rows)
    if not len(own):
        return None
    return HumanBaseline("pearsonr", pearson(own, others), len(own), "annotator-pair couples")


def vote_shares(votes: Sequence[str], labels: Sequence[str]) -> np.ndarray:
    """The share of the votes given to each label, in label order."""
    index = {label: k for k, label in enumerate(labels)}
    shares = np.zeros(len(labels), dtype=np.float64)
    for vote in votes:
        if vote in index:
            shares[index[vote]] += 1
    return shares / max(len(votes), 1)


def cross_entropy(votes: Sequence[str], probs: Sequence[float], labels: Sequence[str]) -> float:
    """`-sum_k v_k ln q_k` of one example: the vote shares `v` against the run's probabilities `q` (clipped below at 1e-12)."""
    q = np.clip(np.asarray(probs, dtype=np.float64), PROBABILITY_FLOOR, None)
    return float(-(vote_shares(votes, labels) * np.log(q)).sum())


def example_cross_entropy(votes: Sequence[Sequence[str] | None], probs: Sequence[Sequence[float] | None],
                          labels: Sequence[str]) -> list[float]:
    """Each example's vote cross-entropy; NaN where the run gave no probabilities or the gold no votes."""
    return [cross_entropy(v, p, labels) if p is not None and v is not None and len(v) else math.nan for v, p in zip(votes, probs)]


def vote_cross_entropy(votes: Sequence[Sequence[str] | None], probs: Sequence[Sequence[float] | None],
                       labels: Sequence[str]) -> dict | None:
    """The run's mean vote cross-entropy over the examples with votes and probabilities ({"value", "n"}); None without any.
    The mean of `example_cross_entropy` over those examples, computed on one matrix (what `evaluate --out` writes)."""
    used = [(v, p) for v, p in zip(votes, probs) if p is not None and v is not None and not isinstance(v, float) and len(v)]
    if not used:
        return None
    shares = _share_matrix([given for given, _ in used], labels)
    q = np.clip(np.asarray([p for _, p in used], dtype=np.float64), PROBABILITY_FLOOR, None)
    return {"value": float(np.mean(-(shares * np.log(q)).sum(axis=1))), "n": len(used)}


def divergences(votes: Sequence[str], probs: Sequence[float], labels: Sequence[str]) -> tuple[float, float, float]:
    """(KL(v || q), Jensen-Shannon distance, entropy of v) of one example, in nats: `v` the vote shares, `q` the run's
    probabilities (a distribution, klue_viz.tasks.classification.as_distribution), clipped at PROBABILITY_FLOOR and
    rescaled for the KL alone. Written with numpy rather than scipy so that `klue-viz evaluate` loads no scipy for it;
    tests/test_vote_divergence.py holds it to scipy.stats.entropy and scipy.spatial.distance.jensenshannon."""
    v = vote_shares(votes, labels)
    q = np.asarray(probs, dtype=np.float64)
    floored = np.clip(q, PROBABILITY_FLOOR, None)
    floored /= floored.sum()
    voted = v > 0
    kl = float((v[voted] * np.log(v[voted] / floored[voted])).sum())
    middle = (v + q) / 2
    js = 0.5 * _relative_entropy(v, middle) + 0.5 * _relative_entropy(q, middle)
    return kl, math.sqrt(max(js, 0.0)), float(-(v[voted] * np.log(v[voted])).sum())


def _relative_entropy(p: np.ndarray, m: np.ndarray) -> float:
    """sum p ln(p / m) over p > 0 (where p > 0, m > 0 too: m is the mean of p and another distribution)."""
    inside = p > 0
    return float((p[inside] * np.log(p[inside] / m[inside])).sum())


def vote_divergence(votes: Sequence[Sequence[str] | None], probs: Sequence[Sequence[float] | None],
                    labels: Sequence[str]) -> dict | None:
    """The run's mean KL, Jensen-Shannon distance and vote entropy over the examples with votes and probabilities
    ({"kl", "jsd", "vote_entropy", "n"}); None without any.

    `divergences` of every example at once, on (examples x labels) matrices: the terms of a label an example leaves out
    are zeros, which add nothing to a row's sum (fewer than 8 labels, as every KLUE label task with votes has, are summed
    in order, so the figures are those of `divergences` to the last bit; tests/test_crowd_edges.py holds them so)."""
    used = [(v, p) for v, p in zip(votes, probs) if p is not None and v is not None and len(v)]
    if not used:
        return None
    v = _share_matrix([given for given, _ in used], labels)
    q = np.asarray([p for _, p in used], dtype=np.float64)
    floored = np.clip(q, PROBABILITY_FLOOR, None)
    floored /= floored.sum(axis=1, keepdims=True)
    voted = v > 0
    kl = _masked_sum(voted, v * np.log(np.where(voted, v, 1.0) / floored))
    middle = (v + q) / 2
    js = 0.5 * _masked_sum(voted, v * np.log(np.where(voted, v, 1.0) / np.where(voted, middle, 1.0)))
    given = q > 0
    js = js + 0.5 * _masked_sum(given, q * np.log(np.where(given, q, 1.0) / np.where(given, middle, 1.0)))
    own = -_masked_sum(voted, v * np.log(np.where(voted, v, 1.0)))
    mean_kl, mean_jsd, mean_own = np.column_stack([kl, np.sqrt(np.maximum(js, 0.0)), own]).mean(axis=0)
    return {"kl": float(mean_kl), "jsd": float(mean_jsd), "vote_entropy": float(mean_own), "n": len(used)}


def _share_matrix(votes: Sequence[Sequence[str]], labels: Sequence[str]) -> np.ndarray:
    """`vote_shares` of each example, one row each: every vote counted at once (np.bincount) rather than one at a time."""
    index = {label: k for k, label in enumerate(labels)}
    sizes = np.fromiter((len(given) for given in votes), dtype=np.int64, count=len(votes))
    columns = np.fromiter((index.get(vote, -1) for given in votes for vote in given), dtype=np.int64, count=int(sizes.sum()))
    rows = np.repeat(np.arange(len(votes)), sizes)
    inside = columns >= 0  # a vote outside the labels counts in its example's total only
    counts = np.bincount(rows[inside] * len(labels) + columns[inside], minlength=len(votes) * len(labels))
    return counts.reshape(len(votes), len(labels)).astype(np.float64) / np.maximum(sizes, 1)[:, None]


def _masked_sum(inside: np.ndarray, terms: np.ndarray) -> np.ndarray:
    """Each row's sum of the `terms` where `inside`, the others counted as 0.0 (their logarithms were taken of 1.0)."""
    return np.where(inside, terms, 0.0).sum(axis=1)


def crowd_view(confidence: float | None, votes: Sequence[str] | None, gold: str) -> str:
    """Where a run and the annotators part ways: confident against a split crowd, or unsure against a unanimous one."""
    if not votes:
        return NO_VOTES
    if confidence is None or (isinstance(confidence, float) and math.isnan(confidence)):
        return NO_PROBABILITIES
    agreeing = sum(str(v) == gold for v in votes)
    if confidence >= CONFIDENT and agreeing <= 0.6 * len(votes):
        return CONFIDENT_SPLIT
    if confidence < UNSURE and agreeing == len(votes):
        return AGREE_UNSURE
    return NEITHER


def score_spread(votes: Sequence[float] | None) -> float:
    """Standard deviation (population, ddof 0) of the annotators' scores on a pair; NaN without two scores."""
    if votes is None or len(votes) < 2:
        return math.nan
    return float(np.std(np.asarray(votes, dtype=np.float64)))


def score_spreads(votes: Sequence[Sequence[float] | None]) -> list[float]:
    """`score_spread` of each pair, the pairs with the same number of scores at once (one np.std over their rows: a row's
    sums are taken in the same order as over the row alone, so each value is `score_spread`'s to the last bit)."""
    spreads = [math.nan] * len(votes)
    by_size: dict[int, list[int]] = {}
    for position, scores in enumerate(votes):
        if scores is not None and len(scores) >= 2:
            by_size.setdefault(len(scores), []).append(position)
    for positions in by_size.values():
        found = np.std(np.asarray([votes[k] for k in positions], dtype=np.float64), axis=1)
        for k, value in zip(positions, found.tolist()):
            spreads[k] = value
    return spreads


def spread_bucket(std: float) -> str | None:
    """The spread slice value of a pair (None where it has no spread)."""
    if math.isnan(std):
        return None
    return SPREAD_LABELS[int(np.searchsorted(SPREAD_EDGES, std, side="right")) - 1]


def average_ranks(values: np.ndarray) -> np.ndarray:
    """Ranks 1..n of `values`, ties given the mean of the ranks they span (scipy.stats.rankdata's "average")."""
    order = np.argsort(values, kind="mergesort")
    ordered = values[order]
    starts_group = np.r_[True, ordered[1:] != ordered[:-1]]
    group = np.cumsum(starts_group) - 1
    bounds = np.r_[np.flatnonzero(starts_group), len(values)]
    mean_rank = 0.5 * (bounds[:-1] + bounds[1:] - 1) + 1.0
    ranks = np.empty(len(values), dtype=np.float64)
    ranks[order] = mean_rank[group]
    return ranks


def _beta_fraction(a: float, b: float, x: float) -> float:
    """The continued fraction of the regularised incomplete beta function (modified Lentz; Numerical Recipes, 6.4)."""
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 100_000):
        for numerator in (m * (b - m) * x / ((a - 1.0 + 2 * m) * (a + 2 * m)),
                          -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 1.0 + 2 * m))):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + numerator / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1.0) < 1e-16:
            break
    return h


def incomplete_beta(a: float, b: float, x: float) -> float:
    """The regularised incomplete beta function I_x(a, b) (scipy.special.betainc) for a, b > 0 and 0 <= x <= 1."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _beta_fraction(a, b, x) / a
    return 1.0 - front * _beta_fraction(b, a, 1.0 - x) / b


def spearman(x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray) -> tuple[float, float]:
    """Spearman's rho of two samples and its two-sided p-value from Student's t with n - 2 degrees of freedom, as
    `scipy.stats.spearmanr` computes them; (nan, nan) when either sample is constant or has fewer than 3 values."""
    a, b = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    n = len(a)
    if n < 3 or np.ptp(a) == 0 or np.ptp(b) == 0:
        return math.nan, math.nan
    rho = float(np.corrcoef(average_ranks(a), average_ranks(b))[0, 1])  # within [-1, 1]: np.corrcoef clips it
    freedom = n - 2
    if abs(rho) == 1.0:
        return rho, 0.0
    t_squared = rho * rho * freedom / ((1.0 + rho) * (1.0 - rho))
    return rho, incomplete_beta(freedom / 2.0, 0.5, freedom / (freedom + t_squared))
