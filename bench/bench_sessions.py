"""Ten people filtering the NER page at once, on the real dev set (5,000 sentences), in headless Chromium.

    python bench/bench_sessions.py [--shared ../shared/klue] [--sessions 10] [--rounds 3]

Starts the app with KLUE_VIZ_DATA_DIR pointing at the real KLUE files, opens /ner in N browser sessions,
uploads the same prediction file in each (scored once, then served from the cache), and then has every
session apply the same filters at the same moment: "wrong", a text search, a regex search, "all". For
each filter it records how long the session waited for its example list to be redrawn.

The reference, run first in this same script against the same server, is ONE session doing the same
filters alone; the figures are the ratio of the N-session waits to it, plus the CPU seconds per filter
of the server and of the browsers (from /proc, so other work on a shared machine does not count; the
browsers share the machine's cores with the server, so their share says what else a wait is made of).
Issue 8's target: with 10 sessions, none waits more than 5 s for a filter. A session whose page stops
working (Streamlit's frontend has been seen to blank the page with "Bad delta path index" when reruns
overlap) counts its filter as not redrawn, is listed with the browser's message and drops out.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from appserver import CHROMIUM_ARGS, IDLE, NER_TAGS, REPO, start_app
from playwright.async_api import Error as PlaywrightError
from playwright.async_api import TimeoutError as PlaywrightTimeout
from playwright.async_api import async_playwright

from klue_viz.scoring.evaluate import load_gold
from klue_viz.tasks import get_task
from klue_viz.tasks.ner import tag_list

CHANGED = "b => { const el = document.querySelector('.kv-count'); return !!el && el.dataset.shown !== b; }"


def start(shared: Path) -> tuple[subprocess.Popen, str]:
    return start_app({"KLUE_VIZ_DATA_DIR": str(shared)})


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process (Linux /proc), in seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def browser_cpu_seconds(server_pid: int) -> float:
    """CPU seconds of the live processes this script started other than the server: Chromium and Playwright's
    driver, which share the machine's cores with the server."""
    processes = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # exited meanwhile
        processes[int(stat.parent.name)] = (int(fields[1]), int(fields[11]) + int(fields[12]))
    mine, grown = {os.getpid()}, True
    while grown:  # descendants, level by level
        found = {pid for pid, (parent, _) in processes.items() if parent in mine and pid != server_pid} - mine
        mine |= found
        grown = bool(found)
    return sum(processes[pid][1] for pid in mine - {os.getpid()}) / os.sysconf("SC_CLK_TCK")


def prediction_file(shared: Path, folder: Path) -> Path:
    gold = load_gold(get_task("ner"), shared)
    rng = random.Random(0)
    lines = [json.dumps({"guid": r["guid"], "tags": [t if rng.random() > 0.03 else rng.choice(NER_TAGS) for t in tag_list(r["tags"])]}, ensure_ascii=False)
             for r in gold.rows]
    path = folder / "ner-run.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


async def open_session(browser, url: str, path: Path):
    page = await browser.new_page(viewport={"width": 1280, "height": 1600})
    await page.goto(f"{url}/ner")
    await page.wait_for_selector(IDLE, timeout=300_000)
    await page.locator('.st-key-pred_upload input[type=file]').set_input_files(str(path))
    await page.wait_for_function("name => document.body.innerText.includes(name)", arg=f"{path.stem} ({path.name})", timeout=300_000)
    await page.wait_for_selector(".kv-count", timeout=300_000)
    await page.wait_for_selector(IDLE, timeout=300_000)
    return page


#: A filter that has not redrawn its example list after this long is counted as a timeout.
GIVE_UP_MS = 60_000


async def wait_changed(page, before: str) -> None:
    await page.wait_for_function(CHANGED, arg=before, timeout=GIVE_UP_MS)


async def filter_round(page, rng: random.Random, waits: list[float]) -> None:
    """The four filters of one round, each timed from the action to the redrawn example count (appended to `waits`)."""

    async def timed(action) -> None:
        await page.wait_for_selector(IDLE, timeout=GIVE_UP_MS * 2)
        before = await page.locator(".kv-count").get_attribute("data-shown")
        start = time.perf_counter()
        await action()
        try:
            await wait_changed(page, before)
        except PlaywrightTimeout:
            waits.append(math.inf)
            return
        waits.append(time.perf_counter() - start)

    search = page.get_by_label("Search the text", exact=True)
    status, regex = page.locator(".st-key-f_status"), page.locator(".st-key-f_regex")  # by widget key: chart text says "wrong" too
    await timed(lambda: status.get_by_text("wrong", exact=True).click())
    word = rng.choice(["서울", "대한", "정부", "한국"])
    await timed(lambda: _type(search, word))
    await regex.get_by_text("regex", exact=True).click()
    await page.wait_for_selector(IDLE, timeout=GIVE_UP_MS * 2)
    await timed(lambda: _type(search, f"{word}[가-힣]{{1,3}}(이|가)"))
    await regex.get_by_text("regex", exact=True).click()
    await _type(search, "")
    await page.wait_for_selector(IDLE, timeout=GIVE_UP_MS * 2)
    await timed(lambda: status.get_by_text("all", exact=True).click())


async def session_round(page, rng: random.Random, errors: list[str]) -> tuple[list[float], bool]:
    """One session's round: its waits, and whether its page still works (if not, the filter counts as not redrawn)."""
    waits: list[float] = []
    try:
        await filter_round(page, rng, waits)
    except PlaywrightError as err:
        errors.append(str(err).splitlines()[0])
        return waits + [math.inf], False
    return waits, True


async def _type(box, text: str) -> None:
    await box.fill(text)
    await box.press("Enter")


async def run(url: str, path: Path, sessions: int, rounds: int, server_pid: int) -> dict:
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        alone = await open_session(browser, url, path)
        cpu, client = cpu_seconds(server_pid), browser_cpu_seconds(server_pid)
        single: list[float] = []
        for k in range(rounds):
            await filter_round(alone, random.Random(k), single)
        single_cpu = (cpu_seconds(server_pid) - cpu) / len(single)
        single_client = (browser_cpu_seconds(server_pid) - client) / len(single)
        print(f"  one session alone: waits {', '.join(f'{w:.2f}' for w in single)} s; {single_cpu:.2f} server CPU s per filter", flush=True)
        await alone.close()
        pages = [await open_session(browser, url, path) for _ in range(sessions)]
        errors: list[str] = []  # what the browser reported when a session's page stopped working
        for page in pages:
            page.on("pageerror", lambda err: errors.append(f"page error: {err}"))
        cpu, client = cpu_seconds(server_pid), browser_cpu_seconds(server_pid)
        together: list[float] = []
        for k in range(rounds):
            results = await asyncio.gather(*(session_round(page, random.Random(k), errors) for page in pages))
            together += [w for waits, _ in results for w in waits]
            pages = [page for page, (_, working) in zip(pages, results) if working]  # a page that stopped working drops out
            print(f"  round {k + 1} with {len(results)} sessions: waits {', '.join(f'{w:.1f}' for waits, _ in results for w in waits)} s", flush=True)
        together_cpu = (cpu_seconds(server_pid) - cpu) / len(together)
        together_client = (browser_cpu_seconds(server_pid) - client) / len(together)
        await browser.close()
    return {"single": single, "together": together, "single_cpu": single_cpu, "together_cpu": together_cpu,
            "single_client": single_client, "together_client": together_client, "errors": errors}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--shared", default=str(REPO.parent / "shared" / "klue"))
    parser.add_argument("--sessions", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    shared = Path(args.shared).resolve()
    process, url = start(shared)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            figures = asyncio.run(run(url, prediction_file(shared, Path(tmp)), args.sessions, args.rounds, process.pid))
    finally:
        process.terminate()
        process.wait(timeout=60)
    single, together = figures["single"], figures["together"]
    reference = statistics.median(single)
    print(f"NER dev, 5,000 sentences: {args.sessions} sessions filtering at once, {args.rounds} rounds of 4 filters each")
    print(f"  one session alone (reference): median {reference:.2f} s, max {max(single):.2f} s per filter; "
          f"server {figures['single_cpu']:.2f}, browsers {figures['single_client']:.2f} CPU s per filter")
    print(f"  {args.sessions} sessions together:          median {statistics.median(together):.2f} s "
          f"({statistics.median(together) / reference:.1f}x), max {max(together):.2f} s ({max(together) / reference:.1f}x); "
          f"server {figures['together_cpu']:.2f}, browsers {figures['together_client']:.2f} CPU s per filter")
    print(f"  waits over 5 s: {sum(w > 5 for w in together)} of {len(together)} (target: none); "
          f"over {GIVE_UP_MS // 1000} s (not redrawn): {sum(math.isinf(w) for w in together)}")
    for error in dict.fromkeys(figures["errors"]):
        print(f"  browser-side: {error}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
