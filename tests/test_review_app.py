"""The review view through AppTest: two accepted suspects make a gold version; every run is re-scored on it, as scipy says."""

from __future__ import annotations

import json
import re

import pytest
from scipy.stats import pearsonr
from streamlit.testing.v1 import AppTest

from klue_viz.reading.demo import DEMO_BENCHMARK, demo_runs
from klue_viz.store.annotations import Store
from klue_viz.ui.home import PAGE_FILES
from tests.conftest import REPO

pytestmark = pytest.mark.slow


def demo_pearson(corrected: dict[str, float]) -> dict[str, tuple[float, float]]:
    """Each demo STS run's Pearson r before and after setting the corrected real-labels, read from the files in the test."""
    gold = json.loads((DEMO_BENCHMARK / "klue-sts-v1.1" / "klue-sts-v1.1_dev.json").read_text(encoding="utf-8"))
    before = {r["guid"]: r["labels"]["real-label"] for r in gold}
    after = {**before, **corrected}
    out = {}
    for path in demo_runs("sts"):
        run = {r["guid"]: r["score"] for r in map(json.loads, path.read_text(encoding="utf-8").splitlines()) if r}
        guids = [g for g in before if g in run]
        out[path.stem] = tuple(100 * pearsonr([gold_[g] for g in guids], [run[g] for g in guids])[0] for gold_ in (before, after))
    return out


def test_accept_two_suspects_make_a_version_and_see_every_run_rescored():
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=120).run()
    at.switch_page(PAGE_FILES["sts"]).run()
    at.sidebar.text_input(key="annotator_widget").set_value("kim").run()
    at.segmented_control(key="discovery_view").set_value("Review the gold").run()
    assert not at.exception
    first = next(m.value for m in at.markdown if "kv-review" in m.value)
    assert "data-position='0'" in first
    proposals = []
    for _ in range(2):
        label = at.button(key="review_accept").label
        proposals.append(float(label.replace("\\", "").split()[-1]))
        at.button(key="review_accept").click().run()
    stored = [a for a in Store().find(task="sts") if a.run == "gold"]
    assert sorted(float(a.corrected_label) for a in stored) == sorted(proposals) and all(a.annotator == "kim" for a in stored)
    at.button(key="make_version").click().run()
    assert not at.exception and not at.error
    assert any("Kept the gold version dev \\+ corrections, 2 records," in s.value for s in at.success)
    table = next(m.value for m in at.markdown if "kv-changes" in m.value)
    expected = demo_pearson({a.guid: float(a.corrected_label) for a in stored})
    for run, (before, after) in expected.items():
        row = re.search(rf"<tr data-run='{run}'><td>{run}</td><td class='num'>([\d.]+)</td><td class='num'>([\d.]+)</td>", table)
        assert (row[1], row[2]) == (f"{before:.2f}", f"{after:.2f}")
    # Score the page against the version: the page's metrics become the 'after' numbers.
    at.selectbox(key="score_against|sts").set_value(next(o for o in at.selectbox(key="score_against|sts").options if "corrections" in o)).run()
    shown = [m.value for m in at.metric if m.label == "Pearson r"]
    assert sorted(shown) == sorted(f"{after:.2f}" for _, after in expected.values())


def test_review_the_filtered_examples_one_at_a_time():
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=120).run()
    at.switch_page(PAGE_FILES["nli"]).run()
    at.sidebar.text_input(key="annotator_widget").set_value("kim").run()
    at.radio(key="f_status").set_value("wrong").run()
    at.segmented_control(key="discovery_view").set_value("Review the gold").run()
    source = at.radio(key="review_source")
    listed = next(o for o in source.options if o.startswith("the examples listed below"))
    source.set_value("the examples listed below").run()
    assert not at.exception
    run = at.selectbox(key="run").value if any(s.key == "run" for s in at.selectbox) else None
    path = next(p for p in demo_runs("nli") if p.stem == run) if run else next(iter(demo_runs("nli")))
    preds = {r["guid"]: r["label"] for r in map(json.loads, path.read_text(encoding="utf-8").splitlines()) if r}
    gold = {r["guid"]: r["gold_label"] for r in json.loads((DEMO_BENCHMARK / "klue-nli-v1.1" / "klue-nli-v1.1_dev.json").read_text(encoding="utf-8"))}
    wrong = [g for g in gold if g in preds and preds[g] != gold[g]]
    assert listed.endswith(f"({len(wrong)})")
    first = next(m.value for m in at.markdown if "kv-review" in m.value)
    assert wrong[0].replace("_", "&#95;") in first
    at.button(key="review_accept").click().run()
    stored = [a for a in Store().find(task="nli") if a.run == "gold"]
    assert [(a.guid, a.corrected_label) for a in stored] == [(wrong[0], preds[wrong[0]])]
