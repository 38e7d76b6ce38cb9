"""End-to-end in headless Chromium: upload on a task page, click a confusion cell, read the drawn examples.

Screenshots of every task page go to artifacts/ (ignored by git) for a person to look at.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from klue_viz.demo import DEMO_BENCHMARK, demo_runs
from klue_viz.evaluate import evaluate_file, load_gold
from klue_viz.tasks import TASKS
from tests.conftest import REPO

playwright = pytest.importorskip("playwright.sync_api")
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not Path(CHROMIUM).exists() and not os.environ.get("CI"), reason="no system chromium (CI installs it)"),
]
ARTIFACTS = REPO / "artifacts"
LAUNCH_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-quic", "--no-first-run",
               "--disable-background-networking", "--disable-component-update", "--disable-sync"]
IDLE = '[data-testid="stApp"][data-test-script-state="notRunning"]'
CELL_POSITION = """([gold, pred]) => {
  const gd = document.querySelector('.js-plotly-plot');
  const xa = gd._fullLayout.xaxis, ya = gd._fullLayout.yaxis;
  const box = gd.querySelector('.nsewdrag').getBoundingClientRect();
  return {x: box.left + xa.d2p(pred), y: box.top + ya.d2p(gold)};
}"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(env: dict) -> tuple[subprocess.Popen, str]:
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true", "--server.address", "127.0.0.1",
         "--server.port", str(port), "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none"],
        cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        try:
            if urllib.request.urlopen(f"{url}/_stcore/health", timeout=2).read() == b"ok":
                return process, url
        except OSError:
            time.sleep(0.3)
    process.terminate()
    pytest.fail("the Streamlit server did not start within 90 s")


@pytest.fixture(scope="module")
def server():
    process, url = start_server({k: v for k, v in os.environ.items() if k != "KLUE_VIZ_DATA_DIR"})
    yield url
    process.terminate()
    process.wait(timeout=30)


@pytest.fixture(scope="module")
def browser():
    with playwright.sync_playwright() as p:
        instance = p.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
        yield instance
        instance.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 2400})
    yield context.new_page()
    context.close()


def wait_idle(page) -> None:
    page.wait_for_timeout(300)
    page.wait_for_selector(IDLE, timeout=90_000)


def open_task(page, server: str, task: str) -> None:
    page.goto(f"{server}/{task}")
    wait_idle(page)
    page.wait_for_selector(".kv-example", timeout=90_000)


def shown(page) -> int:
    return int(page.locator(".kv-count").get_attribute("data-shown"))


def upload(page, path: Path) -> None:
    page.locator('[data-testid="stFileUploader"] input[type=file]').first.set_input_files(str(path))
    wait_idle(page)


def click_cell(page, gold: str, pred: str) -> None:
    position = page.evaluate(CELL_POSITION, [gold, pred])
    page.mouse.click(position["x"], position["y"])
    wait_idle(page)


def uploaded_copy(task: str, tmp_path: Path) -> Path:
    source = next(p for p in demo_runs(task))
    target = tmp_path / f"uploaded-{source.name}"
    target.write_bytes(source.read_bytes())
    return target


def most_confused(task: str) -> tuple[str, str]:
    """The most frequent wrong (gold, pred) cell of the run a task page inspects first."""
    result = evaluate_file(TASKS[task], load_gold(TASKS[task], DEMO_BENCHMARK), next(demo_runs(task)))
    pairs = TASKS[task].confusion(result.frames)
    wrong = pairs[pairs["gold"].astype(str) != pairs["pred"].astype(str)]
    return tuple(map(str, wrong.groupby(["gold", "pred"]).size().idxmax()))


@pytest.mark.parametrize("task,selector", [("ner", ".kv-ent"), ("dp", ".kv-arc"), ("wos", ".kv-slot"), ("ynat", ".kv-badge")])
def test_upload_click_a_confusion_cell_and_read_the_examples(server, page, tmp_path, task, selector):
    gold, pred = most_confused(task)
    open_task(page, server, task)
    total = shown(page)
    uploaded = uploaded_copy(task, tmp_path)
    upload(page, uploaded)
    page.wait_for_function("name => document.body.innerText.includes(name)", arg=f"{uploaded.stem} ({uploaded.name})", timeout=60_000)
    wait_idle(page)
    page.wait_for_selector(".js-plotly-plot .nsewdrag")
    click_cell(page, gold, pred)
    page.wait_for_function("total => { const el = document.querySelector('.kv-count'); return !!el && Number(el.dataset.shown) < total; }", arg=total, timeout=30_000)
    wait_idle(page)  # the count is drawn before the examples: let the rerun finish replacing them
    narrowed = shown(page)
    assert 0 < narrowed < total
    assert page.locator(".kv-example").count() == min(narrowed, 10)
    assert page.locator(selector).count() > 0
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{task}-filtered.png"))


def test_drawings_carry_the_stable_classes(server, page):
    open_task(page, server, "ner")
    assert page.locator('.kv-ent[data-side="gold"]').count() > 0 and page.locator('.kv-ent[data-side="pred"]').count() > 0
    open_task(page, server, "dp")
    assert page.locator('svg .kv-arc[data-side="gold"]').count() > 0 and page.locator('svg .kv-arc[data-status="wrong_head"]').count() > 0
    open_task(page, server, "mrc")
    assert page.locator(".kv-answer").count() > 0
    open_task(page, server, "re")
    assert page.locator(".kv-subj").count() > 0 and page.locator(".kv-obj").count() > 0


def test_every_page_opens_directly_and_is_saved_as_a_screenshot(server, page):
    ARTIFACTS.mkdir(exist_ok=True)
    page.goto(server)
    wait_idle(page)
    assert page.get_by_text("Loaded runs").is_visible()
    page.wait_for_selector('[data-testid="stDataFrame"] canvas', timeout=60_000)
    page.wait_for_selector('[data-testid="stPageLink"]', timeout=60_000)
    page.wait_for_timeout(1000)
    page.screenshot(path=str(ARTIFACTS / "home.png"))
    for task in TASKS:
        open_task(page, server, task)
        assert page.locator('[data-testid="stException"]').count() == 0
        assert page.locator("h1").first.inner_text().startswith(TASKS[task].title.split()[0])
        page.wait_for_selector(".js-plotly-plot .nsewdrag", timeout=60_000)
        page.wait_for_timeout(800)
        page.screenshot(path=str(ARTIFACTS / f"{task}.png"))


def test_a_tag_survives_a_server_restart_and_is_exported(browser, tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "KLUE_VIZ_DATA_DIR"}
    env["KLUE_VIZ_DB"] = str(tmp_path / "annotations.sqlite3")
    process, url = start_server(env)
    context = browser.new_context(viewport={"width": 1280, "height": 2400}, accept_downloads=True)
    page = context.new_page()
    try:
        open_task(page, url, "ner")
        page.get_by_label("Your name (for annotations)", exact=True).fill("지민")
        page.get_by_label("Your name (for annotations)", exact=True).press("Enter")
        wait_idle(page)
        page.get_by_text("Annotate", exact=True).first.click()
        form = page.locator('[data-testid="stForm"]').filter(has=page.get_by_text("Error tags", exact=True)).first
        form.wait_for(timeout=30_000)
        form.locator('[data-testid="stMultiSelect"]').click()
        page.get_by_role("option", name="type confusion").click()
        form.get_by_label("Note").click()  # closes the option list
        form.get_by_label("Note").fill("유형 혼동: 기관을 지명으로")
        form.get_by_role("button", name="Save").click()
        page.get_by_text("Saved by you").first.wait_for(timeout=30_000)
    finally:
        process.terminate()
        process.wait(timeout=30)
    process, url = start_server(env)
    try:
        open_task(page, url, "ner")
        wait_idle(page)
        remark = page.get_by_text("지민: type confusion")
        remark.wait_for(timeout=30_000)
        page.get_by_text("Annotate", exact=True).first.click()
        detail = page.get_by_text("지민 (bert-crf").first  # a new session with no name yet: shown as someone else's remark
        detail.wait_for(timeout=30_000)
        assert "유형 혼동" in detail.inner_text()

        page.goto(url)
        wait_idle(page)
        page.get_by_text("Download JSONL").wait_for()
        with page.expect_download() as download:
            page.get_by_text("Download JSONL").click()
        exported = [json.loads(line) for line in Path(download.value.path()).read_text(encoding="utf-8").splitlines()]
        assert [(r["task"], r["run"], r["annotator"], r["tags"], r["note"]) for r in exported] == [
            ("ner", "bert-crf", "지민", ["type confusion"], "유형 혼동: 기관을 지명으로")]
        page.screenshot(path=str(ARTIFACTS / "annotations-home.png"))
    finally:
        context.close()
        process.terminate()
        process.wait(timeout=30)


def test_a_box_selection_on_the_sts_scatter_filters_the_pairs(server, page):
    open_task(page, server, "sts")
    total = shown(page)
    plot = page.locator(".js-plotly-plot").nth(1)
    plot.scroll_into_view_if_needed()
    corners = page.evaluate("""() => {
      const gd = document.querySelectorAll('.js-plotly-plot')[1];
      const xa = gd._fullLayout.xaxis, ya = gd._fullLayout.yaxis;
      const box = gd.querySelector('.nsewdrag').getBoundingClientRect();
      return {x0: box.left + xa.d2p(-0.1), y0: box.top + ya.d2p(5.1), x1: box.left + xa.d2p(2.9), y1: box.top + ya.d2p(-0.1)};
    }""")
    page.mouse.move(corners["x0"], corners["y0"])
    page.mouse.down()
    page.mouse.move((corners["x0"] + corners["x1"]) / 2, (corners["y0"] + corners["y1"]) / 2, steps=5)
    page.mouse.move(corners["x1"], corners["y1"], steps=5)
    page.mouse.up()
    page.wait_for_function("total => { const el = document.querySelector('.kv-count'); return !!el && Number(el.dataset.shown) < total; }", arg=total, timeout=30_000)
    assert 0 < shown(page) < total
    assert page.get_by_text("points selected on the scatter plot").is_visible()
