"""KLUE-NLI: premise/hypothesis entailment, scored by accuracy."""

from __future__ import annotations

from typing import TYPE_CHECKING

from klue_viz import markup as mk
from klue_viz.lazy import lazy_module
from klue_viz.metrics import NLI_LABELS, nli_aggregate
from klue_viz.results import Frames
from klue_viz.tasks.base import Metric, Slice, TaskFacts, ViewSettings, bucket
from klue_viz.tasks.classification import LabelTask

if TYPE_CHECKING:
    import pandas as pd
else:
    pd = lazy_module("pandas")  # the CLI scores without it

VOTE_FIELDS = ("author", "label2", "label3", "label4", "label5")


def word_overlap(premise: str, hypothesis: str) -> str:
    """Whether at least half of the hypothesis's space-separated words occur in the premise (a slice of the frames)."""
    premise_words = set(premise.split())
    words = hypothesis.split()
    return "high (≥50%)" if sum(w in premise_words for w in words) >= 0.5 * max(len(words), 1) else "low (<50%)"


class Nli(LabelTask):
    facts = TaskFacts(
        name="nli",
        title="KLUE-NLI",
        guid_prefix="klue-nli-v1",
        metrics=(Metric("accuracy", "Accuracy"),),
        hf_config="nli",
        official_folder="klue-nli-v1.1",
        slices=(
            Slice("source", "Source"),
            Slice("agreement", "Annotator agreement"),
            Slice("hypothesis_length", "Hypothesis length"),
            Slice("overlap", "Hypothesis words found in premise"),
            Slice("confidence_bin", "Confidence (p of the predicted class)"),
        ),
        unit="pair",
        text_columns=("premise", "hypothesis"),
        confusion_label="label",
        error_tags=("ambiguous", "needs world knowledge", "negation", "numbers or time", "lexical overlap", "gold error"),
    )
    view = ViewSettings(compact_table=True)
    labels = NLI_LABELS
    aggregate_for = staticmethod(nli_aggregate)
    official_label_field = "gold_label"

    def looks_like_hf(self, record: dict) -> bool:
        return "gold_label" not in record

    def hf_row(self, record: dict) -> dict:
        gold = self.label_of(record["label"] if "label" in record else record["gold_label"], "gold label")
        votes = [str(record[f]) for f in VOTE_FIELDS if record.get(f)]
        premise, hypothesis = str(record["premise"]), str(record["hypothesis"])
        return {
            "guid": str(record["guid"]),
            "source": str(record.get("source") or record.get("genre") or "(unknown)"),
            "premise": premise,
            "hypothesis": hypothesis,
            "gold": gold,
            "votes": votes,
            "agreement": f"{sum(v == gold for v in votes)}/{len(votes)} agree" if votes else "(no votes)",
        }

    def build_frames(self, gold: pd.DataFrame, predictions: list) -> Frames:
        frame = self.classification_frame(gold, predictions)
        frame["overlap"] = [word_overlap(p, h) for p, h in zip(frame["premise"].tolist(), frame["hypothesis"].tolist())]
        frame["hypothesis_length"] = bucket(frame["hypothesis"].str.len(), [0, 15, 25, 40, float("inf")], "chars")
        return Frames(frame)

    def render(self, frames: Frames, guid: str) -> str:
        ex = frames.example(guid)
        body = [
            mk.row("premise", mk.esc(ex["premise"])),
            mk.row("hypo.", mk.esc(ex["hypothesis"])),
            self.label_rows(ex),
            self.probs_row(ex["probs"], top=3),
        ]
        return mk.example("".join(body), guid)


TASK = Nli()
