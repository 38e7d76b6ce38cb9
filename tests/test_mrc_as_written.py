"""MRC exact match is the official scorer's, byte for byte (issue 27.6): the official normaliser does not compose
Unicode, so an answer written in decomposed jamo (NFD) does not match its composed gold. What composing would change
is a problem line: how many answers needed it and the EM they would give composed. Expected values by hand."""

from __future__ import annotations

import json
import unicodedata

import pytest

from klue_viz.scoring.evaluate import evaluate_bytes
from klue_viz.tasks import get_task
from tests.cases import gold_of, mrc

TASK = get_task("mrc")


def _nfd(text: str) -> str:
    out = unicodedata.normalize("NFD", text)
    assert out != text
    return out


def _run(answers: list[str]) -> bytes:
    return "\n".join(json.dumps({"guid": f"klue-mrc-v1_dev_{k:05d}", "answer": a}, ensure_ascii=False)
                     for k, a in enumerate(answers)).encode("utf-8")


def test_a_decomposed_answer_does_not_match_and_the_composed_em_is_a_problem_line():
    gold = gold_of("mrc", mrc([["서울"], ["부산"], ["대구"], ["광주"]]))
    result = evaluate_bytes(TASK, gold, _run(["서울", _nfd("부산"), _nfd("대구 "), "인천"]), "nfd.jsonl")
    assert result.scores.values["exact_match"] == pytest.approx(25.0)  # only 서울 matches byte for byte
    notes = [p.message for p in result.problems if "NFD" in p.message]
    assert len(notes) == 1 and "2 of 4 answers" in notes[0] and "EM would be 75.00" in notes[0]
    assert result.frames.examples["em"].tolist() == [100.0, 0.0, 0.0, 0.0]
    assert result.frames.examples["pred"].tolist()[1] == _nfd("부산")  # the answer as written


def test_a_composed_file_has_no_such_line_and_scores_as_before():
    gold = gold_of("mrc", mrc([["서울"], ["부산"]]))
    result = evaluate_bytes(TASK, gold, _run(["서울", "부산"]), "nfc.jsonl")
    assert result.scores.values["exact_match"] == pytest.approx(100.0) and not result.problems


def test_a_run_kept_with_its_frames_is_scored_as_written_too():
    from klue_viz.reading.records import read_records
    from klue_viz.scoring.evaluate import evaluate_with_frames

    gold = gold_of("mrc", mrc([["서울"], ["부산"]]))
    data = _run(["서울", _nfd("부산")])
    for read in (None, read_records(data, "kept.jsonl")):  # read once to tell the task, or not
        result = evaluate_with_frames(TASK, gold, data, "kept.jsonl", read=read)
        assert result.scores.values["exact_match"] == pytest.approx(50.0)
        assert any("EM would be 100.00" in p.message for p in result.problems)
