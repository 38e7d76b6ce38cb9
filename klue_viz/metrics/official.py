"""The official KLUE metrics: per-example sufficient statistics plus one aggregate per task.

Every metric klue-viz shows is computed in two steps (the design of ExplainaBoard's metrics):
each example becomes a row of numbers (true/false positive and false negative counts per class,
the five sums of Pearson's r, a turn's joint-goal hit, ...), and an *aggregate* turns the column
sums of those rows into the official numbers. Any subset, slice or bootstrap resample is then a
sum of rows (a weighted sum for a resample), and one vectorised aggregate scores many of them at
once. RE's AUPRC does not sum; it is computed from the examples' probabilities and weights.

The public functions at the end (`ynat_macro_f1`, `ner_entity_macro_f1`, ...) take plain lists and
return the official value on the 0..100 scale, or None where it is undefined. They are thin
wrappers over the same statistics and aggregates the app, the CLI and the bootstrap use. This
module needs numpy only: a training loop can import it without pandas, scikit-learn or Streamlit.
The conventions it follows are written down in docs/metrics.md.
"""

from __future__ import annotations

import re
import string
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher

import numpy as np
from numpy.typing import ArrayLike

Aggregate = Callable[[np.ndarray], dict[str, np.ndarray]]
#: Entries of a statistics matrix: rows, columns and values (a scalar column or value applies to every row).
Block = tuple[ArrayLike, ArrayLike, ArrayLike]

#: Label names in Hugging Face ClassLabel order (integer ids index these tuples).
YNAT_LABELS = ("IT과학", "경제", "사회", "생활문화", "세계", "스포츠", "정치")
NLI_LABELS = ("entailment", "neutral", "contradiction")
RE_RELATIONS = (
    "no_relation", "org:dissolved", "org:founded", "org:place_of_headquarters", "org:alternate_names",
    "org:member_of", "org:members", "org:political/religious_affiliation", "org:product", "org:founded_by",
    "org:top_members/employees", "org:number_of_employees/members", "per:date_of_birth", "per:date_of_death",
    "per:place_of_birth", "per:place_of_death", "per:place_of_residence", "per:origin", "per:employee_of",
    "per:schools_attended", "per:alternate_names", "per:parents", "per:children", "per:siblings", "per:spouse",
    "per:other_family", "per:colleagues", "per:product", "per:religion", "per:title",
)
NER_TAGS = ("B-DT", "I-DT", "B-LC", "I-LC", "B-OG", "I-OG", "B-PS", "I-PS", "B-QT", "I-QT", "B-TI", "I-TI", "O")
NER_TYPES = ("DT", "LC", "OG", "PS", "QT", "TI")
NER_TAG_ID = {t: i for i, t in enumerate(NER_TAGS)}
NER_O = NER_TAG_ID["O"]
#: Per NER tag id: is it a B-, an I-, and the entity type index (-1 for O).
NER_IS_B = np.array([t.startswith("B-") for t in NER_TAGS])
NER_IS_I = np.array([t.startswith("I-") for t in NER_TAGS])
NER_TYPE_OF = np.array([NER_TYPES.index(t[2:]) if t != "O" else -1 for t in NER_TAGS], dtype=np.int8)
#: The baseline's `get_dep_labels()` order; LAS keeps the first 15 and merges the rest into "others".
DP_RELATIONS = (
    "NP", "NP_AJT", "VP", "NP_SBJ", "VP_MOD", "NP_OBJ", "AP", "NP_CNJ", "NP_MOD", "VNP", "DP", "VP_AJT",
    "VNP_MOD", "NP_CMP", "VP_SBJ", "VP_CMP", "VP_OBJ", "VNP_CMP", "AP_MOD", "X_AJT", "VP_CNJ", "VNP_AJT", "IP",
    "X", "X_SBJ", "VNP_OBJ", "VNP_SBJ", "X_OBJ", "AP_AJT", "L", "X_MOD", "X_CNJ", "VNP_CNJ", "X_CMP", "AP_CMP",
    "AP_SBJ", "R", "NP_SVJ",
)
DP_LAS_CLASSES = DP_RELATIONS[:15] + ("others", "PAD")
DP_OTHERS, DP_PAD = len(DP_LAS_CLASSES) - 2, len(DP_LAS_CLASSES) - 1
STS_THRESHOLD = 3.0
#: A spread of STS scores below this share of their sum of squares counts as constant (Pearson undefined).
STS_CONSTANT = 1e-9


# ---- the container ------------------------------------------------------------------------------

@dataclass(frozen=True)
class Statistics:
    """Per-example sufficient statistics as a sparse n x width matrix (row, column, value triples).

    `aggregate` maps summed rows (B x width, one row per subset or resample) to metric arrays of
    length B on the 0..100 scale, NaN where undefined. `unsummed`, where a metric does not sum,
    maps example weights (B x n) to such arrays directly.
    """

    n: int
    width: int
    rows: np.ndarray
    cols: np.ndarray
    values: np.ndarray
    aggregate: Aggregate
    unsummed: Callable[[np.ndarray], dict[str, np.ndarray]] | None = None

    def totals(self) -> np.ndarray:
        """The column sums over every example, as a 1 x width matrix."""
        return np.bincount(self.cols, self.values, minlength=self.width)[None, :]

    def group_totals(self, groups: np.ndarray, n_groups: int) -> np.ndarray:
        """Column sums per group of examples (`groups[i]` in 0..G-1 is example i's group): G x width."""
        flat = groups[self.rows] * self.width + self.cols
        return np.bincount(flat, self.values, minlength=n_groups * self.width).reshape(n_groups, self.width)

    def scores(self, summed: np.ndarray, weights: np.ndarray | None = None) -> dict[str, np.ndarray]:
        """Every metric for each row of `summed`; `weights` (B x n) only feeds metrics that do not sum."""
        out = self.aggregate(summed)
        if self.unsummed is not None:
            out.update(self.unsummed(np.ones((1, self.n)) if weights is None else weights))
        return out

    def take(self, positions: np.ndarray) -> Statistics:
        """The statistics of the examples at `positions` (distinct), in that order."""
        positions = np.asarray(positions)
        new_row = np.full(self.n, -1)
        new_row[positions] = np.arange(len(positions))
        mapped = new_row[self.rows]
        keep = mapped >= 0
        unsummed = None
        if self.unsummed is not None:
            inner, n = self.unsummed, self.n

            def unsummed(weights: np.ndarray) -> dict[str, np.ndarray]:
                full = np.zeros((weights.shape[0], n))
                full[:, positions] = weights
                return inner(full)
        return Statistics(len(positions), self.width, mapped[keep], self.cols[keep], self.values[keep], self.aggregate, unsummed)


def coo(blocks: Sequence[Block]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(rows, cols, values) from blocks of entries; a scalar value applies to the whole block."""
    rows = [np.asarray(r, dtype=np.int64) for r, _, _ in blocks]
    cols = [np.broadcast_to(np.asarray(c, dtype=np.int64), r.shape) for r, (_, c, _) in zip(rows, blocks)]
    values = [np.broadcast_to(np.asarray(v, dtype=np.float64), r.shape) for r, (_, _, v) in zip(rows, blocks)]
    if not rows:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0)
    return np.concatenate(rows), np.concatenate(cols), np.concatenate(values)


def scalar(stats: Statistics, key: str) -> float | None:
    """One metric over every example, None where undefined."""
    value = float(stats.scores(stats.totals())[key][0])
    return None if np.isnan(value) else value


class Layout:
    """The named column blocks of a statistics matrix, in order: `Layout(tp=3, fp=3, fn=3, n=1)` puts tp in columns
    0..2, fp in 3..5, fn in 6..8 and n in 9 (width 10). Builders place entries by block name, aggregates read sums by it."""

    def __init__(self, **sizes: int) -> None:
        self.sizes = sizes
        self.starts: dict[str, int] = {}
        self.width = 0
        for name, size in sizes.items():
            self.starts[name] = self.width
            self.width += size

    def start(self, name: str) -> int:
        """The first column of block `name`."""
        return self.starts[name]

    def block(self, summed: np.ndarray, name: str) -> np.ndarray:
        """The columns of block `name` in summed rows (B x width in, B x size out)."""
        start = self.starts[name]
        return summed[:, start:start + self.sizes[name]]

    def column(self, summed: np.ndarray, name: str) -> np.ndarray:
        """The one column of a block of size 1 in summed rows (B x width in, B out)."""
        if self.sizes[name] != 1:
            raise ValueError(f"block {name!r} has {self.sizes[name]} columns, not one")
        return summed[:, self.starts[name]]


# ---- shared formulas ----------------------------------------------------------------------------

def f1(tp: np.ndarray, fp: np.ndarray, fn: np.ndarray, undefined: float = 0.0) -> np.ndarray:
    """F1 = 2tp / (2tp + fp + fn), `undefined` where nothing was predicted or expected."""
    denominator = 2 * tp + fp + fn
    return np.where(denominator > 0, 2 * tp / np.where(denominator > 0, denominator, 1), undefined)


def macro_over_present(tp: np.ndarray, fp: np.ndarray, fn: np.ndarray) -> np.ndarray:
    """Mean F1 over the classes seen in gold or prediction (scikit-learn's macro), NaN if none (B x C in, B out)."""
    present = (tp + fp + fn) > 0
    count = present.sum(axis=1)
    total = np.where(present, f1(tp, fp, fn), 0.0).sum(axis=1)
    return np.where(count > 0, total / np.where(count > 0, count, 1), np.nan)


def share(hits: np.ndarray, n: np.ndarray, empty: float = np.nan) -> np.ndarray:
    """100 * hits / n, `empty` where n is 0."""
    return np.where(n > 0, 100.0 * hits / np.where(n > 0, n, 1), empty)


def defined_when(n: np.ndarray, values: np.ndarray) -> np.ndarray:
    """`values` where the subset has examples, NaN where it has none."""
    return np.where(n > 0, values, np.nan)


# ---- single-label tasks (YNAT, NLI, RE) -----------------------------------------------------------

def label_layout(n_classes: int) -> Layout:
    """Single-label columns: tp, fp and fn per class, then the example count."""
    return Layout(tp=n_classes, fp=n_classes, fn=n_classes, n=1)


def label_statistics(gold: np.ndarray, pred: np.ndarray, n_classes: int, aggregate: Aggregate,
                     unsummed: Callable[[np.ndarray], dict[str, np.ndarray]] | None = None) -> Statistics:
    """`label_layout` statistics: a hit is a tp of its class, a miss a fp of the prediction and a fn of the gold.

    A prediction of -1 is no prediction (--strict): a fn of the gold class only, never a class of its own.
    """
    layout = label_layout(n_classes)
    gold, pred = np.asarray(gold, dtype=np.int64), np.asarray(pred, dtype=np.int64)
    index = np.arange(len(gold))
    hit = gold == pred
    miss = ~hit
    predicted = miss & (pred >= 0)
    rows, cols, values = coo([
        (index[hit], layout.start("tp") + gold[hit], 1.0),
        (index[predicted], layout.start("fp") + pred[predicted], 1.0),
        (index[miss], layout.start("fn") + gold[miss], 1.0),
        (index, layout.start("n"), 1.0),
    ])
    return Statistics(len(gold), layout.width, rows, cols, values, aggregate, unsummed)


def label_counts(summed: np.ndarray, n_classes: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """tp, fp and fn per class (B x C each) and the example count (B) of summed `label_layout` rows."""
    layout = label_layout(n_classes)
    return layout.block(summed, "tp"), layout.block(summed, "fp"), layout.block(summed, "fn"), layout.column(summed, "n")


def ynat_aggregate(n_classes: int) -> Aggregate:
    """Macro F1 over the classes in gold or prediction (docs/metrics.md, YNAT)."""
    def aggregate(summed: np.ndarray) -> dict[str, np.ndarray]:
        tp, fp, fn, n = label_counts(summed, n_classes)
        return {"macro_f1": defined_when(n, 100.0 * macro_over_present(tp, fp, fn))}
    return aggregate


def nli_aggregate(n_classes: int) -> Aggregate:
    """Accuracy: hits over examples."""
    def aggregate(summed: np.ndarray) -> dict[str, np.ndarray]:
        tp, _, _, n = label_counts(summed, n_classes)
        return {"accuracy": share(tp.sum(axis=1), n)}
    return aggregate


def re_aggregate(n_classes: int) -> Aggregate:
    """Micro F1 over the relations 1..29: no_relation (0) counts only as a miss, as does a missing prediction."""
    relations = slice(1, len(RE_RELATIONS))

    def aggregate(summed: np.ndarray) -> dict[str, np.ndarray]:
        tp, fp, fn, n = label_counts(summed, n_classes)
        micro = f1(tp[:, relations].sum(axis=1), fp[:, relations].sum(axis=1), fn[:, relations].sum(axis=1), undefined=np.nan)
        return {"micro_f1": defined_when(n, 100.0 * micro)}
    return aggregate


def auprc(gold: np.ndarray, probs: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Mean over the 30 relations of the area under the one-vs-rest precision-recall curve, per weight row.

    The curve is scikit-learn's: one point per distinct score (precision, recall of the examples
    scoring at least that), plus (recall 0, precision 1), joined by trapezoids. A relation without
    a positive example has recall 1 everywhere (it scores 0.5 when some example is predicted). An
    example of weight 0 is absent: where no weight lies at or above a threshold, the point is the
    (0, 1) start, so it adds no area.
    """
    gold = np.asarray(gold, dtype=np.int64)
    weights = np.asarray(weights, dtype=np.float64)
    total = np.zeros(weights.shape[0])
    for c in range(probs.shape[1]):
        score = probs[:, c]
        order = np.argsort(-score, kind="stable")
        ranked = score[order]
        last = np.append(np.flatnonzero(ranked[1:] != ranked[:-1]), len(ranked) - 1)
        w = weights[:, order]
        positive = gold[order] == c
        at_least = np.cumsum(w, axis=1)[:, last]
        tps = np.cumsum(w * positive, axis=1)[:, last]
        positives = tps[:, -1:]
        reached = at_least > 0
        precision = np.where(reached, tps / np.where(reached, at_least, 1), 1.0)
        recall = np.where(positives > 0, tps / np.where(positives > 0, positives, 1), 1.0)
        recall = np.where(reached, recall, 0.0)
        previous_r = np.hstack([np.zeros((len(w), 1)), recall[:, :-1]])
        previous_p = np.hstack([np.ones((len(w), 1)), precision[:, :-1]])
        total += ((recall - previous_r) * (precision + previous_p) / 2).sum(axis=1)
    return 100.0 * total / probs.shape[1]


def re_auprc_unsummed(gold: np.ndarray, probs: np.ndarray | None, has_probs: np.ndarray) -> Callable[[np.ndarray], dict[str, np.ndarray]]:
    """AUPRC from example weights; NaN for a subset with an example that gave no probabilities."""
    filled = np.zeros((len(gold), len(RE_RELATIONS))) if probs is None else np.where(has_probs[:, None], probs, 0.0)
    lacking = (~has_probs).astype(np.float64)

    def unsummed(weights: np.ndarray) -> dict[str, np.ndarray]:
        n = weights.sum(axis=1)
        complete = (weights @ lacking == 0) & (n > 0)
        values = np.full(weights.shape[0], np.nan)
        if complete.any():
            values[complete] = auprc(gold, filled, weights[complete])
        return {"auprc": values}
    return unsummed


# ---- STS ----------------------------------------------------------------------------------------

#: STS columns: pairs, Pearson's five sums (x = pred, y = gold, both centred on their mean) and tp, fp, fn at >= 3.
STS_LAYOUT = Layout(n=1, x=1, y=1, xx=1, yy=1, xy=1, tp=1, fp=1, fn=1)


def sts_statistics(gold: np.ndarray, pred: np.ndarray, gold_binary: np.ndarray, pred_binary: np.ndarray) -> Statistics:
    """`STS_LAYOUT` statistics of scored pairs and their thresholded (0/1) sides."""
    x, y = np.asarray(pred, dtype=np.float64), np.asarray(gold, dtype=np.float64)
    if len(x):
        x, y = x - x.mean(), y - y.mean()  # Pearson is shift-invariant; centring keeps the sums exact enough
    gb, pb = np.asarray(gold_binary).astype(bool), np.asarray(pred_binary).astype(bool)
    index = np.arange(len(x))
    columns = {"n": 1.0, "x": x, "y": y, "xx": x * x, "yy": y * y, "xy": x * y,
               "tp": (gb & pb).astype(float), "fp": (~gb & pb).astype(float), "fn": (gb & ~pb).astype(float)}
    rows, cols, values = coo([(index, STS_LAYOUT.start(name), value) for name, value in columns.items()])
    return Statistics(len(x), STS_LAYOUT.width, rows, cols, values, sts_aggregate)


def sts_aggregate(summed: np.ndarray) -> dict[str, np.ndarray]:
    """Pearson r from the five sums (NaN for fewer than 2 pairs or a constant side) and binary F1 (NaN if nothing positive)."""
    n, sx, sy, sxx, syy, sxy, tp, fp, fn = (STS_LAYOUT.column(summed, name) for name in STS_LAYOUT.sizes)
    safe_n = np.where(n > 0, n, 1)
    var_x, var_y = sxx - sx * sx / safe_n, syy - sy * sy / safe_n
    cov = sxy - sx * sy / safe_n
    varying = (var_x > STS_CONSTANT * sxx) & (var_y > STS_CONSTANT * syy) & (n >= 2)
    r = cov / np.sqrt(np.where(varying, var_x * var_y, 1.0))
    pearson = np.where(varying, 100.0 * np.clip(r, -1.0, 1.0), np.nan)
    return {"pearsonr": pearson, "f1": defined_when(n, 100.0 * f1(tp, fp, fn, undefined=np.nan))}


# ---- NER ----------------------------------------------------------------------------------------

def strict_entities(tag_ids: np.ndarray, sentence_starts: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(start, end, type) of every strict-IOB2 chunk: a B-X and the I-X run after it, never across sentences."""
    n = len(tag_ids)
    types = NER_TYPE_OF[tag_ids]
    continues = np.zeros(n, dtype=bool)
    if n > 1:
        continues[1:] = NER_IS_I[tag_ids[1:]] & (types[1:] == types[:-1]) & (types[:-1] >= 0)
    continues[sentence_starts] = False
    starts = np.flatnonzero(NER_IS_B[tag_ids])
    breaks = np.append(np.flatnonzero(~continues), n)
    ends = breaks[np.searchsorted(breaks, starts, side="right")]
    return starts, ends, types[starts]


def entity_keys(sentence: np.ndarray, start: np.ndarray, end: np.ndarray, kind: np.ndarray) -> np.ndarray:
    """One int64 per (sentence, start, end, type), so matching is a vectorised set operation."""
    m = np.int64(1 << 20)
    return ((sentence.astype(np.int64) * m + start) * m + end) * 8 + kind


def character_counts(sentence: np.ndarray, gold: np.ndarray, pred: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per sentence and tag (n x 13): character tp/fp/fn, with the [CLS]/[SEP] `O` pair counted as 2 tp of O."""
    k = len(NER_TAGS)
    hit = gold == pred
    tp = np.bincount(sentence[hit] * k + gold[hit], minlength=n * k).reshape(n, k)
    fp = np.bincount(sentence[~hit] * k + pred[~hit], minlength=n * k).reshape(n, k)
    fn = np.bincount(sentence[~hit] * k + gold[~hit], minlength=n * k).reshape(n, k)
    tp[:, NER_O] += 2
    return tp, fp, fn


#: NER columns: character tp/fp/fn per tag, entity tp/fp/fn per type, sentences.
NER_LAYOUT = Layout(char_tp=len(NER_TAGS), char_fp=len(NER_TAGS), char_fn=len(NER_TAGS),
                    entity_tp=len(NER_TYPES), entity_fp=len(NER_TYPES), entity_fn=len(NER_TYPES), sentences=1)


def ner_statistics(
    n: int, char_tp: np.ndarray, char_fp: np.ndarray, char_fn: np.ndarray,
    entity_sentence: np.ndarray, entity_type: np.ndarray, entity_kind: np.ndarray,
) -> Statistics:
    """`NER_LAYOUT` statistics of n sentences: per-sentence character counts (n x 13 each) and one entry per entity.

    `entity_kind` is 0 for a matched gold entity (tp), 1 for an unmatched prediction (fp), 2 for an
    unmatched gold entity (fn); matched predictions add nothing (their gold twin is the tp).
    """
    layout = NER_LAYOUT
    blocks: list[Block] = []
    for name, counts in (("char_tp", char_tp), ("char_fp", char_fp), ("char_fn", char_fn)):
        rows, tags = np.nonzero(counts)
        blocks.append((rows, layout.start(name) + tags, counts[rows, tags]))
    entity_start = np.array([layout.start("entity_tp"), layout.start("entity_fp"), layout.start("entity_fn")], dtype=np.int64)
    blocks.append((entity_sentence, entity_start[np.asarray(entity_kind, dtype=np.int64)] + entity_type, 1.0))
    blocks.append((np.arange(n), layout.start("sentences"), 1.0))
    rows, cols, values = coo(blocks)
    return Statistics(n, layout.width, rows, cols, values, ner_aggregate)


def ner_aggregate(summed: np.ndarray) -> dict[str, np.ndarray]:
    """Character macro F1 over all 13 tags (a tag absent on both sides scores 1) and entity macro F1 over types seen."""
    char = [NER_LAYOUT.block(summed, name) for name in ("char_tp", "char_fp", "char_fn")]
    ent = [NER_LAYOUT.block(summed, name) for name in ("entity_tp", "entity_fp", "entity_fn")]
    n = NER_LAYOUT.column(summed, "sentences")
    return {
        "entity_macro_f1": defined_when(n, 100.0 * macro_over_present(*ent)),
        "character_macro_f1": defined_when(n, 100.0 * f1(char[0], char[1], char[2], undefined=1.0).mean(axis=1)),
    }


def ner_entity_table(sentence: np.ndarray, gold: np.ndarray, pred: np.ndarray) -> dict[str, dict[str, np.ndarray]]:
    """Strict entities of both sides over non-space characters (`sentence` = each character's sentence, sorted)."""
    first = np.flatnonzero(np.diff(sentence, prepend=-1) != 0) if len(sentence) else np.zeros(0, np.int64)
    sides = {}
    for side, ids in (("gold", gold), ("pred", pred)):
        starts, ends, types = strict_entities(ids, first)
        sides[side] = {"sent": sentence[starts], "start": starts, "end": ends, "type": types}
    gold_key = entity_keys(sides["gold"]["sent"], sides["gold"]["start"], sides["gold"]["end"], sides["gold"]["type"])
    pred_key = entity_keys(sides["pred"]["sent"], sides["pred"]["start"], sides["pred"]["end"], sides["pred"]["type"])
    sides["gold"]["matched"] = np.isin(gold_key, pred_key)
    sides["pred"]["matched"] = np.isin(pred_key, gold_key)
    return sides


def entity_kinds(sides: dict[str, dict[str, np.ndarray]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(sentence, type, kind) entries for `ner_statistics` from both sides' entities."""
    g, p = sides["gold"], sides["pred"]
    unmatched = ~p["matched"]
    return (
        np.concatenate([g["sent"], p["sent"][unmatched]]),
        np.concatenate([g["type"], p["type"][unmatched]]),
        np.concatenate([np.where(g["matched"], 0, 2), np.ones(int(unmatched.sum()), dtype=np.int64)]),
    )


# ---- DP -----------------------------------------------------------------------------------------

def dp_las_classes(relations: Iterable[str]) -> np.ndarray:
    """The official LAS class index of each relation: the first 15 keep theirs, every other one is 'others'."""
    index = {r: k for k, r in enumerate(DP_RELATIONS[:15])}
    return np.array([index.get(r, DP_OTHERS) for r in relations], dtype=np.int64)


def dp_layout(heads: int) -> Layout:
    """DP columns: tp/fp/fn per head-index class (head h in column h + 1 of its block, no head in 0), tp/fp/fn per
    LAS class, then the word count, words with the right head, words with the right head and relation."""
    c = len(DP_LAS_CLASSES)
    return Layout(uas_tp=heads, uas_fp=heads, uas_fn=heads, las_tp=c, las_fp=c, las_fn=c, word_count=1, head_ok=1, both_ok=1)


def dp_statistics(
    n: int, sentence: np.ndarray, gold_head: np.ndarray, pred_head: np.ndarray, gold_class: np.ndarray, pred_relation_class: np.ndarray,
) -> Statistics:
    """`dp_layout` statistics of n rows (sentences) from their words (`sentence[k]`: word k's row).

    A word's head value is its class for UAS macro F1 (a head of -1, an empty prediction, counts as a
    miss of its gold head, not as a class); a word with a wrong head is predicted as the PAD class for LAS.
    """
    gold_head, pred_head = np.asarray(gold_head, dtype=np.int64), np.asarray(pred_head, dtype=np.int64)
    heads = int(max(gold_head.max(initial=0), pred_head.max(initial=0))) + 2  # head h -> column h + 1 (-1 -> 0)
    layout = dp_layout(heads)
    head_ok = gold_head == pred_head
    pred_class = np.where(head_ok, pred_relation_class, DP_PAD)
    las_ok = gold_class == pred_class
    blocks: list[Block] = []
    for side, ok, gold_c, pred_c in (("uas", head_ok, gold_head + 1, pred_head + 1), ("las", las_ok, gold_class, pred_class)):
        blocks += [
            (sentence[ok], layout.start(f"{side}_tp") + gold_c[ok], 1.0),
            (sentence[~ok], layout.start(f"{side}_fp") + pred_c[~ok], 1.0),
            (sentence[~ok], layout.start(f"{side}_fn") + gold_c[~ok], 1.0),
        ]
    blocks += [(sentence, layout.start("word_count"), 1.0), (sentence[head_ok], layout.start("head_ok"), 1.0),
               (sentence[las_ok], layout.start("both_ok"), 1.0)]
    rows, cols, values = coo(blocks)
    return Statistics(n, layout.width, rows, cols, values, dp_aggregate(layout))


def dp_aggregate(layout: Layout) -> Aggregate:
    """UAS/LAS as micro F1 (shares of words) and as macro F1 over head-index and merged-relation classes."""

    def aggregate(summed: np.ndarray) -> dict[str, np.ndarray]:
        words, head_ok, both_ok = (layout.column(summed, name) for name in ("word_count", "head_ok", "both_ok"))
        uas = [layout.block(summed, f"uas_{kind}") for kind in ("tp", "fp", "fn")]
        las = [layout.block(summed, f"las_{kind}") for kind in ("tp", "fp", "fn")]
        return {
            "uas_macro_f1": defined_when(words, 100.0 * macro_over_present(*(u[:, 1:] for u in uas))),  # column 0: no head (--strict)
            "uas_micro_f1": share(head_ok, words),
            "las_macro_f1": defined_when(words, 100.0 * macro_over_present(*las)),
            "las_micro_f1": share(both_ok, words),
        }
    return aggregate


# ---- MRC ----------------------------------------------------------------------------------------

#: The official pattern, kept as written: a bracket or quote followed by the literal `()‘’` (it almost never fires).
OFFICIAL_CHAR_PATTERN = re.compile(r"[\'\"《》<>〈〉]\(\)\‘\’")
ASCII_PUNCTUATION = frozenset(string.punctuation)


def normalise_answer(answer: str) -> str:
    """Official answer normalisation: lower case, drop ASCII punctuation only, collapse whitespace."""
    answer = OFFICIAL_CHAR_PATTERN.sub(" ", answer.lower())
    return " ".join("".join(c for c in answer if c not in ASCII_PUNCTUATION).split())


def rouge_w(pred: str, gold: str) -> float:
    """The official 'ROUGE-W' (0..1): character F1 whose match length is the longest common contiguous substring."""
    if gold == "":
        return float(pred == "")
    size = SequenceMatcher(None, pred, gold).find_longest_match(0, len(pred), 0, len(gold)).size
    precision = size / len(pred) if pred else 0.0
    recall = size / len(gold)
    return 0.0 if precision + recall == 0 else 2 * precision * recall / (precision + recall)


def mrc_example(pred_norm: str, gold_norm: Sequence[str]) -> tuple[float, float]:
    """(exact match, ROUGE-W) of one normalised answer against its normalised golds (0..1, best gold)."""
    return max(float(pred_norm == g) for g in gold_norm), max(rouge_w(pred_norm, g) for g in gold_norm)


def mean_statistics(layout: Layout, columns: dict[str, np.ndarray], aggregate: Aggregate) -> Statistics:
    """Statistics of per-example values, each in its named column of `layout`, and 1 in its `n` column."""
    n = len(next(iter(columns.values())))
    index = np.arange(n)
    rows, cols, values = coo([(index, layout.start(name), np.asarray(v, dtype=np.float64)) for name, v in columns.items()]
                             + [(index, layout.start("n"), 1.0)])
    return Statistics(n, layout.width, rows, cols, values, aggregate)


#: MRC columns: each question's best exact match and best ROUGE-W (0..1), questions.
MRC_LAYOUT = Layout(exact_match=1, rouge_w=1, n=1)


def mrc_aggregate(summed: np.ndarray) -> dict[str, np.ndarray]:
    """Means over questions of the best exact match and the best ROUGE-W."""
    n = MRC_LAYOUT.column(summed, "n")
    return {"exact_match": share(MRC_LAYOUT.column(summed, "exact_match"), n), "rouge_w": share(MRC_LAYOUT.column(summed, "rouge_w"), n)}


# ---- WoS ----------------------------------------------------------------------------------------

def turn_prf(gold: Sequence[str], pred: Sequence[str]) -> tuple[int, int, int, float]:
    """tp, fp, fn and the per-turn F1 of the official compute_prf (TRADE): empty gold scores 1 only for an empty prediction."""
    if not gold:
        return 0, len(pred), 0, 1.0 if not pred else 0.0
    tp = sum(g in pred for g in gold)
    fn = len(gold) - tp
    fp = sum(p not in gold for p in pred)
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    return tp, fp, fn, (2 * precision * recall / (precision + recall) if precision + recall else 0.0)


#: WoS columns: each turn's joint-goal hit (0/1) and slot F1 (0..1), turns.
WOS_LAYOUT = Layout(joint_goal=1, turn_f1=1, n=1)


def wos_aggregate(summed: np.ndarray) -> dict[str, np.ndarray]:
    """Joint goal accuracy (0 for no turns, as the official code) and the mean per-turn slot F1."""
    n = WOS_LAYOUT.column(summed, "n")
    return {"joint_goal_acc": share(WOS_LAYOUT.column(summed, "joint_goal"), n, empty=0.0),
            "slot_micro_f1": share(WOS_LAYOUT.column(summed, "turn_f1"), n)}


# ---- detail rows (an entity type, a word relation, a slot) ----------------------------------------

#: Detail-row columns: tp, fp, fn.
PRF_LAYOUT = Layout(tp=1, fp=1, fn=1)


def prf_statistics(tp: np.ndarray, fp: np.ndarray, fn: np.ndarray) -> Statistics:
    """`PRF_LAYOUT` statistics of detail rows (a slot, ...), one row each."""
    index = np.arange(len(tp))
    rows, cols, values = coo([(index, PRF_LAYOUT.start("tp"), tp), (index, PRF_LAYOUT.start("fp"), fp), (index, PRF_LAYOUT.start("fn"), fn)])
    return Statistics(len(tp), PRF_LAYOUT.width, rows, cols, values, prf_aggregate)


def prf_aggregate(summed: np.ndarray) -> dict[str, np.ndarray]:
    """Precision, recall and F1 of pooled counts, each NaN when its denominator is 0."""
    tp, fp, fn = (PRF_LAYOUT.column(summed, name) for name in ("tp", "fp", "fn"))
    return {"precision": share(tp, tp + fp), "recall": share(tp, tp + fn), "f1": share(2 * tp, 2 * tp + fp + fn)}


# ---- public functions on plain lists --------------------------------------------------------------

def _label_ids(values: Iterable, names: Sequence[str], what: str) -> list[str]:
    out = []
    for value in values:
        if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
            if not 0 <= value < len(names):
                raise ValueError(f"{what} id {value} is outside 0..{len(names) - 1}")
            out.append(names[int(value)])
        else:
            out.append(str(value))
    return out


def _labels(gold: Iterable, pred: Iterable, names: Sequence[str]) -> tuple[np.ndarray, np.ndarray, int]:
    g, p = _label_ids(gold, names, "gold label"), _label_ids(pred, names, "predicted label")
    if len(g) != len(p):
        raise ValueError(f"gold has {len(g)} labels and pred {len(p)}")
    vocabulary = {name: k for k, name in enumerate(dict.fromkeys([*names, *g, *p]))}
    return np.array([vocabulary[x] for x in g], dtype=np.int64), np.array([vocabulary[x] for x in p], dtype=np.int64), len(vocabulary)


def _label_metric(gold: Iterable, pred: Iterable, names: Sequence[str], make: Callable[[int], Aggregate], key: str) -> float | None:
    g, p, c = _labels(gold, pred, names)
    return scalar(label_statistics(g, p, c, make(c)), key)


def ynat_macro_f1(gold: Iterable, pred: Iterable) -> float | None:
    """YNAT macro F1 (0..100) over the topics seen in gold or prediction; labels are names or Hugging Face ids.

    >>> round(ynat_macro_f1(["정치", "정치", "경제", "사회"], ["정치", "경제", "경제", "정치"]), 4)
    38.8889
    >>> ynat_macro_f1([0, 6], ["IT과학", "정치"])
    100.0
    """
    return _label_metric(gold, pred, YNAT_LABELS, ynat_aggregate, "macro_f1")


def nli_accuracy(gold: Iterable, pred: Iterable) -> float | None:
    """KLUE-NLI accuracy (0..100); labels are names or Hugging Face ids (0 entailment, 1 neutral, 2 contradiction).

    >>> nli_accuracy(["entailment", "neutral", "contradiction", "neutral"], [0, 1, 1, 1])
    75.0
    """
    return _label_metric(gold, pred, NLI_LABELS, nli_aggregate, "accuracy")


def re_micro_f1(gold: Iterable, pred: Iterable) -> float | None:
    """KLUE-RE micro F1 (0..100) with no_relation left out; labels are relation names or relation_list ids.

    >>> re_micro_f1(["per:title", "no_relation", "org:founded", "no_relation"], ["per:title", "per:title", "no_relation", 0])
    50.0
    """
    return _label_metric(gold, pred, RE_RELATIONS, re_aggregate, "micro_f1")


def re_auprc(gold: Iterable, probs: Sequence[Sequence[float]]) -> float | None:
    """KLUE-RE AUPRC (0..100): mean over the 30 relations of the one-vs-rest precision-recall area.

    `probs` is n x 30 in relation_list order; gold labels are names or ids.

    >>> round(re_auprc(["no_relation", "per:title"], [[0.9] + [0.1 / 29] * 29, [0.2] + [0.0] * 28 + [0.8]]), 4)
    53.3333
    """
    names = _label_ids(gold, RE_RELATIONS, "gold label")
    unknown = sorted(set(names) - set(RE_RELATIONS))
    if unknown:
        raise ValueError(f"gold label {unknown[0]!r} is not a KLUE-RE relation")
    g = np.array([RE_RELATIONS.index(x) for x in names], dtype=np.int64)
    table = np.asarray(probs, dtype=np.float64)
    if table.ndim != 2 or table.shape != (len(g), len(RE_RELATIONS)):
        raise ValueError(f"probs must be {len(g)} x {len(RE_RELATIONS)} (one row of relation probabilities per example)")
    if not len(g):
        return None
    values = re_auprc_unsummed(g, table, np.ones(len(g), dtype=bool))(np.ones((1, len(g))))["auprc"]
    return None if np.isnan(values[0]) else float(values[0])


def _sts(gold: Iterable[float], pred: Iterable[float]) -> Statistics:
    g, p = np.asarray(list(gold), dtype=np.float64), np.asarray(list(pred), dtype=np.float64)
    if g.shape != p.shape:
        raise ValueError(f"gold has {len(g)} scores and pred {len(p)}")
    return sts_statistics(g, p, g >= STS_THRESHOLD, p >= STS_THRESHOLD)


def sts_pearsonr(gold: Iterable[float], pred: Iterable[float]) -> float | None:
    """KLUE-STS Pearson r (0..100) of predicted against gold similarity; None for fewer than 2 pairs or constant scores.

    >>> round(sts_pearsonr([0.0, 2.5, 5.0], [1.0, 2.0, 4.0]), 4)
    98.1981
    >>> sts_pearsonr([1.0, 2.0], [3.0, 3.0]) is None
    True
    """
    return scalar(_sts(gold, pred), "pearsonr")


def sts_f1(gold: Iterable[float], pred: Iterable[float]) -> float | None:
    """KLUE-STS binary F1 (0..100) after thresholding gold and prediction at >= 3.0.

    >>> sts_f1([3.0, 4.0, 1.0, 2.9], [3.0, 2.0, 3.5, 0.0])
    50.0
    """
    return scalar(_sts(gold, pred), "f1")


def _ner_ids(sentence_tags: Iterable, what: str) -> list[int]:
    out = []
    for tag in sentence_tags:
        if isinstance(tag, str) and tag in NER_TAG_ID:
            out.append(NER_TAG_ID[tag])
        elif isinstance(tag, (int, np.integer)) and not isinstance(tag, bool) and 0 <= tag < len(NER_TAGS):
            out.append(int(tag))
        else:
            raise ValueError(f"{what}: {tag!r} is not a KLUE-NER tag name or id 0..12")
    return out


def _ner(gold_tags: Sequence[Sequence], pred_tags: Sequence[Sequence], sentences: Sequence[str] | None) -> Statistics:
    if len(gold_tags) != len(pred_tags) or (sentences is not None and len(sentences) != len(gold_tags)):
        raise ValueError("gold_tags, pred_tags (and sentences) must have one entry per sentence")
    sent: list[int] = []
    gold: list[int] = []
    pred: list[int] = []
    for k, (g, p) in enumerate(zip(gold_tags, pred_tags)):
        g, p = _ner_ids(g, f"gold sentence {k}"), _ner_ids(p, f"predicted sentence {k}")
        if len(g) != len(p) or (sentences is not None and len(sentences[k]) != len(g)):
            raise ValueError(f"sentence {k}: gold, prediction (and sentence) differ in length")
        if sentences is not None:
            keep = [c != " " for c in sentences[k]]
            g = [t for t, kept in zip(g, keep) if kept]
            p = [t for t, kept in zip(p, keep) if kept]
        gold += g
        pred += p
        sent += [k] * len(g)
    n = len(gold_tags)
    s, gi, pi = np.array(sent, dtype=np.int64), np.array(gold, dtype=np.int64), np.array(pred, dtype=np.int64)
    tp, fp, fn = character_counts(s, gi, pi, n)
    return ner_statistics(n, tp, fp, fn, *entity_kinds(ner_entity_table(s, gi, pi)))


def ner_entity_macro_f1(gold_tags: Sequence[Sequence], pred_tags: Sequence[Sequence], sentences: Sequence[str] | None = None) -> float | None:
    """KLUE-NER entity macro F1 (0..100): seqeval strict IOB2 per sentence, macro over the entity types seen.

    Tags are per sentence, as names or Hugging Face ids; with `sentences`, characters that are " "
    are dropped first, as the official code does. None when there is no entity on either side.

    >>> gold = [["B-PS", "I-PS", "O", "B-LC"], ["B-DT", "O"]]
    >>> pred = [["B-PS", "I-PS", "O", "B-OG"], ["B-DT", "O"]]
    >>> round(ner_entity_macro_f1(gold, pred), 4)
    50.0
    """
    return scalar(_ner(gold_tags, pred_tags, sentences), "entity_macro_f1")


def ner_character_macro_f1(gold_tags: Sequence[Sequence], pred_tags: Sequence[Sequence], sentences: Sequence[str] | None = None) -> float | None:
    """KLUE-NER character macro F1 (0..100) over all 13 tags, counting the [CLS]/[SEP] `O` pair of each sentence.

    A tag absent from both sides scores 1, as in the official code (zero_division=True).

    >>> round(ner_character_macro_f1([["B-PS", "I-PS", "O"]], [["B-PS", "O", "O"]]), 4)
    91.2088
    """
    return scalar(_ner(gold_tags, pred_tags, sentences), "character_macro_f1")


def _dp(gold_heads: Sequence[Sequence[int]], gold_deprels: Sequence[Sequence[str]] | None, pred_heads: Sequence[Sequence[int]],
        pred_deprels: Sequence[Sequence[str]]) -> Statistics:
    """DP statistics; without `gold_deprels` (UAS alone) every word is of one relation class and `pred_deprels` is not read."""
    if len(gold_heads) != len(pred_heads):
        raise ValueError("gold_heads and pred_heads must have one entry per sentence")
    sentence = np.repeat(np.arange(len(gold_heads)), [len(h) for h in gold_heads])
    for k, (g, p) in enumerate(zip(gold_heads, pred_heads)):
        if len(g) != len(p):
            raise ValueError(f"sentence {k}: {len(g)} gold heads, {len(p)} predicted")
    gh = np.array([h for hs in gold_heads for h in hs], dtype=np.int64)
    ph = np.array([h for hs in pred_heads for h in hs], dtype=np.int64)
    if (gh < 0).any() or (ph < 0).any():
        raise ValueError("heads are word indices from 1, or 0 for the root")
    if gold_deprels is None:
        gc = pc = np.zeros(len(gh), dtype=np.int64)
    else:
        gc = dp_las_classes(d for ds in gold_deprels for d in ds)
        pc = dp_las_classes(d for ds in pred_deprels for d in ds)
        if len(gc) != len(gh) or len(pc) != len(gh):
            raise ValueError("deprels must have one relation per word")
    return dp_statistics(len(gold_heads), sentence, gh, ph, gc, pc)


def dp_uas_macro_f1(gold_heads: Sequence[Sequence[int]], pred_heads: Sequence[Sequence[int]]) -> float | None:
    """KLUE-DP UAS macro F1 (0..100): macro F1 where each head index value (0 = root) is a class.

    >>> round(dp_uas_macro_f1([[2, 0, 2]], [[2, 0, 1]]), 4)
    55.5556
    """
    return scalar(_dp(gold_heads, None, pred_heads, ()), "uas_macro_f1")


def dp_uas_micro_f1(gold_heads: Sequence[Sequence[int]], pred_heads: Sequence[Sequence[int]]) -> float | None:
    """KLUE-DP UAS (0..100): the share of words with the right head.

    >>> round(dp_uas_micro_f1([[2, 0, 2]], [[2, 0, 1]]), 4)
    66.6667
    """
    return scalar(_dp(gold_heads, None, pred_heads, ()), "uas_micro_f1")


def dp_las_macro_f1(gold_heads: Sequence[Sequence[int]], gold_deprels: Sequence[Sequence[str]], pred_heads: Sequence[Sequence[int]],
                    pred_deprels: Sequence[Sequence[str]]) -> float | None:
    """KLUE-DP LAS macro F1 (0..100) over the merged relation classes; a word with a wrong head is predicted PAD.

    >>> round(dp_las_macro_f1([[2, 0]], [["NP_SBJ", "VP"]], [[2, 1]], [["NP_SBJ", "VP"]]), 4)
    33.3333
    """
    return scalar(_dp(gold_heads, gold_deprels, pred_heads, pred_deprels), "las_macro_f1")


def dp_las_micro_f1(gold_heads: Sequence[Sequence[int]], gold_deprels: Sequence[Sequence[str]], pred_heads: Sequence[Sequence[int]],
                    pred_deprels: Sequence[Sequence[str]]) -> float | None:
    """KLUE-DP LAS (0..100): the share of words with the right head and the right merged relation.

    Relations after the first 15 of the official list are one class, so VP_CMP for X_AJT counts as right.

    >>> dp_las_micro_f1([[2, 0]], [["VP_CMP", "VP"]], [[2, 0]], [["X_AJT", "NP"]])
    50.0
    """
    return scalar(_dp(gold_heads, gold_deprels, pred_heads, pred_deprels), "las_micro_f1")


def _mrc(gold_answers: Sequence[Sequence[str]], pred: Sequence[str]) -> Statistics:
    if len(gold_answers) != len(pred):
        raise ValueError(f"{len(gold_answers)} questions but {len(pred)} predictions")
    pairs = [mrc_example(normalise_answer(p), [normalise_answer(a) for a in answers] or [""]) for answers, p in zip(gold_answers, pred)]
    return mean_statistics(MRC_LAYOUT, {"exact_match": np.array([e for e, _ in pairs]), "rouge_w": np.array([r for _, r in pairs])},
                           mrc_aggregate)


def mrc_exact_match(gold_answers: Sequence[Sequence[str]], pred: Sequence[str]) -> float | None:
    """KLUE-MRC exact match (0..100) after the official normalisation; `[]` gold means unanswerable (gold "").

    >>> round(mrc_exact_match([["서울특별시"], [], ["1990년"]], ["서울특별시", "", "1990"]), 4)
    66.6667
    """
    return scalar(_mrc(gold_answers, pred), "exact_match")


def mrc_rouge_w(gold_answers: Sequence[Sequence[str]], pred: Sequence[str]) -> float | None:
    """KLUE-MRC 'ROUGE-W' (0..100): character F1 on the longest common contiguous substring, best gold per question.

    >>> round(mrc_rouge_w([["서울특별시"]], ["서울의 특별시"]), 4)
    50.0
    """
    return scalar(_mrc(gold_answers, pred), "rouge_w")


def _wos(gold_states: Sequence[Sequence[str]], pred_states: Sequence[Sequence[str]]) -> Statistics:
    if len(gold_states) != len(pred_states):
        raise ValueError(f"{len(gold_states)} gold turns but {len(pred_states)} predicted")
    joint = np.array([set(g) == set(p) for g, p in zip(gold_states, pred_states)], dtype=np.float64)
    turn_f1 = np.array([turn_prf(list(g), list(p))[3] for g, p in zip(gold_states, pred_states)], dtype=np.float64)
    return mean_statistics(WOS_LAYOUT, {"joint_goal": joint, "turn_f1": turn_f1}, wos_aggregate)


def wos_joint_goal_acc(gold_states: Sequence[Sequence[str]], pred_states: Sequence[Sequence[str]]) -> float | None:
    """WoS joint goal accuracy (0..100): turns whose predicted state equals the gold state as a set (0 for no turns).

    >>> wos_joint_goal_acc([["식당-가격대-저렴"], []], [["식당-가격대-저렴"], ["식당-지역-서울 중앙"]])
    50.0
    """
    return scalar(_wos(gold_states, pred_states), "joint_goal_acc")


def wos_slot_micro_f1(gold_states: Sequence[Sequence[str]], pred_states: Sequence[Sequence[str]]) -> float | None:
    """WoS 'slot micro F1' (0..100): the mean over turns of each turn's F1 (an empty gold scores 1 only if pred is empty).

    >>> round(wos_slot_micro_f1([["관광-이름-N서울타워", "관광-지역-서울 중앙"]], [["관광-이름-N서울타워"]]), 4)
    66.6667
    """
    return scalar(_wos(gold_states, pred_states), "slot_micro_f1")
