"""Many runs on a task page: the run search and filters (klue_viz/ui/run_picker.py), and pages read kept results."""

from __future__ import annotations

import os

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from klue_viz.core.steps import natural_key, step_of
from klue_viz.reading.demo import DEMO_BENCHMARK, demo_runs
from klue_viz.scoring.evaluate import evaluate_bytes, load_gold
from klue_viz.store import kept_scoring
from klue_viz.store.annotations import Store
from klue_viz.store.runs import RunStore
from klue_viz.tasks import get_task
from klue_viz.ui.home import PAGE_FILES
from klue_viz.ui.run_picker import ALL_MODELS, filter_runs
from tests.conftest import REPO

NAMES = ["ckpt-10000", "ckpt-2000", "other-ckpt-500", "base", "ckpt-500"]
MODELS = {"ckpt-10000": "m1", "ckpt-2000": "m1", "ckpt-500": "m1", "other-ckpt-500": "m2", "base": "m2"}


def test_runs_are_ordered_by_model_then_step_read_as_a_number():
    assert filter_runs(NAMES, MODELS) == ["ckpt-500", "ckpt-2000", "ckpt-10000", "base", "other-ckpt-500"]
    assert sorted(["b10", "b9", "a100"], key=natural_key) == ["a100", "b9", "b10"]
    assert [step_of(n) for n in ["ckpt-2000", "base", "v2-step30"]] == [2000, None, 30]
    # the checkpoint's own number, not a suffix the store added to a taken name nor a version before the step
    assert [step_of(n) for n in ["ckpt-500-2", "checkpoint-1500", "roberta-v2-epoch_3", "run012", "global_step9000"]] == [500, 1500, 3, 12, 9000]


def test_search_model_and_steps_narrow_the_runs():
    assert filter_runs(NAMES, MODELS, query="OTHER") == ["other-ckpt-500"]
    assert filter_runs(NAMES, MODELS, query="m2") == ["base", "other-ckpt-500"]  # the model matches too
    assert filter_runs(NAMES, MODELS, query=".*") == []  # plain text, never a pattern
    assert filter_runs(NAMES, MODELS, model="m1", steps=(600, 5000)) == ["ckpt-2000"]
    assert filter_runs(NAMES, MODELS, model=ALL_MODELS, steps=(500, 500)) == ["ckpt-500", "other-ckpt-500"]  # base has no step


def stored_checkpoints(count: int) -> list[str]:
    """`count` NER runs of one model (the demo run with one more sentence left out each time), added and kept."""
    path = next(iter(demo_runs("ner")))
    lines = [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    store = Store(os.environ["KLUE_VIZ_DB"])
    runs = RunStore(store)
    names = []
    for k in range(count):
        data = "\n".join(lines[:len(lines) - k]).encode()
        names.append(runs.add("ner", f"ckpt-{(k + 1) * 1000}.jsonl", data, model="model-a").name)
    return names


@pytest.mark.slow
def test_a_task_page_with_many_runs_filters_them_and_never_rescores_kept_ones(monkeypatch):
    names = stored_checkpoints(9)
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=120).run()
    at.switch_page(PAGE_FILES["ner"]).run()
    assert not at.exception
    metrics = next(df for df in at.dataframe if "entity_macro_f1" in df.value.columns).value
    assert sorted(metrics["run"]) == sorted(names + [p.stem for p in demo_runs("ner")])
    # every run is kept now: a new server (its caches cleared) reads them back without scoring any of them
    st.cache_resource.clear()
    scored = []
    real = kept_scoring.evaluate_with_frames
    monkeypatch.setattr(kept_scoring, "evaluate_with_frames", lambda *a, **k: scored.append(a[3]) or real(*a, **k))
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=120).run()
    at.switch_page(PAGE_FILES["ner"]).run()
    assert not at.exception and scored == []
    at.text_input(key="run_search").set_value("ckpt-1").run()  # ckpt-1000 (and no ckpt-10000: there are nine)
    assert any("1 of 11 runs match" in c.value for c in at.caption)
    assert any("Inspecting run **ckpt-1000**" in c.value.replace("\\", "") for c in at.caption)  # the one run left is the one inspected
    at.text_input(key="run_search").set_value("").run()
    at.selectbox(key="run_model").set_value("model-a").run()
    assert at.selectbox(key="run").options == [f"ckpt-{k * 1000}" for k in range(1, 10)]  # natural order
    at.select_slider(key="run_steps").set_value((3000, 4000)).run()
    assert at.selectbox(key="run").options == ["ckpt-3000", "ckpt-4000"]
    assert not at.exception and scored == []
    # the table's numbers are the CLI's scoring of the same bytes
    path = next(iter(demo_runs("ner")))
    lines = [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    gold = load_gold(get_task("ner"), DEMO_BENCHMARK)
    for k in (2, 3):
        expected = evaluate_bytes(get_task("ner"), gold, "\n".join(lines[:len(lines) - k]).encode(), "x.jsonl").scores.values["entity_macro_f1"]
        assert metrics.set_index("run").loc[f"ckpt-{(k + 1) * 1000}", "entity_macro_f1"] == pytest.approx(expected, abs=1e-9)
