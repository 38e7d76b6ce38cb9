"""Files of different tasks sharing a stem are not one model (issue 19, item 23)."""

from __future__ import annotations

from klue_viz.store.runs import Run
from klue_viz.ui.state import model_label


def run(task: str, name: str, model: str = "") -> Run:
    return Run(task, name, f"{name}.jsonl", model, "", "2026-01-01T00:00:00+00:00", "0" * 64, 10, 1)


def test_a_run_without_a_model_is_its_own_row_per_task():
    assert model_label(run("ner", "pred_adversarial")) != model_label(run("nli", "pred_adversarial"))
    assert model_label(run("ner", "pred_adversarial")) == "pred_adversarial (NER)"


def test_runs_named_by_a_model_share_its_row():
    assert model_label(run("ner", "ner", "klue-bert")) == model_label(run("nli", "nli", "klue-bert")) == "klue-bert"
