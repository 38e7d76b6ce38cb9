"""The slice finder's unit rows and their encoding at the edges the mutation run of `units`, `encode`, `_text_codes`
and `_strings` (docs/mutation.md) showed untested: the unit frame keeps exactly the run's columns (no stray `index`),
user columns after a leaking task feature, a user column of another detail level, a user column named at two levels,
and an all-missing text column. Expected values are read from the frames and counted in the test, never from `units`."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from klue_viz.core.results import Frames
from klue_viz.discovery.slices import MISSING, _strings, encode, units
from klue_viz.scoring.evaluate import evaluate_bytes, load_gold
from klue_viz.tasks import get_task
from klue_viz.tasks.ner import tag_list
from tests.conftest import jsonl


@pytest.fixture(scope="module")
def ner(shared):
    """A perfect NER run on the first 40 dev sentences."""
    task = get_task("ner")
    gold = load_gold(task, shared)
    rows = gold.rows[:40]
    run = evaluate_bytes(task, gold, jsonl([{"guid": r["guid"], "tags": tag_list(r["tags"])} for r in rows]), "p.jsonl")
    return task, run.frames


def test_entity_units_keep_the_entity_columns_and_no_index_column(ner):
    task, frames = ner
    found = units(task, frames)
    entities = frames.details["entities"]
    assert list(found.frame.columns) == list(entities.columns)  # a reset_index that keeps the index adds 'index'
    assert found.frame["guid"].tolist() == entities["guid"].tolist()
    assert list(found.frame.index) == list(range(len(entities)))


def test_example_units_keep_the_example_columns(shared):
    task = get_task("nli")
    gold = load_gold(task, shared)
    rows = gold.rows[:20]
    run = evaluate_bytes(task, gold, jsonl([{"guid": r["guid"], "label": r["gold"]} for r in rows]), "p.jsonl")
    found = units(task, run.frames)
    assert list(found.frame.columns) == list(run.frames.examples.columns)
    # the gold label of each pair, read from the dev rows in order
    assert found.features["gold_label"].tolist() == [r["gold"] for r in rows]


def test_user_columns_of_every_level_come_after_the_leaking_feature(ner):
    task, frames = ner
    examples = frames.examples.copy()
    entities = frames.details["entities"].copy()
    examples["user:bucket"] = ["a" if k % 2 else "b" for k in range(len(examples))]
    entities["user:bucket"] = ["x"] * len(entities)  # the same name at the entity level: kept as 'entities.user:bucket'
    other = pd.DataFrame({"guid": examples["guid"], "user:elsewhere": "z"})  # a level that is not the unit level
    found = units(task, Frames(examples, {"aside": other, "entities": entities}))
    assert "user:elsewhere" not in found.features
    by_guid = dict(zip(examples["guid"], examples["user:bucket"]))
    assert found.features["user:bucket"].tolist() == [by_guid[g] for g in entities["guid"]]
    assert found.features["entities.user:bucket"].tolist() == ["x"] * len(entities)
    assert found.labels["entities.user:bucket"] == "bucket (your column)"


def test_an_all_missing_text_column_is_missing_everywhere():
    frame = pd.DataFrame({"gone": pd.Series([None, None, None], dtype="str"), "kept": pd.Series(["b", None, "a"], dtype="str")})
    codes, values = encode(frame)
    assert codes[:, 0].tolist() == [MISSING] * 3 and codes[:, 1].tolist() == [1, MISSING, 0]
    assert values[0].tolist() == [] and values[0].dtype.kind == "U"  # text values, as np.unique of no strings gives
    assert values[1].tolist() == ["a", "b"]
    assert codes.dtype == np.int64


def test_strings_are_text_objects_with_none_where_missing():
    text = _strings(pd.Series(["경찰", None, "x"], dtype="str"))
    assert text.dtype == object and text.tolist() == ["경찰", None, "x"] and text[1] is None
    numbers = _strings(pd.Series([1, None, 3], dtype="Int64"))  # not text: each value's str(), pd.NA as None
    assert numbers.dtype == object and numbers.tolist() == ["1", None, "3"]
    mixed = _strings(pd.Series([True, 1, "1", float("nan")], dtype=object))
    assert mixed.tolist() == ["True", "1", "1", None] and [type(v) for v in mixed[:3]] == [str, str, str]
    plain = _strings(pd.Series(["a", "b"], dtype=object))  # no missing value: still an object array
    assert plain.dtype == object and plain.tolist() == ["a", "b"]


def test_object_columns_at_the_edges():
    none = encode(pd.DataFrame(index=range(5)))  # no feature at all: five rows of no codes
    assert none[0].shape == (5, 0) and none[0].dtype == np.int64 and none[1] == []
    empty = encode(pd.DataFrame({"x": pd.Series([], dtype=object)}))  # no rows
    assert empty[0].shape == (0, 1) and empty[0].dtype == np.int64 and empty[1][0].tolist() == []
    gone = encode(pd.DataFrame({"x": pd.Series([None, None], dtype=object), "y": pd.Series([2, 10], dtype=object)}))
    assert gone[0].dtype == np.int64 and gone[0].tolist() == [[MISSING, 1], [MISSING, 0]]  # '10' sorts before '2'
    assert gone[1][0].tolist() == [] and gone[1][0].dtype.kind == "U" and gone[1][1].tolist() == ["10", "2"]
