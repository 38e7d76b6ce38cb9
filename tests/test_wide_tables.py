"""Wide tables fit a 1400 px window (issue 19, item 23): the home benchmark table shows all eight tasks unscrolled."""

from __future__ import annotations

import os

import pytest

from tests.conftest import REPO
from tests.test_browser import ARTIFACTS, CHROMIUM, LAUNCH_ARGS, playwright, start_server, stop_server, wait_idle

pytestmark = [pytest.mark.browser, pytest.mark.slow,
              pytest.mark.skipif(not os.path.exists(CHROMIUM) and not os.environ.get("CI"), reason="no system chromium")]
TASK_HEADERS = ["YNAT", "STS", "NLI", "NER", "RE", "DP", "MRC", "WOS"]
#: Each header cell's box and the table's visible box (its scrolling container), in page pixels.
BOXES = """() => {
  const box = document.querySelector('.kv-models').getBoundingClientRect();
  return {right: box.right, cells: [...document.querySelectorAll('.kv-model-table thead th')].map(
    th => ({text: th.innerText.split('\\n')[0].trim(), left: th.getBoundingClientRect().left, right: th.getBoundingClientRect().right}))};
}"""


def test_the_home_table_shows_every_task_at_1400_px():
    process, url = start_server({k: v for k, v in os.environ.items() if k != "KLUE_VIZ_DATA_DIR"})
    try:
        with playwright.sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
            page = browser.new_page(viewport={"width": 1400, "height": 1400})
            page.goto(url)
            page.wait_for_selector(".kv-model-table", timeout=90_000)
            wait_idle(page)
            ARTIFACTS.mkdir(exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / "home-1400.png"), full_page=True)
            boxes = page.evaluate(BOXES)
            browser.close()
    finally:
        stop_server(process)
    cells = {cell["text"]: cell for cell in boxes["cells"]}
    assert [name for name in TASK_HEADERS if name in cells] == TASK_HEADERS
    hidden = [name for name in TASK_HEADERS if cells[name]["right"] > boxes["right"] + 0.5]
    assert not hidden, f"cut at the table's right edge ({boxes['right']:.0f} px): {hidden}"
    assert REPO  # the server ran this worktree's app
