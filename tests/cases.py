"""Tiny gold sets in the official formats, shared by the known-answer, strict, slice and bootstrap tests."""

from __future__ import annotations

import json
import random

import numpy as np

from klue_viz.scoring.evaluate import Gold, RunResult, evaluate_bytes, gold_from_bytes
from klue_viz.tasks import get_task
from tests.conftest import jsonl

OFFICIAL_NAMES = {
    "ynat": "ynat-v1.1_dev.json", "sts": "klue-sts-v1.1_dev.json", "nli": "klue-nli-v1.1_dev.json",
    "ner": "klue-ner-v1.1_dev.tsv", "re": "klue-re-v1.1_dev.json", "dp": "klue-dp-v1.1_dev.tsv",
    "mrc": "klue-mrc-v1.1_dev.json", "wos": "wos-v1.1_dev.json",
}


def gold_text(task: str, content) -> str:
    return content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)


def gold_of(task: str, content) -> Gold:
    """Gold of a task from official-format content (a JSON-able object, or the TSV text)."""
    return gold_from_bytes(get_task(task), gold_text(task, content).encode("utf-8"), OFFICIAL_NAMES[task])


def ynat(labels, sections=None):
    sections = sections or labels
    return [{"guid": f"ynat-v1_dev_{k:05d}", "title": f"제목 {k}", "label": g, "predefined_news_category": s, "url": "", "date": ""}
            for k, (g, s) in enumerate(zip(labels, sections))]


def nli(labels, sources=None):
    sources = sources or ["airbnb"] * len(labels)
    return [{"guid": f"klue-nli-v1_dev_{k:05d}", "source": s, "premise": "전제 문장", "hypothesis": "가설", "gold_label": g}
            for k, (g, s) in enumerate(zip(labels, sources))]


def sts(real, rounded=None, sources=None):
    rounded = rounded or [round(r, 1) for r in real]
    sources = sources or ["airbnb-rtt"] * len(real)
    return [{"guid": f"klue-sts-v1_dev_{k:05d}", "source": s, "sentence1": "가", "sentence2": "나",
             "labels": {"label": lab, "real-label": r, "binary-label": int(r >= 3)}}
            for k, (r, lab, s) in enumerate(zip(real, rounded, sources))]


def re_records(labels):
    sentence = "홍길동은 한국대학교를 졸업했다."
    return [{"guid": f"klue-re-v1_dev_{k:05d}", "sentence": sentence, "label": label, "source": "wikipedia",
             "subject_entity": {"word": "홍길동", "start_idx": 0, "end_idx": 2, "type": "PER"},
             "object_entity": {"word": "한국대학교", "start_idx": 5, "end_idx": 9, "type": "ORG"}} for k, label in enumerate(labels)]


def mrc(questions):
    """One question per item: a list of answer texts ([] = unanswerable)."""
    return {"version": "v1.1", "data": [{"title": "t", "source": "wikipedia", "paragraphs": [{"context": "문맥 " * 10, "qas": [
        {"question": f"질문 {k}", "guid": f"klue-mrc-v1_dev_{k:05d}", "question_type": 3 if not answers else 1,
         "is_impossible": not answers, "answers": [{"text": a, "answer_start": 0} for a in answers]}
        for k, answers in enumerate(questions)]}]}]}


def wos(dialogues):
    """Dialogues as lists of user-turn gold states; guids wos-v1_dev_00000, ..."""
    out = []
    for d, states in enumerate(dialogues):
        turns = []
        for state in states:
            turns += [{"role": "user", "text": "요청", "state": state}, {"role": "sys", "text": "응답"}]
        out.append({"guid": f"wos-v1_dev_{d:05d}", "domains": ["식당"], "dialogue": turns})
    return out


def ner_tsv(sentences) -> str:
    """Official NER TSV from (guid, [(char, tag), ...]) pairs."""
    parts = ["## 칼럼명 : CHAR\tNE_TAG"]
    for guid, pairs in sentences:
        parts.append(f"## {guid}\t" + "".join(c for c, _ in pairs))
        parts.extend(f"{c}\t{t}" for c, t in pairs)
        parts.append("")
    return "\n".join(parts) + "\n"


def dp_tsv(sentences) -> str:
    """Official DP TSV from (guid, [(word, head, deprel), ...]) pairs."""
    parts = ["## 칼럼명 : INDEX\tWORD_FORM\tLEMMA\tPOS\tHEAD\tDEPREL"]
    for guid, words in sentences:
        parts.append(f"## {guid}\t" + " ".join(w for w, _, _ in words))
        parts.extend(f"{k}\t{w}\t{w}\tNNG\t{h}\t{d}" for k, (w, h, d) in enumerate(words, 1))
        parts.append("")
    return "\n".join(parts) + "\n"


def nli_run(gold: Gold, rate: float, seed: int, size: int | None = None) -> tuple[RunResult, np.ndarray]:
    """An NLI run over the first `size` gold pairs, each label replaced by a random one with probability `rate`;
    with its hits (1.0 where right) for a computation by hand."""
    rng = random.Random(seed)
    rows = gold.rows[:size] if size else gold.rows
    preds = [r["gold"] if rng.random() > rate else rng.choice(["entailment", "neutral", "contradiction"]) for r in rows]
    result = evaluate_bytes(get_task("nli"), gold, jsonl({"guid": r["guid"], "label": p} for r, p in zip(rows, preds)), "p.jsonl")
    return result, np.array([r["gold"] == p for r, p in zip(rows, preds)], dtype=float)
