"""KLUE-RE: relation between a marked subject and object; micro F1 without no_relation, AUPRC over 30 classes."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import TYPE_CHECKING

import numpy as np

from klue_viz.core.lazy import lazy_module
from klue_viz.core.results import Frames
from klue_viz.drawing import markup as mk
from klue_viz.metrics.official import RE_RELATIONS, Statistics, label_statistics, re_aggregate, re_auprc_unsummed
from klue_viz.tasks.base import DrawingDocument, Metric, RecordError, SeenInTraining, Slice, SurfaceForms, TaskFacts, ViewSettings, as_int, bucket
from klue_viz.tasks.classification import LabelTask
from klue_viz.tasks.kit import Suspect
from klue_viz.tasks.probing import JsonSpanProbe
from klue_viz.tasks.surface import surface_table

if TYPE_CHECKING:
    import pandas as pd
else:
    pd = lazy_module("pandas")  # the CLI scores without it

RELATIONS = RE_RELATIONS
NO_RELATION = "no_relation"

#: Korean names of the relations (the KLUE paper's 단체/인물 scheme), as an LLM prompted in Korean answers.
KOREAN_RELATIONS = {
    "no_relation": ("관계 없음", "관계없음", "무관계", "관계가 없음", "관계 없다"),
    "org:dissolved": ("단체:해산일", "해산일", "해체일"),
    "org:founded": ("단체:설립일", "설립일", "창립일"),
    "org:place_of_headquarters": ("단체:본사 위치", "본사 위치", "본부 위치", "본사"),
    "org:alternate_names": ("단체:별칭",),
    "org:member_of": ("단체:소속", "상위 단체"),
    "org:members": ("단체:구성원", "하위 단체", "회원 단체"),
    "org:political/religious_affiliation": ("단체:정치/종교 성향", "정치/종교 성향", "정치 성향", "종교 성향"),
    "org:product": ("단체:제품",),
    "org:founded_by": ("단체:설립자", "설립자", "창립자", "창업자"),
    "org:top_members/employees": ("단체:주요 구성원", "주요 구성원", "임원", "대표"),
    "org:number_of_employees/members": ("단체:구성원 수", "구성원 수", "직원 수", "회원 수"),
    "per:date_of_birth": ("인물:생년월일", "생년월일", "출생일"),
    "per:date_of_death": ("인물:사망일", "사망일"),
    "per:place_of_birth": ("인물:출생지", "출생지"),
    "per:place_of_death": ("인물:사망지", "사망지", "사망 장소"),
    "per:place_of_residence": ("인물:거주지", "거주지"),
    "per:origin": ("인물:출신", "출신", "국적"),
    "per:employee_of": ("인물:소속", "소속 단체", "직장"),
    "per:schools_attended": ("인물:출신 학교", "출신 학교", "학교"),
    "per:alternate_names": ("인물:별칭",),
    "per:parents": ("인물:부모", "부모"),
    "per:children": ("인물:자녀", "자녀"),
    "per:siblings": ("인물:형제자매", "형제자매", "형제"),
    "per:spouse": ("인물:배우자", "배우자"),
    "per:other_family": ("인물:기타 가족", "기타 가족", "친척"),
    "per:colleagues": ("인물:동료", "동료"),
    "per:product": ("인물:제품", "인물:작품", "작품"),
    "per:religion": ("인물:종교", "종교"),
    "per:title": ("인물:직업/직함", "직업/직함", "직업", "직함", "직위"),
}


def relation_forms() -> dict[str, str]:
    """Every written form of the relations: the names, with spaces for `_`, `조직:`/`사람:` for `단체:`/`인물:`, the
    English part after `org:`/`per:` where only one relation has it, and the Korean names."""
    forms: dict[str, str] = {}
    tails: dict[str, list[str]] = {}
    for relation in RELATIONS:
        forms[relation.replace("_", " ")] = relation
        tail = relation.split(":", 1)[-1]
        tails.setdefault(tail, []).append(relation)
        for korean in KOREAN_RELATIONS[relation]:
            forms[korean] = relation
            for given, other in (("단체:", "조직:"), ("인물:", "사람:")):
                if korean.startswith(given):
                    forms[other + korean[len(given):]] = relation
    for tail, relations in tails.items():
        if len(relations) == 1 and relations[0] != NO_RELATION:
            forms[tail] = forms[tail.replace("_", " ")] = relations[0]
    return forms


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


def _overlap(first: dict, second: dict) -> bool:
    return first["start"] < second["end"] and second["start"] < first["end"]


def _words_of(entity: object) -> str:
    return str(entity.get("word", "")) if isinstance(entity, dict) else str(entity)


def _surface_errors(frames: Frames) -> pd.DataFrame:
    """Errors by surface form: each subject/object pair whose relation is wrong (gold -> predicted)."""
    ex = frames.examples
    pairs = [f"{_words_of(s)} | {_words_of(o)}" for s, o in zip(ex["subject"], ex["object"])]
    frame = pd.DataFrame({"form": pairs, "type": ex["gold"].astype(str).to_numpy(), "guid": ex["guid"].to_numpy(),
                          "correct": ex["correct"].astype(bool).to_numpy(), "pred": ex["pred"].astype(str).to_numpy()})
    totals = frame.groupby(["form", "type"]).size().to_dict()
    wrong = frame[~frame["correct"]]
    rows = wrong.assign(error="predicted " + wrong["pred"])[["form", "type", "error", "guid"]]
    return surface_table(rows, "entity pair", totals)


def _drawing_document(frames: Frames, guids: list[str]) -> dict:
    """The card of `guids` as a document for klue_viz.drawing.svg (what to draw, no markup)."""
    ex = frames.example(guids[0])
    subj, obj = ex["subject"], ex["object"]
    marks = [{"start": int(subj["start"]), "end": int(subj["end"]), "tag": f"subj · {subj['type']}", "colour": mk.LABEL_COLOURS.get(subj["type"], "#d0d7de")},
             {"start": int(obj["start"]), "end": int(obj["end"]), "tag": f"obj · {obj['type']}", "colour": mk.LABEL_COLOURS.get(obj["type"], "#d0d7de")}]
    right = bool(ex["correct"])
    notes = [{"side": "gold", "text": str(ex["gold"]), "status": "correct"},
             {"side": "predicted", "text": str(ex["pred"]) if isinstance(ex["pred"], str) else "(none)", "status": "correct" if right else "wrong"}]
    legend = [{"text": f"{subj['type']} (subject)", "colour": marks[0]["colour"]}, {"text": f"{obj['type']} (object)", "colour": marks[1]["colour"]},
              {"text": "prediction right", "status": "correct"}, {"text": "prediction wrong", "status": "wrong"}]
    return {"kind": "spans", "rows": [{"side": "text", "text": ex["sentence"], "marks": marks}], "notes": notes, "legend": legend}


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
    surface = SurfaceForms(_surface_errors)
    svg_document = DrawingDocument(_drawing_document)
    view = ViewSettings(hideable_labels=(NO_RELATION,))
    training = SeenInTraining("Subject-object pair seen in training", training_keys, unit_training_keys)
    labels = RELATIONS
    answer_forms = relation_forms()
    aggregate_for = staticmethod(re_aggregate)

    probe = JsonSpanProbe(("subject_entity", "object_entity"), ("name-swap", "name-script", "spacing", "typo"), ("sentence",), "klue-re-v1.1_dev.json",
                          "label", lm_eval={  # the prompt of examples/lm_eval/klue_re_gen.yaml
                              "output_type": "generate_until",
                              "doc_to_text": "문장: {{sentence}}\n주어: {{subject_entity.word}} ({{subject_entity.type}}), 목적어: {{object_entity.word}} "
                                             "({{object_entity.type}})\n두 개체의 관계를 KLUE-RE 관계 이름 하나로 답하세요 (예: per:employee_of, "
                                             "org:founded_by, no_relation).\n관계:",
                              "doc_to_target": "{{label}}", "generation_kwargs": {"until": ["\n"], "max_gen_toks": 32}})

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

    def suspect_text(self, row: dict, suspect: Suspect) -> str:
        """The sentence with the subject marked `<word:SUBJ>` and the object `<word:OBJ>`."""
        sentence = row["sentence"]
        marks = sorted([(row["subject"], "SUBJ"), (row["object"], "OBJ")], key=lambda m: -m[0]["start"])
        for entity_, role in marks:
            if entity_["end"] <= len(sentence) and not (role == "SUBJ" and _overlap(row["subject"], row["object"])):
                sentence = f"{sentence[:entity_['start']]}<{sentence[entity_['start']:entity_['end']]}:{role}>{sentence[entity_['end']:]}"
        return sentence

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
