"""How long `--gold hf` (the app's ?source=hf) waits on a hub endpoint that accepts the connection and never answers
(issue 29 item 5): wall seconds, the wait being for the network, not for the CPU.

    python bench/bench_hub_silent.py [--tree PATH] [--cap 90]

A loopback server accepts every connection and sends nothing; a fresh process from `--tree` (default: this checkout;
give an unpacked older commit to compare) loads the YNAT gold from the hub with HF_ENDPOINT pointing at it, twice (the
second load shows whether the failure was remembered). A process still waiting after `--cap` seconds is stopped.
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = """
import time
from klue_viz.core.problems import InputError
from klue_viz.scoring.evaluate import load_gold
from klue_viz.tasks import get_task
for k in range(2):
    start = time.monotonic()
    try:
        load_gold(get_task("ynat"), "hf")
        said = "loaded"
    except InputError as err:
        said = str(err)[:120]
    print(f"load {k + 1}: {time.monotonic() - start:.1f} s: {said}", flush=True)
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tree", type=Path, default=ROOT)
    parser.add_argument("--cap", type=float, default=90.0)
    args = parser.parse_args()
    server = socket.create_server(("127.0.0.1", 0))
    held: list[socket.socket] = []
    threading.Thread(target=lambda: [held.append(server.accept()[0]) for _ in iter(int, 1)], daemon=True).start()
    env = {**os.environ, "PYTHONPATH": str(args.tree), "HF_ENDPOINT": f"http://127.0.0.1:{server.getsockname()[1]}",
           "HF_HOME": str(Path(os.environ.get("TMPDIR", "/tmp")) / "klue-viz-bench-hub-home")}
    env.pop("HF_HUB_OFFLINE", None)
    env.pop("HF_DATASETS_OFFLINE", None)
    start = time.monotonic()
    try:
        done = subprocess.run([sys.executable, "-c", SCRIPT], cwd=args.tree, env=env, capture_output=True, text=True, timeout=args.cap)
        print(done.stdout.strip() or done.stderr.strip()[-500:])
    except subprocess.TimeoutExpired as stopped:
        print((stopped.stdout or b"").decode().strip())
        print(f"still waiting after {args.cap:.0f} s: stopped")
    print(f"tree {args.tree}: {time.monotonic() - start:.1f} s in all (with the interpreter's start)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
