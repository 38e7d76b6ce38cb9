"""Which gold a task is scored against: one decision for the app's pages and for `klue-viz runs add`.

The sources, in the app's words (`SOURCES`): the embedded demo, a folder laid out like `klue_benchmark/` (only
under the folders the operator allowed: klue_viz.reading.gold_folders), an uploaded official file kept in the
database, the Hugging Face hub, and, for the command line, a path the user typed (`--gold`). Where the asked-for
source has no gold for the task, the embedded demo stands in and the choice says why (`note`); where the asked-for
gold exists but cannot be read, the choice also carries the `problem`, and `runs add` then scores nothing against
the stand-in. How a gold is read (cached per server in the app, through the store's parsed golds on the command
line) is the caller's, passed in as `GoldReaders`; what is read is decided here alone.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from klue_viz.core.problems import InputError
from klue_viz.reading.demo import DEMO_BENCHMARK
from klue_viz.reading.gold_folders import allowed_gold_file, allowed_gold_folder
from klue_viz.scoring.evaluate import Gold, official_file
from klue_viz.tasks.base import Task

if TYPE_CHECKING:  # the command line decides a gold without loading the database's modules
    from klue_viz.store.golds import StoredGold

SOURCES = {
    "demo": "Embedded demo",
    "folder": "A folder laid out like klue_benchmark/",
    "upload": "Uploaded official gold files",
    "hf": "Hugging Face klue/klue (validation split)",
}


@dataclass(frozen=True)
class GoldChoice:
    """The gold a task is scored against, with a sentence for the user about where it came from."""

    gold: Gold
    #: Names the gold and its version on disk, for caches (`file:<path>:<mtime>`, `upload:<sha256>`, `demo:<mtime>`...).
    key: str
    note: str
    is_demo: bool
    #: Said prominently (a warning, not the caption): the gold asked for is not there.
    warning: str = ""
    #: The gold asked for exists but could not be read (why); the demo stands in for it.
    problem: str = ""


@dataclass(frozen=True)
class GoldReaders:
    """How golds are read: the app caches them per server, the command line reads them through the store."""

    #: A gold file or folder (the command line's `--gold` may also be `hf[:split]`), and the file's modification time.
    path: Callable[[Task, str, float], Gold]
    #: An uploaded gold kept in the database, by its sha256.
    upload: Callable[[Task, str, StoredGold], Gold]
    #: The hub's validation split, or the one-line reason it could not be loaded.
    hf: Callable[[Task], Gold | str]
    #: The uploaded gold kept under a sha256, None when this database does not have it.
    stored: Callable[[str], StoredGold | None]


def _demo(task: Task, readers: GoldReaders, note: str, problem: str = "", warning: str = "") -> GoldChoice:
    path = official_file(task, DEMO_BENCHMARK)
    assert path is not None, f"the embedded demo has no {task.facts.name} file"  # shipped with the package
    modified = path.stat().st_mtime
    return GoldChoice(readers.path(task, str(path), modified), f"demo:{modified}", note, True, warning, problem)


def _folder(task: Task, readers: GoldReaders, folder: str) -> GoldChoice:
    """The task's official dev file in `folder`, only under the folders the operator allowed (KLUE_VIZ_DATA_DIR is one)."""
    name = task.facts.name.upper()
    try:
        where = allowed_gold_folder(folder)
    except InputError as err:
        return _demo(task, readers, f"{err}. Showing the embedded demo for {name}.", str(err))
    found = official_file(task, where)
    if found is None:
        return _demo(task, readers, f"No {task.facts.official_folder} dev file in {where}: showing the embedded demo for {name}.")
    try:
        found = allowed_gold_file(found)  # a link inside the folder may lead outside it
        modified = found.stat().st_mtime
        gold = readers.path(task, str(found), modified)
    except (InputError, OSError) as err:  # a broken file stays this task's problem; the demo stands in
        return _demo(task, readers, f"{err}. Showing the embedded demo for {name}.", str(err))
    return GoldChoice(gold, f"file:{found}:{modified}", f"Gold: {found}", False)


def gold_choice(task: Task, source: str, readers: GoldReaders, *, folder: str = "", upload_key: str | None = None,
                given: str | None = None) -> GoldChoice:
    """The gold of `task` from `source` (a key of SOURCES, or "given": the path or `hf[:split]` a user typed);
    the demo stands in where that source has none, and the choice says why."""
    name = task.facts.name.upper()
    if source == "given" and given:
        try:
            path = Path(given).expanduser()
            modified = path.stat().st_mtime if path.is_file() else 0.0
            gold = readers.path(task, given, modified)
        except (InputError, OSError) as err:
            return _demo(task, readers, f"{err}. Showing the embedded demo for {name}.", str(err))
        return GoldChoice(gold, f"given:{given}:{modified}", f"Gold: {gold.source}", False)
    if source == "folder" and folder:
        return _folder(task, readers, folder)
    if source == "upload" and upload_key:
        stored = readers.stored(upload_key)
        if stored is None:
            return _demo(task, readers, "Showing the embedded demo instead.",
                         warning=f"This link names an uploaded {name} gold file (sha256 {upload_key[:12]}…) that this server does not "
                                 "have (uploaded to another server, or its database was reset): upload it again on the home page.")
        try:
            gold = readers.upload(task, upload_key, stored)
        except InputError as err:
            return _demo(task, readers, f"{err}. Showing the embedded demo for {name}.", str(err))
        return GoldChoice(gold, f"upload:{upload_key[:20]}", f"Gold: uploaded {stored.file_name}", False)
    if source == "hf":
        loaded = readers.hf(task)
        if isinstance(loaded, Gold):
            return GoldChoice(loaded, f"hf:{task.facts.name}", f"Gold: {loaded.source}", False)
        return _demo(task, readers, f"{loaded} Showing the embedded demo meanwhile.", loaded)
    if source == "upload":
        return _demo(task, readers, f"No gold file uploaded for {name} yet: showing the embedded demo.")
    return _demo(task, readers, "Gold: the embedded demo set (our own sentences in the official KLUE format).")
