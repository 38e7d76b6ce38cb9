"""Kept frames' JSON columns encoded a column at a time (`kept.json_cells`, issue 15) and Parquet written without
statistics: the texts json.dumps gives, the frame read back as it was, and the file still read by DuckDB and pyarrow."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import pandas.testing as pdt
import pyarrow.parquet as pq
import pytest

from klue_viz.core.exact_json import TUPLE
from klue_viz.store.kept_format import json_cells, parquet_bytes, read_frame


def test_each_value_is_the_text_json_dumps_gives() -> None:
    votes = ["neutral", "neutral", "entailment"]
    values = [None, votes, list(votes), ("a", 1), ["a", 1], {"k": ("x",)}, "한국 \"따옴표\"\n", 1.5, 7, True, [], ["ㄱ"], ("ㄱ",),
              [["a"], None]]
    expected = ["null", '["neutral", "neutral", "entailment"]', '["neutral", "neutral", "entailment"]',
                json.dumps({TUPLE: ["a", 1]}, ensure_ascii=False), '["a", 1]', json.dumps({"k": {TUPLE: ["x"]}}, ensure_ascii=False),
                json.dumps("한국 \"따옴표\"\n", ensure_ascii=False), "1.5", "7", "true", "[]", '["ㄱ"]',
                json.dumps({TUPLE: ["ㄱ"]}, ensure_ascii=False), '[["a"], null]']
    assert json_cells(values) == expected
    assert json_cells([]) == []


@pytest.mark.parametrize("value", [{1: "a"}, {"a", "b"}, np.int64(3), ["a", object()], [{2: "b"}]],
                         ids=["int key", "set", "numpy int", "an object", "nested int key"])
def test_a_value_json_would_change_is_refused(value: object) -> None:
    with pytest.raises(TypeError):
        json_cells([["fine"], value])


def frame() -> pd.DataFrame:
    return pd.DataFrame({
        "guid": pd.array(["g1", "g2", "g3"], dtype="str"),
        "votes": pd.Series([["neutral", "neutral"], ["neutral", "neutral"], ["entailment"]], dtype=object),
        "spans": pd.Series([None, [(0, 2, "PS"), (1, 3, "OG")], None], dtype=object),
        "score": [1.5, np.nan, -2.0],
    })


def test_a_frame_reads_back_as_it_was_written() -> None:
    original = frame()
    back = read_frame(parquet_bytes(original))
    pdt.assert_frame_equal(back, original, check_exact=True)
    assert back["spans"][1] == [(0, 2, "PS"), (1, 3, "OG")] and isinstance(back["spans"][1][0], tuple)
    assert back["votes"][0] is not back["votes"][1]  # equal lists are read back as lists of their own


def test_the_parquet_has_no_statistics_and_duckdb_reads_it(tmp_path: Path) -> None:
    path = tmp_path / "examples.parquet"
    path.write_bytes(parquet_bytes(frame()))
    meta = pq.ParquetFile(path).metadata
    assert meta.num_rows == 3
    for k in range(meta.num_columns):
        stats = meta.row_group(0).column(k).statistics
        assert stats is None or not stats.has_min_max
    rows = duckdb.sql(f"SELECT guid, votes, score FROM read_parquet('{path}') ORDER BY guid").fetchall()
    assert rows[0][0] == "g1" and json.loads(rows[0][1]) == ["neutral", "neutral"] and rows[2][2] == -2.0
