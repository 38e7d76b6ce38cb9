"""What the command groups of the CLI share: file text made safe for a terminal, the --out checks, the argument
types, and the steps that turn `--pred` files into runs (the user's columns joined, run names made distinct)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from klue_viz.core.lazy import lazy_module
from klue_viz.core.problems import InputError
from klue_viz.drawing.markup import visible
from klue_viz.reading.prediction_files import expand_path, task_hint
from klue_viz.reading.records import read_bytes, read_records
from klue_viz.scoring.evaluate import RunResult
from klue_viz.tasks import TASKS, Task, detect_task

if TYPE_CHECKING:
    from klue_viz.core.problems import Problem
    from klue_viz.scoring import user_features
    from klue_viz.scoring.evaluate import Gold
    from klue_viz.scoring.user_features import UserFeatures
    from klue_viz.store import annotations as annotation_store
else:  # pandas and SQLAlchemy load when a command needs them: `klue-viz evaluate` needs numpy only
    user_features = lazy_module("klue_viz.scoring.user_features")
    annotation_store = lazy_module("klue_viz.store.annotations")

#: How many problems of a file are printed (all of them go to --out).
SHOWN_PROBLEMS = 10
FEATURES_HELP = ("your own columns: a CSV, TSV or JSONL file keyed by guid (and turn for WoS; guid, start, end for NER entities), "
                 "each column a slice feature (numbers in quartile bins, text as its 20 most frequent values)")


def terminal(text: object) -> str:
    """File text as it may reach a terminal: control and bidi characters as codes, a newline as \\n (one line per item)."""
    return visible(text).replace("\n", "\\n")


def say(text: object, error: bool = False) -> None:
    print(terminal(text), file=sys.stderr if error else sys.stdout)


def guess_task(paths: list[str]) -> str:
    first = expand_path(paths[0])[0]  # a harness log as the prediction file it converts to
    records = [r for _, r in read_records(first.data, first.name).records]
    found = detect_task(records) or task_hint(records, list(TASKS))  # a log without guids names its task
    if found is None:
        raise InputError(f"{paths[0]}: cannot tell which KLUE task this file is for; pass --task")
    return found


def check_out(path: str | None) -> None:
    """Refuse an --out that cannot be written before any scoring is done."""
    if not path:
        return
    out = Path(path)
    if out.is_dir():
        raise InputError(f"--out {path}: is a folder; give a file name such as {out / 'metrics.json'}")
    if not out.parent.is_dir():
        raise InputError(f"--out {path}: the folder {out.parent} does not exist")


def write_out(path: str, text: str) -> bool:
    """Write an --out file; a failure (permission, full disk) is one line on stderr, not a traceback."""
    try:
        Path(path).write_text(text, encoding="utf-8")
    except OSError as err:
        say(f"klue-viz: cannot write --out {path}: {err.strerror or err}", error=True)
        return False
    return True


def load_features(path: str | None, task: Task, gold: Gold) -> tuple[UserFeatures | None, list[Problem]]:
    """The user's own columns from `--features` (None without it); each bad row is printed with its line."""
    if not path:
        return None, []
    columns, problems = user_features.read_features(read_bytes(path), Path(path).name, task, gold.rows)
    say(user_features.summary(columns, problems), error=True)
    for problem in problems[:SHOWN_PROBLEMS]:
        say(f"features problem: {problem}", error=True)
    if len(problems) > SHOWN_PROBLEMS:
        say(f"... and {len(problems) - SHOWN_PROBLEMS} more problems in {path}", error=True)
    return columns, problems


def featured(result: RunResult, columns: UserFeatures | None) -> RunResult:
    """The run with the user's columns on its frames (as it is without --features)."""
    if columns is None:
        return result
    return user_features.with_features(result, columns)


def distinct_run_names(results: list[RunResult]) -> None:
    """Two files with the same stem (model-a/ner.jsonl, model-b/ner.jsonl) become ner and ner-2, as the app names them."""
    taken: set[str] = set()
    for result in results:
        chosen, k = result.run, 2
        while chosen in taken:
            chosen, k = f"{result.run}-{k}", k + 1
        result.run = chosen
        taken.add(chosen)


def stored_remarks(task_name: str) -> list:
    """The annotations of a task in the store named by KLUE_VIZ_DB (none, with a note, when it cannot be read)."""

    try:
        return annotation_store.Store().find(task=task_name)
    except annotation_store.StoreError as err:
        say(f"klue-viz: annotations left out: {err}", error=True)
        return []


def resamples(text: str) -> int:
    """--bootstrap N: 0 (off) or a number of resamples up to 100,000."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number of resamples, found {text!r}") from None
    if not 0 <= value <= 100_000:
        raise argparse.ArgumentTypeError(f"the number of resamples must be from 0 (off) to 100000, found {value}")
    return value


def positive(text: str) -> int:
    """--top N: a whole number from 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, found {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a number from 1, found {value}")
    return value
