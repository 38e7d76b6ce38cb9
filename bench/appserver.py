"""The app as the benchmarks start it: a Streamlit server on a free loopback port, ready when healthy."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
#: Headless Chromium flags for a container (no sandbox, no GPU, nothing fetched in the background).
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
#: A page whose script has finished its run.
IDLE = '[data-testid="stApp"][data-test-script-state="notRunning"]'
NER_TAGS = ["B-PS", "I-PS", "B-LC", "I-LC", "B-OG", "I-OG", "B-DT", "I-DT", "B-TI", "I-TI", "B-QT", "I-QT", "O"]


#: The server runs as on a user's machine, where Python keeps compiled bytecode (this sandbox sets PYTHONDONTWRITEBYTECODE).
USER_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def start_app(env: dict[str, str], *options: str, cwd: Path = REPO) -> tuple[subprocess.Popen, str]:
    """`streamlit run app.py` (of the checkout `cwd`, this one by default) with `env` added to this process's environment and extra
    server `options`; (process, url).

    The checkout's package is compiled first, so a first load reads bytecode as it does after a user's first start (about
    0.25 CPU s of compiling klue_viz's own modules is otherwise counted in every first load here)."""
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(cwd / "klue_viz")], check=True, env=USER_ENV, stdout=subprocess.DEVNULL)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    process = subprocess.Popen([sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true", "--server.address", "127.0.0.1",
                                "--server.port", str(port), "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none", *options],
                               cwd=cwd, env=dict(USER_ENV, **env), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    for _ in range(300):
        try:
            if urllib.request.urlopen(f"{url}/_stcore/health", timeout=2).read() == b"ok":
                return process, url
        except OSError:
            time.sleep(0.3)
    process.terminate()
    raise SystemExit("server did not start")
