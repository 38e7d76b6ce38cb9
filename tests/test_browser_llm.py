"""In headless Chromium: an LLM run uploaded on the NLI page shows each example's generated answer with the part the
parser read marked, the unreadable answer with its reason, the choices with their log-likelihoods, and the prompt
one click away, all as text (artifacts/nli-llm.png is the screenshot to look at)."""

from __future__ import annotations

import os

import pytest

from tests.test_browser import ARTIFACTS, CHROMIUM, LAUNCH_ARGS, open_task, playwright, start_server, stop_server, upload, wait_idle
from tests.test_llm_page import llm_run

pytestmark = [pytest.mark.browser]


@pytest.fixture(scope="module")
def server():
    process, url = start_server({k: v for k, v in os.environ.items() if k != "KLUE_VIZ_DATA_DIR"})
    yield url
    stop_server(process)


def test_the_cards_of_an_llm_run(server, tmp_path):
    data, rows = llm_run()
    path = tmp_path / "llm-run.jsonl"
    path.write_bytes(data)
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 2400})
        open_task(page, server, "nli")
        upload(page, path)
        page.wait_for_function("name => document.body.innerText.includes(name)", arg="llm-run (llm-run.jsonl)", timeout=120_000)
        page.goto(f"{server}/nli?run=llm-run")  # the stored run, inspected (its link)
        page.wait_for_function("() => document.querySelectorAll('.kv-llm').length >= 3", timeout=120_000)
        wait_idle(page)
        assert page.locator(".kv-llm").count() == 3
        assert page.locator("mark.kv-used").first.inner_text() in ("참", "중립", "거짓")
        assert page.locator("img[src=x]").count() == 0  # the hostile answer is text
        assert "<img src=x onerror=alert(1)> 참 또는 거짓" in page.locator(".kv-llm").nth(1).inner_text()
        assert "unreadable answer" in page.locator(".kv-llm").nth(1).inner_text()
        assert "중립" in page.locator('.kv-choice[data-chosen="yes"]').inner_text()
        prompt = page.locator(".kv-llm details").first
        # the disclosure marker shows (a summary styled inline-block has none: issue 28, item 8)
        assert prompt.locator("summary").evaluate("s => getComputedStyle(s).display") == "list-item"
        prompt.locator("summary").click()
        assert "전제: <i>x</i>" in prompt.inner_text() and page.locator(".kv-llm i").count() == 0
        ARTIFACTS.mkdir(exist_ok=True)
        page.locator(".kv-llm").first.scroll_into_view_if_needed()
        page.screenshot(path=str(ARTIFACTS / "nli-llm.png"), full_page=True)
        browser.close()
