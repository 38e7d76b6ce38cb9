"""End-to-end in headless Chromium: a checkpoint sweep stored by `klue-viz runs add` as a user would, then the home
table, the NER page's step range and sequence, and the NLI page's corrected-gold table (issue 28, items 1-4, 10).

Screenshots go to artifacts/sweep-*.png for a person to look at."""

from __future__ import annotations

import html
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from klue_viz.reading.demo import DEMO_BENCHMARK, demo_runs
from klue_viz.store.annotations import Store
from klue_viz.store.gold_versions import GoldVersions
from tests.conftest import REPO
from tests.test_browser import ARTIFACTS, CHROMIUM, browser, open_task, page, rerun, start_server, stop_server, wait_idle  # noqa: F401
from tests.test_checkpoint_sweep import variants

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not Path(CHROMIUM).exists() and not os.environ.get("CI"), reason="no system chromium (CI installs it)"),
]

STEPS = [500 * k for k in range(1, 13)]  # roberta: 12 checkpoints; bert: 2 epochs
NLI_LABELS = ("entailment", "neutral", "contradiction")
SEQUENCE = """() => {
  const gd = document.querySelector('.st-key-cmp_sequence .js-plotly-plot');
  return {names: gd.data.map(t => t.name), x: gd.data.map(t => Array.from(t.x)), axis: gd._fullLayout.xaxis.type};
}"""


def nli_runs(folder: Path) -> dict[str, list[str]]:
    """Three NLI checkpoints of the demo gold, built so a planted correction of pairs 0-2 reorders them (counted by hand):
    before, ckpt-2000 misses 1 pair, ckpt-10000 2, ckpt-1000 3 (pairs 0-2, where it says what the correction will say);
    after, ckpt-1000 misses none, ckpt-2000 4, ckpt-10000 5: ranks 3 -> 1, 1 -> 2, 2 -> 3."""
    gold = [row["gold_label"] for row in json.loads((DEMO_BENCHMARK / "klue-nli-v1.1" / "klue-nli-v1.1_dev.json").read_text(encoding="utf-8"))]
    other = [NLI_LABELS[(NLI_LABELS.index(label) + 1) % 3] for label in gold]
    runs = {"ckpt-1000": [other[k] if k < 3 else gold[k] for k in range(len(gold))],
            "ckpt-2000": [other[k] if k == 3 else gold[k] for k in range(len(gold))],
            "ckpt-10000": [other[k] if k in (3, 4) else gold[k] for k in range(len(gold))]}
    (folder / "nli").mkdir(parents=True)
    guids = [row["guid"] for row in json.loads((DEMO_BENCHMARK / "klue-nli-v1.1" / "klue-nli-v1.1_dev.json").read_text(encoding="utf-8"))]
    for name, labels in runs.items():
        (folder / "nli" / f"{name}.jsonl").write_text("\n".join(json.dumps({"guid": g, "label": label}) for g, label in zip(guids, labels)),
                                                      encoding="utf-8")
    return {"guids": guids[:3], "corrections": other[:3]}


@pytest.fixture(scope="module")
def sweep_server(tmp_path_factory):
    folder = tmp_path_factory.mktemp("sweep")
    database = folder / "store.sqlite3"
    roberta, bert = folder / "roberta", folder / "bert"
    ner = sorted(demo_runs("ner"))
    for step, data in zip(STEPS, variants(ner[0], len(STEPS))):  # <model>/<checkpoint>/ner.jsonl
        (roberta / f"ckpt-{step}").mkdir(parents=True)
        (roberta / f"ckpt-{step}" / "ner.jsonl").write_bytes(data)
    planted = nli_runs(roberta)  # <model>/nli/<checkpoint>.jsonl
    (bert / "ner").mkdir(parents=True)
    for epoch, data in zip((1, 2), variants(ner[1], 2)):  # <model>/ner/<epoch>.jsonl
        (bert / "ner" / f"epoch-{epoch}.jsonl").write_bytes(data)
    env = {k: v for k, v in os.environ.items() if k != "KLUE_VIZ_DATA_DIR"} | {"KLUE_VIZ_DB": str(database), "PYTHONPATH": str(REPO)}
    added = subprocess.run([sys.executable, "-m", "klue_viz.cli.main", "runs", "add", str(roberta), str(bert)], env=env, cwd=folder,
                           capture_output=True, text=True, timeout=300)
    assert added.returncode == 0, added.stderr
    GoldVersions(Store(str(database))).add("nli", "dev + 3 fixes", "klue-nli-v1.1_dev.json", 3,
                                           [{"guid": g, "correction": c, "turn": None, "annotator": "kim", "note": "", "updated_at": ""}
                                            for g, c in zip(planted["guids"], planted["corrections"])], created_by="lead")
    process, url = start_server(env)
    yield url
    stop_server(process)


def model_row(shown, model: str) -> str:
    """The home table's row of one model, its HTML unescaped."""
    return html.unescape(shown.locator(".kv-model-table tbody tr", has=shown.locator(f"th:text-is('{model}')")).first.inner_html())


def test_the_home_table_shows_each_models_latest_step_and_the_best_by_a_switch(sweep_server, page):  # noqa: F811
    page.goto(sweep_server)
    wait_idle(page)
    page.wait_for_selector(".kv-model-table", timeout=90_000)
    heads = [h.strip() for h in page.locator(".kv-model-table tbody th").all_inner_texts()]
    assert heads[:2] == ["bert", "roberta"] and all("(embedded demo)" in h for h in heads[2:]) and len(heads) > 2  # demo last, marked
    roberta = model_row(page, "roberta")
    assert "ckpt-6000 · 23/24 scored" in roberta and "latest step (6,000) of 12 runs" in roberta  # each variant leaves a record out
    assert "11 other run(s)" in roberta and "latest step (10,000) of 3 runs" in roberta  # NLI: ckpt-10000, not ckpt-2000 (text order)
    assert "latest step (2) of 2 runs" in model_row(page, "bert")
    ARTIFACTS.mkdir(exist_ok=True)
    page.locator(".kv-models").screenshot(path=str(ARTIFACTS / "sweep-home-latest.png"))
    rerun(page, page.get_by_text("the best", exact=True).click)
    assert "best entity_macro_f1 of 12 runs" in model_row(page, "roberta")
    page.locator(".kv-models").screenshot(path=str(ARTIFACTS / "sweep-home-best.png"))


def test_the_ner_page_reads_steps_and_draws_one_line_per_model(sweep_server, page):  # noqa: F811
    open_task(page, sweep_server, "ner")
    page.wait_for_function("() => (document.querySelector('.st-key-run_steps')?.innerText || '').includes('6000')", timeout=60_000)
    steps = page.locator(".st-key-run_steps").inner_text()
    assert "6000" in steps and "1" in steps.split()  # the step range in steps: bert's epoch 1 to roberta's 6000
    assert page.url.endswith("/ner?run=ckpt-6000")  # the latest step is inspected first (the page writes it into its URL)
    page.locator(".st-key-run_steps").screenshot(path=str(ARTIFACTS / "sweep-ner-steps.png"))
    rerun(page, page.locator(".st-key-cmp_on").get_by_text("Compare the", exact=False).click)
    rerun(page, page.locator(".st-key-cmp_along").get_by_text("Each metric along the runs", exact=False).click)
    page.wait_for_selector(".st-key-cmp_sequence .js-plotly-plot", timeout=120_000)
    drawn = page.evaluate(SEQUENCE)
    # one line per model: roberta's 12 checkpoints, bert's 2 epochs and each demo run, never one line through all of them
    assert sorted(drawn["names"]) == sorted(["overall · roberta", "overall · bert", "overall · demo bert-crf", "overall · demo char-bilstm"])
    lines = dict(zip(drawn["names"], drawn["x"]))
    assert lines["overall · roberta"] == [f"ckpt-{s}" for s in STEPS] and lines["overall · bert"] == ["epoch-1", "epoch-2"]
    assert drawn["axis"] == "category"  # the demo runs have no step
    page.locator(".st-key-cmp_sequence").scroll_into_view_if_needed()
    page.locator(".st-key-cmp_sequence").screenshot(path=str(ARTIFACTS / "sweep-ner-sequence.png"))
    table = page.locator(".st-key-weak_slice_table")  # a canvas: its wrapped names are for a person to look at
    table.scroll_into_view_if_needed()
    table.screenshot(path=str(ARTIFACTS / "sweep-ner-weak-slices.png"))


def test_the_corrected_gold_table_is_in_natural_order_marks_moves_and_credits_both(sweep_server, page):  # noqa: F811
    open_task(page, sweep_server, "nli")
    rerun(page, page.get_by_text("Review the gold", exact=True).click)
    page.wait_for_selector(".kv-changes", timeout=120_000)
    rows = page.locator(".kv-changes tbody tr")
    runs = [rows.nth(k).get_attribute("data-run") for k in range(rows.count())]
    checkpoints = [r for r in runs if r.startswith("ckpt-")]
    assert checkpoints == ["ckpt-1000", "ckpt-2000", "ckpt-10000"]  # not ckpt-1000, ckpt-10000, ckpt-2000
    moved = {rows.nth(k).get_attribute("data-run"): rows.nth(k).get_attribute("class") for k in range(rows.count())}
    assert moved["ckpt-1000"] == "kv-moved"  # rank 3 -> 1, highlighted
    # before: ckpt-2000 23/24, ckpt-10000 and the demo's roberta-base 22/24, ckpt-1000 21/24 (rank 4); after: ckpt-1000 24/24
    assert page.locator(".kv-changes tr[data-run='ckpt-1000']").inner_text().split("\t")[-3:] == ["4", "1", "up 3"]
    body = page.locator("body").inner_text()
    assert "corrected by kim (3); accepted into this version by lead" in body
    page.locator(".kv-changes").scroll_into_view_if_needed()
    page.locator(".kv-changes").screenshot(path=str(ARTIFACTS / "sweep-nli-corrected.png"))
    page.get_by_text("The annotators: who agrees with whom", exact=False).click()  # an expander: opened without a rerun
    wait_idle(page)
    assert page.get_by_text("How many annotators agree with the gold", exact=False).count() == 1
