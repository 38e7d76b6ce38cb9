"""Gold and predicted label are weak-slice features for every label task (issue 19, item 10)."""

from __future__ import annotations

import numpy as np

from klue_viz.discovery.slices import weak_slices
from klue_viz.scoring.evaluate import evaluate_bytes, load_gold
from klue_viz.tasks import get_task
from tests.conftest import jsonl

OTHER = {"entailment": ["neutral", "contradiction"], "neutral": ["entailment", "contradiction"], "contradiction": ["entailment", "neutral"]}


def test_nli_gold_entailment_is_found_when_it_fails_more_than_the_rest(shared):
    task = get_task("nli")
    gold = load_gold(task, shared)
    rng = np.random.default_rng(7)
    records = []
    for row in gold.rows:
        wrong = rng.random() < (0.70 if row["gold"] == "entailment" else 0.56)
        records.append({"guid": row["guid"], "label": OTHER[row["gold"]][int(rng.integers(2))] if wrong else row["gold"]})
    run = evaluate_bytes(task, gold, jsonl(records), "planted.jsonl")
    wrong_entailment = sum(1 for r, p in zip(gold.rows, records) if r["gold"] == "entailment" and p["label"] != "entailment")
    entailment = sum(1 for r in gold.rows if r["gold"] == "entailment")
    overall = sum(1 for r, p in zip(gold.rows, records) if p["label"] != r["gold"]) / len(records)
    assert wrong_entailment / entailment > overall + 0.08  # the planted gap, counted by hand
    found = weak_slices(task, run.frames, top=10)
    by_gold = [s for s in found if s.conditions == {"gold_label": "entailment"}]
    assert by_gold, [s.conditions for s in found]
    assert by_gold[0].size == entailment and by_gold[0].errors == wrong_entailment
    assert by_gold[0].labels == {"gold_label": "Gold label"}


def test_the_predicted_label_is_a_feature_of_every_label_task():
    """YNAT and RE too: the feature holds each example's predicted label, read here from the demo file itself."""
    import json

    from klue_viz.discovery.slices import units
    from klue_viz.reading.demo import DEMO_BENCHMARK, demo_runs
    from klue_viz.scoring.evaluate import evaluate_file

    for name in ("ynat", "re"):
        task = get_task(name)
        path = next(demo_runs(name))
        run = evaluate_file(task, load_gold(task, DEMO_BENCHMARK), path)
        found = units(task, run.frames)
        predicted = {r["guid"]: r["label"] for r in map(json.loads, path.read_text(encoding="utf-8").splitlines()) if r.get("guid")}
        assert dict(zip(found.frame["guid"], found.features["pred_label"])) == {g: predicted.get(g) for g in found.frame["guid"]}
        assert found.labels["gold_label"] == "Gold label" and found.labels["pred_label"] == "Predicted label"
