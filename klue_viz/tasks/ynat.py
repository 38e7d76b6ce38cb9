"""YNAT: news headline topic classification, scored by macro F1 over the topics seen."""

from __future__ import annotations

from typing import TYPE_CHECKING

from klue_viz.core.lazy import lazy_module
from klue_viz.core.results import Frames
from klue_viz.drawing import markup as mk
from klue_viz.metrics.official import YNAT_LABELS, ynat_aggregate
from klue_viz.tasks.base import Metric, Slice, TaskFacts, ViewSettings, bucket
from klue_viz.tasks.classification import LabelTask
from klue_viz.tasks.kit import script_mix
from klue_viz.tasks.probing import JsonLabelProbe

if TYPE_CHECKING:
    import pandas as pd
else:
    pd = lazy_module("pandas")  # the CLI scores without it

#: The topic names an LLM answers with besides KLUE's own (short forms, separators, English): form -> label.
ANSWER_FORMS = {
    **dict.fromkeys(("IT/과학", "IT·과학", "IT 과학", "IT과학", "IT·과학", "과학", "정보기술", "science", "technology", "tech",
                     "it/science", "it science", "science/technology"), "IT과학"),
    **dict.fromkeys(("경제", "economy", "economics", "business", "finance"), "경제"),
    **dict.fromkeys(("사회", "society", "social"), "사회"),
    **dict.fromkeys(("생활/문화", "생활·문화", "생활 문화", "생활", "문화", "culture", "lifestyle", "life/culture", "life and culture"), "생활문화"),
    **dict.fromkeys(("세계", "국제", "world", "international", "global"), "세계"),
    **dict.fromkeys(("스포츠", "체육", "sports", "sport"), "스포츠"),
    **dict.fromkeys(("정치", "politics", "political"), "정치"),
}
#: Read only as the whole answer: `IT` is also the English pronoun of an explanation ("It is about sports").
WHOLE_FORMS = {"IT": "IT과학"}


class Ynat(LabelTask):
    facts = TaskFacts(
        name="ynat",
        title="YNAT topic classification",
        guid_prefix="ynat-v1",
        metrics=(Metric("macro_f1", "Macro F1"),),
        hf_config="ynat",
        official_folder="ynat-v1.1",
        slices=(
            Slice("predefined_news_category", "News section filed under"),
            Slice("agreement", "Annotator agreement"),
            Slice("title_length", "Title length"),
            Slice("title_script", "Scripts in the title (Hangul, Hanja, Latin, digits)"),
            Slice("month", "Month"),
            Slice("confidence_bin", "Confidence (p of the predicted class)"),
        ),
        unit="headline",
        text_columns=("title",),
        confusion_label="topic",
        error_tags=("ambiguous", "needs world knowledge", "negation", "headline too short", "section mismatch", "gold error"),
    )
    view = ViewSettings(compact_table=True)
    labels = YNAT_LABELS
    answer_forms = ANSWER_FORMS
    answer_whole_forms = WHOLE_FORMS
    #: The annotators' votes are left out of a perturbed headline: they were cast on the source headline.
    probe = JsonLabelProbe(("spacing", "typo", "register"), ("title",), "ynat-v1.1_dev.json", "label", dropped_fields=("annotations",), lm_eval={
        "output_type": "generate_until",
        "doc_to_text": "다음 뉴스 제목의 주제를 IT과학, 경제, 사회, 생활문화, 세계, 스포츠, 정치 중 하나로 답하세요.\n제목: {{title}}\n주제:",
        "doc_to_target": "{{label}}", "generation_kwargs": {"until": ["\n"], "max_gen_toks": 16}})
    aggregate_for = staticmethod(ynat_aggregate)

    def looks_like_hf(self, record: dict) -> bool:
        return "annotations" not in record and not isinstance(record.get("label"), str)

    def hf_row(self, record: dict) -> dict:
        annotations = record.get("annotations") or {}
        votes = list((annotations.get("annotations") or {}).get("first-scope") or [])
        gold = self.label_of(record["label"], "gold label")
        date = str(record.get("date") or "")
        return {
            "guid": str(record["guid"]),
            "title": str(record["title"]),
            "gold": gold,
            "predefined_news_category": str(record.get("predefined_news_category") or "(unknown)"),
            "date": date,
            "month": date[:8].rstrip(".") if date else "(unknown)",
            "url": str(record.get("url") or ""),
            "votes": votes,
            "agreement": f"{sum(v == gold for v in votes)}/{len(votes)} agree" if votes else "(no votes)",
        }

    def build_frames(self, gold: pd.DataFrame, predictions: list) -> Frames:
        frame = self.classification_frame(gold, predictions)
        frame["title_length"] = bucket(frame["title"].str.len(), [0, 20, 30, 40, float("inf")], "chars")
        frame["title_script"] = pd.array([script_mix(t) for t in frame["title"]], dtype="string")
        return Frames(frame)

    def render(self, frames: Frames, guid: str) -> str:
        ex = frames.example(guid)
        body = [
            f'<div style="font-size:1.1rem">{mk.esc(ex["title"])}</div>',
            self.label_rows(ex),
            mk.row("section", f'<span class="kv-kv">{mk.esc(ex["predefined_news_category"])} · {mk.esc(ex["date"])}</span>'),
            self.probs_row(ex["probs"], top=3),
        ]
        return mk.example("".join(body), guid)


TASK = Ynat()
