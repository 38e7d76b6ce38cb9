"""A weak slice is never a confusion-matrix cell (issue 27.5): a conjunction that conditions on both the gold and the
predicted label has its error rate fixed by its definition (100% off the diagonal), so it may not rank; nor may a
slice on a predicted value that is wrong by definition (an unreadable answer). A planted weak source ranks first."""

from __future__ import annotations

import numpy as np

from klue_viz.discovery.slices import paired_slices, weak_slices
from klue_viz.scoring.evaluate import evaluate_bytes, load_gold
from klue_viz.tasks import get_task
from tests.conftest import jsonl

OTHER = {"entailment": ["neutral", "contradiction"], "neutral": ["entailment", "contradiction"], "contradiction": ["entailment", "neutral"]}


def _planted_run(task, gold, weak_source: str, seed: int = 3, name: str = "planted.jsonl"):
    """Wrong on 55% of the weak source's pairs and 20% of the others', with either of the two wrong labels."""
    rng = np.random.default_rng(seed)
    records = []
    for row in gold.rows:
        wrong = rng.random() < (0.55 if row["source"] == weak_source else 0.20)
        records.append({"guid": row["guid"], "label": OTHER[row["gold"]][int(rng.integers(2))] if wrong else row["gold"]})
    return evaluate_bytes(task, gold, jsonl(records), name), records


def test_a_planted_weak_source_ranks_first_and_no_slice_is_a_confusion_cell(shared):
    task = get_task("nli")
    gold = load_gold(task, shared)
    sources = sorted({r["source"] for r in gold.rows})
    weak = sources[0]
    run, records = _planted_run(task, gold, weak)
    in_weak = [p["label"] != r["gold"] for r, p in zip(gold.rows, records) if r["source"] == weak]
    found = weak_slices(task, run.frames, top=10)
    assert found[0].conditions == {"source": weak}, [s.conditions for s in found]
    assert found[0].size == len(in_weak) and found[0].errors == sum(in_weak)  # counted from the records here
    assert not [s.conditions for s in found if {"gold_label", "pred_label"} <= set(s.conditions)]
    assert all(s.error_rate < 100.0 for s in found)


def test_an_unreadable_answer_is_no_weak_slice(shared):
    task = get_task("nli")
    gold = load_gold(task, shared)
    rows = gold.rows[:400]
    records = [{"guid": r["guid"], "generation": "잘 모르겠어요" if k % 5 == 0 else r["gold"]} for k, r in enumerate(rows)]
    run = evaluate_bytes(task, gold, jsonl(records), "llm.jsonl")
    assert run.coverage.unreadable_answers == 80
    found = weak_slices(task, run.frames, top=10)
    assert not [s.conditions for s in found if "pred_label" in s.conditions], [s.conditions for s in found]


def test_the_paired_finder_lists_no_confusion_cell_either(shared):
    task = get_task("nli")
    gold = load_gold(task, shared)
    sources = sorted({r["source"] for r in gold.rows})
    first, _ = _planted_run(task, gold, sources[0], seed=3, name="a.jsonl")
    second, _ = _planted_run(task, gold, sources[1], seed=4, name="b.jsonl")
    found = paired_slices(task, first, second, top=10)
    assert found and not [s.conditions for s in found if {"gold_label", "pred_label"} <= set(s.conditions)]


def test_re_gold_relation_slice_with_the_predicted_label_is_a_cell_too():
    """RE declares the gold relation as a slice of its own (`gold`) besides the label feature: either with the predicted
    label is a confusion cell; the gold relation alone, or with the source, is not."""
    from klue_viz.discovery.slices import units
    from klue_viz.reading.demo import DEMO_BENCHMARK, demo_runs

    task = get_task("re")
    gold = load_gold(task, DEMO_BENCHMARK)
    found = units(task, evaluate_bytes(task, gold, next(demo_runs("re")).read_bytes(), "re.jsonl").frames)
    assert found.fixes_error({"gold": "no_relation", "pred_label": "per:title"})
    assert found.fixes_error({"gold_label": "no_relation", "pred_label": "per:title"})
    assert found.fixes_error({"pred_label": "unreadable answer"})
    assert not found.fixes_error({"gold": "no_relation"}) and not found.fixes_error({"gold": "no_relation", "source": "wikipedia"})
