"""Keyboard navigation in headless Chromium: real key presses on the NER page of the demo (mark browser). Each test waits
for a state of the page (the focused example, the script's runs), never for a time."""

from __future__ import annotations

import re

from klue_viz.reading.demo import DEMO_BENCHMARK
from klue_viz.scoring.evaluate import evaluate_file, load_gold
from klue_viz.tasks import TASKS
from tests.conftest import REPO
from tests.test_browser import browser, counting, page, pytestmark, rerun, server, wait_idle  # noqa: F401  (fixtures, and the browser mark)

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
    page.wait_for_function("() => !!window.__kvKeys", timeout=60_000)  # the key queue is installed: a state, not a time
    page.evaluate("document.activeElement && document.activeElement.blur()")  # keys go to the page, not to a widget
    wrong = wrong_guids("char-bilstm")
    positions = [int(g.split("_")[2].split("-")[0]) + 1 for g in wrong[:3]]  # klue-ner-v1_dev_00003-... is the 4th sentence
    for position in positions:
        page.keyboard.press("n")
        page.get_by_text(f"(focused: {position} of 24)").wait_for(timeout=60_000)
        wait_idle(page)
    page.wait_for_selector(FOCUSED, timeout=30_000)
    third = wrong[2]
    assert page.locator(FOCUSED).inner_text() == third
    assert re.search(r"[?&]cursor=" + re.escape(third) + r"(&|$)", page.url)
    rerun(page, lambda: page.keyboard.press("k"))  # back one example: the one before the third error in file order
    assert page.locator(FOCUSED).count() == 1 and page.locator(FOCUSED).inner_text() != third


def ready(page, server: str) -> None:  # noqa: F811
    page.goto(f"{server}/ner?run=char-bilstm")
    page.wait_for_selector(".kv-example", timeout=90_000)
    page.get_by_text("Keys: J/K next/previous example").wait_for(timeout=90_000)
    wait_idle(page)
    page.wait_for_function("() => !!window.__kvKeys", timeout=60_000)  # the key queue is installed
    page.evaluate("document.activeElement && document.activeElement.blur()")


def test_keys_pressed_while_the_page_reruns_are_all_taken(page, server):  # noqa: F811
    """Issue 29, item 13: three presses of N at once, without waiting for the page: the first starts a run, the other two
    wait for it (a badge says so) and are replayed, so the cursor lands on the third wrong example, as with pauses."""
    ready(page, server)
    wrong = wrong_guids("char-bilstm")
    third = int(wrong[2].split("_")[2].split("-")[0]) + 1
    for _ in range(3):
        page.keyboard.press("n")
    page.get_by_text(f"(focused: {third} of 24)").wait_for(timeout=90_000)
    wait_idle(page)
    page.wait_for_function("() => !document.getElementById('kv-key-queue')", timeout=30_000)  # nothing left waiting
    assert page.locator(FOCUSED).inner_text() == wrong[2]


def test_every_key_keeps_the_focused_card_in_view(browser, server):  # noqa: F811
    """Issue 28, item 6: in a window shorter than the list, each J press scrolls the focused card into view (the scroll
    script ran only for the first press: from the third, the card was below the window)."""
    context = browser.new_context(viewport={"width": 1280, "height": 700})
    page = counting(context.new_page())  # noqa: F811  (a short window of its own, not the fixture)
    try:
        ready(page, server)
        for position in range(1, 8):
            page.keyboard.press("j")
            page.get_by_text(f"(focused: {position} of 24)").wait_for(timeout=60_000)
            page.wait_for_function("""() => { const c = document.querySelector('.kv-head[data-cursor="true"]');
                if (!c) { return false; } const r = c.getBoundingClientRect(); return r.top >= 0 && r.bottom <= window.innerHeight; }""",
                                   timeout=30_000)
            wait_idle(page)
    finally:
        context.close()
