"""`Frames.subset` keeps exactly the rows of the guids asked for, in frame order, in every frame of every task.

The expected rows are picked here by plain membership, row by row, on a copy of each frame; the subsets mix known
guids, unknown ones, repeats and the empty case.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pandas as pd
import pytest
from pandas.testing import assert_frame_equal

from klue_viz.core.results import Frames
from klue_viz.reading.demo import DEMO_BENCHMARK, demo_runs
from klue_viz.scoring.evaluate import evaluate_bytes, load_gold
from klue_viz.tasks import TASKS, get_task
from klue_viz.tasks.ner import tag_list

SHARED = Path(__file__).resolve().parents[2] / "shared" / "klue"


def _expected(frame: pd.DataFrame, guids: list[str]) -> pd.DataFrame:
    wanted = set(guids)
    return frame[[guid in wanted for guid in frame["guid"].tolist()]]


def _check(frames: Frames, guids: list[str]) -> None:
    subset = frames.subset(iter(guids))  # any iterable, read once
    assert_frame_equal(subset.examples, _expected(frames.examples, guids), check_exact=True)
    assert sorted(subset.details) == sorted(frames.details)
    for level, frame in frames.details.items():
        assert_frame_equal(subset.details[level], _expected(frame, guids), check_exact=True)


def _picks(frames: Frames, seed: int) -> list[list[str]]:
    rng = random.Random(seed)
    guids = frames.examples["guid"].tolist()
    some = rng.sample(guids, max(1, len(guids) // 3))
    return [some, some[::-1] + some[:3] + ["no-such-guid"], [guids[-1]], [], ["no-such-guid"], guids]


@pytest.mark.parametrize("task_name", list(TASKS))
def test_demo_runs_of_every_task(task_name):
    task = get_task(task_name)
    gold = load_gold(task, DEMO_BENCHMARK)
    path = next(p for p in demo_runs(task_name))
    frames = evaluate_bytes(task, gold, path.read_bytes(), path.name).frames
    for guids in _picks(frames, seed=len(task_name)):
        _check(frames, guids)


@pytest.mark.skipif(not (SHARED / "klue-ner-v1.1").exists(), reason="needs ../shared/klue")
def test_a_real_ner_dev_run_entities_included():
    task = get_task("ner")
    gold = load_gold(task, SHARED)
    frames = evaluate_bytes(task, gold, _ner_run(gold, random.Random(7)), "ner.jsonl").frames
    assert "entities" in frames.details and len(frames.details["entities"]) > 1000
    for guids in _picks(frames, seed=3):
        _check(frames, guids)


def _ner_run(gold, rng: random.Random) -> bytes:
    """The first 1,500 dev sentences with 5% of the tags replaced at random."""
    tags = ["B-PS", "I-PS", "B-LC", "I-LC", "B-OG", "O"]
    records = [{"guid": row["guid"], "tags": [t if rng.random() > 0.05 else rng.choice(tags) for t in tag_list(row["tags"])]}
               for row in gold.rows[:1500]]
    return "\n".join(json.dumps(r, ensure_ascii=False) for r in records).encode()
