"""NER's statistics(frames) through factorize (klue_viz/tasks/ner.py) give exactly the entries of the former
get_indexer/Categorical code, on fresh and kept frames; and every demo task's kept frames give its scoring's statistics."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from klue_viz.metrics.official import Statistics, ner_statistics
from klue_viz.reading.demo import DEMO_BENCHMARK, demo_runs
from klue_viz.scoring.evaluate import load_gold
from klue_viz.store import kept_format, kept_results
from klue_viz.store.annotations import Store
from klue_viz.tasks import TASKS, get_task
from klue_viz.tasks.ner import COUNT_COLUMNS, TYPES, entity_rows, entity_sentences, type_codes
from tests.test_kept import keep_and_load, noisy_run


def former_ner_statistics(frames) -> Statistics:
    """NER's statistics(frames) as it was written before (pd.Index.get_indexer and pd.Categorical), kept here to compare."""
    ex, ents = frames.examples, frames.details["entities"]
    counts = [ex[COUNT_COLUMNS[kind]].to_numpy(np.int64) for kind in ("tp", "fp", "fn")]
    sentence = pd.Index(ex["guid"]).get_indexer(ents["guid"]).astype(np.int64)
    kind = entity_rows(ents)
    keep = (sentence >= 0) & (kind >= 0)
    types = pd.Categorical(ents["label"], categories=TYPES).codes.astype(np.int64)
    return ner_statistics(len(ex), counts[0], counts[1], counts[2], sentence[keep], types[keep], kind[keep])


def assert_same_entries(a: Statistics, b: Statistics) -> None:
    """The same entries in the same order, values equal exactly."""
    assert (a.n, a.width) == (b.n, b.width)
    assert np.array_equal(a.rows, b.rows) and np.array_equal(a.cols, b.cols) and np.array_equal(a.values, b.values)


@pytest.fixture
def store(tmp_path) -> kept_results.KeptResults:
    return kept_results.KeptResults(Store(str(tmp_path / "db.sqlite3")))


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 7])
def test_ner_statistics_equal_the_former_code_on_the_dev_set(store, shared, seed):
    task = get_task("ner")
    gold = load_gold(task, shared)
    fresh, back = keep_and_load(store, task, gold, noisy_run("ner", gold, seed), f"ner-{seed}.jsonl", strict=seed == 7)
    for result in (fresh, back):  # fresh frames (Python strings) and kept ones (Arrow strings)
        assert_same_entries(task.statistics(result.frames), former_ner_statistics(result.frames))


@pytest.mark.parametrize("path", list(demo_runs("ner")), ids=lambda p: p.stem)
def test_ner_statistics_equal_the_former_code_on_the_demo(store, path):
    task = get_task("ner")
    gold = load_gold(task, DEMO_BENCHMARK)
    fresh, back = keep_and_load(store, task, gold, path.read_bytes(), path.name)
    for result in (fresh, back):
        assert_same_entries(task.statistics(result.frames), former_ner_statistics(result.frames))


DEMO_CASES = [(name, path) for name in TASKS for path in demo_runs(name)]


@pytest.mark.parametrize(("task_name", "path"), DEMO_CASES, ids=[f"{t}-{p.stem}" for t, p in DEMO_CASES])
def test_kept_frames_give_the_statistics_of_fresh_frames(store, task_name, path):
    task = get_task(task_name)
    gold = load_gold(task, DEMO_BENCHMARK)
    fresh, back = keep_and_load(store, task, gold, path.read_bytes(), path.name)
    assert_same_entries(task.statistics(fresh.frames), task.statistics(back.frames))


def test_entity_sentences_is_get_indexer():
    examples = pd.Series(["b", "a", "c"], dtype="string")
    entities = pd.Series(["a", "z", "c", "a", None], dtype="string")
    assert entity_sentences(examples, entities).tolist() == [1, -1, 2, 1, -1]  # by hand
    assert entity_sentences(examples, entities).tolist() == pd.Index(examples).get_indexer(entities).tolist()
    assert entity_sentences(pd.Series([], dtype="string"), pd.Series(["a"], dtype="string")).tolist() == [-1]
    with pytest.raises(pd.errors.InvalidIndexError):  # duplicated guids fail as get_indexer does
        entity_sentences(pd.Series(["a", "a"]), pd.Series(["a"]))


def test_type_codes_is_the_categorical_code():
    labels = pd.Series(["LC", "PS", "XX", None, "QT", "PS"], dtype="string")
    expected = [TYPES.index("LC"), TYPES.index("PS"), -1, -1, TYPES.index("QT"), TYPES.index("PS")]  # by hand
    assert type_codes(labels).tolist() == expected
    known = labels[labels != "XX"]  # pandas deprecates a value outside the categories
    assert type_codes(known).tolist() == pd.Categorical(known, categories=TYPES).codes.tolist()


def test_json_cells_read_back_with_none_and_the_string_null():
    frame = pd.DataFrame({"v": pd.Series([None, "null", [1, "a"], (2, 3), {"k": None}], dtype=object)})
    back = kept_format.read_frame(kept_format.parquet_bytes(frame))
    assert back["v"].tolist() == [None, "null", [1, "a"], (2, 3), {"k": None}]
    assert [type(v) for v in back["v"]] == [type(None), str, list, tuple, dict]
