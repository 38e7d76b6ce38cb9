"""Example orders: each key against values worked out independently from the frames or by hand."""

from __future__ import annotations

import pytest

from klue_viz.discovery.sorting import (
    FILE_ORDER,
    SUSPECT_RANK,
    sort_examples,
    sort_keys,
    suspect_ranks,
)
from klue_viz.reading.demo import DEMO_BENCHMARK, demo_runs
from klue_viz.scoring.evaluate import evaluate_bytes, evaluate_file, load_gold
from klue_viz.tasks import get_task
from klue_viz.tasks.kit import Evidence, suspect_item
from klue_viz.tasks.ner import tag_list
from tests.conftest import jsonl


def _run(name):
    task = get_task(name)
    gold = load_gold(task, DEMO_BENCHMARK)
    return task, evaluate_file(task, gold, next(demo_runs(name)))


def test_confidence_and_sts_error_orders():
    task, run = _run("ynat")
    ex = run.frames.examples
    ordered = sort_examples(task, run.frames, ex, "least confident first")
    assert ordered["confidence"].tolist() == sorted(ex["confidence"].tolist())
    wrong = sort_examples(task, run.frames, ex, "confidently wrong first")
    n_wrong = int((~ex["correct"]).sum())
    assert not wrong["correct"].iloc[:n_wrong].any() and wrong["confidence"].iloc[:n_wrong].is_monotonic_decreasing
    task, run = _run("sts")
    ex = run.frames.examples
    errors = [abs(g - p) for g, p in zip(ex["gold"], ex["pred"])]
    ordered = sort_examples(task, run.frames, ex, "largest |gold - predicted| first")
    assert ordered["guid"].tolist() == [g for _, g in sorted(zip(errors, ex["guid"]), key=lambda t: -t[0])]


def test_ner_entity_f1_order_by_hand():
    task = get_task("ner")
    gold = load_gold(task, DEMO_BENCHMARK)
    rows = gold.rows[:3]
    # sentence 0 perfect (F1 100), sentence 1 no entities predicted (F1 0 if it has gold entities), sentence 2 perfect
    records = [{"guid": rows[0]["guid"], "tags": tag_list(rows[0]["tags"])}, {"guid": rows[1]["guid"], "tags": ["O"] * len(rows[1]["tags"])},
               {"guid": rows[2]["guid"], "tags": tag_list(rows[2]["tags"])}]
    run = evaluate_bytes(task, gold, jsonl(records), "three.jsonl")
    assert any(t != "O" for t in tag_list(rows[1]["tags"]))
    ordered = sort_examples(task, run.frames, run.frames.examples, "lowest entity F1 first")
    assert ordered["guid"].tolist() == [rows[1]["guid"], rows[0]["guid"], rows[2]["guid"]]


def test_dp_keys_and_file_order_and_suspect_rank():
    task, run = _run("dp")
    ex = run.frames.examples
    assert {"lowest sentence UAS first", "lowest sentence LAS first", "most word errors first"} <= set(sort_keys(task, run.frames))
    ordered = sort_examples(task, run.frames, ex, "lowest sentence LAS first")
    assert ordered["las"].is_monotonic_increasing
    assert sort_examples(task, run.frames, ex, FILE_ORDER)["guid"].tolist() == ex["guid"].tolist()
    queue = [suspect_item(ex["guid"].iloc[k], "head", "1:2:NP", "1:3:NP", 1.0, Evidence(1, 1, ["run"])) for k in (3, 1, 3)]
    ranks = suspect_ranks(task, queue)
    assert ranks == {ex["guid"].iloc[3]: 1, ex["guid"].iloc[1]: 2}
    ordered = sort_examples(task, run.frames, ex, SUSPECT_RANK, ranks)
    assert ordered["guid"].tolist()[:3] == [ex["guid"].iloc[3], ex["guid"].iloc[1], ex["guid"].iloc[0]]


@pytest.mark.parametrize("name", ["ynat", "nli", "sts", "ner", "re", "dp", "mrc", "wos"])
def test_every_key_sorts_a_filtered_subset(name):
    task, run = _run(name)
    shown = run.frames.examples.iloc[::2]
    for key in sort_keys(task, run.frames):
        ordered = sort_examples(task, run.frames, shown, key)
        assert sorted(ordered["guid"]) == sorted(shown["guid"])
