"""The walk of a plain prediction file from bytes to metrics (issue 26 item 5): one reading stage, entered once.

Every Python call made while `evaluate_file` scores a demo file is traced (sys.setprofile) and named by the klue_viz
module whose source holds the called code; consecutive calls in one module are one stay. Counted are the modules of
the reading and scoring floors (klue_viz.reading, klue_viz.scoring), the path a file takes; the task's own parser
and metrics (klue_viz.tasks, klue_viz.metrics) are where the walk ends, and klue_viz.core holds the values and helpers
every floor shares (problems, results, the collector pause). Code generated at run time (a dataclass's __init__) has
no module file and is not counted. Before this stage the same walk was evaluate -> harness -> records -> harness ->
evaluate -> records -> harness -> evaluate -> llm_outputs -> evaluate -> llm_outputs -> ... (the LLM parser once a record).
"""

from __future__ import annotations

import sys
from pathlib import Path
from types import FrameType
from typing import Any

import pytest

import klue_viz
from klue_viz.reading import prediction_files, records
from klue_viz.reading.demo import DEMO_BENCHMARK, demo_runs
from klue_viz.scoring.evaluate import evaluate_file, load_gold
from klue_viz.tasks import get_task

PACKAGE = Path(klue_viz.__file__).resolve().parent
COUNTED = ("klue_viz.reading", "klue_viz.scoring")


def module_of(frame: FrameType) -> str | None:
    """The klue_viz module whose file holds the frame's code, or None outside klue_viz (or generated code)."""
    try:
        relative = Path(frame.f_code.co_filename).resolve().relative_to(PACKAGE)
    except ValueError:
        return None
    return ".".join(("klue_viz", *relative.with_suffix("").parts)).removesuffix(".__init__")


def stays_of(call: Any) -> list[str]:
    """The counted modules `call()` runs code in, one entry per stay (a run of consecutive calls in one module)."""
    stays: list[str] = []

    def profile(frame: FrameType, event: str, arg: Any) -> None:
        if event != "call":
            return
        module = module_of(frame)
        if module is not None and module.startswith(COUNTED) and (not stays or stays[-1] != module):
            stays.append(module)

    sys.setprofile(profile)
    try:
        call()
    finally:
        sys.setprofile(None)
    return stays


@pytest.mark.parametrize("task_name", ["nli", "ner"])
def test_a_plain_file_is_read_once_by_one_stage(task_name):
    task = get_task(task_name)
    gold = load_gold(task, DEMO_BENCHMARK)
    path = sorted(demo_runs(task_name))[0]
    stays = stays_of(lambda: evaluate_file(task, gold, path))
    assert stays == ["klue_viz.scoring.evaluate", "klue_viz.reading.prediction_files", "klue_viz.reading.harness.formats",
                     "klue_viz.reading.records", "klue_viz.scoring.evaluate"], stays
    assert len(set(stays)) <= 4
    below = stays[1:-1]  # entered once each, in descending order: nothing below evaluate is entered again
    assert len(below) == len(set(below))


def test_the_tracer_sees_a_climb_back():
    """The tracer itself: a walk that goes down to records and back up to the stage is seen as two stays there."""
    def climbing() -> None:
        records.read_records(b'{"guid": "a", "label": "x"}\n', "run.jsonl")
        prediction_files.expand("run.jsonl", b'{"guid": "a"}\n')
        records.read_records(b'{"guid": "a", "label": "x"}\n', "run.jsonl")

    assert stays_of(climbing) == ["klue_viz.reading.records", "klue_viz.reading.prediction_files", "klue_viz.reading.harness.formats",
                                  "klue_viz.reading.records"]
