"""The annotators as people: each one's agreement with the others, and a run's error against their spread.

Where annotator ids recur across examples (STS's `annotations.annotators`), each annotator gets a row:
how many pairs they scored, Pearson r between their score and the mean of the others' scores on the
same pairs (the human baseline of `klue_viz.core.crowd`, per person), their mean distance to that mean, and
cleanlab's multi-annotator statistics (`cleanlab.multiannotator.get_label_quality_multiannotator`,
CROWDLAB): the scores 0..5 as six classes, the vote shares (smoothed) as the consensus model's
probabilities, since an STS run gives a score and no class probabilities.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from klue_viz.core.crowd import SPREAD_LABELS, HumanBaseline, pearson, spearman, vote_cross_entropy, vote_divergence
from klue_viz.core.lazy import lazy_module
from klue_viz.scoring.evaluate import RunResult
from klue_viz.tasks.base import Task

if TYPE_CHECKING:
    import pandas as pd
    from cleanlab import multiannotator
else:  # the annotator table loads them; `klue-viz evaluate` never does
    pd = lazy_module("pandas")
    multiannotator = lazy_module("cleanlab.multiannotator")

#: The integer scores of STS, as classes for cleanlab.
SCORE_CLASSES = 6
#: Added to every class's vote share before normalising: a score no annotator gave is unlikely, not impossible.
SMOOTHING = 0.05


def annotator_table(rows: list[dict]) -> pd.DataFrame:
    """One row per annotator id of rows carrying `annotators` and numeric `votes` (same order); empty without them."""
    columns = ["annotator", "pairs", "pearsonr with the others' mean", "mean |score - others' mean|",
               "agreement with consensus (cleanlab)", "annotator quality (cleanlab)"]
    couples: dict[str, tuple[list[float], list[float]]] = {}
    usable = [r for r in rows if r.get("annotators") and len(r["annotators"]) == len(r.get("votes") or []) and len(r["votes"]) >= 2]
    for row in usable:
        scores = [float(v) for v in row["votes"]]
        total = sum(scores)
        for who, score in zip(row["annotators"], scores):
            own, others = couples.setdefault(str(who), ([], []))
            own.append(score)
            others.append((total - score) / (len(scores) - 1))
    if not couples:
        return pd.DataFrame(columns=columns)
    stats = _cleanlab_stats(usable)
    out = []
    for who in sorted(couples):
        scored, rest = np.asarray(couples[who][0]), np.asarray(couples[who][1])
        found = stats.loc[who] if stats is not None and who in stats.index else None
        out.append({columns[0]: who, columns[1]: len(scored), columns[2]: pearson(scored, rest),
                    columns[3]: float(np.mean(np.abs(scored - rest))),
                    columns[4]: None if found is None else 100.0 * float(found["agreement_with_consensus"]),
                    columns[5]: None if found is None else 100.0 * float(found["annotator_quality"])})
    return pd.DataFrame(out, columns=columns)


def _cleanlab_stats(rows: list[dict]) -> pd.DataFrame | None:
    """cleanlab's annotator statistics indexed by annotator id (None when cleanlab cannot run on these scores)."""
    ids = sorted({str(a) for r in rows for a in r["annotators"]})
    column = {who: k for k, who in enumerate(ids)}
    labels = np.full((len(rows), len(ids)), np.nan)
    shares = np.full((len(rows), SCORE_CLASSES), SMOOTHING)
    for k, row in enumerate(rows):
        for who, score in zip(row["annotators"], row["votes"]):
            value = int(round(float(score)))
            if not 0 <= value < SCORE_CLASSES:
                return None
            labels[k, column[str(who)]] = value
            shares[k, value] += 1
    shares /= shares.sum(axis=1, keepdims=True)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # cleanlab warns about annotators who labelled few examples
            found = multiannotator.get_label_quality_multiannotator(pd.DataFrame(labels, columns=ids), shares, verbose=False)
    except (ValueError, TypeError, KeyError):
        return None
    return found["annotator_stats"]


def spread_rows(examples: Mapping[str, Sequence]) -> tuple[list[dict], dict | None]:
    """A run's |gold - predicted| per annotator-spread bucket of its STS example columns (`spread`, `vote_std`,
    `abs_error`, `correct`: the frames' or `RunResult.example_columns`), and Spearman's rho between |error| and the
    spread over the pairs with one ({"rho", "p", "n"}; None with fewer than 3). Numpy only: `evaluate --out` writes it."""
    std = np.asarray(examples["vote_std"], dtype=np.float64) if "vote_std" in examples else np.zeros(0)
    usable = ~np.isnan(std)
    std = std[usable]
    error = np.asarray(examples["abs_error"], dtype=np.float64)[usable] if len(std) else np.zeros(0)
    wrong = ~np.asarray(examples["correct"], dtype=bool)[usable] if len(std) else np.zeros(0, dtype=bool)
    spread = np.asarray(examples["spread"], dtype=object)[usable] if len(std) else np.zeros(0, dtype=object)
    rows = []
    for label in SPREAD_LABELS:
        inside = spread == label
        size = int(inside.sum())
        rows.append({"annotator spread": label, "pairs": size,
                     "mean |gold - predicted|": float(error[inside].mean()) if size else None,
                     "share wrong at 3.0 (%)": 100.0 * float(wrong[inside].mean()) if size else None})
    if len(std) < 3 or len(np.unique(std)) < 2 or len(np.unique(error)) < 2:
        return rows, None
    rho, p = spearman(std, error)
    if math.isnan(rho):
        return rows, None
    return rows, {"rho": rho, "p": p, "n": len(std)}


def error_by_spread(examples: pd.DataFrame) -> tuple[pd.DataFrame, dict | None]:
    """`spread_rows` of a run's STS frames, the buckets as a table for the page."""
    rows, rho = spread_rows(examples)
    return pd.DataFrame(rows), rho


def scored_rows(gold_rows: list[dict], results: list[RunResult]) -> list[dict]:
    """The gold rows that at least one run (RunResult) scored with a prediction of its own (not a --strict filler)."""
    scored: set[str] = set()
    for result in results:
        if result.predicted_guids is not None:  # known from the matching: no frames built for it (the CLI's scores need none)
            scored.update(result.predicted_guids)
            continue
        examples = result.frames.examples
        scored.update(examples.loc[examples["has_prediction"].astype(bool), "guid"].astype(str))
    return [row for row in gold_rows if row["guid"] in scored]


def human_of(task: Task, gold_rows: list[dict], results: list[RunResult], held_out: bool = False) -> HumanBaseline | None:
    """The task's human baseline over the gold rows the runs scored (None when the gold keeps no annotator labels); with
    `held_out`, each annotator scored against the others only (`Task.held_out_baseline`)."""
    baseline = task.held_out_baseline if held_out else task.human_baseline
    if baseline(gold_rows) is None:  # asked of the gold first: finding the rows a run scored may build its frames
        return None
    return baseline(scored_rows(gold_rows, results) if results else gold_rows)


def run_crowd(task: Task, result: RunResult) -> dict:
    """What the annotators' labels say about one run, for `--out` and the page: `vote_cross_entropy` ({"value", "n"}) where
    the run gave probabilities against votes, with `vote_divergence` ({"kl", "jsd", "vote_entropy", "n"}), and
    `error_vs_spread` ({"table", "spearman"}) where pairs carry score spreads.
    Read from `result.example_columns()`: a run scored by the CLI builds no frames for it."""
    examples = result.example_columns()
    out: dict = {}
    if "votes" in examples and "probs" in examples:
        votes, probs = list(examples["votes"]), list(examples["probs"])
        found = vote_cross_entropy(votes, probs, task.labels or ())
        if found is not None:
            out["vote_cross_entropy"] = found
            out["vote_divergence"] = vote_divergence(votes, probs, task.labels or ())
    if "vote_std" in examples and not np.isnan(np.asarray(examples["vote_std"], dtype=np.float64)).all():
        rows, rho = spread_rows(examples)
        out["error_vs_spread"] = {"table": rows, "spearman": rho}
    return out
