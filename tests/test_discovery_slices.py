"""Weak-slice finder: same answers as sliceline where both run, planted slices come first, CLI output."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from sliceline import Slicefinder

from klue_viz.cli.main import main
from klue_viz.discovery.slices import paired_slices, search, weak_slices
from klue_viz.scoring.evaluate import evaluate_bytes, load_gold
from klue_viz.tasks import get_task
from klue_viz.tasks.ner import tag_list
from tests.conftest import jsonl


def test_scores_and_top_slices_match_sliceline():
    rng = np.random.default_rng(3)
    codes = rng.integers(0, 3, (1500, 4))
    errors = (rng.random(1500) < 0.1).astype(float)
    errors[(codes[:, 0] == 1) & (codes[:, 2] == 2)] = (rng.random(int(((codes[:, 0] == 1) & (codes[:, 2] == 2)).sum())) < 0.6)
    errors[codes[:, 3] == 0] = np.maximum(errors[codes[:, 3] == 0], rng.random(int((codes[:, 3] == 0).sum())) < 0.2)
    reference = Slicefinder(alpha=0.95, k=5, max_l=3, min_sup=20, verbose=False).fit(codes, errors)
    expected = [({f"f{j}": str(v) for j, v in enumerate(row) if v is not None}, stat["slice_score"], stat["slice_size"])
                for row, stat in zip(reference.top_slices_, reference.top_slices_statistics_)]
    features = pd.DataFrame({f"f{j}": codes[:, j].astype(str) for j in range(4)}).astype(object)
    ours = search(features, errors, max_conditions=3, min_size=20, alpha=0.95, top=5)
    assert [c.conditions for c in ours] == [e[0] for e in expected]
    assert [c.score for c in ours] == pytest.approx([e[1] for e in expected])
    assert [c.size for c in ours] == [e[2] for e in expected]


@pytest.fixture(scope="module")
def ner_gold(shared):
    return load_gold(get_task("ner"), shared)


def _ner_run(gold, spoil) -> bytes:
    """Gold tags as predictions, except entities for which `spoil(row, label)` says so, predicted as O."""
    records = []
    for row in gold.rows:
        tags = tag_list(row["tags"])
        for k, tag in enumerate(tags):
            if tag != "O" and spoil(row, tag[2:]):
                tags[k] = "O"
        records.append({"guid": row["guid"], "tags": tags})
    return jsonl(records)


@pytest.mark.slow
def test_planted_entity_slice_comes_first(ner_gold):
    task = get_task("ner")
    run = evaluate_bytes(task, ner_gold, _ner_run(ner_gold, lambda row, label: label == "QT" and row["source"] == "nsmc"), "planted.jsonl")
    found = weak_slices(task, run.frames, top=5)
    assert found[0].conditions == {"source": "nsmc", "label": "QT"}
    assert found[0].error_rate == 100.0 and found[0].errors == found[0].size
    assert found[0].detail_metrics["recall"] == 0.0


def test_planted_example_slice_comes_first_and_paired_names_the_worse_run(shared):
    task = get_task("nli")
    gold = load_gold(task, shared)
    flip = {"entailment": "neutral", "neutral": "contradiction", "contradiction": "entailment"}
    def bad(row) -> bool:  # wikinews pairs where fewer than half of the hypothesis words are in the premise
        words = row["hypothesis"].split()
        return row["source"] == "wikinews" and sum(w in set(row["premise"].split()) for w in words) < 0.5 * max(len(words), 1)

    planted = evaluate_bytes(task, gold, jsonl([{"guid": r["guid"], "label": flip[r["gold"]] if bad(r) else r["gold"]} for r in gold.rows]), "planted.jsonl")
    perfect = evaluate_bytes(task, gold, jsonl([{"guid": r["guid"], "label": r["gold"]} for r in gold.rows]), "perfect.jsonl")
    found = weak_slices(task, planted.frames, top=3, ci_samples=20)
    assert found[0].conditions == {"source": "wikinews", "overlap": "low (<50%)"}
    assert found[0].size == sum(bad(r) for r in gold.rows) and found[0].metrics["accuracy"] == 0.0
    assert found[0].ci95["accuracy"] == [0.0, 0.0]
    pairs = paired_slices(task, perfect, planted, top=3)
    assert pairs[0].conditions == {"source": "wikinews", "overlap": "low (<50%)"}
    assert (pairs[0].worse, pairs[0].better, pairs[0].difference) == ("planted", "perfect", 100.0)
    assert weak_slices(task, perfect.frames) == []


def test_slices_command_writes_the_documented_json(shared, tmp_path, capsys):
    gold = load_gold(get_task("nli"), shared)
    pred = tmp_path / "run.jsonl"
    pred.write_bytes(jsonl([{"guid": r["guid"], "label": "neutral" if r["source"] == "airbnb" else r["gold"]} for r in gold.rows]))
    out = tmp_path / "slices.json"
    assert main(["slices", "--task", "nli", "--gold", str(shared), "--pred", str(pred), "--top", "3", "--bootstrap", "10", "--out", str(out)]) == 0
    written = json.loads(out.read_text(encoding="utf-8"))
    assert written["task"] == "nli" and written["runs"] == ["run"]
    first = written["slices"][0]
    assert {"conditions", "size", "errors", "error_rate", "metrics", "ci95"} <= set(first)
    assert first["conditions"]["source"] == "airbnb"
    assert "= airbnb" in capsys.readouterr().out  # the app's readable name (slice_name), not source=airbnb


@pytest.mark.slow
def test_paired_word_slices_on_dp(shared):
    task = get_task("dp")
    gold = load_gold(task, shared)

    def run(spoil: bool) -> list[dict]:
        out = []
        for row in gold.rows:
            heads = [(0 if h else 1) if spoil and pos.endswith("JKO") else h for h, pos in zip(row["heads"], row["pos"])]
            out.append({"guid": row["guid"], "head": heads, "deprel": row["deprels"]})
        return out

    good = evaluate_bytes(task, gold, jsonl(run(False)), "good.jsonl")
    spoilt = evaluate_bytes(task, gold, jsonl(run(True)), "spoilt.jsonl")
    assert weak_slices(task, spoilt.frames, top=1)[0].conditions == {"last_pos": "JKO"}
    top = paired_slices(task, good, spoilt, top=1)[0]
    assert (top.conditions, top.worse, top.unit) == ({"last_pos": "JKO"}, "spoilt", "words")


def test_error_tags_are_slice_conditions(shared):
    task = get_task("nli")
    gold = load_gold(task, shared)
    rng = np.random.default_rng(0)
    wrong = {r["guid"] for r in gold.rows if rng.random() < 0.04}
    run = evaluate_bytes(task, gold, jsonl([{"guid": r["guid"], "label": "neutral" if r["guid"] in wrong and r["gold"] != "neutral" else
                                             ("entailment" if r["guid"] in wrong else r["gold"])} for r in gold.rows]), "run.jsonl")
    tags = {g: {"negation"} for g in sorted(wrong)[: len(wrong) // 2]}  # half the errors tagged by a user
    found = weak_slices(task, run.frames, tags=tags, top=1)
    assert found[0].conditions == {"tag: negation": "yes"} and found[0].error_rate == 100.0


def test_slices_command_takes_the_stored_error_tags_as_conditions(shared, tmp_path, capsys):
    """A user's tags in the annotation store (KLUE_VIZ_DB) are conditions headless too, as in the app."""
    from klue_viz.store.annotations import Annotation, Store

    gold = load_gold(get_task("nli"), shared)
    rng = np.random.default_rng(1)
    wrong = sorted(r["guid"] for r in gold.rows if rng.random() < 0.04)
    pred = tmp_path / "run.jsonl"
    pred.write_bytes(jsonl([{"guid": r["guid"], "label": ("entailment" if r["gold"] != "entailment" else "neutral") if r["guid"] in wrong
                             else r["gold"]} for r in gold.rows]))
    db = Store()
    for guid in wrong[: len(wrong) // 2]:
        db.save(Annotation("nli", guid, "run", "지민", tags=["부정 표현"]))
    out = tmp_path / "slices.json"
    assert main(["slices", "--task", "nli", "--gold", str(shared), "--pred", str(pred), "--top", "1", "--bootstrap", "0", "--out", str(out)]) == 0
    first = json.loads(out.read_text(encoding="utf-8"))["slices"][0]
    assert first["conditions"] == {"tag: 부정 표현": "yes"} and first["error_rate"] == 100.0
    assert "Tagged '부정 표현' = yes" in capsys.readouterr().out  # the readable name the app shows too (slice_name)


@pytest.mark.parametrize("command", ["slices", "suspects"])
def test_an_out_in_a_missing_folder_is_refused_before_scoring(shared, tmp_path, capsys, command):
    pred = tmp_path / "run.jsonl"
    pred.write_bytes(jsonl([{"guid": r["guid"], "label": r["gold"]} for r in load_gold(get_task("nli"), shared).rows]))
    out = tmp_path / "missing" / "found.json"
    assert main([command, "--task", "nli", "--gold", str(shared), "--pred", str(pred), "--out", str(out)]) == 2
    assert "does not exist" in capsys.readouterr().err and not out.exists()


@pytest.mark.slow
def test_entity_metrics_of_a_one_sided_slice_count_the_matched_entities_of_that_side(shared):
    """A slice of predicted entities only ('side = pred & ...') has the precision of those predictions, not 0."""
    task = get_task("ner")
    gold = load_gold(task, shared)
    rng = np.random.default_rng(3)
    run = evaluate_bytes(task, gold, jsonl([{"guid": r["guid"], "tags": [t if rng.random() > 0.03 else "B-PS" for t in tag_list(r["tags"])]}
                                            for r in gold.rows]), "run.jsonl")
    ents = run.frames.details["entities"]
    predicted = ents[ents["side"] == "pred"]
    by_hand = 100.0 * predicted["matched"].sum() / len(predicted)  # precision: matched predictions over predictions
    assert task.detail_scores("entities", predicted) == {"precision": pytest.approx(by_hand), "recall": None, "f1": pytest.approx(by_hand)}
    gold_side = ents[ents["side"] == "gold"]
    assert task.detail_scores("entities", gold_side)["recall"] == pytest.approx(100.0 * gold_side["matched"].mean())
    # on both sides at once, the usual pooled precision, recall and F1 of the whole run
    tp, fp, fn = gold_side["matched"].sum(), (~predicted["matched"]).sum(), (~gold_side["matched"]).sum()
    assert task.detail_scores("entities", ents) == {"precision": pytest.approx(100 * tp / (tp + fp)), "recall": pytest.approx(100 * tp / (tp + fn)),
                                                    "f1": pytest.approx(200 * tp / (2 * tp + fp + fn))}
