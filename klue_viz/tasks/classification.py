"""Shared mechanics of the single-label tasks (YNAT, NLI, RE): label ids, probabilities, frames."""

from __future__ import annotations

import json
import math
from abc import abstractmethod
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np

from klue_viz.core.crowd import HumanBaseline, example_cross_entropy, vote_agreement, vote_held_out
from klue_viz.core.lazy import lazy_module
from klue_viz.core.problems import InputError, Problem, record_fault
from klue_viz.core.results import Frames, Repaired, ScoredRun
from klue_viz.drawing import markup as mk
from klue_viz.metrics.official import Aggregate, Statistics, label_statistics
from klue_viz.reading.answers import UNREADABLE, Answer, Vocabulary, read_label
from klue_viz.reading.records import JSON_FAILURES
from klue_viz.tasks.base import RecordError, Task, as_int
from klue_viz.tasks.kit import Evidence, Suspect, confidence_bucket, correction_items, dump_json, read_json, shared_examples, suspect_item

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa
    import pyarrow.compute as pc
else:
    pd = lazy_module("pandas")  # the CLI scores without it
    pa = lazy_module("pyarrow")  # with the frames only (pandas loads it anyway)
    pc = lazy_module("pyarrow.compute")
# cleanlab (with scikit-learn) only when a suspect queue is built
cleanlab_filter = lazy_module("cleanlab.filter")
cleanlab_rank = lazy_module("cleanlab.rank")


class LabelTask(Task):
    """A task whose prediction is one label (name or Hugging Face id), optionally with class probabilities."""

    #: Label names in Hugging Face ClassLabel order (integer ids index this list).
    labels: tuple[str, ...] = ()
    #: The gold label field of the official file.
    official_label_field: str = "label"
    label_features = (("gold_label", "gold", "Gold label"), ("pred_label", "pred", "Predicted label"))
    #: Gold and predicted label together are a confusion-matrix cell; an unreadable answer is wrong by definition.
    error_fixing_columns = (frozenset({"gold", "pred"}),)
    error_fixing_values = {"pred": frozenset({UNREADABLE})}
    #: The aggregate of the task's metric, made for a number of classes (metrics.py).
    aggregate_for: Callable[[int], Aggregate]
    #: How an LLM may write each label besides its name (form -> label name), declared by each task module;
    #: `answer_whole_forms` are read only when they are the whole answer (docs/answer-parsers.md).
    answer_forms: dict[str, str] = {}
    answer_whole_forms: dict[str, str] = {}
    #: Words that hold a form with an ending but name no label (NLI's `반대로`, "on the contrary").
    answer_not_words: tuple[str, ...] = ()
    answer_parser_version = 2

    def label_of(self, value: Any, what: str = "label") -> str:
        """A label name from a name or a Hugging Face integer id."""
        if isinstance(value, str) and value.strip() in self.labels:
            return value.strip()
        if isinstance(value, (int, float)) or (isinstance(value, str) and value.strip().lstrip("-").isdigit() and value.isascii()):
            index = as_int(value, what)
            if 0 <= index < len(self.labels):
                return self.labels[index]
            raise RecordError(f"{what} id {index} is outside 0..{len(self.labels) - 1} ({self.facts.title} has {len(self.labels)} labels)")
        shown = ", ".join(self.labels[:8]) + (", ..." if len(self.labels) > 8 else "")
        raise RecordError(f"{what} {value!r} is not a {self.facts.name.upper()} label (expected one of: {shown}, or an integer id)")

    def probs_of(self, value: Any) -> list[float]:
        """Class probabilities in label order, from a list (HF order) or a {label: p} object; finite numbers only."""
        expected = f"probs must be a list of {len(self.labels)} numbers (Hugging Face label order) or a label->probability object"
        if isinstance(value, str):
            try:
                value = json.loads(value)
            except JSON_FAILURES:
                raise RecordError(expected) from None
        if isinstance(value, dict):
            out = [0.0] * len(self.labels)
            for key, p in value.items():
                out[self.labels.index(self.label_of(key, "probs key"))] = _number(p, expected)
        elif isinstance(value, list) and len(value) == len(self.labels):
            # a list of floats (what a JSON reader gives) is taken as it is: float() of each would give the same values
            out = list(value) if all(type(p) is float for p in value) else [_number(p, expected) for p in value]
        else:
            raise RecordError(expected)
        bad = [k for k, p in enumerate(out) if not math.isfinite(p)]
        if bad:
            raise RecordError(f"probs must be finite numbers; found {out[bad[0]]} for {self.labels[bad[0]]!r}"
                              + (f" and {len(bad) - 1} more" if len(bad) > 1 else ""))
        return out

    def parse_prediction(self, record: dict, gold: dict) -> dict | Repaired:
        """The label (given, or the most probable class) and the probabilities as a distribution (`as_distribution`):
        a row that is not one is a problem on its line, its label scored and its probabilities left out."""
        probs = self.probs_of(record["probs"]) if record.get("probs") not in (None, "") else None
        if record.get("label") not in (None, ""):
            label = self.label_of(record["label"])
        elif probs is not None:
            label = self.labels[int(np.argmax(probs))]
        else:
            raise RecordError("missing field 'label' (the predicted label name or id)")
        if probs is None:
            return {"label": label, "probs": None}
        distribution, why = as_distribution(probs, self.labels)
        if distribution is None:
            return Repaired({"label": label, "probs": None}, (f"{why}; the label is scored, the probabilities are left out",))
        return {"label": label, "probs": distribution}

    def empty_prediction(self, gold: dict) -> dict:
        return {"label": None, "probs": None}

    @cached_property
    def answer_vocabulary(self) -> Vocabulary:
        """The label names and the task's `answer_forms`, as the answer parser finds them in a text."""
        return Vocabulary({**{label: label for label in self.labels}, **self.answer_forms}, self.answer_whole_forms, self.answer_not_words)

    def parse_answer(self, text: str, gold: dict) -> Answer:
        """One label named by the text (a name, a Korean or English form, or a Hugging Face id as the whole answer)."""
        return read_label(text, self.answer_vocabulary, len(self.labels), labels=self.labels)

    def unreadable_prediction(self, gold: dict) -> dict:
        """No label: never equal to the gold (scored as wrong), and its own column of the confusion matrix."""
        return {"label": UNREADABLE, "probs": None}

    def read_official_json(self, data: Any, name: str) -> tuple[list[dict], list[Problem]]:
        if not isinstance(data, list):
            raise InputError(f"{name}: expected the official {self.facts.title} JSON list of examples")
        rows, problems = [], []
        for k, record in enumerate(data):
            if not isinstance(record, dict):
                problems.append(Problem(f"gold record #{k + 1}: not a JSON object (expected one example's fields)", file=name))
                continue
            try:
                rows.append(self.official_row(record))
            except (RecordError, KeyError, TypeError) as err:
                problems.append(Problem(f"gold record #{k + 1}: {record_fault(err)}", guid=_guid(record), file=name))
        return rows, problems

    def rows_from_hf(self, records: Iterable[dict], split: str = "dev") -> tuple[list[dict], list[Problem]]:
        rows, problems = [], []
        for k, record in enumerate(records):
            try:
                rows.append(self.hf_row(record))
            except (RecordError, KeyError, TypeError) as err:
                problems.append(Problem(f"gold record #{k + 1}: {record_fault(err)}", guid=_guid(record)))
        return rows, problems

    def official_row(self, record: dict) -> dict:
        return self.hf_row({**record, "label": record[self.official_label_field]})

    @abstractmethod
    def hf_row(self, record: dict) -> dict:
        """Gold row from a record whose label may be a name or an HF id."""

    def human_baseline(self, rows: list[dict]) -> HumanBaseline | None:
        """The share of the annotators' individual votes equal to the gold label (rows that keep `votes`)."""
        return vote_agreement(rows)

    def held_out_baseline(self, rows: list[dict]) -> HumanBaseline | None:
        """Each annotator's vote against the majority of the other votes of its example, ties split (the page's headline)."""
        return vote_held_out(rows)

    def classification_frame(self, gold: pd.DataFrame, predictions: list[dict]) -> pd.DataFrame:
        """The shared columns: gold, pred, correct, error type, probabilities and confidence."""
        frame = gold.copy()
        frame["pred"] = pd.array([p["label"] for p in predictions], dtype="string")
        frame["correct"] = (frame["gold"] == frame["pred"]).fillna(False).astype(bool)
        frame["error_type"] = np.where(frame["correct"], "correct", frame["gold"].astype(str) + " → " + frame["pred"].fillna("(none)").astype(str))
        probs = [p["probs"] for p in predictions]
        frame["probs"] = probs
        index = {label: i for i, label in enumerate(self.labels)}
        frame["confidence"] = [max(p) if p is not None else np.nan for p in probs]
        frame["gold_prob"] = [p[index[g]] if p is not None else np.nan for p, g in zip(probs, frame["gold"])]
        frame["confidence_bin"] = confidence_bucket(frame["confidence"])
        if "votes" in frame:  # the gold keeps its annotators' labels (YNAT, NLI): the run's distance to them
            frame["vote_cross_entropy"] = example_cross_entropy(frame["votes"].tolist(), probs, self.labels)
        return frame

    def example_columns(self, gold: list[dict], predictions: list[dict]) -> dict[str, list]:
        """`classification_frame`'s pred, probs and correct, and the gold's votes where it keeps them."""
        labels = [p["label"] for p in predictions]
        columns = {"pred": labels, "probs": [p["probs"] for p in predictions],
                   "correct": [label is not None and label == row["gold"] for label, row in zip(labels, gold)]}
        if any("votes" in row for row in gold):
            columns["votes"] = [row.get("votes") for row in gold]
        return columns

    def probs_row(self, probs: list[float] | None, top: int) -> str:
        """The `top` most probable labels of a run that gave probabilities."""
        if probs is None:
            return ""
        ranked = sorted(zip(self.labels, probs), key=lambda t: -t[1])[:top]
        return mk.row("probs", '<span class="kv-kv">' + " · ".join(f"{mk.esc(l)} {p:.2f}" for l, p in ranked) + "</span>")

    def label_rows(self, ex: pd.Series) -> str:
        """Gold and predicted label badges, annotator votes when the gold has them."""
        pred = ex["pred"] if isinstance(ex["pred"], str) else "(none)"
        out = mk.row("gold", mk.badge(ex["gold"], "correct")) + mk.row("pred", mk.badge(pred, "correct" if ex["correct"] else "wrong"))
        if len(ex.get("votes", [])):
            out += mk.row("votes", f'<span class="kv-kv">{mk.esc(", ".join(map(str, ex["votes"])))} ({mk.esc(ex["agreement"])})</span>')
        return out

    def confusion(self, frames: Frames) -> pd.DataFrame:
        ex = frames.examples
        return pd.DataFrame({"guid": ex["guid"], "gold": ex["gold"], "pred": ex["pred"].fillna("(none)")})

    def build_frames(self, gold: pd.DataFrame, predictions: list[Any]) -> Frames:
        return Frames(self.classification_frame(gold, predictions))

    def class_codes(self, frames: Frames) -> tuple[np.ndarray, np.ndarray]:
        """Gold and predicted class ids in label order; -1 for a missing prediction (--strict)."""
        ex = frames.examples
        # a pseudo-label (an unreadable answer) is no class: -1, like a missing prediction
        return self.label_codes(ex["gold"]), self.label_codes(ex["pred"])

    def label_codes(self, column: pd.Series) -> np.ndarray:
        """Each value's position in `labels`, -1 for a missing value or any other text. Arrow's `index_in` does it in C,
        about 50 times faster than pd.Categorical (a ranking of 1,000 runs codes 2,000 columns:
        bench/bench_ranking_many.py); a column Arrow cannot read as text takes the index lookup."""
        try:
            values = pa.array(column, from_pandas=True)
            if not pa.types.is_large_string(values.type):
                values = values.cast(pa.large_string())
        except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):
            return pd.Index(self.labels, dtype=object).get_indexer(column.to_numpy(dtype=object, na_value=None)).astype(np.int64)
        found = pc.index_in(values, value_set=pa.array(self.labels, pa.large_string()))
        return found.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64)

    def statistics_columns(self) -> dict[str, tuple[str, ...]]:
        return {"examples": ("gold", "pred", "probs")}

    def statistics(self, frames: Frames) -> Statistics:
        gold, pred = self.class_codes(frames)
        return self.code_statistics(gold, pred, frames.examples["probs"].tolist())

    def row_statistics(self, gold: list[dict], predictions: list[dict]) -> Statistics:
        index = {label: k for k, label in enumerate(self.labels)}
        codes = np.array([index.get(row["gold"], -1) for row in gold], dtype=np.int64)
        pred = np.array([index.get(p["label"], -1) for p in predictions], dtype=np.int64)
        return self.code_statistics(codes, pred, [p["probs"] for p in predictions])

    def code_statistics(self, gold: np.ndarray, pred: np.ndarray, probs: list[list[float] | None]) -> Statistics:
        """Statistics of gold and predicted class ids (-1: no prediction) and of each example's probabilities (None: not given)."""
        classes = len(self.labels)
        return label_statistics(gold, pred, classes, self.aggregate_for(classes))

    # ---- discovery ---------------------------------------------------------------------------
    def find_suspects(self, results: Sequence[ScoredRun]) -> list[Suspect]:
        """Examples whose label the runs agree on against the gold, with cleanlab where runs gave probabilities."""
        return label_suspects(self, results)

    def write_patch(self, official_text: str, name: str, corrections: dict[tuple[str, int | None], list[str]],
                    problems: list[Problem]) -> tuple[str, int]:
        """The official records with a correction, the last correction's label (name or id) in `official_label_field`."""
        return label_patch(self, official_text, name, corrections, problems)


#: How far from 1 the probabilities of a row may sum and still be read as a distribution. Rounding each of k
#: probabilities to three decimals moves their sum by at most k * 0.0005: 0.015 for RE's 30 relations, and a float32
#: softmax by about 1e-6; a row that is off by more is scores on another scale (logits, percentages, votes), not a
#: distribution. Scaling an accepted row to sum 1 moves its confidence, and so the ECE, by at most 2 points.
PROBABILITY_SUM_TOLERANCE = 0.02
#: How far outside [0, 1] a value may fall and be read as its bound: float arithmetic (`1 - 0.9 - 0.1` is -2.8e-17).
PROBABILITY_ROUNDING = 1e-9


def as_distribution(probs: list[float], labels: Sequence[str]) -> tuple[list[float] | None, str]:
    """`probs` scaled to sum 1 when every value is in [0, 1] and their sum within PROBABILITY_SUM_TOLERANCE of 1;
    otherwise (None, why). The one rule for every reader of class probabilities (docs/metrics.md): the frames, the
    official metrics, calibration, the vote divergences and the suspect queue all see the scaled row."""
    outside = [k for k, p in enumerate(probs) if not -PROBABILITY_ROUNDING <= p <= 1.0 + PROBABILITY_ROUNDING]
    if outside:
        k = outside[0]
        more = f" and {len(outside) - 1} more" if len(outside) > 1 else ""
        return None, f"probs are not probabilities: {probs[k]:g} for {labels[k]!r}{more} is outside [0, 1]"
    probs = [min(max(p, 0.0), 1.0) for p in probs]
    total = math.fsum(probs)
    if abs(total - 1.0) > PROBABILITY_SUM_TOLERANCE:
        return None, f"probs sum to {total:.4g}, not 1 (within {PROBABILITY_SUM_TOLERANCE}): not a distribution"
    return ([p / total for p in probs] if total != 1.0 else probs), ""


def _number(value: Any, expected: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise RecordError(expected)
    try:
        return float(value)
    except (ValueError, OverflowError):
        raise RecordError(expected) from None


def _guid(record: object) -> str | None:
    return record.get("guid") if isinstance(record, dict) else None


# ---- discovery: the suspect queue and the gold patch of a single-label task --------------------------


def label_suspects(task: LabelTask, results: Sequence[ScoredRun]) -> list[Suspect]:
    """Examples whose label the runs agree on against the gold, with cleanlab's label quality where runs gave probabilities."""
    labels = list(task.labels)
    index = {label: k for k, label in enumerate(labels)}
    frames, shared = shared_examples(results)
    gold = frames[0].loc[shared, "gold"].astype(str).to_numpy()
    quality, flagged = _cleanlab(task, frames, shared)
    needed = 1 if len(results) == 1 else 2
    out = []
    for k, guid in enumerate(shared):
        preds = [(r.run, f.at[guid, "pred"], f.at[guid, "probs"]) for r, f in zip(results, frames)]
        wrong = Counter(p for _, p, _ in preds if isinstance(p, str) and p != gold[k])
        if not wrong:
            continue
        proposed, count = wrong.most_common(1)[0]
        if count < needed or count < len(results) / 2:
            continue
        answers: dict[str, dict[str, str | float | None]] = {}
        votes = 0.0
        for run, pred, probs in preds:
            entry: dict[str, str | float | None] = {"label": pred if isinstance(pred, str) else None}
            if probs is not None:
                entry.update(confidence=float(probs[index[pred]]) if pred in index else None, p_gold=float(probs[index[gold[k]]]),
                             p_proposed=float(probs[index[proposed]]))
            if isinstance(pred, str) and pred == proposed:  # a missing prediction (--strict) is pd.NA, no vote
                votes += float(probs[index[proposed]]) if probs is not None else 1.0
            answers[run] = entry
        score = votes
        extra = {}
        if quality is not None and flagged is not None:  # both come from the same runs, or neither
            extra["cleanlab"] = {"label_quality": float(quality[k]), "flagged": bool(flagged[k])}
            score += 1.0 - float(quality[k])
        out.append(suspect_item(guid, "label", gold[k], proposed, score, Evidence(count, len(results), answers, extra=extra)))
    return out


def _cleanlab(task: LabelTask, frames: list[pd.DataFrame], shared: pd.Index) -> tuple[np.ndarray | None, np.ndarray | None]:
    """Label quality and issue flags from the mean probabilities of the runs that gave them (None without).

    Each run's rows are scaled to sum 1 before the mean (cleanlab reads probabilities): a run that gives scores on
    another scale, e.g. summing to 2, then weighs as much as any other, not twice as much."""
    with_probs = [f.loc[shared, "probs"] for f in frames if f.loc[shared, "probs"].notna().all()]
    if not with_probs or len(shared) < 2:
        return None, None
    probs = np.mean([_row_normalised(np.asarray(p.tolist(), dtype=float)) for p in with_probs], axis=0)
    index = {label: k for k, label in enumerate(task.labels)}
    labels = np.array([index[g] for g in frames[0].loc[shared, "gold"].astype(str)])
    quality = cleanlab_rank.get_label_quality_scores(labels, probs, method="self_confidence")
    try:
        # n_jobs=1: by default cleanlab forks a process pool, and a fork of the threaded Streamlit server can deadlock.
        flagged = cleanlab_filter.find_label_issues(labels, probs, n_jobs=1)
    except (ValueError, TypeError):  # too few examples per class for cleanlab's noise estimate
        flagged = np.zeros(len(labels), dtype=bool)
    return quality, flagged


def _row_normalised(probs: np.ndarray) -> np.ndarray:
    """Each row clipped to at least 1e-6 (cleanlab's logs need no zero) and scaled to sum 1."""
    probs = np.clip(probs, 1e-6, None)
    return probs / probs.sum(axis=1, keepdims=True)


def label_patch(task: LabelTask, text: str, name: str, corrections: dict[tuple[str, int | None], list[str]],
                problems: list[Problem]) -> tuple[str, int]:
    """Single-label tasks (LabelTask.write_patch): the last correction's label in the official label field."""
    out = []
    for record in read_json(text, name):
        guid = str(record.get("guid"))
        items = correction_items(corrections, guid)
        if not items:
            continue
        try:
            label = task.label_of(items[-1].strip(), "corrected label")
        except RecordError as err:
            problems.append(Problem(str(err), guid=guid, file=name))
            continue
        out.append({**record, task.official_label_field: label})
    return dump_json(out), len(out)
