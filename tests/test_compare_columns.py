"""Comparing kept runs reads only the columns it needs (kept_scoring.column_frames, Task.statistics_columns), with the numbers
of the whole frames: the same statistics, per-example scores, keys, ranking and changes, on every demo run of every
task and on real dev runs; unreadable kept files fall back to the whole frames."""

from __future__ import annotations

import io
import os

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

from klue_viz.compare.ranking import compared_columns, consecutive_changes, rank_runs, run_table
from klue_viz.reading.demo import DEMO_BENCHMARK, demo_runs
from klue_viz.scoring.evaluate import evaluate_bytes, load_gold
from klue_viz.store import kept_format, kept_results, kept_scoring
from klue_viz.store.annotations import Store
from klue_viz.tasks import TASKS, get_task
from tests.test_kept import assert_same_frame, keep_and_load, noisy_run

PG_URL = os.environ.get("KLUE_VIZ_TEST_PG")
BACKENDS = ["sqlite", pytest.param("postgresql", marks=pytest.mark.skipif(not PG_URL, reason="set KLUE_VIZ_TEST_PG"))]


def make_store(backend: str, tmp_path) -> kept_results.KeptResults:
    return kept_results.KeptResults(Store(str(tmp_path / "db.sqlite3") if backend == "sqlite" else PG_URL))


def kept_demo_runs(store: kept_results.KeptResults, task_name: str) -> list:
    """Every demo run of a task, kept and loaded back as the app has them (frames not read yet)."""
    task = get_task(task_name)
    gold = load_gold(task, DEMO_BENCHMARK)
    return [keep_and_load(store, task, gold, path.read_bytes(), path.name)[1] for path in demo_runs(task_name)]


def assert_same_statistics(a, b) -> None:
    """The same entries in the same order, exactly: the sums every ranking resample takes are then the same floats."""
    assert (a.n, a.width) == (b.n, b.width)
    assert np.array_equal(a.rows, b.rows) and np.array_equal(a.cols, b.cols) and np.array_equal(a.values, b.values)
    assert (a.unsummed is None) == (b.unsummed is None)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("task_name", list(TASKS))
def test_cut_frames_give_the_whole_frames_numbers(tmp_path, backend, task_name):
    store = make_store(backend, tmp_path)
    task = get_task(task_name)
    columns = compared_columns(task)
    assert columns is not None, "every task names the columns its statistics read"
    runs = kept_demo_runs(store, task_name)
    cut = kept_scoring.column_frames(store, runs, columns)
    assert all("frames" not in r.__dict__ for r in runs), "the whole frames were read"
    for run, frames in zip(runs, cut):
        whole = run.frames  # read now, from the same kept files
        # only the columns asked for, each exactly as the whole frame holds it (values, dtypes, JSON decoded)
        assert list(frames.examples.columns) == [c for c in dict.fromkeys(columns["examples"]) if c in whole.examples.columns]
        assert_same_frame(whole.examples[list(frames.examples.columns)], frames.examples)
        assert set(frames.details) == {level for level in columns if level in whole.details}
        for level, frame in frames.details.items():
            assert list(frame.columns) == list(columns[level])
            assert_same_frame(whole.details[level][list(frame.columns)], frame)
        assert_same_statistics(task.statistics(whole), task.statistics(frames))
        a, b = task.example_scores(whole), task.example_scores(frames)
        assert (a is None) == (b is None)
        if a is not None:
            pd.testing.assert_series_equal(a, b, check_exact=True)
    # the table, ranking and changes built from the cut frames are those of the whole frames
    full, light = run_table(runs), run_table(runs, frames=cut)
    assert np.array_equal(full.correct, light.correct, equal_nan=True)
    assert (full.score is None and light.score is None) or np.array_equal(full.score, light.score, equal_nan=True)
    assert full.keys == light.keys
    assert rank_runs(full, samples=200) == rank_runs(light, samples=200)
    assert [c.to_dict() for c in consecutive_changes(full)] == [c.to_dict() for c in consecutive_changes(light)]


@pytest.mark.slow
@pytest.mark.parametrize("task_name", ["ner", "nli", "dp", "wos"])
def test_real_dev_runs_compared_from_their_columns(tmp_path, shared, task_name):
    store = make_store("sqlite", tmp_path)
    task = get_task(task_name)
    gold = load_gold(task, shared)
    runs = [keep_and_load(store, task, gold, noisy_run(task_name, gold, seed), f"{task_name}-{seed}.jsonl")[1] for seed in (1, 2)]
    cut = kept_scoring.column_frames(store, runs, compared_columns(task))
    for run, frames in zip(runs, cut):
        assert_same_statistics(task.statistics(run.frames), task.statistics(frames))
    full, light = run_table(runs), run_table(runs, frames=cut)
    assert np.array_equal(full.correct, light.correct, equal_nan=True) and full.keys == light.keys
    assert rank_runs(full, samples=200) == rank_runs(light, samples=200)


def test_read_columns_reads_only_those_columns():
    task = get_task("ner")
    gold = load_gold(task, DEMO_BENCHMARK)
    path = next(iter(demo_runs("ner")))
    result = evaluate_bytes(task, gold, path.read_bytes(), path.name)
    data = kept_format.parquet_bytes(result.frames.examples)
    assert "sentence" in pq.ParquetFile(io.BytesIO(data)).schema_arrow.names
    frame = kept_format.read_columns(data, ["n_errors", "guid", "no such column", "guid"])
    assert list(frame.columns) == ["n_errors", "guid"]  # in the order asked, once, an unknown name left out
    # hand check against the scored frame, read independently of the reader under test
    assert frame["guid"].tolist() == result.frames.examples["guid"].tolist()
    assert frame["n_errors"].tolist() == result.frames.examples["n_errors"].tolist()
    with pytest.raises(kept_format.KeptUnreadable, match="layout"):
        kept_format.read_columns(data, ["guid"], kept_layout="0.other")
    with pytest.raises(kept_format.KeptUnreadable, match="unreadable"):
        kept_format.read_columns(data[: len(data) // 2], ["guid"])


def test_frames_already_read_are_cut_not_read_again(tmp_path, monkeypatch):
    store = make_store("sqlite", tmp_path)
    runs = kept_demo_runs(store, "nli")
    runs[0].frames  # noqa: B018 - the first run's frames are in memory (a task page showed it)

    def refuse(*args, **kwargs):
        raise AssertionError("a kept file was read")
    monkeypatch.setattr(store, "frame_columns", refuse)
    cut = kept_scoring.column_frames(store, runs[:1], compared_columns(get_task("nli")))
    assert list(cut[0].examples.columns) == ["guid", "correct", "gold", "pred", "probs"]
    assert cut[0].examples["gold"].tolist() == runs[0].frames.examples["gold"].tolist()


def test_a_damaged_kept_file_falls_back_to_the_whole_frames(tmp_path):
    store = make_store("sqlite", tmp_path)
    task = get_task("ner")
    gold = load_gold(task, DEMO_BENCHMARK)
    path = next(iter(demo_runs("ner")))
    data = path.read_bytes()
    run = kept_scoring.RunInput(path.stem, kept_format.sha256(data), path.name, lambda: data)
    results, _ = kept_scoring.results_for(store, task, gold, [run], False)
    summary = store.summary("ner", run.run_sha256, gold.sha256, False)
    target = store.folder / summary.key / "entities.parquet"
    damaged = bytearray(target.read_bytes())
    damaged[len(damaged) // 2] ^= 0xFF  # same size, other bytes: only the sha256 tells
    target.write_bytes(bytes(damaged))
    cut = kept_scoring.column_frames(store, [results[run.name]], compared_columns(task))
    fresh = evaluate_bytes(task, gold, data, path.name)
    assert_same_statistics(task.statistics(fresh.frames), task.statistics(cut[0]))
