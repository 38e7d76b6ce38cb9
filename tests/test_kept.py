"""Kept results (klue_viz/store/kept_results.py): read back equal to a fresh scoring, and never used when stale or damaged."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import sqlalchemy as sa

from klue_viz.reading.demo import DEMO_BENCHMARK, demo_runs
from klue_viz.scoring.evaluate import evaluate_bytes, load_gold
from klue_viz.store import kept_format, kept_results, kept_scoring, schema
from klue_viz.store.annotations import Store
from klue_viz.tasks import TASKS, get_task
from klue_viz.tasks.ner import tag_list

DEMO_CASES = [(name, path) for name in TASKS for path in demo_runs(name)]


@pytest.fixture
def store(tmp_path) -> kept_results.KeptResults:
    return kept_results.KeptResults(Store(str(tmp_path / "db.sqlite3")))


def same_value(a, b) -> bool:
    """Equal and of the same Python type all the way down (a list read back as a numpy array is not the same)."""
    if type(a) is not type(b):
        return isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b)
    if isinstance(a, list):
        return len(a) == len(b) and all(same_value(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same_value(a[k], b[k]) for k in a)
    if isinstance(a, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    return a == b


def assert_same_frame(fresh: pd.DataFrame, back: pd.DataFrame) -> None:
    pd.testing.assert_frame_equal(fresh, back, check_exact=True)
    assert list(fresh.dtypes) == list(back.dtypes)
    for column in fresh.columns:
        if fresh[column].dtype == object:
            bad = [k for k, (a, b) in enumerate(zip(fresh[column], back[column])) if not same_value(a, b)]
            assert not bad, f"{column}: row {bad[0]}: {fresh[column].iloc[bad[0]]!r} read back as {back[column].iloc[bad[0]]!r}"


def assert_same_result(task, fresh, back) -> None:
    for metric in task.facts.metrics:
        a, b = fresh.scores.values[metric.key], back.scores.values[metric.key]
        assert (a is None and b is None) or abs(a - b) <= 1e-9, (metric.key, a, b)
    assert fresh.scores.reasons == back.scores.reasons
    assert fresh.coverage == back.coverage
    assert fresh.problems == back.problems and fresh.notes == back.notes and fresh.extra_guids == back.extra_guids
    assert_same_frame(fresh.frames.examples, back.frames.examples)
    assert fresh.frames.details.keys() == back.frames.details.keys()
    for level, frame in fresh.frames.details.items():
        assert_same_frame(frame, back.frames.details[level])
    # The statistics every view sums come from the kept frames: the same entries as the fresh run's, the same numbers.
    a, b = task.statistics(fresh.frames), task.statistics(back.frames)
    assert (a.n, a.width) == (b.n, b.width)
    order_a, order_b = np.lexsort((a.cols, a.rows)), np.lexsort((b.cols, b.rows))
    assert np.array_equal(a.rows[order_a], b.rows[order_b]) and np.array_equal(a.cols[order_a], b.cols[order_b])
    assert np.allclose(a.values[order_a], b.values[order_b], rtol=0, atol=1e-12)
    assert task.scores_of(b).values == pytest.approx({k: v for k, v in fresh.scores.values.items()}, abs=1e-9, nan_ok=True)


def keep_and_load(store, task, gold, data: bytes, name: str, strict: bool = False):
    """A fresh scoring (evaluate_bytes, the CLI's path) and the same run kept the way the app and `runs add` keep it, read back."""
    run = kept_scoring.RunInput(Path(name).stem, kept_format.sha256(data), name, lambda: data)
    kept_scoring.results_for(store, task, gold, [run], strict)
    fresh = evaluate_bytes(task, gold, data, name, strict=strict, run=run.name)
    back = kept_scoring.load(store, task, run.run_sha256, gold.sha256, strict, run=run.name)
    assert back is not None
    return fresh, back


@pytest.mark.parametrize("strict", [False, True])
@pytest.mark.parametrize(("task_name", "path"), DEMO_CASES, ids=[f"{t}-{p.stem}" for t, p in DEMO_CASES])
def test_demo_runs_read_back_as_scored(store, task_name, path, strict):
    task = get_task(task_name)
    gold = load_gold(task, DEMO_BENCHMARK)
    fresh, back = keep_and_load(store, task, gold, path.read_bytes(), path.name, strict)
    assert_same_result(task, fresh, back)


def noisy_run(task_name: str, gold, seed: int) -> bytes:
    """A prediction file made from the gold with random errors (and a few examples left out)."""
    rng = random.Random(seed)
    records = []
    for row in gold.rows:
        if rng.random() < 0.02:
            continue
        if task_name == "ner":
            tags = [t if rng.random() > 0.05 else rng.choice(["B-PS", "I-PS", "B-LC", "O", "B-DT"]) for t in tag_list(row["tags"])]
            records.append({"guid": row["guid"], "tags": tags})
        elif task_name == "nli":
            label = row["gold"] if rng.random() > 0.2 else rng.choice(["entailment", "neutral", "contradiction"])
            probs = [rng.random() for _ in range(3)]
            records.append({"guid": row["guid"], "label": label, "probs": [p / sum(probs) for p in probs]})
        elif task_name == "sts":
            records.append({"guid": row["guid"], "score": min(5.0, max(0.0, row["gold"] + rng.gauss(0, 0.7)))})
        elif task_name == "dp":
            n = len(row["heads"])
            records.append({"guid": row["guid"], "head": [rng.randint(0, n) if rng.random() < 0.1 else h for h in row["heads"]],
                            "deprel": [d if rng.random() > 0.1 else "NP" for d in row["deprels"]]})
        elif task_name == "wos":
            records.append({"guid": row["dialogue"], "turn": row["turn"], "state": [s for s in row["gold_state"] if rng.random() > 0.1]})
    return "\n".join(json.dumps(r, ensure_ascii=False) for r in records).encode()


@pytest.mark.slow
@pytest.mark.parametrize("task_name", ["ner", "nli", "sts", "dp", "wos"])
def test_real_dev_runs_read_back_as_scored(store, shared, task_name):
    task = get_task(task_name)
    gold = load_gold(task, shared)
    fresh, back = keep_and_load(store, task, gold, noisy_run(task_name, gold, 7), f"{task_name}-noisy.jsonl", strict=True)
    assert fresh.coverage.n_missing > 0  # some examples were left out and scored as empty
    assert_same_result(task, fresh, back)


@pytest.mark.slow
def test_ner_dev_kept_within_two_kilobytes_a_sentence(store, shared):
    task = get_task("ner")
    gold = load_gold(task, shared)
    data = noisy_run("ner", gold, 3)
    summary = store.keep(evaluate_bytes(task, gold, data, "ner.jsonl"), kept_format.sha256(data), gold.sha256, False)
    on_disk = sum(p.stat().st_size for p in (store.folder / summary.key).iterdir())
    assert on_disk == store.disk_bytes(summary)
    assert on_disk / len(gold.rows) <= 2048, on_disk / len(gold.rows)


# ---- what can fail ------------------------------------------------------------------------------

def demo_input(task_name: str = "ner") -> tuple:
    task = get_task(task_name)
    gold = load_gold(task, DEMO_BENCHMARK)
    path = next(iter(demo_runs(task_name)))
    data = path.read_bytes()
    return task, gold, kept_scoring.RunInput(path.stem, kept_format.sha256(data), path.name, lambda: data)


class Counting:
    """Counts the runs scored from their bytes (klue_viz.store.kept_results's evaluate_with_frames)."""

    def __init__(self, monkeypatch) -> None:
        self.calls = 0
        real = kept_scoring.evaluate_with_frames

        def counted(*args, **kwargs):
            self.calls += 1
            return real(*args, **kwargs)
        monkeypatch.setattr(kept_scoring, "evaluate_with_frames", counted)


def test_a_kept_run_is_scored_once(store, monkeypatch):
    task, gold, run = demo_input()
    counting = Counting(monkeypatch)
    first, _ = kept_scoring.results_for(store, task, gold, [run], strict=False)
    second, _ = kept_scoring.results_for(kept_results.KeptResults(Store(store.store.url)), task, gold, [run], strict=False)  # another process
    assert counting.calls == 1
    assert second[run.name].scores.values == first[run.name].scores.values
    assert_same_frame(first[run.name].frames.examples, second[run.name].frames.examples)
    assert counting.calls == 1


def test_a_result_kept_in_another_layout_is_left_alone_and_scored_beside_it(store, monkeypatch):
    """Another layout (another klue-viz version on the same database) keeps its own row: this one scores once and keeps
    its result beside it, and neither replaces the other (tests/test_kept_rows.py takes turns between two versions)."""
    task, gold, run = demo_input()
    monkeypatch.setattr(kept_format, "_LAYOUT", "0.planted")
    kept_scoring.results_for(store, task, gold, [run], strict=False)
    with store.store.engine.connect() as connection:
        assert connection.execute(sa.select(schema.kept_scores.c.layout)).scalars().all() == ["0.planted"]
    monkeypatch.undo()
    counting = Counting(monkeypatch)
    assert kept_scoring.load(store, task, run.run_sha256, gold.sha256, False, run.name) is None
    results, _ = kept_scoring.results_for(store, task, gold, [run], strict=False)
    assert counting.calls == 1 and run.name in results
    with store.store.engine.connect() as connection:
        assert sorted(connection.execute(sa.select(schema.kept_scores.c.layout)).scalars()) == sorted(["0.planted", kept_format.layout()])
    kept_scoring.results_for(store, task, gold, [run], strict=False)
    assert counting.calls == 1


def test_a_parquet_file_of_another_layout_is_never_read(store):
    task, gold, run = demo_input()
    result = evaluate_bytes(task, gold, run.read(), run.file_name)
    data = kept_format.parquet_bytes(result.frames.examples, kept_layout="0.planted")
    with pytest.raises(kept_format.KeptUnreadable, match="layout"):
        kept_format.read_frame(data)


def test_a_truncated_parquet_file_is_scored_again(store, monkeypatch):
    task, gold, run = demo_input()
    kept_scoring.results_for(store, task, gold, [run], strict=False)
    summary = store.summary(task.facts.name, run.run_sha256, gold.sha256, False)
    path = store.folder / summary.key / "entities.parquet"
    path.write_bytes(path.read_bytes()[:-100])
    counting = Counting(monkeypatch)
    assert store.summary(task.facts.name, run.run_sha256, gold.sha256, False) is None  # the size no longer matches
    results, _ = kept_scoring.results_for(store, task, gold, [run], strict=False)
    assert counting.calls == 1
    fresh = evaluate_bytes(task, gold, run.read(), run.file_name, run=run.name)
    assert_same_frame(fresh.frames.details["entities"], results[run.name].frames.details["entities"])


def test_a_damaged_file_of_the_right_size_is_scored_again_when_read(store, monkeypatch):
    task, gold, run = demo_input()
    kept_scoring.results_for(store, task, gold, [run], strict=False)
    summary = store.summary(task.facts.name, run.run_sha256, gold.sha256, False)
    path = store.folder / summary.key / "examples.parquet"
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))
    counting = Counting(monkeypatch)
    results, _ = kept_scoring.results_for(store, task, gold, [run], strict=False)
    assert counting.calls == 0  # the scores row is whole: the headline numbers come from it
    frames = results[run.name].frames  # the damaged file is noticed here and the run scored again
    assert counting.calls == 1
    fresh = evaluate_bytes(task, gold, run.read(), run.file_name, run=run.name)
    assert_same_frame(fresh.frames.examples, frames.examples)
    assert kept_scoring.load(store, task, run.run_sha256, gold.sha256, False, run.name).frames is not None  # kept again, whole


def test_changed_gold_is_scored_again_once(store, tmp_path, monkeypatch):
    task, gold, run = demo_input("nli")
    counting = Counting(monkeypatch)
    kept_scoring.results_for(store, task, gold, [run], strict=False)
    path = next(DEMO_BENCHMARK.glob("klue-nli-v1.1/*_dev.json"))
    rows = json.loads(path.read_text(encoding="utf-8"))
    rows[0]["gold_label"] = "neutral" if rows[0]["gold_label"] != "neutral" else "entailment"
    changed = tmp_path / path.name
    changed.write_text(json.dumps(rows, ensure_ascii=False), encoding="utf-8")
    other = load_gold(task, changed)
    assert other.sha256 != gold.sha256
    before, _ = kept_scoring.results_for(store, task, gold, [run], strict=False)
    after, _ = kept_scoring.results_for(store, task, other, [run], strict=False)
    assert counting.calls == 2
    kept_scoring.results_for(store, task, other, [run], strict=False)
    kept_scoring.results_for(store, task, gold, [run], strict=False)
    assert counting.calls == 2
    flipped = before[run.name].frames.examples["correct"].iloc[0] != after[run.name].frames.examples["correct"].iloc[0]
    assert flipped or before[run.name].frames.examples["gold"].iloc[0] != after[run.name].frames.examples["gold"].iloc[0]


def test_strict_is_its_own_kept_result(store, monkeypatch):
    task, gold, run = demo_input("ner")
    counting = Counting(monkeypatch)
    loose, _ = kept_scoring.results_for(store, task, gold, [run], strict=False)
    strict, _ = kept_scoring.results_for(store, task, gold, [run], strict=True)
    assert counting.calls == 2
    assert strict[run.name].coverage.n_scored == len(gold.rows) and loose[run.name].key != strict[run.name].key


def test_forget_removes_the_kept_results_of_a_run(store):
    task, gold, run = demo_input()
    kept_scoring.results_for(store, task, gold, [run], strict=False)
    kept_scoring.results_for(store, task, gold, [run], strict=True)
    assert len([p for p in store.folder.iterdir() if not p.name.startswith(".")]) == 2
    assert store.forget(run.run_sha256) == 2
    assert list(store.folder.iterdir()) == []
    assert store.summary(task.facts.name, run.run_sha256, gold.sha256, False) is None


def test_a_file_that_cannot_be_scored_is_a_failure_not_kept(store):
    task, gold, _ = demo_input("ner")
    data = b'{"guid": "nope", "tags": []}\n'
    results, failures = kept_scoring.results_for(store, task, gold, [kept_scoring.RunInput("bad", kept_format.sha256(data), "bad.jsonl", lambda: data)], strict=False)
    assert not results and "no prediction could be scored" in failures["bad"]


def test_intervals_are_resampled_once_and_go_with_their_result(store, monkeypatch):
    task, gold, run = demo_input("nli")
    results, _ = kept_scoring.results_for(store, task, gold, [run], strict=False)
    calls = []
    real = kept_scoring.confidence_intervals
    monkeypatch.setattr(kept_scoring, "confidence_intervals", lambda *a, **k: calls.append(1) or real(*a, **k))
    first = kept_scoring.intervals(store, results[run.name], 50)
    other = kept_results.KeptResults(Store(store.store.url))  # a server started later, or another replica
    again, _ = kept_scoring.results_for(other, task, gold, [run], strict=False)
    assert kept_scoring.intervals(other, again[run.name], 50) == first and len(calls) == 1
    assert first == real(task, evaluate_bytes(task, gold, run.read(), run.file_name).frames, samples=50)  # the CLI's intervals
    kept_scoring.intervals(other, again[run.name], 60)  # another number of resamples is another view
    assert len(calls) == 2
    store.forget(run.run_sha256)
    with store.store.engine.connect() as connection:
        assert connection.execute(sa.select(sa.func.count()).select_from(schema.kept_views)).scalar() == 0


def test_a_second_run_of_the_same_bytes_keeps_its_own_name_and_file(store):
    """Two runs of identical bytes share one kept result, but each is shown under its own run and file name
    (an uploaded copy of a demo run read 'uploaded-bert-crf (bert-crf.jsonl)', the first file's name)."""
    task, gold, first = demo_input()
    data = first.read()
    copy = kept_scoring.RunInput("uploaded-copy", kept_format.sha256(data), "uploaded-copy.jsonl", lambda: data)
    kept_scoring.results_for(store, task, gold, [first], strict=False)
    results, _ = kept_scoring.results_for(store, task, gold, [first, copy], strict=False)
    assert (results[first.name].run, results[first.name].file) == (first.name, first.file_name)
    assert (results["uploaded-copy"].run, results["uploaded-copy"].file) == ("uploaded-copy", "uploaded-copy.jsonl")
