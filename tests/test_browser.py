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

from klue_viz.reading.demo import DEMO_BENCHMARK, demo_runs
from klue_viz.scoring.evaluate import evaluate_file, load_gold
from klue_viz.tasks import TASKS
from tests.conftest import REPO

playwright = pytest.importorskip("playwright.sync_api")
PlaywrightTimeout = playwright.TimeoutError
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not Path(CHROMIUM).exists() and not os.environ.get("CI"), reason="no system chromium (CI installs it)"),
]
ARTIFACTS = REPO / "artifacts"
#: The example cards' Annotate switch (a toggle); the keyboard bar has an "Annotate" button too, disabled until an example is focused.
ANNOTATE_TOGGLE = '[data-testid="stCheckbox"]'
LAUNCH_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-quic", "--no-first-run",
               "--disable-background-networking", "--disable-component-update", "--disable-sync"]
IDLE = '[data-testid="stApp"][data-test-script-state="notRunning"]'
#: Counts the app's script runs (each change of its state to "running"), so that a test waits for the run its action
#: caused instead of for a time (a fixed wait is too short on a loaded machine: issue 29, item 13).
COUNT_RUNS = """(() => {
  window.__kvRuns = 0;
  new MutationObserver(records => {
    for (const r of records) {
      if (r.target.getAttribute('data-test-script-state') === 'running' && r.oldValue !== 'running') { window.__kvRuns += 1; }
    }
  }).observe(document, {subtree: true, attributes: true, attributeFilter: ['data-test-script-state'], attributeOldValue: true});
})();"""
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


def start_server(env: dict, port: int | None = None) -> tuple[subprocess.Popen, str]:
    port = port or free_port()
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


def stop_server(process: subprocess.Popen) -> None:
    """Stop a server; one that ignores SIGTERM for 30 s is killed, so that one hung test does not fail the next."""
    process.terminate()
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=30)


@pytest.fixture(scope="module")
def server():
    process, url = start_server({k: v for k, v in os.environ.items() if k != "KLUE_VIZ_DATA_DIR"})
    yield url
    stop_server(process)


@pytest.fixture(scope="module")
def browser():
    with playwright.sync_playwright() as p:
        instance = p.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
        yield instance
        instance.close()


@pytest.fixture
def page(browser, request):
    context = browser.new_context(viewport={"width": 1280, "height": 2400})
    page = counting(context.new_page())
    yield page
    report = getattr(request.node, "report_call", None)
    if report is not None and report.failed:  # CI shows only the output: say what the page showed
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / f"failed-{request.node.name}.png"), full_page=True)
        print(f"--- {request.node.name}: the page at {page.url} showed:\n{page.locator('body').inner_text()[:3000]}")
    context.close()


def wait_idle(page) -> None:
    """The app's script is not running (with no action just made: after one, `rerun` waits for the run it caused)."""
    page.wait_for_selector(IDLE, timeout=90_000)


def settled(page) -> None:
    """Ready for a screenshot: the script idle, its fonts loaded, no grey placeholder left."""
    wait_idle(page)
    page.evaluate("document.fonts.ready.then(() => true)")
    page.wait_for_function("() => !document.querySelector('[data-testid=\"stSkeleton\"]')", timeout=60_000)


def runs_so_far(page) -> int:
    return int(page.evaluate("window.__kvRuns || 0"))


def rerun(page, action, runs: int = 1) -> None:
    """Do `action` (a click, a key) and wait until it has made `runs` script runs and the last one has finished; pages
    of this module count runs from their start (COUNT_RUNS, added by `counting`). It first waits for the page to be
    idle: an action made while a run is going on restarts that run, which the counter cannot tell from it."""
    wait_idle(page)
    before = runs_so_far(page)
    action()
    page.wait_for_function("""([before, runs]) => (window.__kvRuns || 0) >= before + runs &&
        document.querySelector('[data-testid="stApp"]')?.getAttribute('data-test-script-state') === 'notRunning'""",
                           arg=[before, runs], timeout=90_000)


def counting(page):
    """A page that counts its script runs (COUNT_RUNS) from every load on."""
    page.add_init_script(COUNT_RUNS)
    return page


def open_task(page, server: str, task: str, timeout_ms: int = 90_000) -> None:
    """Open a task page and wait until its script has finished drawing it (the examples come before the rest); a
    server's very first page on an empty workspace scores and keeps the demo's runs first, so its caller may wait longer."""
    page.goto(f"{server}/{task}")
    wait_idle(page)
    page.wait_for_selector(".kv-example", timeout=timeout_ms)
    wait_idle(page)


def shown(page) -> int:
    return int(page.locator(".kv-count").get_attribute("data-shown"))


def pick_option(page, multiselect, name: str | None = None) -> None:
    """Open a multiselect's option list and pick an option (the first if no name).

    Streamlit's react-aria combobox sometimes takes a first click as focus only and leaves
    the list closed (2 in 8 tries here), so the click is repeated until the list shows."""
    options = page.get_by_role("option") if name is None else page.get_by_role("option", name=name)
    for _ in range(6):
        multiselect.get_by_role("combobox").click()
        try:
            options.first.wait_for(timeout=2_000)
            break
        except PlaywrightTimeout:
            page.keyboard.press("Escape")
            wait_idle(page)
    options.first.click()


def uploader(page, key: str):
    """The file input of the uploader with this widget key (not whichever uploader renders first)."""
    return page.locator(f'.st-key-{key} input[type=file]')


def upload(page, path: Path) -> None:
    uploader(page, "pred_upload").set_input_files(str(path))
    wait_idle(page)


def click_cell(page, gold: str, pred: str) -> None:
    page.locator(".js-plotly-plot").first.scroll_into_view_if_needed()  # the page may have scrolled down to the list
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
    page.wait_for_function("name => document.body.innerText.includes(name)", arg=f"{uploaded.stem} ({uploaded.name})", timeout=120_000)
    wait_idle(page)
    page.wait_for_selector(".js-plotly-plot .nsewdrag")
    click_cell(page, gold, pred)
    page.wait_for_function("total => { const el = document.querySelector('.kv-count'); return !!el && Number(el.dataset.shown) < total; }", arg=total, timeout=30_000)
    wait_idle(page)  # the count is drawn before the examples: let the rerun finish replacing them
    narrowed = shown(page)
    assert 0 < narrowed < total
    cards = int(page.locator(".kv-count").get_attribute("data-cards"))  # WoS: one card per dialogue
    assert page.locator(".kv-example").count() == min(cards, 10) and cards <= narrowed
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
    assert page.get_by_text("Models across the benchmark").is_visible()
    page.wait_for_selector('[data-testid="stDataFrame"] canvas', timeout=60_000)
    page.wait_for_selector('[data-testid="stPageLink"]', timeout=60_000)
    settled(page)
    page.screenshot(path=str(ARTIFACTS / "home.png"))
    for task in TASKS:
        open_task(page, server, task)
        assert page.locator('[data-testid="stException"]').count() == 0
        assert page.locator("h1").first.inner_text().startswith(TASKS[task].facts.title.split()[0])
        page.wait_for_selector(".js-plotly-plot .nsewdrag", timeout=60_000)
        settled(page)
        page.screenshot(path=str(ARTIFACTS / f"{task}.png"))
        page.locator(".kv-example").first.screenshot(path=str(ARTIFACTS / f"{task}-example.png"))


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
        page.locator(ANNOTATE_TOGGLE).get_by_text("Annotate", exact=True).first.click()
        form = page.locator('[data-testid="stForm"]').filter(has=page.get_by_text("Error tags", exact=True)).first
        form.wait_for(timeout=30_000)
        pick_option(page, form.locator('[data-testid="stMultiSelect"]'), "type confusion")
        form.get_by_label("Note").click()  # closes the option list
        form.get_by_label("Note").fill("유형 혼동: 기관을 지명으로")
        form.get_by_role("button", name="Save").click()
        page.get_by_text("Saved by you").first.wait_for(timeout=30_000)
    finally:
        stop_server(process)
    process, url = start_server(env)
    try:
        open_task(page, url, "ner")
        wait_idle(page)
        remark = page.get_by_text("지민: type confusion")
        remark.wait_for(timeout=30_000)
        page.locator(ANNOTATE_TOGGLE).get_by_text("Annotate", exact=True).first.click()
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
        stop_server(process)


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
    assert page.get_by_text("selected above (points on a chart").is_visible()


LIVE_FROM_FILES = r"""() => {
  const links = [...document.querySelectorAll('a')].map(a => a.getAttribute('href') || a.getAttribute('xlink:href') || '')
    .filter(h => !/^(\?|\/[a-z]+\?)/.test(h))  // the app's own links to a view (relative, URL-encoded)
    .filter(h => /evil|mailto:|javascript:/.test(h));
  const images = [...document.querySelectorAll('img')].map(i => i.getAttribute('src') || '')
    .filter(s => s === 'x' || /evil/.test(s));
  const scripts = [...document.querySelectorAll('script')].filter(s => /alert/.test(s.textContent)).length;
  const styled = [...document.querySelectorAll('strong, em, del')].filter(e => /^(bold|em|del|b|e)$/.test(e.textContent)).length
    + document.querySelectorAll('.katex').length;
  return {links, images, scripts, styled};
}"""


def test_file_text_never_becomes_a_link_or_an_image_in_the_browser(browser, tmp_path):
    """Hostile gold text (with blank lines), a hostile file name, and a stored note with bare URLs: all shown as text."""
    from klue_viz.store.annotations import Annotation, Store
    from tests.test_hostile_pages import NAME, PAYLOAD, TAG, hostile_gold, hostile_run

    folder = tmp_path / "klue_benchmark"
    shutil.copytree(DEMO_BENCHMARK, folder)
    hostile_gold(folder)
    env = {**os.environ, "KLUE_VIZ_DATA_DIR": str(folder), "KLUE_VIZ_DB": str(tmp_path / "annotations.sqlite3")}
    Store(env["KLUE_VIZ_DB"]).save(Annotation("ynat", "ynat-v1_dev_00000-demo", NAME, "someone", tags=[TAG], note=PAYLOAD))
    run = tmp_path / f"{NAME}.jsonl"
    run.write_bytes(hostile_run("ynat"))
    process, url = start_server(env)
    context = browser.new_context(viewport={"width": 1280, "height": 2400})
    page = context.new_page()
    try:
        page.goto(f"{url}/ynat")
        wait_idle(page)
        upload(page, run)
        page.wait_for_selector(".kv-example", timeout=90_000)
        page.get_by_label("Your name (for annotations)", exact=True).fill("me")
        page.get_by_label("Your name (for annotations)", exact=True).press("Enter")
        wait_idle(page)
        page.locator(ANNOTATE_TOGGLE).get_by_text("Annotate", exact=True).first.click()
        page.get_by_text("Error tags", exact=True).first.wait_for(timeout=30_000)
        page.wait_for_selector(".js-plotly-plot .nsewdrag", timeout=60_000)
        wait_idle(page)
        text = page.locator("body").inner_text().replace("\u2060", "")  # the word joiners that stop autolinks
        assert "http://evil.example/bare" in text and "**bold**" in text and "[link](http://evil.example/l)" in text
        assert page.evaluate(LIVE_FROM_FILES) == {"links": [], "images": [], "scripts": 0, "styled": 0}
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "hostile-ynat.png"), full_page=True)
    finally:
        context.close()
        stop_server(process)


def metric_values(page, at_least: int = 1) -> list[str]:
    """The st.metric values on the page, once at least `at_least` of them are drawn."""
    page.wait_for_function("n => document.querySelectorAll('[data-testid=\"stMetricValue\"]').length >= n", arg=at_least, timeout=60_000)
    return [m.inner_text() for m in page.locator('[data-testid="stMetricValue"]').all()]


def test_an_uploaded_run_survives_a_restart_and_once_removed_is_gone_from_every_page(browser, tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "KLUE_VIZ_DATA_DIR"}
    env["KLUE_VIZ_DB"] = str(tmp_path / "workspace.sqlite3")
    uploaded = uploaded_copy("ner", tmp_path)
    expected = evaluate_file(TASKS["ner"], load_gold(TASKS["ner"], DEMO_BENCHMARK), uploaded)
    values = [f"{expected.scores.values[m.key]:.2f}" for m in TASKS["ner"].facts.metrics]
    label = f"{uploaded.stem} ({uploaded.name})"
    context = browser.new_context(viewport={"width": 1280, "height": 2400})
    page = context.new_page()
    process, url = start_server(env)
    try:
        open_task(page, url, "ner")
        upload(page, uploaded)
        page.wait_for_function("name => document.body.innerText.includes(name)", arg=label, timeout=60_000)
        assert metric_values(page, 9)[-3:-1] == values
    finally:
        stop_server(process)
    process, url = start_server(env, port=int(url.rsplit(":", 1)[1]))  # the same address: a reload of the same page
    try:
        page.reload()
        wait_idle(page)
        page.wait_for_function("name => document.body.innerText.includes(name)", arg=label, timeout=90_000)
        assert metric_values(page, 9)[-3:-1] == values  # the run and its metrics are back after the restart
        page.goto(url)
        wait_idle(page)
        link = page.locator(f'.kv-model-table a[href="/ner?run={uploaded.stem}"]')
        link.wait_for(timeout=60_000)
        assert link.inner_text().startswith(" / ".join(values))
        page.get_by_text("Rename or remove a stored run").click()
        page.get_by_role("button", name="Remove this run").click()
        page.get_by_text(f"Removed {uploaded.stem}").wait_for(timeout=30_000)
        wait_idle(page)
        assert page.locator(f'.kv-model-table a[href="/ner?run={uploaded.stem}"]').count() == 0
        assert uploaded.stem not in page.locator(".kv-model-table").inner_text()
        open_task(page, url, "ner")
        metric_values(page, 6)
        wait_idle(page)
        assert label not in page.inner_text("body") and len(metric_values(page, 6)) == 2 * 3  # the two demo runs only
    finally:
        context.close()
        stop_server(process)


def filters_are_cleared(page) -> bool:
    return (page.get_by_label("Search the text", exact=True).input_value() == ""
            and page.locator('[data-testid="stMultiSelect"] [data-tag]').count() == 0
            and page.locator('[data-testid="stRadio"] label:has(input[type=radio]:checked)').first.inner_text().strip() == "all")


def clear(page, total: int) -> None:
    page.get_by_role("button", name="Clear filters").click()
    page.wait_for_function("total => Number(document.querySelector('.kv-count').dataset.shown) === total", arg=total, timeout=30_000)
    wait_idle(page)


def next_page(page) -> None:
    """The "+" of the example list's page number: the last number input on a task page is the report's error count."""
    page.locator('[data-testid="stNumberInput"]').filter(has=page.get_by_label("Page", exact=True)).get_by_role("button", name="Increment").click()
    page.wait_for_function("() => (document.querySelector('.kv-count')?.innerText || '').includes('(showing 11–')", timeout=60_000)
    wait_idle(page)  # the list moved to its second page


def test_clear_filters_resets_the_widgets_and_the_list_and_stays_cleared(server, page):
    open_task(page, server, "ner")
    total = shown(page)
    rerun(page, page.locator('[data-testid="stRadio"] label').filter(has_text="wrong").first.click)
    wrong = shown(page)

    def pick_an_error_type() -> None:
        pick_option(page, page.locator('[data-testid="stMultiSelect"]').filter(has_text="Error type"))
        page.keyboard.press("Escape")

    rerun(page, pick_an_error_type)
    page.get_by_label("Search the text", exact=True).fill("의")
    rerun(page, lambda: page.get_by_label("Search the text", exact=True).press("Enter"))
    assert shown(page) < total and shown(page) <= wrong
    clear(page, total)
    assert shown(page) == total and filters_are_cleared(page)
    next_page(page)
    assert shown(page) == total and filters_are_cleared(page), "the next rerun must not bring the filters back"

    gold, pred = most_confused("ner")
    page.wait_for_selector(".js-plotly-plot .nsewdrag")
    rerun(page, lambda: click_cell(page, gold, pred))  # the run the click causes, not the page's last one
    assert shown(page) < total
    clear(page, total)
    assert shown(page) == total and filters_are_cleared(page)
    next_page(page)
    assert shown(page) == total and filters_are_cleared(page)


def test_a_copied_example_link_opens_that_example_in_a_new_browser(server, page, browser):
    open_task(page, server, "dp")
    rerun(page, page.locator('[data-testid="stRadio"] label').filter(has_text="wrong").first.click)
    card = page.locator(".kv-example").nth(1)
    guid = card.get_attribute("data-guid")
    assert f"guid={guid}" in page.locator(".kv-link").nth(1).get_attribute("href")
    assert "show=wrong" in page.url, "the page's own URL carries its filters"
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=server)
    page.get_by_role("button", name="Copy link").nth(1).click()
    code = page.locator('[data-testid="stPopoverBody"] [data-testid="stCode"]')
    code.hover()
    code.locator("button").click()  # st.code's own copy button
    link = page.evaluate("() => navigator.clipboard.readText()")
    assert link.startswith(f"{server}/dp?") and f"guid={guid}" in link
    fresh = browser.new_context(viewport={"width": 1280, "height": 2400})
    try:
        other = fresh.new_page()
        other.goto(link)
        wait_idle(other)
        other.wait_for_selector(".kv-example", timeout=90_000)
        assert [e.get_attribute("data-guid") for e in other.locator(".kv-example").all()] == [guid]
        assert other.get_by_text(f"Showing the linked example {guid}").is_visible()
        ARTIFACTS.mkdir(exist_ok=True)
        other.screenshot(path=str(ARTIFACTS / "dp-linked-example.png"))
    finally:
        fresh.close()


def test_a_wos_card_links_to_its_matching_turns_and_a_link_scrolls_that_turn_into_view(server, page):
    page.set_viewport_size({"width": 1280, "height": 800})  # a laptop: the card's later turns are below the fold
    open_task(page, server, "wos")
    rerun(page, page.locator('[data-testid="stRadio"] label').filter(has_text="wrong").first.click)  # the list of wrong turns
    card = page.locator(".kv-example").first
    selected = [t.get_attribute("id") for t in card.locator('.kv-turn[data-selected="true"]').all()]
    jumps = card.locator(".kv-row").first.locator(".kv-jump")
    assert [j.get_attribute("href") for j in jumps.all()][:len(selected)] == [f"#{turn}" for turn in selected]
    target = selected[-1]
    jumps.nth(len(selected) - 1).click()
    page.wait_for_function("""id => { const r = document.getElementById(id).getBoundingClientRect();
                                     return r.top >= 40 && r.bottom <= innerHeight; }""", arg=target, timeout=10_000)


def test_the_home_page_is_named_and_shows_no_developer_toolbar(server, page):
    page.goto(server)
    wait_idle(page)
    nav = page.locator('[data-testid="stSidebarNav"]')
    nav.wait_for(timeout=30_000)
    names = [link.inner_text().strip() for link in nav.locator("a").all()]
    assert names[0] == "Home" and "app" not in names
    assert page.locator('[data-testid="stAppDeployButton"]').count() == 0


def test_saving_a_tag_updates_the_tag_slice_at_once(server, page):
    open_task(page, server, "re")
    page.get_by_text("No error tags on this run yet").wait_for(timeout=30_000)
    page.get_by_label("Your name (for annotations)", exact=True).fill("서연")
    page.get_by_label("Your name (for annotations)", exact=True).press("Enter")
    wait_idle(page)
    page.locator(ANNOTATE_TOGGLE).get_by_text("Annotate", exact=True).first.click()
    form = page.locator('[data-testid="stForm"]').filter(has=page.get_by_text("Error tags", exact=True)).first
    form.wait_for(timeout=30_000)
    pick_option(page, form.locator('[data-testid="stMultiSelect"]'), "similar relation")
    form.get_by_label("Note").click()
    form.get_by_role("button", name="Save").click()
    page.get_by_text("Error tags as a slice").wait_for(timeout=30_000)
    page.get_by_text("Saved by you").first.wait_for(timeout=30_000)


def test_the_loaded_runs_table_shows_every_row_without_scrolling(server, page, tmp_path):
    page.goto(server)
    wait_idle(page)
    extra = []
    for task in ("ynat", "nli", "re"):  # three more runs: more rows than a fixed-height table shows
        lines = next(demo_runs(task)).read_text(encoding="utf-8").splitlines()
        extra.append(tmp_path / f"another-{task}.jsonl")
        extra[-1].write_text("\n".join(lines[1:]), encoding="utf-8")
    uploader(page, "home_upload").set_input_files([str(p) for p in extra])
    wait_idle(page)
    page.locator('[data-testid="stDataFrame"]').nth(1).wait_for(timeout=60_000)  # the detected files, then the runs
    table = page.locator('[data-testid="stDataFrame"]').first
    table.wait_for(timeout=60_000)
    hidden = """() => {
      const tables = document.querySelectorAll('[data-testid="stDataFrame"] .dvn-scroller');
      const s = tables[tables.length - 1];
      return s ? s.scrollHeight - s.clientHeight : null;
    }"""
    try:  # the table reaches its height once its rows are laid out: wait for that state, then read it
        page.wait_for_function(f"() => {{ const h = ({hidden})(); return h !== null && h <= 1; }}", timeout=30_000)
    except PlaywrightTimeout:
        pass
    assert page.evaluate(hidden) <= 1, f"{page.evaluate(hidden)} px of the table are cut off"


def test_strict_and_the_page_url_survive_moving_between_pages(server, page):
    page.goto(server)
    wait_idle(page)
    page.get_by_text("Strict: count gold examples without a prediction as wrong").click()
    wait_idle(page)
    # The rerun that writes the URL can start after wait_idle's first look: wait for it (fails after 30 s).
    page.wait_for_function("() => location.search.includes('strict=1')", timeout=30_000)
    assert "strict=1" in page.url
    page.locator('[data-testid="stSidebarNav"] a').filter(has_text="ner").click()
    wait_idle(page)
    page.wait_for_selector(".kv-example", timeout=90_000)
    assert "strict=1" in page.url and "run=" in page.url
    rerun(page, page.locator('[data-testid="stRadio"] label').filter(has_text="wrong").first.click)
    page.locator('[data-testid="stSidebarNav"] a').filter(has_text="dp").click()
    wait_idle(page)
    page.wait_for_selector(".kv-example", timeout=90_000)
    page.wait_for_function("() => location.search.includes('strict=1')", timeout=30_000)  # the DP page has written its URL
    assert page.get_by_text("this server does not have for this gold").count() == 0, "another page's runs are not carried over"
    assert "show=wrong" not in page.url and "strict=1" in page.url
    page.locator('[data-testid="stSidebarNav"] a').filter(has_text="Home").click()
    wait_idle(page)
    assert page.get_by_role("checkbox", name="Strict: count gold examples without a prediction as wrong").is_checked()

def test_the_downloaded_report_opens_offline_with_the_pages_numbers(server, browser, tmp_path):
    context = browser.new_context(viewport={"width": 1280, "height": 2400}, accept_downloads=True)
    page = context.new_page()
    try:
        open_task(page, server, "nli")
        accuracy = metric_values(page, 4)[0]
        build = page.get_by_text("Build a report of")
        build.wait_for(timeout=30_000)
        build.click()
        button = page.get_by_text("Download the report of")
        button.wait_for(timeout=120_000)
        with page.expect_download(timeout=120_000) as download:
            button.click()
        report = tmp_path / "report.html"
        download.value.save_as(report)
    finally:
        context.close()
    offline = browser.new_context(offline=True)
    try:
        reader = offline.new_page()
        requests = []
        reader.on("request", lambda request: requests.append(request.url))
        reader.goto(report.as_uri())
        assert reader.locator("[data-metric='accuracy']").first.inner_text() == accuracy
        assert reader.locator(".kv-example").count() > 0 and reader.locator("table.kv-confusion").count() == 1
        assert requests == [report.as_uri()]  # the file itself and nothing else
    finally:
        offline.close()


def test_an_uploaded_folder_routes_each_file_to_its_task_under_the_folders_model(browser, tmp_path):
    """Chromium names a folder's files by their path in it; the folder becomes the model, each file goes to its task."""
    folder = tmp_path / "klue-bert"
    folder.mkdir()
    for task in ("ner", "ynat"):
        (folder / f"{task}.jsonl").write_bytes(next(demo_runs(task)).read_bytes())
    env = {k: v for k, v in os.environ.items() if k != "KLUE_VIZ_DATA_DIR"}
    env["KLUE_VIZ_DB"] = str(tmp_path / "workspace.sqlite3")
    context = browser.new_context(viewport={"width": 1280, "height": 2400})
    process, url = start_server(env)
    try:
        page = context.new_page()
        page.goto(url)
        wait_idle(page)
        uploader(page, "home_folder_upload").set_input_files(str(folder))
        wait_idle(page)
        row = page.locator(".kv-model-table tr").filter(has=page.locator("th", has_text="klue-bert"))
        row.wait_for(timeout=60_000)
        # a file named after its task takes its folder's name (issue 28): klue-bert/ner.jsonl is run klue-bert of NER
        assert sorted(a.get_attribute("href") for a in row.locator("a").all()) == ["/ner?run=klue-bert", "/ynat?run=klue-bert"]
    finally:
        context.close()
        stop_server(process)


def select_first_row(page, key: str) -> None:
    """Tick the selection box of a dataframe's first row (the table is drawn on a canvas: header 35 px, rows 35 px)."""
    table = page.locator(f".st-key-{key}")
    table.locator('[data-testid="stDataFrame"]').wait_for(timeout=60_000)
    table.scroll_into_view_if_needed()
    box = table.bounding_box()
    page.mouse.click(box["x"] + 16, box["y"] + 35 + 17)
    wait_idle(page)


def test_a_found_slice_clicked_becomes_the_list_and_a_suspect_marked_becomes_the_patch(server, browser, tmp_path):
    context = browser.new_context(viewport={"width": 1280, "height": 2400}, accept_downloads=True)
    page = context.new_page()
    try:
        open_task(page, server, "ner")
        total = shown(page)
        select_first_row(page, "weak_slice_table")
        apply = page.locator(".st-key-apply_weak_slice button")
        apply.wait_for(timeout=30_000)
        expected = int(apply.inner_text().split()[2])  # "Show these N sentences below"
        apply.click()
        page.wait_for_function("n => { const el = document.querySelector('.kv-count'); return !!el && Number(el.dataset.shown) === n; }",
                               arg=expected, timeout=30_000)
        assert 0 < expected < total and page.locator('[data-testid="stException"]').count() == 0

        open_task(page, server, "ynat")
        page.get_by_label("Your name (for annotations)", exact=True).fill("하늘")
        page.get_by_label("Your name (for annotations)", exact=True).press("Enter")
        wait_idle(page)
        page.locator(".st-key-discovery_view button", has_text="Likely gold errors").click()
        wait_idle(page)
        select_first_row(page, "suspect_table")
        mark = page.locator(".st-key-mark_suspect button")
        mark.wait_for(timeout=30_000)
        proposed = mark.inner_text().split("propose ", 1)[1].strip()
        mark.click()
        wait_idle(page)
        download = page.locator(".st-key-download_patch button")
        download.wait_for(timeout=30_000)
        with page.expect_download(timeout=60_000) as done:
            download.click()
        patch = json.loads(Path(done.value.path()).read_text(encoding="utf-8"))
        assert [record["label"] for record in patch] == [proposed]
    finally:
        context.close()
