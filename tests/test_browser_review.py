"""In headless Chromium: review the STS suspect queue with the keyboard alone, make a gold version, see what it changes."""

from __future__ import annotations

import os

import pytest

from klue_viz.store.annotations import Store
from tests.conftest import REPO
from tests.test_browser import CHROMIUM, LAUNCH_ARGS, counting, rerun, start_server, stop_server, wait_idle

playwright = pytest.importorskip("playwright.sync_api")
pytestmark = [pytest.mark.browser, pytest.mark.skipif(not os.path.exists(CHROMIUM) and not os.environ.get("CI"), reason="no system chromium")]


def review_position(page) -> int:
    return int(page.locator(".kv-review").get_attribute("data-position"))


def test_accept_two_suspects_with_the_keyboard_and_see_the_gold_version(tmp_path):
    db = tmp_path / "review.sqlite3"
    env = {k: v for k, v in os.environ.items() if k != "KLUE_VIZ_DATA_DIR"} | {"KLUE_VIZ_DB": str(db)}
    process, url = start_server(env)
    try:
        with playwright.sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
            page = counting(browser.new_page(viewport={"width": 1280, "height": 2400}))
            page.goto(f"{url}/sts")
            page.wait_for_selector(".kv-example", timeout=90_000)  # drawn before the rest of the page
            wait_idle(page)
            name = page.get_by_role("textbox", name="Your name (for annotations)")
            name.fill("kim")
            name.press("Enter")  # committed in the widget state every later run sends; the state below proves it took
            page.locator(".st-key-discovery_view button", has_text="Review the gold").click()
            page.wait_for_selector(".kv-review", timeout=90_000)
            wait_idle(page)
            assert review_position(page) == 0
            first = page.locator(".kv-review").get_attribute("data-guid")
            page.wait_for_function("() => !!window.__kvKeys", timeout=60_000)  # the key queue is installed
            page.evaluate("document.activeElement && document.activeElement.blur()")
            # Two presses at once, as a quick reviewer makes them: the second waits for the first one's run and is then
            # taken for the second unit (issue 29, item 13: it was merged into the first, or lost). The test waits for
            # the state the keys make, however long the page takes to rerun.
            page.keyboard.press("a")
            page.keyboard.press("a")
            page.get_by_text("2 reviewed · 2 by you").wait_for(timeout=90_000)
            wait_idle(page)
            assert review_position(page) == 1  # the second accept is the last unit: the position stays on it
            stored = [a for a in Store(str(db)).find(task="sts") if a.run == "gold" and a.gold_wrong]
            assert len(stored) == 2 and first in {a.guid for a in stored} and {a.annotator for a in stored} == {"kim"}
            assert "2 reviewed · 2 by you" in page.locator("body").inner_text()
            rerun(page, page.get_by_role("button", name="Make a gold version (2 accepted)").click)
            page.get_by_text("Kept the gold version dev + corrections, 2 records").wait_for(timeout=60_000)
            page.get_by_text("What the corrections change").first.wait_for(timeout=60_000)
            body = page.locator("body").inner_text()
            assert "Kendall's tau of the two rankings by pearsonr" in body
            rows = page.locator("table.kv-changes tbody tr")
            assert sorted(rows.nth(k).get_attribute("data-run") for k in range(rows.count())) == ["mean-pooling", "roberta-large"]
            assert "pearsonr before" in page.locator("table.kv-changes thead").inner_text()
            (REPO / "artifacts").mkdir(exist_ok=True)
            page.screenshot(path=str(REPO / "artifacts" / "review-gold-version.png"), full_page=True)
            browser.close()
    finally:
        stop_server(process)
