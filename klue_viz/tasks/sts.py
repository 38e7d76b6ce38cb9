"""KLUE-STS: sentence-pair similarity 0..5; Pearson r on the real-valued label, F1 at the 3.0 threshold."""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from klue_viz.core.crowd import HumanBaseline, annotator_pearson, score_spread, score_spreads, spread_bucket
from klue_viz.core.lazy import lazy_module
from klue_viz.core.problems import InputError, Problem
from klue_viz.core.results import Frames, Repaired, ScoredRun
from klue_viz.drawing import markup as mk
from klue_viz.drawing.charts import sts_scatter
from klue_viz.metrics.official import STS_THRESHOLD, Statistics, sts_statistics
from klue_viz.reading.answers import Answer, read_number
from klue_viz.tasks.base import Metric, RecordError, Slice, Task, TaskFacts, ViewSettings, as_int, shown
from klue_viz.tasks.kit import Evidence, Suspect, correction_items, dump_json, read_json, shared_examples, suspect_item
from klue_viz.tasks.probing import JsonLabelProbe, ProbeExample

if TYPE_CHECKING:
    import pandas as pd
else:
    pd = lazy_module("pandas")  # the CLI scores without it

THRESHOLD = STS_THRESHOLD
#: How far (on 0..5) every run must be from the gold, on the same side, for the suspect queue to suggest another score.
STS_MARGIN = 1.0
SCORE_BINS = [-np.inf, 1, 2, 3, 4, np.inf]
SCORE_BIN_LABELS = ["0-1", "1-2", "2-3", "3-4", "4-5"]


def score_bin(values: pd.Series) -> pd.Series:
    return pd.cut(values, SCORE_BINS, labels=SCORE_BIN_LABELS, right=False).astype("string")


def pair_statistics(gold: np.ndarray, pred: np.ndarray, pred_binary: np.ndarray) -> Statistics:
    """Pearson's sums and the binary F1 counts of pairs (gold thresholded at 3.0, the prediction's own 0/1)."""
    return sts_statistics(gold, pred, (gold >= THRESHOLD).astype(int), pred_binary)


#: How far a predicted similarity may move under an edit that keeps the meaning before the INV test counts a failure.
INVARIANT_TOLERANCE = 0.5


class StsProbe(JsonLabelProbe):
    """STS pairs for the suites. An INV case fails when the predicted similarity moves by more than INVARIANT_TOLERANCE
    (half a point of the 0-5 scale, the step of the annotators' scale): a regression model's scores never repeat exactly.
    The annotators' votes are kept: the reader needs them, and they stand for the source pair."""

    def answer(self, prediction: Any) -> Hashable:
        return float(prediction["score"])

    def same(self, source: Hashable, perturbed: Hashable, edits: Sequence[dict[str, Any]]) -> bool:
        assert isinstance(source, float) and isinstance(perturbed, float)
        return abs(source - perturbed) <= INVARIANT_TOLERANCE

    def lm_docs(self, example: ProbeExample) -> list[dict[str, Any]]:
        """The two sentences and the gold similarity as text (the harness's target): a flat document, without the
        annotators' votes."""
        labels = example.record.get("labels") or {}
        return [{"guid": example.guid, "sentence1": example.texts["sentence1"], "sentence2": example.texts["sentence2"],
                 "score": str(labels.get("label", ""))}]


class Sts(Task):
    facts = TaskFacts(
        name="sts",
        title="KLUE-STS",
        guid_prefix="klue-sts-v1",
        metrics=(Metric("pearsonr", "Pearson r"), Metric("f1", "F1 (≥ 3.0)")),
        hf_config="sts",
        official_folder="klue-sts-v1.1",
        slices=(
            Slice("source", "Source"),
            Slice("genre", "Genre"),
            Slice("method", "Pair construction"),
            Slice("gold_bin", "Gold score"),
            Slice("agreement", "Annotator spread"),
            Slice("spread", "Annotator spread (std of the scores)"),
        ),
        signature_fields=frozenset({"score"}),
        bare_value_field="score",
        unit="pair",
        text_columns=("sentence1", "sentence2"),
        confusion_label="score bin",
        error_tags=("ambiguous", "needs world knowledge", "negation", "lexical overlap", "paraphrase missed", "gold error"),
        undefined_reasons={"pearsonr": "undefined: fewer than 2 pairs or constant scores",
                           "f1": "undefined: no pair is similar (>= 3.0) in gold or prediction"},
    )
    view = ViewSettings(compact_table=True)
    probe = StsProbe(("spacing", "typo", "register"), ("sentence1", "sentence2"), "klue-sts-v1.1_dev.json", "labels", lm_eval={
        "output_type": "generate_until",
        "doc_to_text": "두 문장의 의미가 얼마나 비슷한지 0(전혀 다름)에서 5(같은 뜻) 사이의 숫자 하나로 답하세요.\n문장 1: {{sentence1}}\n"
                       "문장 2: {{sentence2}}\n유사도:",
        "doc_to_target": "{{score}}", "generation_kwargs": {"until": ["\n"], "max_gen_toks": 16}})
    prediction_fields = frozenset({"score", "label", "binary"})
    answer_parser_version = 1

    def read_official_json(self, data: Any, name: str) -> tuple[list[dict], list[Problem]]:
        if not isinstance(data, list):
            raise InputError(f"{name}: expected the official KLUE-STS JSON list of pairs")
        return self.rows_from_hf(data)

    def looks_like_hf(self, record: dict) -> bool:
        return "annotations" not in record

    def rows_from_hf(self, records: Iterable[dict], split: str = "dev") -> tuple[list[dict], list[Problem]]:
        rows, problems = [], []
        for k, record in enumerate(records):
            try:
                labels = record["labels"]
                annotations = record.get("annotations") or {}
                votes = [float(v) for v in annotations.get("annotations") or []]
                annotators = [str(a) for a in annotations.get("annotators") or []]
                source = str(record.get("source") or "(unknown)")
                genre, _, method = source.partition("-")
                gold = float(labels["real-label"])
                if not 0.0 <= gold <= 5.0:  # also false for NaN
                    raise ValueError(f"real-label {labels['real-label']!r} is not a similarity from 0 to 5")
                rows.append({
                    "guid": str(record["guid"]),
                    "source": source,
                    "genre": genre,
                    "method": method or "(unknown)",
                    "sentence1": str(record["sentence1"]),
                    "sentence2": str(record["sentence2"]),
                    "gold": gold,
                    "gold_rounded": float(labels["label"]),
                    "votes": votes,
                    "annotators": annotators if len(annotators) == len(votes) else [],
                    "agreement": (f"spread {max(votes) - min(votes):g}" if votes else "(no votes)"),
                })
            except (KeyError, TypeError, ValueError, OverflowError) as err:
                problems.append(Problem(f"gold record #{k + 1}: missing or bad field {err}", guid=record.get("guid") if isinstance(record, dict) else None))
        return rows, problems

    def parse_prediction(self, record: dict, gold: dict) -> dict | Repaired:
        value = record.get("score", record.get("label"))
        if value is None or value == "":
            raise RecordError("missing field 'score' (a similarity from 0 to 5)")
        try:
            score = float(value) if not isinstance(value, bool) else math.nan
        except (TypeError, ValueError, OverflowError):
            score = math.nan
        if not math.isfinite(score):
            raise RecordError(f"score must be a number from 0 to 5, found {shown(value)}")
        binary = record.get("binary")
        if binary not in (None, ""):
            binary = as_int(binary, "binary")
            if binary not in (0, 1):
                raise RecordError(f"binary must be 0 or 1, found {binary}")
        else:
            binary = int(score >= THRESHOLD)
        if not 0.0 <= score <= 5.0:  # scored as given (Pearson takes any number), and listed (convention 9)
            return Repaired({"score": score, "binary": binary}, (f"score {shown(value)} is outside 0..5; scored as given",))
        return {"score": score, "binary": binary}

    def empty_prediction(self, gold: dict) -> dict:
        return {"score": 0.0, "binary": 0}

    def parse_answer(self, text: str, gold: dict) -> Answer:
        """A similarity written in text (`3.5`, `3.5점`, `유사도: 4점 (5점 만점)`): one number; two different ones are unreadable."""
        return read_number(text, "score")

    def unreadable_prediction(self, gold: dict) -> dict:
        """Wrong on both metrics: the far end of the scale from the gold, on the other side of the 3.0 threshold."""
        score = 5.0 if gold["gold"] < THRESHOLD else 0.0
        return {"score": score, "binary": int(score >= THRESHOLD)}

    def build_frames(self, gold: pd.DataFrame, predictions: list) -> Frames:
        frame = gold.copy()
        frame["pred"] = np.array([p["score"] for p in predictions], dtype=np.float64)
        frame["gold_binary"] = (frame["gold"] >= THRESHOLD).astype(int)
        frame["pred_binary"] = np.array([p["binary"] for p in predictions], dtype=int)
        frame["abs_error"] = (frame["pred"] - frame["gold"]).abs()
        frame["correct"] = frame["gold_binary"] == frame["pred_binary"]
        frame["error_type"] = np.select(
            [frame["correct"], frame["pred_binary"] == 1], ["correct", "false positive (pred ≥ 3)"], "false negative (pred < 3)"
        )
        frame["gold_bin"] = score_bin(frame["gold"])
        frame["pred_bin"] = score_bin(frame["pred"])
        frame["vote_std"] = [score_spread(v) for v in frame["votes"]]
        frame["spread"] = pd.array([spread_bucket(s) for s in frame["vote_std"]], dtype="string")
        return Frames(frame)

    def human_baseline(self, rows: list[dict]) -> HumanBaseline | None:
        """Pearson r between each annotator's score and the mean of the others' on the same pair, over all couples."""
        return annotator_pearson(rows)

    def held_out_baseline(self, rows: list[dict]) -> HumanBaseline | None:
        """The same Pearson r: each annotator is already held out of the mean they are correlated with."""
        return annotator_pearson(rows)

    def statistics_columns(self) -> dict[str, tuple[str, ...]]:
        return {"examples": ("gold", "pred", "pred_binary", "abs_error")}

    def example_columns(self, gold: list[dict], predictions: list[dict]) -> dict[str, list]:
        """`build_frames`' abs_error, correct (at the 3.0 threshold) and the annotators' spread (vote_std, spread)."""
        spread = score_spreads([row["votes"] for row in gold])
        return {"abs_error": [abs(p["score"] - row["gold"]) for p, row in zip(predictions, gold)],
                "correct": [int(row["gold"] >= THRESHOLD) == p["binary"] for p, row in zip(predictions, gold)],
                "vote_std": spread, "spread": [spread_bucket(s) for s in spread]}

    def statistics(self, frames: Frames) -> Statistics:
        ex = frames.examples
        return pair_statistics(ex["gold"].to_numpy(np.float64), ex["pred"].to_numpy(np.float64), ex["pred_binary"].to_numpy())

    def row_statistics(self, gold: list[dict], predictions: list[dict]) -> Statistics:
        return pair_statistics(np.array([row["gold"] for row in gold], dtype=np.float64),
                               np.array([p["score"] for p in predictions], dtype=np.float64),
                               np.array([p["binary"] for p in predictions], dtype=int))

    def confusion(self, frames: Frames) -> pd.DataFrame:
        ex = frames.examples
        return pd.DataFrame({"guid": ex["guid"], "gold": ex["gold_bin"], "pred": ex["pred_bin"]})

    def selection_charts(self, frames: Frames) -> list[tuple[str, object]]:
        return [("Gold against predicted similarity — select points (box or lasso) to list them below", sts_scatter(frames.examples))]

    def render(self, frames: Frames, guid: str) -> str:
        ex = frames.example(guid)
        status = "correct" if ex["correct"] else "wrong"
        body = [
            mk.row("sent. 1", mk.esc(ex["sentence1"])),
            mk.row("sent. 2", mk.esc(ex["sentence2"])),
            mk.row("gold", mk.badge(f"{ex['gold']:.2f}", "correct")),
            mk.row("pred", mk.badge(f"{ex['pred']:.2f}", status) + f'<span class="kv-kv">|error| {ex["abs_error"]:.2f}</span>'),
        ]
        if len(ex["votes"]):
            body.append(mk.row("votes", f'<span class="kv-kv">{mk.esc(", ".join(f"{v:g}" for v in ex["votes"]))}</span>'))
        return mk.example("".join(body), guid)

    # ---- discovery --------------------------------------------------------------------------
    def example_scores(self, frames: Frames) -> pd.Series:
        """1 - |gold - predicted| / 5: 1 for the gold score, 0 for the opposite end of the scale."""
        return (1.0 - frames.examples["abs_error"] / 5.0).clip(0.0, 1.0)

    def sort_orders(self) -> dict[str, Callable[[Frames], pd.Series]]:
        return {"largest |gold - predicted| first": lambda f: -f.examples["abs_error"]}

    def find_suspects(self, results: Sequence[ScoredRun]) -> list[Suspect]:
        """Pairs every run scores on the same side of the gold, at least STS_MARGIN from it: their mean is proposed."""
        frames, shared = shared_examples(results)
        gold = frames[0].loc[shared, "gold"].to_numpy(float)
        preds = np.column_stack([f.loc[shared, "pred"].to_numpy(float) for f in frames])
        diff = preds - gold[:, None]
        same_side = (np.sign(diff) == np.sign(diff[:, :1])).all(axis=1)
        least = np.abs(diff).min(axis=1)
        out = []
        for k in np.flatnonzero(same_side & (least >= STS_MARGIN)):
            proposed = round(float(preds[k].mean()), 1)
            evidence = Evidence(len(results), len(results), {r.run: float(preds[k, j]) for j, r in enumerate(results)})
            out.append(suspect_item(shared[k], "score", float(gold[k]), proposed, len(results) * float(least[k]) / 5, evidence))
        return out

    def write_patch(self, official_text: str, name: str, corrections: dict[tuple[str, int | None], list[str]],
                    problems: list[Problem]) -> tuple[str, int]:
        """A corrected score 0..5 sets the pair's real-valued label, its rounded label and its binary label."""
        out = []
        for record in read_json(official_text, name):
            guid = str(record.get("guid"))
            items = correction_items(corrections, guid)
            if not items:
                continue
            try:
                score = float(items[-1])
                if not 0 <= score <= 5:
                    raise ValueError
            except ValueError:
                problems.append(Problem(f"corrected score {items[-1]!r} is not a number from 0 to 5", guid=guid, file=name))
                continue
            labels = {**record.get("labels", {}), "real-label": score, "label": round(score, 1), "binary-label": int(round(score, 1) >= 3.0)}
            out.append({**record, "labels": labels})
        return dump_json(out), len(out)


TASK = Sts()
