"""A weak slice's metrics from statistics computed once equal the metrics of the run restricted to the slice.

`slice_metrics` takes the slice's rows out of the run's per-example statistics; the reference here scores the frames
restricted to the slice's guids (`Frames.subset`, checked row by row in test_frames_subset.py) from scratch. Checked
on every demo task and on real dev runs, for the weak slices found and for random sets of guids.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest

from klue_viz.discovery.slices import condition_mask, slice_metrics, units, weak_slices
from klue_viz.reading.demo import DEMO_BENCHMARK, demo_runs
from klue_viz.scoring.evaluate import evaluate_bytes, load_gold
from klue_viz.tasks import TASKS, get_task

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared" / "klue"
sys.path.insert(0, str(REPO / "bench"))
from bench_runs import noisy_run  # noqa: E402  (the bench's own noisy dev runs)


def _check(task_name: str, frames) -> int:
    task = get_task(task_name)
    metrics_of = slice_metrics(task, frames)
    found = weak_slices(task, frames, top=10)
    rng = random.Random(len(task_name))
    guids = frames.examples["guid"].astype(str).tolist()
    picks = [rng.sample(guids, max(1, len(guids) // k)) for k in (2, 5, 20)] + [guids, [guids[0]], guids[:1] * 3 + ["no-such-guid"]]
    for pick in picks:
        _same(metrics_of(pick), task.score(frames.subset(pick)).values)
    for weak in found:
        _same(weak.metrics, task.score(frames.subset(_slice_guids(weak, frames, task))).values)
    return len(found)


def _same(got: dict, expected: dict) -> None:
    """Equal within 1e-9 (STS's statistics are centred on the whole run's means, so sums differ in the last bits)."""
    assert got.keys() == expected.keys()
    for key, value in expected.items():
        assert (got[key] is None) == (value is None), key
        if value is not None:
            assert abs(got[key] - value) <= 1e-9, (key, got[key], value)


def _slice_guids(weak, frames, task) -> list[str]:
    """The guids of a weak slice, read again from its conditions on the run's units."""
    found = units(task, frames)
    return sorted(set(found.frame[condition_mask(found.features, weak.conditions)]["guid"].astype(str)))


@pytest.mark.parametrize("task_name", list(TASKS))
def test_demo_runs(task_name):
    task = get_task(task_name)
    path = next(iter(demo_runs(task_name)))
    frames = evaluate_bytes(task, load_gold(task, DEMO_BENCHMARK), path.read_bytes(), path.name).frames
    _check(task_name, frames)


@pytest.mark.slow
@pytest.mark.skipif(not SHARED.exists(), reason="needs ../shared/klue")
@pytest.mark.parametrize("task_name", ["ner", "nli", "sts", "dp", "wos"])
def test_real_dev_runs(task_name):
    task = get_task(task_name)
    gold = load_gold(task, SHARED)
    frames = evaluate_bytes(task, gold, noisy_run(task_name, gold, 11).encode(), f"{task_name}.jsonl").frames
    found = _check(task_name, frames)
    assert found > 0 or task_name == "dp"  # DP's noise is uniform over words: no slice stands out
