"""How fast the NER page answers in a real browser on the real dev set (5,000 sentences).

    python bench/bench_app.py [--shared ../shared/klue] [--repeat 3] [--code PATH] [--before PATH]

Starts the app with KLUE_VIZ_DATA_DIR pointing at the real KLUE files, opens /ner in headless
Chromium and times (1) from choosing a prediction file to its metrics on the page, and (2) from a
filter click to the re-drawn example list. The reference, timed in this same script, is the core
alone reading and scoring the same file in-process (`evaluate_file`); the ratio says what the UI
adds. Targets: metrics within 2 s of an upload on a quiet machine (issue 28; 3 s in issue 3), a filter within 1 s
(issue 3). `--code PATH` runs another checkout's app; `--before PATH` times a second checkout in the same run, one after
the other on the same files, for before/after figures side by side (the load average is printed with each).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from appserver import CHROMIUM_ARGS, IDLE, NER_TAGS, REPO, start_app
from bench_runs import descendants_cpu, process_cpu
from playwright.sync_api import sync_playwright

from klue_viz.scoring.evaluate import evaluate_file, load_gold
from klue_viz.tasks import get_task
from klue_viz.tasks.ner import tag_list

#: Resolves at the browser's first idle moment (its main thread free of drawing and scripts).
SETTLED = "() => new Promise(resolve => requestIdleCallback(() => resolve(), {timeout: 120000}))"


def start(shared: Path, code: Path, db: Path) -> tuple[subprocess.Popen, str]:
    """The app of `code` on the real dev sets, with a store of its own: the default one (the user's) would keep each
    upload's result, and the next run of this bench, whose files are the same bytes, would read them back unscored."""
    return start_app({"KLUE_VIZ_DATA_DIR": str(shared), "PYTHONPATH": str(code), "KLUE_VIZ_DB": str(db)}, cwd=code)


def prediction_files(shared: Path, folder: Path, count: int) -> list[Path]:
    """Distinct runs (different seeds), so every upload is scored afresh rather than served from the cache."""
    gold = load_gold(get_task("ner"), shared)
    paths = []
    for k in range(count):
        rng = random.Random(k)
        lines = [json.dumps({"guid": r["guid"], "tags": [t if rng.random() > 0.03 else rng.choice(NER_TAGS) for t in tag_list(r["tags"])]}, ensure_ascii=False)
                 for r in gold.rows]
        path = folder / f"ner-run-{k}.jsonl"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        paths.append(path)
    return paths


def page_times(shared: Path, code: Path, files: list[Path], db: Path) -> tuple[list[float], list[float], list[float], list[float], list[float]]:
    """(upload -> metrics in wall seconds, the server's CPU seconds for it, the browser's (headless Chromium and
    Playwright's driver) CPU seconds for it, filter click -> examples re-drawn in wall seconds, the page's first drawing:
    from its script's end to the browser's first idle moment), one of each per file, on a server of `code`. The two CPU
    figures say where a wall above the goal goes: on a 2-core machine the server and the browser drawing the page take
    turns with whatever else runs."""
    process, url = start(shared, code, db)
    uploads, upload_cpu, browser_cpu, filters, settles = [], [], [], [], []
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
            for path in files:
                page = browser.new_page(viewport={"width": 1280, "height": 2000})
                page.goto(f"{url}/ner")
                page.wait_for_selector(IDLE, timeout=120_000)
                # A user picks a file in a page that has finished drawing: the browser keeps drawing charts for seconds
                # after the script's run ends, and an upload timed from then would count that drawing too.
                settle_start = time.perf_counter()
                page.evaluate(SETTLED)
                settles.append(time.perf_counter() - settle_start)
                start_time, cpu_before, browser_before = time.perf_counter(), process_cpu(process.pid), descendants_cpu(os.getpid(), process.pid)
                page.locator('.st-key-pred_upload input[type=file]').set_input_files(str(path))  # the run uploader, not the first one drawn
                page.wait_for_function("name => document.body.innerText.includes(name)", arg=f"{path.stem} ({path.name})", timeout=120_000,
                                       polling=50)  # not every frame: innerText lays the page out, and the browser is what is timed
                page.wait_for_selector('[data-testid="stMetricValue"]', timeout=120_000)
                uploads.append(time.perf_counter() - start_time)
                upload_cpu.append(process_cpu(process.pid) - cpu_before)
                browser_cpu.append(descendants_cpu(os.getpid(), process.pid) - browser_before)
                page.wait_for_selector(IDLE, timeout=120_000)
                before = page.locator(".kv-count").get_attribute("data-shown")
                start_time = time.perf_counter()
                page.locator('[data-testid="stRadio"] label').filter(has_text="wrong").first.click()  # the filter, not a chart's "wrong"
                page.wait_for_function("b => document.querySelector('.kv-count') && document.querySelector('.kv-count').dataset.shown !== b",
                                       arg=before, timeout=60_000)
                filters.append(time.perf_counter() - start_time)
                page.close()
            browser.close()
    finally:
        process.terminate()
        process.wait()
    return uploads, upload_cpu, browser_cpu, filters, settles


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--shared", default=str(REPO.parent / "shared" / "klue"))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--code", default=str(REPO), help="the checkout whose app is timed")
    parser.add_argument("--before", default="", help="another checkout timed the same way in the same run")
    args = parser.parse_args()
    shared = Path(args.shared).resolve()
    checkouts = [("after", Path(args.code).resolve())] + ([("before", Path(args.before).resolve())] if args.before else [])
    with tempfile.TemporaryDirectory() as tmp:
        files = prediction_files(shared, Path(tmp), args.repeat)
        gold = load_gold(get_task("ner"), shared)
        reference = statistics.median(_timed(lambda f=f: evaluate_file(get_task("ner"), gold, f)) for f in files)
        print(f"NER dev, 5,000 sentences, {args.repeat} distinct runs")
        print(f"  core read+score in-process (reference): {reference:.3f} s")
        for label, code in checkouts:
            load = " ".join(f"{x:.2f}" for x in os.getloadavg())
            uploads, upload_cpu, browser_cpu, filters, settles = page_times(shared, code, files, Path(tmp) / f"{label}.sqlite3")
            upload_median, filter_median = statistics.median(uploads), statistics.median(filters)
            print(f"  [{label}] load average {load} at its start")
            print(f"  [{label}] upload -> metrics on the page:          {upload_median:.3f} s  (ratio {upload_median / reference:.1f}x, target <= 2 s); "
                  f"{statistics.median(upload_cpu):.2f} CPU s on the server, {statistics.median(browser_cpu):.2f} in the browser")
            print(f"  [{label}] page drawn: the browser idle {statistics.median(settles):.3f} s after the script's run ended")
            print(f"  [{label}] filter click -> examples re-drawn:      {filter_median:.3f} s  (ratio {filter_median / reference:.1f}x, target < 1 s)",
                  flush=True)
    return 0


def _timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


if __name__ == "__main__":
    sys.exit(main())
