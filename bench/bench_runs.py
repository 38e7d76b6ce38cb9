"""Many stored runs: adding them, and the first pages a server draws with them (issue 15).

    python bench/bench_runs.py [--shared ../shared/klue] [--only add,home100,home1000,ner50] [--before PATH] [--times N]

CPU seconds (user + system of the process and its children), on the real KLUE dev sets:

- `add`: `klue-viz runs add` of 100 files (50 NER + 50 NLI dev runs made from the dev gold with
  random errors) into a new SQLite store, as one process. Goal: at most 0.3 CPU s per run.
  Also the kept bytes per NER sentence on disk (goal: at most 2 KB).
- `home100`: the home page, first load after a server start, with those 100 runs stored (and kept);
  goal at most 3 CPU s on the server and 1 GB resident. Measured twice: on the first server on that store (it
  scores and keeps the embedded demo's runs of the tasks without stored runs, and parses the golds `runs add` did
  not keep) and on a second server started after it.
- `home1000`: the same with 1,000 stored runs over the 8 tasks (125 each: runs of the NER, NLI, STS,
  DP and WoS dev sets, YNAT, RE and MRC demo runs with lines dropped, scored against the demo gold
  as the app does for tasks missing from shared/klue); goal (issue 28) 2 CPU s on the server, and 1.5 GB.
- `ner50`: the NER page with 50 stored NER runs, first load after a start: goal (issue 28) 1.5 CPU s. Measured
  twice: on a server started first on that store (the page's weak slices computed, then kept) and on a second
  server started after it (they are read back).
- `hello`: the floor every figure above stands on: the first load of a bare Streamlit hello-world app (a title
  and a line of text) after its server's start, measured the same way in the same run.

Server CPU is read from /proc/<pid>/stat before and after the page is drawn in headless Chromium
(the server was started and left idle first, so its start-up is not counted; the first load is).
`--before PATH` adds and draws everything a second time with another checkout of klue-viz (e.g. `git archive d663be4 |
tar -x -C /tmp/before_speed`), for before/after figures side by side in one run: the same files added by each
checkout's own `runs add` (results are kept under a fingerprint of the code that scored them), each page on its own
copy of that store (the first server on a store keeps the views it computes). `--times N` measures each first load N
times and gives the median (a first server each time on a fresh copy of the store; then N next servers on the last
one), for figures steadier than one load on a shared machine.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from appserver import CHROMIUM_ARGS, IDLE, NER_TAGS, REPO, start_app
from playwright.sync_api import sync_playwright

from klue_viz.reading.demo import demo_runs
from klue_viz.scoring.evaluate import load_gold
from klue_viz.tasks import TASKS, get_task
from klue_viz.tasks.ner import tag_list

TICKS = os.sysconf("SC_CLK_TCK")


def noisy_run(task_name: str, gold, seed: int) -> str:
    """A prediction file made from the dev gold with random errors, one JSON line per example."""
    rng = random.Random(seed)
    records = []
    for row in gold.rows:
        if task_name == "ner":
            records.append({"guid": row["guid"], "tags": [t if rng.random() > 0.03 else rng.choice(NER_TAGS) for t in tag_list(row["tags"])]})
        elif task_name == "nli":
            labels = ["entailment", "neutral", "contradiction"]
            records.append({"guid": row["guid"], "label": row["gold"] if rng.random() > 0.2 else rng.choice(labels)})
        elif task_name == "sts":
            records.append({"guid": row["guid"], "score": min(5.0, max(0.0, row["gold"] + rng.gauss(0, 0.7)))})
        elif task_name == "dp":
            n = len(row["heads"])
            records.append({"guid": row["guid"], "head": [rng.randint(0, n) if rng.random() < 0.1 else h for h in row["heads"]],
                            "deprel": [d if rng.random() > 0.1 else "NP" for d in row["deprels"]]})
        elif task_name == "wos":
            records.append({"guid": row["dialogue"], "turn": row["turn"], "state": [s for s in row["gold_state"] if rng.random() > 0.1]})
    return "\n".join(json.dumps(r, ensure_ascii=False) for r in records) + "\n"


def demo_variant(path: Path, seed: int) -> str:
    """A demo run with random lines dropped (a distinct run of the same task: different bytes, different scores)."""
    rng = random.Random(seed)
    lines = [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return "\n".join(line for k, line in enumerate(lines) if k == 0 or rng.random() > 0.1) + "\n"


#: Tasks whose dev set is in shared/klue (the app scores them against it); the others against the embedded demo.
REAL = ("ner", "nli", "sts", "dp", "wos")


def make_runs(shared: Path, folder: Path, per_task: int, tasks: list[str]) -> list[Path]:
    """Checkpoint runs ckpt000... per task, in folder/<task>-model/ (the folder names the model)."""
    paths = []
    for name in tasks:
        model = folder / f"{name}-model"
        model.mkdir(parents=True, exist_ok=True)
        if name in REAL:
            gold = load_gold(get_task(name), shared)
            texts = (noisy_run(name, gold, 1000 * len(paths) + k) for k in range(per_task))
        else:
            source = next(p for p in demo_runs(name) if p.suffix == ".jsonl")
            texts = (demo_variant(source, k) for k in range(per_task))
        suffix = ".jsonl"
        for k, text in enumerate(texts):
            path = model / f"{name}-ckpt{k:03d}{suffix}"
            path.write_text(text, encoding="utf-8")
            paths.append(path)
    return paths


def cli_add(paths: list[Path], db: Path, shared: Path, code: Path = REPO) -> tuple[float, subprocess.CompletedProcess]:
    """CPU seconds of one `klue-viz runs add` process of the checkout `code` over `paths`, with the app's gold
    (KLUE_VIZ_DATA_DIR, the demo for the rest). Results are kept under a fingerprint of the scoring code that kept them,
    so each checkout's pages are timed on a store its own `runs add` made."""
    db.parent.mkdir(parents=True, exist_ok=True)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run([sys.executable, "-m", "klue_viz.cli.main", "runs", "add", *map(str, paths)],
                          env=dict(os.environ, KLUE_VIZ_DB=str(db), KLUE_VIZ_DATA_DIR=str(shared), PYTHONPATH=str(code)),
                          capture_output=True, text=True, cwd=code)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), done


def process_cpu(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS  # utime, stime


def descendants_cpu(pid: int, skip: int | None = None) -> float:
    """CPU seconds (user + system) of every living process below `pid` (its children, theirs, ...), leaving out the
    subtree of `skip`: from the bench's own process, the headless Chromium and Playwright's driver, without the server."""
    parents: dict[int, int] = {}
    cpu: dict[int, float] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:  # the process ended meanwhile
            continue
        parents[int(stat.parent.name)] = int(fields[1])
        cpu[int(stat.parent.name)] = (int(fields[11]) + int(fields[12])) / TICKS
    below, frontier = set(), [pid]
    while frontier:
        children = [child for child, parent in parents.items() if parent in frontier and child != skip]
        below.update(children)
        frontier = children
    return sum(cpu[p] for p in below)


def process_rss(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def first_load(db: Path, shared: Path, page_path: str, wait_for: str, code: Path) -> tuple[float, float, float]:
    """(server CPU s, resident MB after, wall s) of the first load of a page after a server start, the server running `code`'s klue_viz."""
    process, url = start_app({"KLUE_VIZ_DATA_DIR": str(shared), "KLUE_VIZ_DB": str(db), "PYTHONPATH": str(code)}, cwd=code)
    try:
        time.sleep(2)
        cpu_before = process_cpu(process.pid)
        start = time.perf_counter()
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1280, "height": 2000})
            page.goto(f"{url}{page_path}")
            page.wait_for_selector(wait_for, timeout=900_000)
            page.wait_for_selector(IDLE, timeout=900_000)
            wall = time.perf_counter() - start
            browser.close()
        return process_cpu(process.pid) - cpu_before, process_rss(process.pid), wall
    finally:
        process.terminate()
        process.wait()


HELLO_APP = 'import streamlit as st\n\nst.title("Hello")\nst.write("world")\n'


def hello_first_load(folder: Path) -> tuple[float, float, float]:
    """(server CPU s, resident MB, wall s) of the first load of a bare Streamlit hello-world app after its server's start."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "app.py").write_text(HELLO_APP, encoding="utf-8")
    return first_load(folder / "unused.sqlite3", folder, "/", "h1", folder)


def kept_bytes_per_sentence(db: Path, sentences: int) -> float:
    folder = db.with_name(db.name + ".kept")
    ner_keys = [p for p in folder.iterdir() if (p / "entities.parquet").exists()]
    total = sum(f.stat().st_size for p in ner_keys for f in p.iterdir())
    return total / len(ner_keys) / sentences if ner_keys else float("nan")


def store_copy(db: Path, label: str) -> Path:
    """The store of `db` (its folder: the database and its kept results) copied beside it, for the servers of one page
    (the first one keeps what it computes in it)."""
    folder = db.parent.with_name(f"{db.parent.name}-{label}")
    shutil.copytree(db.parent, folder)
    return folder / db.name


def page_figures(db: Path, label: str, shared: Path, page_path: str, wait_for: str, code: Path, times: int) -> list[tuple[float, float, float]]:
    """(server CPU s, resident MB, wall s) of the first load of a page on a first server of the store `db` and on a next
    one, each the median of `times` loads (every first server on a fresh copy of the store)."""
    firsts, nexts, copy = [], [], db
    for k in range(times):
        copy = store_copy(db, f"{label}{k}")
        firsts.append(first_load(copy, shared, page_path, wait_for, code))
    for _ in range(times):
        nexts.append(first_load(copy, shared, page_path, wait_for, code))
    return [(statistics.median(f[0] for f in found), statistics.median(f[1] for f in found), statistics.median(f[2] for f in found))
            for found in (firsts, nexts)]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--shared", default=str(REPO.parent / "shared" / "klue"))
    parser.add_argument("--only", default="hello,add,home100,ner50,home1000")
    parser.add_argument("--code", default=str(REPO), help="the checkout whose klue_viz the server runs (another one measures 'before')")
    parser.add_argument("--before", default="", help="another checkout whose servers draw the same pages on a copy of the same store")
    parser.add_argument("--times", type=int, default=1, help="first loads per figure (the median is printed)")
    args = parser.parse_args()
    shared = Path(args.shared).resolve()
    wanted = set(args.only.split(","))
    checkouts = [("after", Path(args.code).resolve())] + ([("before", Path(args.before).resolve())] if args.before else [])
    print(f"load average at the start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        if "hello" in wanted:
            cpu, rss, wall = hello_first_load(root / "hello")
            print(f"reference: a bare Streamlit hello-world app, first load after a start: {cpu:.2f} CPU s on the server, {rss:.0f} MB, "
                  f"{wall:.1f} s wall", flush=True)
        if wanted & {"add", "home100", "ner50"}:
            paths = make_runs(shared, root / "files100", 50, ["ner", "nli"])
            n_sentences = len(load_gold(get_task("ner"), shared).rows)
            for label, code in checkouts:
                db = root / f"100-{label}" / "runs.sqlite3"
                cpu, done = cli_add(paths, db, shared, code)
                lines = done.stdout.splitlines()
                print(f"[{label}] runs add: {len(paths)} files (50 NER + 50 NLI dev runs) in one process: {cpu:.2f} CPU s, "
                      f"{cpu / len(paths):.3f} CPU s per run (goal <= 0.3); exit {done.returncode}, "
                      f"{sum(1 for line in lines if not line.startswith('refused'))} lines scored", flush=True)
                if done.returncode:
                    print(done.stderr[-2000:])
                print(f"[{label}] kept results: {kept_bytes_per_sentence(db, n_sentences):.0f} bytes per NER sentence on disk (goal <= 2048)",
                      flush=True)
                if "home100" in wanted:
                    for when, (cpu, rss, wall) in zip(("first server on the store", "next server"),
                                                      page_figures(db, "home", shared, "/", ".kv-model-table", code, args.times)):
                        print(f"[{label}] home page, 100 stored runs, first load after a start, {when}: {cpu:.2f} CPU s on the server (goal <= 3), "
                              f"{rss:.0f} MB resident (goal <= 1024), {wall:.1f} s wall", flush=True)
                if "ner50" in wanted:
                    for when, (cpu, rss, wall) in zip(("first server on the store", "next server (views kept)"),
                                                      page_figures(db, "ner", shared, "/ner", ".kv-count", code, args.times)):
                        print(f"[{label}] NER page, 50 stored NER runs, first load after a start, {when}: {cpu:.2f} CPU s on the server "
                              f"(goal <= 1.5), {rss:.0f} MB, {wall:.1f} s wall", flush=True)
        if "home1000" in wanted:
            paths = make_runs(shared, root / "files1000", 125, list(TASKS))
            for label, code in checkouts:
                db = root / f"1000-{label}" / "runs.sqlite3"
                cpu, done = cli_add(paths, db, shared, code)
                print(f"[{label}] runs add: {len(paths)} files over 8 tasks: {cpu:.1f} CPU s ({cpu / len(paths):.3f} per run); "
                      f"exit {done.returncode}", flush=True)
                for when, (cpu, rss, wall) in zip(("first server on the store", "next server"),
                                                  page_figures(db, "home", shared, "/", ".kv-model-table", code, args.times)):
                    print(f"[{label}] home page, 1,000 stored runs (8 tasks), first load after a start, {when}: {cpu:.2f} CPU s on the server "
                          f"(goal <= 2), {rss:.0f} MB resident (goal <= 1536), {wall:.1f} s wall", flush=True)
    print(f"load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
