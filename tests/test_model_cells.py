"""The home table's cell for a model with many runs of a task, and the corrected-gold change table's order and marks
(issue 28, items 3 and 10). A cell showed "the last one given" and `runs add` gives files in name order as text, so a
model read NER 77.24 (ckpt-9000) while its ckpt-25000 scored 92.43."""

from __future__ import annotations

import json
import re
from html import unescape

import pytest

from klue_viz.discovery.corrected import Correction, RunInput, correctors, rescore
from klue_viz.discovery.corrected_gold import change_table
from klue_viz.reading.demo import DEMO_BENCHMARK, demo_runs
from klue_viz.scoring.benchmark import ModelRun, html_table, model_table, pick_run
from klue_viz.scoring.evaluate import evaluate_bytes, gold_from_bytes, load_gold
from klue_viz.tasks import get_task
from tests.cases import nli
from tests.conftest import jsonl

NER = get_task("ner")


def ner_run(path, run: str, model: str, demo: bool = False) -> ModelRun:
    gold = load_gold(NER, DEMO_BENCHMARK)
    return ModelRun(model, evaluate_bytes(NER, gold, path.read_bytes(), path.name, run=run), demo=demo)


@pytest.fixture(scope="module")
def sweep() -> list[ModelRun]:
    """Model A: ckpt-25000 (the better demo run), ckpt-9000 (the worse), given in text order as `runs add` gave them."""
    paths = sorted(demo_runs("ner"))
    first, second = (ner_run(p, p.stem, "x") for p in paths)
    good, bad = sorted(paths, key=lambda p: -(first if p == paths[0] else second).result.scores.values["entity_macro_f1"])
    return [ner_run(good, "ckpt-25000", "A"), ner_run(bad, "ckpt-9000", "A"), ner_run(bad, "epoch-2", "B")]


def test_a_cell_shows_the_latest_step_not_the_last_run_given(sweep):
    shown, why = pick_run(sweep[:2], "latest")
    assert shown.result.run == "ckpt-25000" and why == "latest step (25,000) of 2 runs"
    html = html_table(sweep)
    row = unescape(re.search(r"<tr><th scope='row'>A</th>.*?</tr>", html, re.S).group(0))
    good = sweep[0].result.scores.values
    assert f">{good['entity_macro_f1']:.2f} / {good['character_macro_f1']:.2f}</a>" in row
    assert "latest step (25,000) of 2 runs" in row
    assert "<summary>1 other run(s)</summary>" in row and "run=ckpt-9000" in row  # the rest, one click away


def test_the_best_switch_shows_the_best_on_the_first_metric():
    paths = sorted(demo_runs("ner"))
    runs = [ner_run(paths[0], "ckpt-1", "A"), ner_run(paths[1], "ckpt-2", "A")]
    best = max(runs, key=lambda r: r.result.scores.values["entity_macro_f1"])
    shown, why = pick_run(runs, "best")
    assert shown is best and why == "best entity_macro_f1 of 2 runs"
    assert best.result.run in model_table(runs, "best").loc[0, "NER entity_macro_f1 / character_macro_f1"]


def test_names_without_a_step_fall_back_to_the_last_added(sweep):
    runs = [ner_run(sorted(demo_runs("ner"))[0], name, "A") for name in ("base", "final")]
    assert pick_run(runs)[0].result.run == "final" and pick_run(runs)[1] == "last added of 2 runs"


def test_demo_models_come_after_the_real_ones_and_are_marked(sweep):
    path = sorted(demo_runs("ner"))[0]
    html = html_table([ner_run(path, path.stem, "demo bert-crf", demo=True), *sweep])
    models = [unescape(m).strip() for m in re.findall(r"<th scope='row'>([^<]+)", html)]
    assert models == ["A", "B", "demo bert-crf"]
    assert "(embedded demo)" in unescape(html).split("demo bert-crf", 1)[1][:80]


E, N, C = "entailment", "neutral", "contradiction"


def test_the_change_table_lists_runs_in_natural_order_and_marks_those_that_moved():
    task = get_task("nli")
    gold = [E, N, C, E, N, C]
    before = gold_from_bytes(task, json.dumps(nli(gold), ensure_ascii=False).encode(), "klue-nli-v1.1_dev.json")
    after = gold_from_bytes(task, json.dumps(nli([E, N, C, E, N, E]), ensure_ascii=False).encode(), "klue-nli-v1.1_dev.json")
    labels = {"ckpt-10000": [E, N, C, N, N, E],  # 4/6 -> 5/6: rank 3 -> 1
              "ckpt-2000": [E, N, C, E, C, C],  # 5/6 -> 4/6: rank 1 -> 2
              "ckpt-1000": [E, N, N, N, C, C]}  # 3/6 -> 2/6: rank 3 -> 3
    runs = [RunInput(name, f"{name}.jsonl", jsonl({"guid": f"klue-nli-v1_dev_{k:05d}", "label": v} for k, v in enumerate(values)))
            for name, values in labels.items()]
    found = rescore(task, before, after, runs)
    assert [r["run"] for r in found.rows] == ["ckpt-1000", "ckpt-2000", "ckpt-10000"]  # not ckpt-1000, ckpt-10000, ckpt-2000
    # by hand: before 1000 = 3/6, 2000 = 5/6, 10000 = 4/6 -> ranks 3, 1, 2; after 2/6, 4/6, 5/6 -> ranks 3, 2, 1
    assert [(r["rank_before"], r["rank_after"], r["moved"]) for r in found.rows] == [(3, 3, 0), (1, 2, -1), (2, 1, 1)]
    text = change_table(found, "v1")
    assert "ckpt-2000: accuracy 83.33 -> 66.67 (-16.67), rank 1 -> 2 (moved down 1)" in text
    assert "ckpt-1000: accuracy 50.00 -> 33.33 (-16.67), rank 3 -> 3\n" in text


def test_a_version_credits_who_made_its_corrections():
    made = [Correction("g1", E, annotator="kim"), Correction("g2", E, annotator="lee"), Correction("g3", N, annotator="kim"),
            Correction("g4", C)]
    assert correctors(made) == ["kim (2)", "(anonymous) (1)", "lee (1)"]
