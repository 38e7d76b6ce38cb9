"""KLUE-MRC: extractive reading comprehension with unanswerable questions; EM and ROUGE-W (klue-tasks.md §7)."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from klue_viz.core.lazy import lazy_module
from klue_viz.core.problems import InputError, Problem
from klue_viz.core.results import Frames, ScoredRun
from klue_viz.drawing import markup as mk
from klue_viz.metrics.official import MRC_LAYOUT, Statistics, mean_statistics, mrc_aggregate, mrc_example, normalise_answer
from klue_viz.reading.answers import Answer, first_line, strip_answer
from klue_viz.tasks.base import Metric, RecordError, SeenInTraining, Slice, Task, TaskFacts, bucket
from klue_viz.tasks.kit import Evidence, Suspect, dump_json, read_json, script_mix, shared_examples, suspect_item
from klue_viz.tasks.probing import ProbeExample, ProbeIO, Span, carried_text

if TYPE_CHECKING:
    import pandas as pd
else:
    pd = lazy_module("pandas")  # the CLI scores without it

QUESTION_TYPES = {1: "paraphrase", 2: "multi-sentence reasoning", 3: "unanswerable"}
UNANSWERABLE_TYPE = 3  # the question_type of unanswerable questions
#: The correction that says a question has no answer in its passage (as the app shows an unanswerable gold).
NO_ANSWER = "(unanswerable)"
#: Generated texts that say the question has no answer (casefolded): read as the official "".
NO_ANSWER_FORMS = frozenset(("답 없음", "답없음", "정답 없음", "없음", "알 수 없음", "알수없음", "답할 수 없음", "답변 불가", "unanswerable",
                             "no answer", "none", "n/a", "unknown", "cannot be answered", "(unanswerable)"))


def answer_segments(context: str, gold_spans: list[tuple[int, int]], pred_span: tuple[int, int] | None) -> list[tuple[int, int, str]]:
    """Context cut into pieces marked gold, pred, both or plain, so overlap can be drawn."""
    marks = np.zeros(len(context) + 1, dtype=int)
    for a, b in gold_spans:
        marks[a:b] |= 1
    if pred_span:
        marks[pred_span[0]:pred_span[1]] |= 2
    names = {0: "", 1: "gold", 2: "pred", 3: "both"}
    out, start = [], 0
    for k in range(1, len(context) + 1):
        if k == len(context) or marks[k] != marks[start]:
            out.append((start, k, names[int(marks[start])]))
            start = k
    return out


def answer_statistics(pred_norm: list[str], gold_norm: list[list[str]]) -> Statistics:
    """Per question: exact match and ROUGE-W of the normalised answer against its best gold answer."""
    pairs = [mrc_example(p, golds) for p, golds in zip(pred_norm, gold_norm)]
    return mean_statistics(MRC_LAYOUT, {"exact_match": np.array([em for em, _ in pairs], dtype=np.float64),
                                        "rouge_w": np.array([rouge for _, rouge in pairs], dtype=np.float64)}, mrc_aggregate)


def training_keys(rows: list[dict]) -> Iterator[str]:
    """Every gold answer of the training questions."""
    return (answer for row in rows for answer in row["answers"])


def unit_training_keys(units: pd.DataFrame) -> pd.Series:
    """A question's first gold answer; None for an unanswerable one."""
    return units["answers"].map(lambda a: a[0] if len(a) else None)


class MrcProbe(ProbeIO):
    """MRC questions for the suites: context and question are the texts, the gold answers the spans an edit moves (an
    edit never cuts one; a name inside an answer is swapped with it). A perturbed question is written as its own
    paragraph, since its context is its own. An INV case compares answers as the official metric normalises them,
    the source's answer carried through the edits."""

    tests = ("name-swap", "spacing", "typo", "number-format", "distractor")
    edit_fields = ("context", "question")
    file_name = "klue-mrc-v1.1_dev.json"
    lm_eval = {"output_type": "generate_until",
               "doc_to_text": "지문: {{context}}\n질문: {{question}}\n지문에서 답을 찾아 그대로 쓰세요. 답이 없으면 '없음'이라고 쓰세요.\n답:",
               "doc_to_target": "{{answer}}", "generation_kwargs": {"until": ["\n"], "max_gen_toks": 64}}

    def read(self, text: str, name: str) -> tuple[list[ProbeExample], list[Problem]]:
        data = read_json(text, name)
        if not isinstance(data, dict) or not isinstance(data.get("data"), list):
            raise InputError(f"{name}: expected the official KLUE-MRC JSON object with a 'data' list of documents")
        examples, problems = [], []
        for document in data["data"]:
            head = {k: v for k, v in document.items() if k != "paragraphs"}
            for paragraph in document.get("paragraphs", []):
                for qa in paragraph.get("qas", []):
                    try:
                        context, question, guid = str(paragraph["context"]), str(qa["question"]), str(qa["guid"])
                        spans = tuple(Span("context", int(a["answer_start"]), int(a["answer_start"]) + len(str(a["text"])), "answer")
                                      for a in qa.get("answers") or [])
                    except (KeyError, TypeError, ValueError) as err:
                        problems.append(Problem(f"question without field {err}", guid=qa.get("guid"), file=name))
                        continue
                    examples.append(ProbeExample(guid, {"context": context, "question": question}, spans, None,
                                                 {"document": head, "qa": qa}))
        return examples, problems

    def rebuilt(self, example: ProbeExample, guid: str, texts: dict[str, str], spans: tuple[Span, ...], label: Any) -> ProbeExample:
        qa = {k: v for k, v in example.record["qa"].items() if k != "plausible_answers"}
        qa.update(guid=guid, question=texts["question"],
                  answers=[{"text": texts["context"][s.start:s.end], "answer_start": s.start} for s in spans])
        return ProbeExample(guid, texts, spans, label, {"document": example.record["document"], "qa": qa, "context": texts["context"]})

    def write(self, examples: Sequence[ProbeExample]) -> str:
        documents = [{**e.record["document"], "paragraphs": [{"context": e.record.get("context", e.texts["context"]), "qas": [e.record["qa"]]}]}
                     for e in examples]
        return dump_json({"version": "v1.1", "data": documents})

    def answer(self, prediction: Any) -> Hashable:
        return str(prediction)

    def same(self, source: Hashable, perturbed: Hashable, edits: Sequence[dict[str, Any]]) -> bool:
        return normalise_answer(carried_text(str(source), edits)).replace(" ", "") == normalise_answer(str(perturbed)).replace(" ", "")

    def lm_doc(self, example: ProbeExample) -> dict[str, Any]:
        return {"guid": example.guid, "context": example.texts["context"], "question": example.texts["question"],
                "answer": next((a["text"] for a in example.record["qa"].get("answers") or []), "")}


class Mrc(Task):
    facts = TaskFacts(
        name="mrc",
        title="KLUE-MRC reading comprehension",
        guid_prefix="klue-mrc-v1",
        metrics=(Metric("exact_match", "Exact match"), Metric("rouge_w", "ROUGE-W")),
        hf_config="mrc",
        official_folder="klue-mrc-v1.1",
        slices=(
            Slice("question_type", "Question type"),
            Slice("source", "Source"),
            Slice("news_category", "News category"),
            Slice("answer_length", "Gold answer length"),
            Slice("answer_script", "Scripts in the gold answer (Hangul, Hanja, Latin, digits)"),
            Slice("context_length", "Passage length"),
        ),
        signature_fields=frozenset({"answer", "prediction_text"}),
        bare_value_field="answer",
        unit="question",
        text_columns=("question", "context", "pred"),
        confusion_label="answerability / outcome",
        error_tags=("wrong sentence", "partial span", "should be unanswerable", "paraphrase missed", "needs world knowledge", "gold error"),
    )
    training = SeenInTraining("Answer seen in training", training_keys, unit_training_keys)
    prediction_fields = frozenset({"answer", "prediction_text"})
    answer_parser_version = 1
    probe = MrcProbe()

    def read_official_json(self, data: Any, name: str) -> tuple[list[dict], list[Problem]]:
        if not isinstance(data, dict) or not isinstance(data.get("data"), list):
            raise InputError(f"{name}: expected the official KLUE-MRC JSON object with a 'data' list of documents")
        rows, problems = [], []
        for document in data["data"]:
            for paragraph in document.get("paragraphs", []):
                for qa in paragraph.get("qas", []):
                    try:
                        rows.append(self._row(document, paragraph["context"], qa, list(qa.get("answers") or [])))
                    except (KeyError, TypeError, ValueError) as err:
                        problems.append(Problem(f"question without field {err}", guid=qa.get("guid"), file=name))
        return rows, problems

    def looks_like_hf(self, record: dict) -> bool:
        return "context" in record and "paragraphs" not in record

    def rows_from_hf(self, records: Iterable[dict], split: str = "dev") -> tuple[list[dict], list[Problem]]:
        rows, problems = [], []
        for k, record in enumerate(records):
            try:
                answers = record.get("answers") or {"text": [], "answer_start": []}
                listed = [{"text": t, "answer_start": s} for t, s in zip(answers["text"], answers["answer_start"])]
                if record.get("is_impossible"):
                    listed = []  # the HF loader appends plausible_answers; an unanswerable gold is "" (klue-tasks.md convention 4)
                rows.append(self._row(record, record["context"], record, listed))
            except (KeyError, TypeError, ValueError) as err:
                problems.append(Problem(f"gold record #{k + 1}: missing field {err}", guid=record.get("guid")))
        return rows, problems

    @staticmethod
    def _row(document: dict, context: str, qa: dict, answers: list[dict]) -> dict:
        texts = [str(a["text"]) for a in answers]
        spans = [(int(a["answer_start"]), int(a["answer_start"]) + len(str(a["text"]))) for a in answers]
        qtype = int(qa.get("question_type") or 0)
        return {
            "guid": str(qa["guid"]),
            "title": str(document.get("title") or ""),
            "source": str(document.get("source") or "(unknown)"),
            "news_category": str(document.get("news_category") or "(none)"),
            "context": str(context),
            "question": str(qa["question"]),
            "question_type": QUESTION_TYPES.get(qtype, str(qtype)),
            "is_impossible": bool(qa.get("is_impossible", False)) or not texts,
            "answers": texts,
            "answer_spans": spans,
            "gold_norm": [normalise_answer(t) for t in texts] or [""],
        }

    def parse_prediction(self, record: dict, gold: dict) -> str:
        value = record.get("answer", record.get("prediction_text"))
        if value is None:
            raise RecordError("missing field 'answer' (the answer text; \"\" for no answer)")
        if not isinstance(value, (str, int, float)):
            raise RecordError(f"answer must be text, found {type(value).__name__}")
        return str(value)

    def empty_prediction(self, gold: dict) -> str:
        return ""

    def parse_answer(self, text: str, gold: dict) -> Answer:
        """The free text is the answer: its first line, without prefix, quotes or a closing `입니다`; a text saying there
        is no answer (`답 없음`, `unanswerable`, an empty text) is the official "" (so MRC never has an unreadable answer)."""
        start, end = strip_answer(text)
        end = first_line(text, start, end)
        line_start, line_end = strip_answer(text[start:end])  # the line's own quotes and period (`"부산"` before an explanation)
        start, end = start + line_start, start + line_end
        core = text[start:end].rstrip(" .")
        if core.endswith("입니다"):
            core = core[:-3].rstrip()
        end = start + len(core)
        if not core or core.casefold() in NO_ANSWER_FORMS:
            return Answer(text, {"answer": ""}, (start, end) if core else None)
        return Answer(text, {"answer": core}, (start, end))

    def build_frames(self, gold: pd.DataFrame, predictions: list) -> Frames:
        frame = gold.copy()
        frame["pred"] = list(predictions)
        pred_norm = [normalise_answer(p) for p in predictions]
        frame["pred_norm"] = pred_norm
        pairs = [mrc_example(p, golds) for p, golds in zip(pred_norm, frame["gold_norm"])]
        frame["em"] = [100.0 * em for em, _ in pairs]
        frame["rouge_w"] = [100.0 * rouge for _, rouge in pairs]
        frame["correct"] = frame["em"] == 100.0
        answerable, predicted = ~frame["is_impossible"], frame["pred_norm"] != ""
        frame["error_type"] = np.select(
            [frame["correct"], answerable & ~predicted, ~answerable & predicted, frame["rouge_w"] > 0],
            ["correct", "answered nothing", "should be unanswerable", "partial overlap"],
            "wrong span",
        )
        frame["gold"] = [" | ".join(a) if a else "(unanswerable)" for a in frame["answers"]]
        frame["answer_length"] = bucket(pd.Series([len(a[0]) if a else 0 for a in frame["answers"]], index=frame.index),
                                        [-1, 0, 5, 10, 20, float("inf")], "chars").str.replace("0-0 chars", "unanswerable")
        frame["answer_script"] = pd.array([script_mix(a[0]) if a else "unanswerable" for a in frame["answers"]], dtype="string")
        frame["context_length"] = bucket(frame["context"].str.len(), [0, 500, 1000, 1500, float("inf")], "chars")
        return Frames(frame)

    def statistics_columns(self) -> dict[str, tuple[str, ...]]:
        return {"examples": ("pred_norm", "gold_norm", "rouge_w")}

    def statistics(self, frames: Frames) -> Statistics:
        ex = frames.examples
        return answer_statistics(ex["pred_norm"].tolist(), ex["gold_norm"].tolist())

    def row_statistics(self, gold: list[dict], predictions: list[str]) -> Statistics:
        return answer_statistics([normalise_answer(p) for p in predictions], [row["gold_norm"] for row in gold])

    def confusion(self, frames: Frames) -> pd.DataFrame:
        ex = frames.examples
        gold = np.where(ex["is_impossible"], "unanswerable", "answerable")
        return pd.DataFrame({"guid": ex["guid"], "gold": gold, "pred": ex["error_type"]})

    def render(self, frames: Frames, guid: str) -> str:
        ex = frames.example(guid)
        context, pred = ex["context"], ex["pred"]
        at = context.find(pred) if pred else -1
        pred_span = (at, at + len(pred)) if at >= 0 else None
        pieces = []
        for a, b, side in answer_segments(context, list(ex["answer_spans"]), pred_span):
            text = mk.esc(context[a:b])
            pieces.append(f'<span class="kv-answer" data-side="{side}">{text}</span>' if side else text)
        status = "correct" if ex["correct"] else ("partial" if ex["rouge_w"] > 0 else "wrong")
        flag = " · " + mk.badge("unanswerable", "extra") if ex["is_impossible"] else ""
        body = [
            mk.row("question", f'<b>{mk.esc(ex["question"])}</b> <span class="kv-kv">({mk.esc(ex["question_type"])}){flag}</span>'),
            mk.row("gold", mk.badge(ex["gold"], "correct")),
            mk.row("pred", mk.badge(pred if pred else "(no answer)", status)
                   + f'<span class="kv-kv">EM {ex["em"]:.2f} · ROUGE-W {ex["rouge_w"]:.2f}'
                   + ("" if pred_span or not pred else " · not found verbatim in the passage") + "</span>"),
            mk.row("passage", f'<span class="kv-kv">{mk.esc(ex["title"])} — <span class="kv-legend" data-side="gold">gold</span> '
                              f'<span class="kv-legend" data-side="pred">predicted</span> <span class="kv-legend" data-side="both">both</span></span>'
                              f'<div style="line-height:1.8">{"".join(pieces)}</div>'),
        ]
        return mk.example("".join(body), guid)

    # ---- discovery --------------------------------------------------------------------------
    def example_scores(self, frames: Frames) -> pd.Series:
        """The question's ROUGE-W on 0..1."""
        return frames.examples["rouge_w"] / 100.0

    def sort_orders(self) -> dict[str, Callable[[Frames], pd.Series]]:
        return {"lowest ROUGE-W first": lambda f: f.examples["rouge_w"]}

    def suspect_text(self, row: dict, suspect: Suspect) -> str:
        """The question, its gold answers, and the context around the first gold answer (or its start)."""
        spans = row.get("answer_spans") or []
        start = max(spans[0][0] - 80, 0) if spans else 0
        context = row["context"][start:start + 240]
        answers = " | ".join(row["answers"]) or "(unanswerable)"
        after = "…" if start + 240 < len(row["context"]) else ""
        return f"question: {row['question']}\ngold answers: {answers}\ncontext: {'…' if start else ''}{context}{after}"

    def find_suspects(self, results: Sequence[ScoredRun]) -> list[Suspect]:
        """Questions every run answers alike (the same normalised answer, or none) and wrongly: that answer is proposed."""
        frames, shared = shared_examples(results)
        out = []
        for guid in shared:
            answers = [f.at[guid, "pred"] for f in frames]
            norms = {f.at[guid, "pred_norm"] for f in frames}
            if len(norms) != 1 or any(f.at[guid, "correct"] for f in frames):
                continue
            evidence = Evidence(len(results), len(results), {r.run: a for r, a in zip(results, answers)})
            out.append(suspect_item(guid, "answer", frames[0].at[guid, "gold"], answers[0] or NO_ANSWER, len(results), evidence))
        return out

    def write_patch(self, official_text: str, name: str, corrections: dict[tuple[str, int | None], list[str]],
                    problems: list[Problem]) -> tuple[str, int]:
        """A corrected answer must occur in the passage (its first occurrence is the span); `(unanswerable)` (NO_ANSWER)
        makes the question unanswerable, its old answers kept as distractors."""
        data = read_json(official_text, name)
        documents = []
        for document in data.get("data", []):
            paragraphs = []
            for paragraph in document.get("paragraphs", []):
                qas = []
                for qa in paragraph.get("qas", []):
                    items = corrections.get((str(qa.get("guid")), None))
                    if not items:
                        continue
                    answer = items[-1]
                    if answer == NO_ANSWER:  # the official form of an unanswerable question: no answers, the old ones as distractors
                        qas.append({**qa, "answers": [], "plausible_answers": qa.get("answers") or qa.get("plausible_answers", []),
                                    "is_impossible": True, "question_type": UNANSWERABLE_TYPE})
                        continue
                    start = paragraph["context"].find(answer)
                    if start < 0:
                        problems.append(Problem(f"corrected answer {answer[:40]!r} is not in the passage", guid=qa.get("guid"), file=name))
                        continue
                    answerable = {k: v for k, v in qa.items() if k != "plausible_answers"}  # distractors belong to unanswerable questions
                    qas.append({**answerable, "answers": [{"text": answer, "answer_start": start}], "is_impossible": False})
                if qas:
                    paragraphs.append({**paragraph, "qas": qas})
            if paragraphs:
                documents.append({**document, "paragraphs": paragraphs})
        return dump_json({**{k: v for k, v in data.items() if k != "data"}, "data": documents}), sum(len(p["qas"]) for d in documents for p in d["paragraphs"])


TASK = Mrc()
