"""KLUE-RE: relation between a marked subject and object; micro F1 without no_relation, AUPRC over 30 classes."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import TYPE_CHECKING

import numpy as np

from klue_viz import markup as mk
from klue_viz.lazy import lazy_module
from klue_viz.metrics import RE_RELATIONS, Statistics, label_statistics, re_aggregate, re_auprc_unsummed
from klue_viz.results import Frames
from klue_viz.tasks.base import Metric, RecordError, SeenInTraining, Slice, TaskFacts, ViewSettings, as_int, bucket
from klue_viz.tasks.classification import LabelTask

if TYPE_CHECKING:
    import pandas as pd
else:
    pd = lazy_module("pandas")  # the CLI scores without it

RELATIONS = RE_RELATIONS
NO_RELATION = "no_relation"


def entity(record: dict, side: str) -> dict:
    """A subject/object entity with inclusive `start_idx`/`end_idx` offsets, checked against the sentence."""
    value = record[side]
    if isinstance(value, str):  # pandas CSV exports write the dict in Python syntax
        value = ast.literal_eval(value)
    start, end = as_int(value["start_idx"], f"{side}.start_idx"), as_int(value["end_idx"], f"{side}.end_idx")
    if not 0 <= start <= end < len(record["sentence"]):
        raise RecordError(f"{side} offsets {start}..{end} fall outside the sentence")
    return {"word": str(value["word"]), "start": start, "end": end + 1, "type": str(value["type"])}


def training_keys(rows: list[dict]) -> Iterator[tuple[str, str]]:
    """The (subject, object) word pair of each training sentence."""
    return ((row["subject"]["word"], row["object"]["word"]) for row in rows)


def unit_training_keys(units: pd.DataFrame) -> list[tuple[str, str]]:
    """An example's (subject, object) word pair."""
    return [(s["word"], o["word"]) for s, o in zip(units["subject"], units["object"])]


class Re(LabelTask):
    facts = TaskFacts(
        name="re",
        title="KLUE-RE relation extraction",
        guid_prefix="klue-re-v1",
        metrics=(Metric("micro_f1", "Micro F1 (no_relation excluded)"), Metric("auprc", "AUPRC")),
        hf_config="re",
        official_folder="klue-re-v1.1",
        slices=(
            Slice("source", "Source"),
            Slice("type_pair", "Subject-object types"),
            Slice("relation_group", "Gold relation group"),
            Slice("gold", "Gold relation"),
            Slice("sentence_length", "Sentence length"),
            Slice("confidence_bin", "Confidence (p of the predicted class)"),
        ),
        unit="sentence",
        text_columns=("sentence",),
        confusion_label="relation",
        error_tags=("wrong direction", "similar relation", "missed relation", "spurious relation", "needs world knowledge", "gold error"),
        undefined_reasons={"micro_f1": "undefined: no relation other than no_relation in gold or prediction",
                           "auprc": "needs 'probs' (30 class probabilities) for every scored record"},
    )
    view = ViewSettings(hideable_labels=(NO_RELATION,))
    training = SeenInTraining("Subject-object pair seen in training", training_keys, unit_training_keys)
    labels = RELATIONS
    aggregate_for = staticmethod(re_aggregate)

    def looks_like_hf(self, record: dict) -> bool:
        return not isinstance(record.get("label"), str)

    def hf_row(self, record: dict) -> dict:
        gold = self.label_of(record["label"], "gold label")
        subj, obj = entity(record, "subject_entity"), entity(record, "object_entity")
        return {
            "guid": str(record["guid"]),
            "sentence": str(record["sentence"]),
            "subject": subj,
            "object": obj,
            "gold": gold,
            "source": str(record.get("source") or "(unknown)"),
            "type_pair": f"{subj['type']}-{obj['type']}",
            "relation_group": gold.split(":")[0] if ":" in gold else gold,
        }

    def build_frames(self, gold: pd.DataFrame, predictions: list) -> Frames:
        frame = self.classification_frame(gold, predictions)
        gold_rel, pred_rel = frame["gold"] != NO_RELATION, frame["pred"].fillna(NO_RELATION) != NO_RELATION
        frame["error_type"] = np.select(
            [frame["correct"], gold_rel & ~pred_rel, ~gold_rel & pred_rel],
            ["correct", "missed relation", "spurious relation"],
            "wrong relation",
        )
        frame["sentence_length"] = bucket(frame["sentence"].str.len(), [0, 50, 100, 150, float("inf")], "chars")
        return Frames(frame)

    def code_statistics(self, gold: np.ndarray, pred: np.ndarray, probs: list[list[float] | None]) -> Statistics:
        """Label counts for micro F1, and the probability rows AUPRC is computed from (it does not sum)."""
        classes = len(self.labels)
        has_probs = np.array([isinstance(p, list) for p in probs], dtype=bool)
        full = np.zeros((len(gold), len(RELATIONS)))
        full[has_probs] = np.array([p for p in probs if isinstance(p, list)], dtype=np.float64).reshape(-1, len(RELATIONS))
        return label_statistics(gold, pred, classes, re_aggregate(classes), re_auprc_unsummed(gold, full, has_probs))

    def render(self, frames: Frames, guid: str) -> str:
        ex = frames.example(guid)
        subj, obj = ex["subject"], ex["object"]
        spans = [
            mk.Span(subj["start"], subj["end"], subj["type"], css="kv-subj", extra=(("data-role", "subject"),), tag=f"subj · {subj['type']}"),
            mk.Span(obj["start"], obj["end"], obj["type"], css="kv-obj", extra=(("data-role", "object"),), tag=f"obj · {obj['type']}"),
        ]
        body = [
            mk.row("text", mk.highlight(ex["sentence"], spans)),
            mk.row("subj/obj", f'<span class="kv-kv">{mk.esc(subj["word"])} ({mk.esc(subj["type"])}) → {mk.esc(obj["word"])} ({mk.esc(obj["type"])})</span>'),
            self.label_rows(ex),
            self.probs_row(ex["probs"], top=3),
        ]
        return mk.example("".join(body), guid)

    # ---- discovery --------------------------------------------------------------------------

TASK = Re()
