"""Suspects carry the text of their unit (CLI and queue table), and ties in the queue are broken by stated keys."""

from __future__ import annotations

from klue_viz.cli.main import main
from klue_viz.discovery.suspects import queue_frame, queue_order, suspects
from klue_viz.scoring.evaluate import evaluate_bytes
from klue_viz.tasks import get_task
from klue_viz.tasks.kit import Evidence, Suspect
from tests.cases import dp_tsv, gold_of, ner_tsv, nli
from tests.conftest import jsonl


def item(guid, score, confidence=None, quality=None):
    return Suspect(guid, None, "label", "yes", "no", score, Evidence(1, 1, ["run"]), confidence=confidence, label_quality=quality, queued=True)


def test_ties_are_broken_by_confidence_then_label_quality():
    queue = [item("a", 2.0), item("b", 2.0, 0.7, 0.3), item("c", 2.0, 0.9, 0.5), item("d", 2.0, 0.7, 0.1), item("e", 3.0)]
    assert [s.guid for s in sorted(queue, key=queue_order)] == ["e", "c", "d", "b", "a"]


def test_ner_suspect_marks_its_span_and_the_cli_prints_it(tmp_path, capsys):
    sentence = "김철수는 서울에 산다"
    tags = ["B-PS", "I-PS", "I-PS", "O", "O", "O", "O", "O", "O", "O", "O"]
    gold_text = ner_tsv([("klue-ner-v1_dev_00000-wikitree", list(zip(sentence, tags)))])
    gold_path = tmp_path / "klue-ner-v1.1_dev.tsv"
    gold_path.write_text(gold_text, encoding="utf-8")
    pred = {"guid": "klue-ner-v1_dev_00000-wikitree", "entities": [{"start": 0, "end": 3, "label": "PS"}, {"start": 5, "end": 7, "label": "LC"}]}
    pred_path = tmp_path / "run.jsonl"
    pred_path.write_bytes(jsonl([pred]))
    assert main(["suspects", "--task", "ner", "--gold", str(gold_path), "--pred", str(pred_path)]) == 0
    printed = capsys.readouterr().out
    assert "김철수는 <서울:LC>에 산다" in printed
    assert "span 5-7 '서울': gold 5-7:O -> proposed 5-7:LC" in printed


def test_dp_suspect_names_the_word_and_its_heads():
    task = get_task("dp")
    gold = gold_of("dp", dp_tsv([("klue-dp-v1_dev_00000_wikitree", [("나는", 3, "NP_SBJ"), ("밥을", 3, "NP_OBJ"), ("먹었다", 0, "VP")])]))
    run = jsonl([{"guid": "klue-dp-v1_dev_00000_wikitree", "head": [2, 3, 0], "deprel": ["NP_SBJ", "NP_OBJ", "VP"]}])
    result = evaluate_bytes(task, gold, run, "run.jsonl")
    found = suspects(task, [result], gold_rows=gold.rows)
    assert found[0].text == "나는 밥을 먹었다\nword 1 '나는': gold head 3 '먹었다' NP_SBJ -> proposed head 2 '밥을' NP_SBJ"


def test_nli_queue_table_shows_the_pair():
    task = get_task("nli")
    records = nli(["entailment", "neutral"])
    records[1]["premise"], records[1]["hypothesis"] = "비가 온다", "날씨가 맑다"
    gold = gold_of("nli", records)
    run = jsonl([{"guid": r["guid"], "label": "contradiction"} for r in records])
    found = suspects(task, [evaluate_bytes(task, gold, run, "a.jsonl"), evaluate_bytes(task, gold, run, "b.jsonl")], gold_rows=gold.rows)
    table = queue_frame(found).set_index("guid")
    assert table.loc["klue-nli-v1_dev_00001", "text"] == "premise: 비가 온다\nhypothesis: 날씨가 맑다"
