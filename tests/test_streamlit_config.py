"""The shipped .streamlit/config.toml, as Streamlit itself reads it from the clone (issue 28, item 5).

The README's commands put `.venv` inside the clone: with Streamlit's default file watcher a first page walked and
watched its 6,427 folders, the inotify queue overflowed and the watcher re-walked the tree (245 s of a busy server).
The app's files are not edited by its users, so the shipped config watches nothing."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

READ_OPTIONS = """
from streamlit import config
config.get_config_options(force_reparse=True)
print(config.get_option("server.fileWatcherType"), config.get_option("server.runOnSave"), config.get_option("server.address"))
"""


def test_streamlit_run_from_the_clone_watches_no_file():
    # A fresh interpreter in the clone's folder reads .streamlit/config.toml as `streamlit run app.py` does there.
    done = subprocess.run([sys.executable, "-c", READ_OPTIONS], cwd=REPO, capture_output=True, text=True, timeout=120,
                          env={"PATH": "/usr/bin:/bin", "HOME": str(REPO / ".no-home")})
    assert done.returncode == 0, done.stderr
    watcher, run_on_save, address = done.stdout.split()
    assert (watcher, run_on_save) == ("none", "False")
    assert address == "127.0.0.1"  # the rest of the file is still read: the new lines did not break it


def test_readme_says_the_app_watches_no_file():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert 'fileWatcherType = "none"' in readme
