"""KLUE-MRC: extractive reading comprehension with unanswerable questions; EM and ROUGE-W (klue-tasks.md §7)."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from klue_viz.core.lazy import lazy_module
from klue_viz.core.problems import InputError, Problem
from klue_viz.core.results import Frames, ScoredRun
from klue_viz.drawing import markup as mk
from klue_viz.metrics.official import MRC_LAYOUT, Statistics, mean_statistics, mrc_aggregate, mrc_example, normalise_answer
from klue_viz.reading.answers import MARKDOWN_LEAD, PREFIXES, QUOTE_MARKS, Answer, strip_answer
from klue_viz.tasks.base import DrawingDocument, Metric, RecordError, SeenInTraining, Slice, SurfaceForms, Task, TaskFacts, bucket
from klue_viz.tasks.kit import Evidence, Suspect, dump_json, read_json, script_mix, shared_examples, suspect_item
from klue_viz.tasks.probing import ProbeExample, ProbeIO, Span, carried_text
from klue_viz.tasks.surface import surface_table

if TYPE_CHECKING:
    import pandas as pd
else:
    pd = lazy_module("pandas")  # the CLI scores without it

QUESTION_TYPES = {1: "paraphrase", 2: "multi-sentence reasoning", 3: "unanswerable"}
UNANSWERABLE_TYPE = 3  # the question_type of unanswerable questions
#: The correction that says a question has no answer in its passage (as the app shows an unanswerable gold).
NO_ANSWER = "(unanswerable)"
#: Generated texts that say the question has no answer (casefolded): read as the official "".
NO_ANSWER_FORMS = frozenset(("답 없음", "답없음", "정답 없음", "없음", "없습니다", "알 수 없음", "알수없음", "답할 수 없음", "답변 불가",
                             "unanswerable", "no answer", "none", "n/a", "unknown", "cannot be answered", "(unanswerable)"))


#: Phrases that say the passage holds no answer (casefolded, found anywhere in the answer line): a refusal.
REFUSALS = ("답이 없", "답을 찾을 수 없", "답할 수 없", "답변할 수 없", "답을 알 수 없", "정답을 알 수 없", "알 수 없습니다",
            "알 수 없어요", "모르겠", "몰라", "모릅니다", "정보가 없", "나와 있지 않", "나와있지 않", "언급되지 않", "언급이 없",
            "언급되어 있지 않", "지문에 없", "본문에 없", "찾을 수 없", "확인할 수 없", "나오지 않", "정보 없음", "언급 없음",
            "don't know", "do not know", "not in the passage", "not in the context", "not in the text", "no answer",
            "cannot be answered", "can't be answered", "not answerable", "unanswerable", "not mentioned", "does not contain",
            "doesn't contain", "does not mention", "doesn't mention", "cannot find", "can't find", "could not find",
            "couldn't find", "does not say", "doesn't say", "not stated", "no information", "cannot answer", "can't answer",
            "unable to answer", "not possible to answer")
#: A line that only announces the answer below it (`### 정답`, `## Answer`).
HEADINGS = frozenset(("정답", "답", "답변", "최종 답변", "최종 정답", "answer", "final answer", "the answer"))
#: Hedges before the answer, casefolded.
HEDGES = ("아마도 ", "아마 ", "probably ", "perhaps ", "likely ", "it is ", "it's ")
#: Where the answer ends and its explanation starts (the earliest found wins): a sentence end, a dash between spaces,
#: a comma before a reason, a copula (`서울입니다`, `제주도이며,`, `서울일 것입니다`, `서울인 것 같습니다`).
ANSWER_END = re.compile(r"[.!?。](?=\s|$)|\s[-–—]\s|,\s*(?:as|because|since|which|according|see|per|왜냐하면|이는|이유|근거|지문|본문|따라서)\b"
                        r"|(?<=\S)\s?(?:입니다|이며|이고|이다|이에요|예요|이요)(?=[\s,.!]|$)|(?<=\S)(?:일|인)\s*(?:것(?:\s|입|이|으로|같)|겁니|거예|거야)")


def _without_trailing_note(text: str, start: int, end: int) -> int:
    """The end of text[start:end] without a parenthesis after a space at its end: the answer's explanation (`부산 (지문
    셋째 문단)`), where `서울(한국)` keeps its own. Plain string search, linear in the length."""
    if end - start < 3 or text[end - 1] != ")":
        return end
    opening = text.rfind("(", start, end - 1)
    if opening <= start or not text[opening - 1].isspace() or ")" in text[opening + 1:end - 1] or "(" in text[opening + 1:end - 1]:
        return end
    while opening > start and text[opening - 1].isspace():
        opening -= 1
    return opening if opening > start else end


#: How many times an answer is cut and unwrapped (`"부산"입니다. ...` is two): each pass reads the whole answer, so a text
#: of nested wrappings costs at most this many passes.
ANSWER_LAYERS = 4


def refuses(text: str) -> bool:
    """Whether an answer says the passage holds none (`NO_ANSWER_FORMS` as a whole, or a `REFUSALS` phrase)."""
    folded = " ".join(text.casefold().split()).strip(" .!")
    return folded in NO_ANSWER_FORMS or any(phrase in folded for phrase in REFUSALS)


def answer_line(text: str) -> tuple[int, int]:
    """(start, end) of the answer line's content: the first line with an answer prefix, else the first line that is
    neither a heading nor a code fence; Markdown marks, quotes and the prefix peeled off (`strip_answer`)."""
    lines: list[tuple[int, int]] = []
    at = 0
    while at <= len(text):
        stop = text.find("\n", at)
        stop = len(text) if stop < 0 else stop
        lead = MARKDOWN_LEAD.match(text, at, stop)
        a = lead.end() if lead else at
        b = stop
        while b > a and text[b - 1] in "| \t\r":
            b -= 1
        if a < b and not text[a:b].startswith("```"):
            lines.append((a, b))
        at = stop + 1
    for a, b in lines:
        inner = text[a:b].lstrip(QUOTE_MARKS + " \t")
        if PREFIXES.match(inner):
            x, y = strip_answer(text[a:b])
            return a + x, a + y
    for a, b in lines:
        if text[a:b].strip(QUOTE_MARKS + " :：").casefold() not in HEADINGS:
            x, y = strip_answer(text[a:b])
            return a + x, a + y
    return 0, 0


def answer_part(text: str, start: int, end: int) -> tuple[int, int]:
    """The answer inside its line text[start:end]: without a hedge, then cut before its explanation, then its quotes."""
    folded = text[start:end].casefold()
    for hedge in HEDGES:
        if folded.startswith(hedge):
            start += len(hedge)
            break
    for _ in range(ANSWER_LAYERS):
        found = ANSWER_END.search(text, start, end)
        if found is not None and found.start() > start:
            end = found.start()
        end = _without_trailing_note(text, start, end)
        x, y = strip_answer(text[start:end])
        if (start + x, start + y) == (start, end):
            break
        start, end = start + x, start + y
    return start, end


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


ANSWER_COLOURS = {"gold": "#2da44e", "pred": "#fb8f44", "both": "#54aeff"}


def _surface_errors(frames: Frames) -> pd.DataFrame:
    """Errors by surface form: the script of the gold answer (digits, Hangul, Latin...) and the question type, per error."""
    ex = frames.examples
    totals = ex.groupby([ex["answer_script"].astype(str), ex["question_type"].astype(str)]).size().to_dict()
    wrong = ex[~ex["correct"].astype(bool)]
    rows = pd.DataFrame({"form": wrong["answer_script"].astype(str), "type": wrong["question_type"].astype(str),
                         "error": wrong["error_type"].astype(str), "guid": wrong["guid"]})
    return surface_table(rows, "answer type", totals)


def _drawing_document(frames: Frames, guids: list[str]) -> dict:
    """The card of `guids` as a document for klue_viz.drawing.svg (what to draw, no markup)."""
    ex = frames.example(guids[0])
    context, pred = str(ex["context"]), ex["pred"] if isinstance(ex["pred"], str) else ""
    at = context.find(pred) if pred else -1
    segments = answer_segments(context, list(ex["answer_spans"]), (at, at + len(pred)) if at >= 0 else None)
    marks = [{"start": a, "end": b, "colour": ANSWER_COLOURS[side]} for a, b, side in segments if side]
    status = "correct" if ex["correct"] else ("partial" if ex["rouge_w"] > 0 else "wrong")
    notes = [{"side": "gold", "text": str(ex["gold"]), "status": "correct"},
             {"side": "predicted", "text": (pred or "(no answer)") + f"  (EM {ex['em']:.0f}, ROUGE-W {ex['rouge_w']:.1f})", "status": status}]
    legend = [{"text": "gold answer", "colour": ANSWER_COLOURS["gold"]}, {"text": "predicted", "colour": ANSWER_COLOURS["pred"]},
              {"text": "both", "colour": ANSWER_COLOURS["both"]}]
    rows = [{"side": "question", "text": str(ex["question"]), "marks": []}, {"side": "passage", "text": context, "marks": marks}]
    return {"kind": "spans", "rows": rows, "notes": notes, "legend": legend}


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

    def lm_docs(self, example: ProbeExample) -> list[dict[str, Any]]:
        return [{"guid": example.guid, "context": example.texts["context"], "question": example.texts["question"],
                 "answer": next((a["text"] for a in example.record["qa"].get("answers") or []), "")}]


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
    surface = SurfaceForms(_surface_errors)
    svg_document = DrawingDocument(_drawing_document)
    training = SeenInTraining("Answer seen in training", training_keys, unit_training_keys)
    prediction_fields = frozenset({"answer", "prediction_text"})
    keeps_text_as_written = True
    answer_parser_version = 2
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

    def as_written_note(self, gold: list[dict], predictions: list[str]) -> str | None:
        """How many answers are not in NFC, and the EM of all answers read composed: the official normaliser does not
        compose Unicode, so a decomposed answer is scored as written (it does not match its composed gold)."""
        decomposed = [k for k, p in enumerate(predictions) if not unicodedata.is_normalized("NFC", p)]
        if not decomposed:
            return None
        composed = [unicodedata.normalize("NFC", p) for p in predictions]
        em = answer_statistics([normalise_answer(p) for p in composed], [row["gold_norm"] for row in gold])
        composed_em = self.scores_of(em).values["exact_match"]
        return (f"{len(decomposed)} of {len(predictions)} answers are in decomposed Unicode (NFD, as macOS tools write "
                f"Korean): scored as written, as the official scorer does, they do not match a composed gold; "
                f"read composed (NFC), EM would be {composed_em:.2f}")

    def empty_prediction(self, gold: dict) -> str:
        return ""

    def parse_answer(self, text: str, gold: dict) -> Answer:
        """The answer part of a generated text (docs/answer-parsers.md): the first line with an answer prefix (`정답:`,
        `Answer:`), else the first line that is not a heading; without its prefix, quotes, hedge (`아마`, `Probably`), copula
        (`입니다`, `이며`, `일 것 같습니다`) and explanation (after a sentence end, ` - `, a trailing ` (...)`, or `, because`).
        A refusal (`답 없음`, `지문에 답이 없습니다`, `I don't know`, `unanswerable`, an empty text) is the official ""
        (KLUE-MRC has unanswerable questions), so MRC never has an unreadable answer."""
        start, end = answer_line(text)
        if start < end and not refuses(text[start:end]):
            start, end = answer_part(text, start, end)
        core = text[start:end]
        if not core or refuses(core):
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
