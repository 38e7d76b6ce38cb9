"""After the first upload on a task page, the page shows its final content when the script finishes (issue 19, item 25):
no grey placeholder (Streamlit's `stSkeleton`, drawn while a tab loads an element type's code) and no greyed stale
element (`data-stale="true"`) remains a moment after the run, in headless Chromium on the real STS dev set."""

from __future__ import annotations

import json
import os

import pytest

from tests.test_browser import ARTIFACTS, CHROMIUM, IDLE, LAUNCH_ARGS, start_server, stop_server, uploader

playwright = pytest.importorskip("playwright.sync_api")
pytestmark = [pytest.mark.browser, pytest.mark.slow]

#: What is grey on the page: the placeholders of element code still loading, and elements left from the previous run.
GREY = """() => {
  const key = e => { const c = e.closest('[data-testid="stElementContainer"]');
                     return c ? (c.className.split(' ').find(x => x.startsWith('st-key-')) || 'unkeyed') : 'outside'; };
  return {skeletons: Array.from(document.querySelectorAll('[data-testid="stSkeleton"]')).map(key),
          stale: Array.from(document.querySelectorAll('[data-stale="true"]')).map(key),
          state: document.querySelector('[data-testid="stApp"]').getAttribute('data-test-script-state')};
}"""


def grey_after_finish(page, done: str) -> tuple[dict, dict]:
    """What is grey when the run whose page shows `done` has finished, and 0.3 s later."""
    page.wait_for_function("""done => document.body.innerText.includes(done)
        && document.querySelector('[data-testid="stApp"]').getAttribute('data-test-script-state') === 'notRunning'""",
                           arg=done, timeout=180_000)
    at_finish = page.evaluate(GREY)
    page.wait_for_timeout(300)
    return at_finish, page.evaluate(GREY)


def test_a_task_page_opened_from_the_home_page_shows_no_grey_placeholder_once_drawn(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "KLUE_VIZ_DATA_DIR"}
    env["KLUE_VIZ_DB"] = str(tmp_path / "annotations.sqlite3")
    process, url = start_server(env)
    try:
        with playwright.sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
            page = browser.new_context(viewport={"width": 1280, "height": 2400}).new_page()
            page.goto(url)
            page.wait_for_selector(IDLE, state="attached", timeout=120_000)
            page.wait_for_function("() => !document.querySelector('[data-testid=\"stSkeleton\"]')", timeout=60_000)
            page.locator('[data-testid="stSidebarNav"] a[href$="/ner"]').click()
            at_finish, later = grey_after_finish(page, "Confusion matrix")
            browser.close()
    finally:
        stop_server(process)
    assert later["skeletons"] == [] and later["stale"] == [], f"grey 0.3 s after the page was drawn: {later} (at the end: {at_finish})"


def test_the_first_upload_leaves_no_grey_placeholder_once_scored(shared, tmp_path):
    records = json.loads((shared / "klue-sts-v1.1" / "klue-sts-v1.1_dev.json").read_text(encoding="utf-8"))
    run = tmp_path / "real-sts.jsonl"
    run.write_text("".join(json.dumps({"guid": r["guid"], "score": round(5 - r["labels"]["label"], 1)}) + "\n" for r in records), encoding="utf-8")
    env = {**os.environ, "KLUE_VIZ_DATA_DIR": str(shared), "KLUE_VIZ_DB": str(tmp_path / "annotations.sqlite3")}
    process, url = start_server(env)
    try:
        with playwright.sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
            page = browser.new_context(viewport={"width": 1280, "height": 2400}).new_page()
            page.goto(f"{url}/sts")
            page.wait_for_function("() => document.body.innerText.includes('No STS run to show yet')", timeout=120_000)
            page.wait_for_selector(IDLE, state="attached", timeout=120_000)
            # A person takes a few seconds to pick a file: by then the tab has loaded what the page had asked for.
            page.wait_for_function("() => !document.querySelector('[data-testid=\"stSkeleton\"]')", timeout=60_000)
            uploader(page, "pred_upload").set_input_files(str(run))
            at_finish, later = grey_after_finish(page, "real-sts (real-sts.jsonl)")
            ARTIFACTS.mkdir(exist_ok=True)
            try:  # for a person to look at; a tab still loading element code can keep a screenshot waiting for its fonts
                page.screenshot(path=str(ARTIFACTS / "sts-first-upload-finished.png"), timeout=20_000)
            except playwright.TimeoutError:
                later["screenshot"] = "timed out waiting for the page's fonts"
            browser.close()
    finally:
        stop_server(process)
    assert later["state"] == "notRunning", "no rerun after the upload's run"
    assert later["skeletons"] == [] and later["stale"] == [], f"grey 0.3 s after the run finished: {later} (at the finish: {at_finish})"
