"""The answer parsers against a careful reader (issue 27, "The LLM answer reader"): hand-written generated answers in
tests/data/answers/ (Korean and English, Markdown, explanations, hedges, negations, question-first answers,
conflicting lines, refusals), each with what a careful reader makes of it — a label, or "unreadable" where the
answer cannot be read with confidence; for MRC the answer text ("" for a refusal: the question has no answer).

The parser must agree on at least 95% of each task's answers; every remaining disagreement is listed in
docs/answer-parsers.md, and this test holds that list to what the parser does (so it is never stale)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from klue_viz.metrics.official import normalise_answer
from klue_viz.tasks import TASKS

DATA = Path(__file__).parent / "data" / "answers"
DOC = Path(__file__).resolve().parents[1] / "docs" / "answer-parsers.md"
GOAL = 95.0


def _read(task: str) -> list[dict]:
    return [json.loads(line) for line in (DATA / f"{task}.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()]


def parsed(task: str, text: str) -> str:
    """What the task's parser reads: the label name, "unreadable", or for MRC the answer text."""
    found = TASKS[task].parse_answer(text, {})
    if task == "mrc":
        return TASKS[task].parse_prediction(found.fields, {}) if found.readable else "unreadable"
    if not found.readable:
        return "unreadable"
    return TASKS[task].parse_prediction(found.fields, {})["label"]


def agrees(task: str, reader: str, parser: str) -> bool:
    if task == "mrc":  # as the official EM compares answers
        return parser != "unreadable" and normalise_answer(parser) == normalise_answer(reader)
    return reader == parser


def disagreements(task: str) -> list[tuple[str, str, str]]:
    key = "answer" if task == "mrc" else "label"
    out = []
    for item in _read(task):
        found = parsed(task, item["text"])
        if not agrees(task, item[key], found):
            out.append((item["text"], item[key], found))
    return out


def listed_in_doc(task: str) -> set[str]:
    """The texts docs/answer-parsers.md lists as disagreements of a task (JSON strings in its table)."""
    section = DOC.read_text(encoding="utf-8").split("## Where the parser and a careful reader disagree", 1)[1]
    rows = [line for line in section.splitlines() if line.startswith(f"| {task.upper()} |")]
    return {json.loads(re.match(r"\| \w+ \| `(.*?)` \|", row).group(1)) for row in rows}


@pytest.mark.parametrize("task", ["nli", "ynat", "mrc"])
def test_the_parser_agrees_with_a_careful_reader(task):
    items = _read(task)
    assert len(items) >= 140  # hundreds in all, varied
    wrong = disagreements(task)
    agreement = 100.0 * (len(items) - len(wrong)) / len(items)
    assert agreement >= GOAL, f"{task}: {agreement:.1f}% agreement; disagreements:\n" + "\n".join(map(repr, wrong))
    assert {text for text, _, _ in wrong} == listed_in_doc(task)


def test_the_sets_are_varied():
    nli = _read("nli")
    texts = [i["text"] for i in nli]
    assert sum(i["label"] == "unreadable" for i in nli) >= 20
    assert any(re.search(r"[A-Za-z]", t) for t in texts) and any(re.search(r"[가-힣]", t) for t in texts)
    assert any("**" in t or "#" in t for t in texts) and any("\n" in t for t in texts)
    assert sum(i["answer"] == "" for i in _read("mrc")) >= 30  # refusals


def test_long_hostile_answers_are_read():
    """Nothing a user sends may break the parser: 100,000 characters aimed at each of its scans are read (the CPU seconds
    and their growth with the length are in bench/bench_answers.py: linear)."""
    assert parsed("nli", "참이 아니 " * 20000) == "unreadable"  # only what it is not, 20,000 times
    assert parsed("nli", "중립? 아니요. " * 10000) == "unreadable"  # asked and denied: two labels left
    assert parsed("nli", "[" * 50000 + "참" + "]" * 50000) == "entailment"
    assert parsed("ynat", "정답: " * 25000 + "정치") == "정치"
    assert parsed("mrc", "[" * 50000 + "서울" + "]" * 50000).endswith("]")  # eight pairs peeled at most, never a hang
    assert parsed("mrc", "서울" + " " * 50000 + "(" + "가" * 50000) == "서울" + " " * 50000 + "(" + "가" * 50000


def test_a_circled_digit_is_no_label_id():
    """`①` is a digit to str.isdigit but not to int(): it was a ValueError traceback, as an answer and as a label."""
    from klue_viz.scoring.evaluate import evaluate_bytes
    from tests.cases import gold_of, nli
    from tests.conftest import jsonl

    assert parsed("nli", "①") == "unreadable"
    gold = gold_of("nli", nli(["neutral", "neutral"]))
    result = evaluate_bytes(TASKS["nli"], gold, jsonl([{"guid": "klue-nli-v1_dev_00000", "label": "①"},
                                                       {"guid": "klue-nli-v1_dev_00001", "label": "neutral"}]), "circled.jsonl")
    (problem,) = result.problems
    assert problem.line == 1 and "not a NLI label" in problem.message and result.coverage.n_invalid == 1
