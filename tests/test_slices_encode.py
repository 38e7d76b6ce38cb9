"""The slice finder's encoding of text columns (pandas' Arrow strings) is numpy's `unique` of the present values.

`encode` takes a fast path for text columns; the reference here is `np.unique(..., return_inverse=True)` over the
present values as Python strings, and `_strings` is checked against `str()` of each value, None where missing.
"""

from __future__ import annotations

import random

import numpy as np
import pandas as pd
import pytest

from klue_viz.discovery.slices import MISSING, _strings, encode

WORDS = ["경찰", "경찰은", "Seoul", "", " ", "1-1 chars", "Hangul", "漢字", "b", "B", "a", "가", "ᄀ", "z" * 30]


def _reference(values: list[str | None]) -> tuple[np.ndarray, np.ndarray]:
    present = np.array([v is not None for v in values], dtype=bool)
    kept = np.array([v for v in values if v is not None], dtype=str)
    uniques, inverse = np.unique(kept, return_inverse=True) if len(kept) else (np.array([], dtype=str), np.array([], dtype=int))
    codes = np.full(len(values), MISSING, dtype=np.int64)
    codes[present] = inverse
    return codes, uniques


@pytest.mark.parametrize("seed", range(6))
def test_text_columns_encode_as_numpy_unique(seed):
    rng = random.Random(seed)
    n = rng.choice([0, 1, 7, 500])
    columns = {f"c{k}": [None if rng.random() < 0.15 else rng.choice(WORDS) for _ in range(n)] for k in range(3)}
    columns["all_missing"] = [None] * n
    frame = pd.DataFrame({name: pd.Series(values, dtype="str") for name, values in columns.items()})
    assert all(frame[c].dtype != object for c in frame.columns)  # the text path is the one taken
    codes, values = encode(frame)
    assert codes.shape == (n, len(columns))
    for j, (name, raw) in enumerate(columns.items()):
        expected_codes, expected_values = _reference(raw)
        assert codes[:, j].tolist() == expected_codes.tolist(), name
        assert values[j].tolist() == expected_values.tolist() and values[j].dtype == expected_values.dtype, name


def test_object_and_text_columns_encode_alike():
    raw = ["b", None, "a", "b", "", "가"]
    as_text = encode(pd.DataFrame({"x": pd.Series(raw, dtype="str")}))
    as_objects = encode(pd.DataFrame({"x": pd.Series(raw, dtype=object)}))
    assert as_text[0][:, 0].tolist() == as_objects[0][:, 0].tolist() == [2, MISSING, 1, 2, 0, 3]
    assert as_text[1][0].tolist() == as_objects[1][0].tolist() == ["", "a", "b", "가"]


def test_strings_of_text_and_other_columns():
    text = pd.Series(["경찰", None, "", "x"], dtype="str")
    assert _strings(text).tolist() == ["경찰", None, "", "x"]
    assert _strings(pd.Series([1, 2, None], dtype="Int64")).tolist() == ["1", "2", None]
    assert _strings(pd.Series([1.5, float("nan")])).tolist() == ["1.5", None]
    assert _strings(pd.Series([True, 1, "1"], dtype=object)).tolist() == ["True", "1", "1"]  # each value's own text
