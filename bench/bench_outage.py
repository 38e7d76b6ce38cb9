"""Page loads with the annotation database down (issue 29 item 7): how long a page waits, before and after the outage is
remembered.

A TCP port that accepts connections and never answers stands in for a hung PostgreSQL server (or one behind a firewall
that drops packets): each connection to it waits `CONNECT_TIMEOUT`. The YNAT page is opened in Streamlit's AppTest and
reloaded; for each load the script prints the wall seconds (the user's wait: time spent waiting on the network, not
CPU), the CPU seconds of this process and the connections the page opened.

    PYTHONPATH=. python bench/bench_outage.py [--reloads 2] [--connect-timeout 5] [--repo PATH]

`--repo` runs another checkout's code (the main branch, for the figure before the change). The figures are in the
report of issue 29 item 7.
"""

from __future__ import annotations

import argparse
import os
import resource
import socket
import sys
import tempfile
import threading
import time
from pathlib import Path


def cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reloads", type=int, default=2)
    parser.add_argument("--connect-timeout", type=int, default=5)
    parser.add_argument("--repo", default=str(Path(__file__).resolve().parents[1]))
    args = parser.parse_args()
    sys.path.insert(0, args.repo)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ["HF_HOME"] = tempfile.mkdtemp(prefix="klue-viz-hf-")
    from streamlit.testing.v1 import AppTest

    from klue_viz.store import annotations
    from klue_viz.ui.home import PAGE_FILES

    annotations.CONNECT_TIMEOUT = args.connect_timeout
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(256)
    held: list[socket.socket] = []

    def accept() -> None:
        while True:
            held.append(listener.accept()[0])

    threading.Thread(target=accept, daemon=True).start()
    os.environ["KLUE_VIZ_DB"] = f"postgresql://klue@127.0.0.1:{listener.getsockname()[1]}/klue"
    print(f"code: {args.repo}; connect timeout {args.connect_timeout} s")
    wall, spent, before = time.monotonic(), cpu(), len(held)
    at = AppTest.from_file(str(Path(args.repo) / "app.py"), default_timeout=3600).run()
    at.switch_page(PAGE_FILES["ynat"]).run()
    print(f"first load (home, then YNAT): {time.monotonic() - wall:6.1f} s wall, {cpu() - spent:5.1f} CPU s, {len(held) - before} connections")
    for k in range(args.reloads):
        wall, spent, before = time.monotonic(), cpu(), len(held)
        at.run()
        print(f"reload {k + 1}: {time.monotonic() - wall:6.1f} s wall, {cpu() - spent:5.1f} CPU s, {len(held) - before} connections")


if __name__ == "__main__":
    main()
