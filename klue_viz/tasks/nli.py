"""KLUE-NLI: premise/hypothesis entailment, scored by accuracy."""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from klue_viz.core.crowd import crowd_view
from klue_viz.core.lazy import lazy_module
from klue_viz.core.results import Frames
from klue_viz.drawing import markup as mk
from klue_viz.metrics.official import NLI_LABELS, nli_aggregate
from klue_viz.tasks.base import Metric, Slice, TaskFacts, ViewSettings, bucket
from klue_viz.tasks.classification import LabelTask
from klue_viz.tasks.probing import JsonLabelProbe

if TYPE_CHECKING:
    import pandas as pd
else:
    pd = lazy_module("pandas")  # the CLI scores without it

VOTE_FIELDS = ("author", "label2", "label3", "label4", "label5")

#: How an LLM answers NLI prompts in Korean and English (참/거짓/중립, 예/아니오, yes/no/maybe): form -> label.
ANSWER_FORMS = {
    **dict.fromkeys(("entails", "entail", "entailed", "함의", "참", "수반", "예", "네", "yes", "true", "맞음", "맞다", "맞습니다"), "entailment"),
    **dict.fromkeys(("중립", "알 수 없음", "알수없음", "알 수 없다", "알 수 없습니다", "모름", "판단할 수 없음", "판단 불가", "불확실",
                     "maybe", "unknown", "undetermined", "it is not possible to tell", "impossible to tell", "cannot tell", "can't tell",
                     "cannot be determined", "not enough information"), "neutral"),
    **dict.fromkeys(("contradicts", "contradict", "contradicted", "contradictory", "모순", "거짓", "아니오", "아니요", "아뇨", "no", "false",
                     "틀림", "틀리다", "반대"), "contradiction"),
}


def word_overlap(premise: str, hypothesis: str) -> str:
    """Whether at least half of the hypothesis's space-separated words occur in the premise (a slice of the frames)."""
    premise_words = set(premise.split())
    words = hypothesis.split()
    return "high (≥50%)" if sum(w in premise_words for w in words) >= 0.5 * max(len(words), 1) else "low (<50%)"


class PairColumns:
    """The frame columns of the gold pairs alone (word overlap, hypothesis length bucket), computed once per gold for
    the last `size` golds: `klue-viz runs add` scores many runs against one gold. Keyed by the premises and
    hypotheses in the order scored, so another gold, a subset or another order is its own entry."""

    def __init__(self, size: int = 4) -> None:
        self.size = size
        self._kept: OrderedDict[bytes, tuple[pd.api.extensions.ExtensionArray, pd.api.extensions.ExtensionArray]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, premises: list[str], hypotheses: list[str]) -> tuple[pd.api.extensions.ExtensionArray, pd.api.extensions.ExtensionArray]:
        """The overlap and hypothesis length columns of these pairs (arrays to assign, not to change)."""
        digest = hashlib.blake2b(digest_size=20)
        for texts in (premises, hypotheses):
            digest.update(np.fromiter(map(len, texts), dtype=np.int64, count=len(texts)).tobytes())
            digest.update("".join(texts).encode("utf-8", "surrogatepass"))
        key = digest.digest()
        found = self._kept.get(key)
        if found is None:
            overlap = pd.Series([word_overlap(p, h) for p, h in zip(premises, hypotheses)])
            length = bucket(pd.Series(hypotheses, dtype="str").str.len(), [0, 15, 25, 40, float("inf")], "chars")
            found = (overlap.array, length.array)
        with self._lock:
            self._kept[key] = found
            self._kept.move_to_end(key)
            while len(self._kept) > self.size:
                self._kept.popitem(last=False)
        return found


#: The pair columns of the last few golds scored.
PAIR_COLUMNS = PairColumns()


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
            Slice("crowd_view", "Run confidence against the annotators' votes"),
        ),
        unit="pair",
        text_columns=("premise", "hypothesis"),
        confusion_label="label",
        error_tags=("ambiguous", "needs world knowledge", "negation", "numbers or time", "lexical overlap", "gold error"),
    )
    view = ViewSettings(compact_table=True)
    labels = NLI_LABELS
    answer_forms = ANSWER_FORMS
    answer_not_words = ("반대로",)
    aggregate_for = staticmethod(nli_aggregate)
    official_label_field = "gold_label"
    probe = JsonLabelProbe(("name-swap", "spacing", "typo", "register", "negation"), ("premise", "hypothesis"), "klue-nli-v1.1_dev.json",
                           "gold_label", dropped_fields=VOTE_FIELDS, lm_eval={
                               "output_type": "generate_until",
                               "doc_to_text": "전제: {{premise}}\n가설: {{hypothesis}}\n질문: 가설은 참, 거짓, 중립 중 무엇입니까? 한 단어로 답하세요.\n정답:",
                               "doc_to_target": "{{ {'entailment': '참', 'neutral': '중립', 'contradiction': '거짓'}[gold_label] }}",
                               "generation_kwargs": {"until": ["\n\n"], "max_gen_toks": 32}})

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
        overlap, length = PAIR_COLUMNS.get(frame["premise"].tolist(), frame["hypothesis"].tolist())
        frame["overlap"] = overlap  # pandas assigns a copy: the kept array is not changed through the frame
        frame["hypothesis_length"] = length
        votes = frame["votes"].tolist() if "votes" in frame else [None] * len(frame)
        confidence = [None if pd.isna(c) else float(c) for c in frame["confidence"]]
        frame["crowd_view"] = [crowd_view(c, v, g) for c, v, g in zip(confidence, votes, frame["gold"].tolist())]
        return Frames(frame)

    def sort_orders(self) -> dict[str, Callable[[Frames], pd.Series]]:
        return {"furthest from the annotators' votes first (cross-entropy)": lambda f: -f.examples["vote_cross_entropy"].fillna(-1.0)}

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
