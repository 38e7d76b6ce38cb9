"""The suspect queue and the example orders, field by field, on runs and suspects made by hand (issue 14's mutation run:
each test pins what a survivor showed untested; every expected value is worked out by hand in the test)."""

from __future__ import annotations

import pytest

from klue_viz.discovery.sorting import FILE_ORDER, sort_examples, sort_keys, suspect_ranks
from klue_viz.discovery.suspects import evidence_details, evidence_frame, queue_frame, queue_order, suspects, tie_keys, with_text
from klue_viz.scoring.evaluate import evaluate_bytes
from klue_viz.tasks import get_task
from klue_viz.tasks.kit import Evidence, Suspect
from tests.cases import gold_of, nli, wos, ynat
from tests.conftest import jsonl

NLI = ("entailment", "neutral", "contradiction")


def _suspect(guid: str = "g", score: float = 1.0, turn: int | None = None, confidence: float | None = None,
             quality: float | None = None, runs: object = ("run",), extra: dict | None = None) -> Suspect:
    return Suspect(guid, turn, "label", "entailment", "neutral", score, Evidence(1, 1, runs, extra=extra or {}),  # type: ignore[arg-type]
                   confidence=confidence, label_quality=quality)


def _nli_runs() -> tuple[object, list]:
    """Three NLI pairs (gold entailment, entailment, neutral); two runs with probabilities that both say
    contradiction on the first two and are right on the third."""
    task = get_task("nli")
    gold = gold_of("nli", nli(["entailment", "entailment", "neutral"]))
    guids = [row["guid"] for row in gold.rows]
    a = [[0.1, 0.2, 0.7], [0.2, 0.2, 0.6], [0.1, 0.8, 0.1]]
    b = [[0.3, 0.2, 0.5], [0.4, 0.1, 0.5], [0.2, 0.7, 0.1]]
    runs = [evaluate_bytes(task, gold, jsonl({"guid": g, "label": NLI[max(range(3), key=p.__getitem__)], "probs": p}
                                             for g, p in zip(guids, probs)), name)
            for probs, name in ((a, "a.jsonl"), (b, "b.jsonl"))]
    return task, runs


def test_the_queue_sets_each_suspects_tie_keys_and_marks_it_queued():
    task, runs = _nli_runs()
    found = suspects(task, runs)
    assert [s.guid for s in found] == ["klue-nli-v1_dev_00000", "klue-nli-v1_dev_00001"]
    first, second = found
    # the runs' mean probability of the proposal (contradiction), and cleanlab's self-confidence: the mean p(gold)
    assert first.confidence == pytest.approx((0.7 + 0.5) / 2) and second.confidence == pytest.approx((0.6 + 0.5) / 2)
    assert first.label_quality == pytest.approx((0.1 + 0.3) / 2) and second.label_quality == pytest.approx((0.2 + 0.4) / 2)
    # votes (each run's p(proposed)) plus 1 - label quality
    assert first.score == pytest.approx(0.7 + 0.5 + 1 - 0.2) and second.score == pytest.approx(0.6 + 0.5 + 1 - 0.3)
    assert first.queued is True
    record = first.to_dict()
    assert record["confidence"] == pytest.approx(0.6) and record["label_quality"] == pytest.approx(0.2)


def test_the_queue_keeps_a_hundred_by_default_all_with_no_top_and_top_cuts():
    task = get_task("nli")
    gold = gold_of("nli", nli(["entailment"] * 101))
    run = evaluate_bytes(task, gold, jsonl({"guid": row["guid"], "label": "neutral"} for row in gold.rows), "run.jsonl")
    assert len(suspects(task, [run])) == 100
    assert len(suspects(task, [run], top=None)) == 101
    assert len(suspects(task, [run], top=0)) == 101  # 0 is no limit, as None
    assert [s.guid for s in suspects(task, [run], top=2)] == ["klue-nli-v1_dev_00000", "klue-nli-v1_dev_00001"]
    assert suspects(task, []) == []


def test_tie_keys_average_the_runs_that_gave_a_probability():
    runs = {"a": {"label": "neutral", "p_proposed": 0.6}, "b": {"label": "neutral", "p_proposed": 0.9}, "c": {"label": "neutral"},
            "d": "neutral", "e": {"label": "neutral", "p_proposed": None}}
    confidence, quality = tie_keys(_suspect(runs=runs, extra={"cleanlab": {"label_quality": 0.25, "flagged": True}}))
    assert confidence == pytest.approx(0.75) and quality == 0.25
    assert isinstance(quality, float)
    assert tie_keys(_suspect(runs=["a", "b"])) == (None, None)  # runs named only (NER, DP, WoS), no cleanlab
    assert tie_keys(_suspect(runs={"a": {"label": "neutral"}})) == (None, None)


def test_queue_order_breaks_ties_by_label_quality_then_turn():
    # same score and confidence: a label quality before none; then lower quality first
    tied = [_suspect("a", confidence=0.5), _suspect("b", confidence=0.5, quality=0.4), _suspect("c", confidence=0.5, quality=0.1)]
    assert [s.guid for s in sorted(tied, key=queue_order)] == ["c", "b", "a"]
    # same everything but the turn: a unit without a turn first, then by turn
    turns = [_suspect("w", turn=2), _suspect("w", turn=0), _suspect("w", turn=None), _suspect("w", turn=1)]
    assert [s.turn for s in sorted(turns, key=queue_order)] == [None, 0, 1, 2]


def test_with_text_finds_a_wos_turn_and_leaves_an_unknown_guid_empty():
    task = get_task("wos")
    gold = gold_of("wos", wos([[["식당-종류-한식"], ["식당-종류-한식"]]]))
    found = [Suspect("wos-v1_dev_00000", 1, "slot", "식당-종류-한식", "식당-종류-양식", 1.0, Evidence(1, 1, ["run"])),
             Suspect("wos-v1_dev_09999", 0, "slot", "식당-종류-한식", "none", 1.0, Evidence(1, 1, ["run"]))]
    texted = with_text(task, gold.rows, found)
    assert texted[0].text == "system: 응답\nuser (turn 1): 요청\nslot: 식당-종류-한식 -> 식당-종류-양식"
    assert texted[1].text == ""


def test_queue_frame_columns_and_rows():
    found = [Suspect("x", None, "label", "entailment", "neutral", 2.5, Evidence(2, 3, ["a", "b"]), confidence=0.75, label_quality=0.125,
                     text="premise: p"),
             Suspect("y", None, "entity", 3.0, 4.5, 1.0, Evidence(1, 1, ["a"]))]
    frame = queue_frame(found)
    assert list(frame.columns) == ["rank", "guid", "unit", "text", "gold", "proposed", "score", "confidence", "label quality", "runs agreeing"]
    rows = frame.to_dict("records")
    assert rows[0] == {"rank": 1, "guid": "x", "unit": "label", "text": "premise: p", "gold": "entailment", "proposed": "neutral",
                       "score": 2.5, "confidence": 0.75, "label quality": 0.125, "runs agreeing": "2/3"}
    assert {k: v for k, v in rows[1].items() if k not in ("confidence", "label quality")} == {
        "rank": 2, "guid": "y", "unit": "entity", "text": "", "gold": "3.0", "proposed": "4.5", "score": 1.0, "runs agreeing": "1/1"}
    assert frame["confidence"].isna().tolist() == [False, True] and frame["label quality"].isna().tolist() == [False, True]
    empty = queue_frame([])  # no suspect: the table's columns all the same, no rows
    assert list(empty.columns) == ["rank", "guid", "unit", "text", "gold", "proposed", "score", "confidence", "label quality", "runs agreeing"]
    assert empty.empty
    wos_frame = queue_frame([Suspect("d", 4, "slot", "a", "b", 1.0, Evidence(1, 1, ["a"]))])
    assert list(wos_frame.columns)[:4] == ["rank", "guid", "turn", "unit"] and wos_frame["turn"].tolist() == [4]


def test_evidence_details_reads_lists_dicts_and_none():
    table = evidence_details(_suspect(extra={"spans": [1, None, 0.5], "scores": {"x": 1, "y": 0.25}, "note": None, "pair": ("a", "b")}))
    assert dict(zip(table["evidence"], table["value"])) == {"runs agreeing": "1 of 1", "spans": "1, , 0.500", "scores": "x: 1, y: 0.250",
                                                          "note": "", "pair": "a, b"}


def test_evidence_frame_one_row_per_run():
    runs = {"a": {"label": "neutral", "confidence": 0.75, "p_gold": 0.125, "p_proposed": 0.75},
            "b": {"label": None, "confidence": None, "p_gold": 0.5, "p_proposed": 0.25}}
    frame = evidence_frame(_suspect(runs=runs))
    assert list(frame.columns) == ["run", "answer", "confidence", "p(gold)", "p(proposed)"]
    assert frame["run"].tolist() == ["a", "b"] and frame["answer"].tolist() == ["neutral", ""]
    assert frame["confidence"].iloc[0] == 0.75 and frame["confidence"].isna().tolist() == [False, True]
    assert frame["p(gold)"].tolist() == [0.125, 0.5] and frame["p(proposed)"].tolist() == [0.75, 0.25]
    # runs named only: each answered the proposal; columns without any value are left out
    named = evidence_frame(_suspect(runs=["r1", "r2"]))
    assert list(named.columns) == ["run", "answer"] and named.to_dict("records") == [{"run": "r1", "answer": "neutral"},
                                                                                    {"run": "r2", "answer": "neutral"}]
    # a run that answered with a bare value (STS's score)
    scored = evidence_frame(_suspect(runs={"a": 3.5, "b": {"label": 2.0, "confidence": 0.5}}))
    assert list(scored.columns) == ["run", "answer", "confidence"] and scored["answer"].tolist() == ["3.5", "2.0"]
    assert scored["confidence"].isna().tolist() == [True, False] and scored["confidence"].iloc[1] == 0.5


def _ynat_run(probs: bool = True) -> tuple[object, object]:
    """Four YNAT titles: 0 right (confidence 0.9), 1 wrong (0.6), 2 right (0.95), 3 wrong (0.8)."""
    task = get_task("ynat")
    labels = list(task.labels)
    gold = gold_of("ynat", ynat(["IT과학", "경제", "사회", "정치"]))
    answers = [("IT과학", 0.9), ("사회", 0.6), ("사회", 0.95), ("경제", 0.8)]
    records = []
    for row, (label, p) in zip(gold.rows, answers):
        record: dict = {"guid": row["guid"], "label": label}
        if probs:
            record["probs"] = [p if name == label else (1 - p) / 6 for name in labels]
        records.append(record)
    return task, evaluate_bytes(task, gold, jsonl(records), "run.jsonl")


def _order(task, run, key: str, shown=None) -> list[int]:
    ex = run.frames.examples
    ordered = sort_examples(task, run.frames, ex if shown is None else shown, key)
    return [int(g[-1]) for g in ordered["guid"]]


def test_each_shared_order_by_hand():
    task, run = _ynat_run()
    assert _order(task, run, "least confident first") == [1, 3, 0, 2]
    assert _order(task, run, "most confident first") == [2, 0, 3, 1]
    assert _order(task, run, "confidently wrong first") == [3, 1, 0, 2]  # the wrong by confidence, then the right in file order
    assert _order(task, run, "wrong first") == [1, 3, 0, 2]
    assert _order(task, run, FILE_ORDER) == [0, 1, 2, 3]
    keys = sort_keys(task, run.frames)
    assert keys[FILE_ORDER](run.frames).tolist() == [0, 1, 2, 3]
    assert keys[FILE_ORDER](run.frames).index.equals(run.frames.examples.index)
    assert keys["wrong first"](run.frames).tolist() == [1, 0, 1, 0]
    assert keys["most confident first"](run.frames).tolist() == pytest.approx([-0.9, -0.6, -0.95, -0.8])
    # a subset keeps its own rows, ordered among themselves
    assert _order(task, run, "most confident first", run.frames.examples.iloc[[1, 3]]) == [3, 1]


def test_a_run_without_probabilities_has_no_confidence_orders():
    task, run = _ynat_run(probs=False)
    assert list(sort_keys(task, run.frames)) == [FILE_ORDER, "wrong first"]


def test_suspect_ranks_of_wos_turns():
    task = get_task("wos")
    queue = [Suspect("wos-v1_dev_00000", 1, "slot", "a", "b", 2.0, Evidence(1, 1, ["r"])),
             Suspect("wos-v1_dev_00000", 0, "slot", "a", "b", 1.5, Evidence(1, 1, ["r"])),
             Suspect("wos-v1_dev_00000", 1, "slot", "c", "d", 1.0, Evidence(1, 1, ["r"]))]
    assert suspect_ranks(task, queue) == {"wos-v1_dev_00000-1": 1, "wos-v1_dev_00000-0": 2}
