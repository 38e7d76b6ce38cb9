"""Keyboard navigation in headless Chromium: real key presses on the NER page of the demo (mark browser)."""

from __future__ import annotations

import re

from klue_viz.reading.demo import DEMO_BENCHMARK
from klue_viz.scoring.evaluate import evaluate_file, load_gold
from klue_viz.tasks import TASKS
from tests.conftest import REPO
from tests.test_browser import browser, page, pytestmark, server, wait_idle  # noqa: F401  (fixtures, and the browser mark)

FOCUSED = '.kv-head[data-cursor="true"] .kv-guid'


def wrong_guids(run: str) -> list[str]:
    task = TASKS["ner"]
    result = evaluate_file(task, load_gold(task, DEMO_BENCHMARK), REPO / "klue_viz" / "demo" / "runs" / "ner" / f"{run}.jsonl")
    ex = result.frames.examples
    return ex.loc[~ex["correct"].astype(bool), "guid"].tolist()


def test_three_presses_of_the_next_error_key_land_on_the_third_wrong_example(page, server):  # noqa: F811
    page.goto(f"{server}/ner?run=char-bilstm")
    wait_idle(page)
    page.wait_for_selector(".kv-example", timeout=90_000)
    wait_idle(page)
    assert page.get_by_text("Keys: J/K next/previous example").count() == 1  # the keys are listed on the page
    page.wait_for_timeout(1500)  # the page settles (the run picker may rerun it once after the first draw)
    wait_idle(page)
    page.evaluate("document.activeElement && document.activeElement.blur()")  # keys go to the page, not to a widget
    wrong = wrong_guids("char-bilstm")
    positions = [int(g.split("_")[2].split("-")[0]) + 1 for g in wrong[:3]]  # klue-ner-v1_dev_00003-... is the 4th sentence
    for position in positions:
        page.keyboard.press("n")
        wait_idle(page)
        page.get_by_text(f"(focused: {position} of 24)").wait_for(timeout=30_000)
    page.wait_for_selector(FOCUSED, timeout=30_000)
    third = wrong[2]
    assert page.locator(FOCUSED).inner_text() == third
    assert re.search(r"[?&]cursor=" + re.escape(third) + r"(&|$)", page.url)
    page.keyboard.press("k")  # back one example: the one before the third error in file order
    wait_idle(page)
    assert page.locator(FOCUSED).count() == 1 and page.locator(FOCUSED).inner_text() != third
