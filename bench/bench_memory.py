"""Server memory with many sessions on the NER page of the real dev set (5,000 sentences).

    python bench/bench_memory.py [--shared ../shared/klue] [--sessions 10]

Stores one NER prediction run in a fresh database, starts the app on the real KLUE files, then opens
the NER page in N browser contexts (N sessions), one after another, and keeps them open. The server's
resident memory (VmRSS of its process) is read after the first session, after the N-th, and after
all of them are closed and Streamlit has dropped them (the bench sets
server.disconnectedSessionTTL to 5 s instead of 120 s to wait less). Targets (issue 9): under
1.5 GB with 10 sessions; back within 300 MB of the one-session size once they are closed.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from appserver import CHROMIUM_ARGS, IDLE, NER_TAGS, REPO, start_app
from playwright.sync_api import sync_playwright

sys.path.insert(0, str(REPO))

from klue_viz.scoring.evaluate import load_gold  # noqa: E402
from klue_viz.store.annotations import Store  # noqa: E402
from klue_viz.store.runs import RunStore  # noqa: E402
from klue_viz.tasks import get_task  # noqa: E402
from klue_viz.tasks.ner import tag_list

MB = 1024 * 1024


def rss(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError("no VmRSS")


def start(shared: Path, db: str) -> tuple[subprocess.Popen, str]:
    return start_app({"KLUE_VIZ_DATA_DIR": str(shared), "KLUE_VIZ_DB": db}, "--server.disconnectedSessionTTL", "5")


def store_run(shared: Path, db: str) -> None:
    gold = load_gold(get_task("ner"), shared)
    rng = random.Random(0)
    lines = [json.dumps({"guid": r["guid"], "tags": [t if rng.random() > 0.03 else rng.choice(NER_TAGS) for t in tag_list(r["tags"])]}, ensure_ascii=False)
             for r in gold.rows]
    RunStore(Store(db)).add("ner", "ner-bench.jsonl", ("\n".join(lines) + "\n").encode("utf-8"), model="bench")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--shared", default=str(REPO.parent / "shared" / "klue"))
    parser.add_argument("--sessions", type=int, default=10)
    args = parser.parse_args()
    shared = Path(args.shared).resolve()
    with tempfile.TemporaryDirectory() as tmp:
        db = str(Path(tmp) / "bench.sqlite3")
        store_run(shared, db)
        process, url = start(shared, db)
        figures = {"started": rss(process.pid)}
        try:
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
                contexts = []
                for k in range(args.sessions):
                    context = browser.new_context(viewport={"width": 1280, "height": 2000})
                    page = context.new_page()
                    page.goto(f"{url}/ner")
                    page.wait_for_selector(".kv-example", timeout=180_000)
                    page.wait_for_selector(IDLE, timeout=180_000)
                    contexts.append(context)
                    figures[f"session {k + 1}"] = rss(process.pid)
                    print(f"  {k + 1:2d} session(s) open: {figures[f'session {k + 1}'] / MB:7.0f} MB", flush=True)
                for context in contexts:
                    context.close()
                browser.close()
            time.sleep(20)  # past the 5 s disconnected-session TTL and Streamlit's cleanup pass
            figures["closed"] = rss(process.pid)
        finally:
            process.terminate()
            process.wait()
    first, peak, closed = figures["session 1"], max(v for k, v in figures.items() if k.startswith("session")), figures["closed"]
    print(f"NER dev (5,000 sentences), {args.sessions} sessions on /ner")
    print(f"  server started:          {figures['started'] / MB:7.0f} MB")
    print(f"  after the first session: {first / MB:7.0f} MB")
    print(f"  peak with {args.sessions} sessions:   {peak / MB:7.0f} MB  (target < 1536 MB)")
    print(f"  all sessions closed:     {closed / MB:7.0f} MB  ({(closed - first) / MB:+.0f} MB against one session; target within 300 MB)")
    return 0 if peak < 1536 * MB and closed - first < 300 * MB else 1


if __name__ == "__main__":
    sys.exit(main())
