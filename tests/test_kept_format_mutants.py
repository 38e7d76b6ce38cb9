"""klue_viz/store/kept_format.py at the edges its mutants showed untested (issue 31, docs/mutation.md): the code
fingerprint and the keys, the checksum of a kept row and its refusals, each wrong type of a summary row named in
words, a Parquet file without klue-viz's metadata or of another layout, JSON columns that do not decode one value per
cell, a frame with its own index, and the view kinds' refusals.

Expected values are computed here with hashlib, json and pyarrow from the documented layout of each thing
(docs/runs-storage.md, the module's docstring), or written by hand."""

from __future__ import annotations

import dataclasses
import hashlib
import io
import json
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from klue_viz.core.problems import Problem
from klue_viz.core.results import Coverage, Scores
from klue_viz.store import kept_format
from klue_viz.store.kept_format import (
    KeptUnreadable,
    Summary,
    Unsealed,
    gold_key,
    layout,
    parquet_bytes,
    read_frame,
    result_key,
    seal,
    summary_from_row,
    summary_row,
    unseal,
    view_from_json,
    view_json,
)

PACKAGE = Path(kept_format.__file__).resolve().parent.parent


def test_code_fingerprint_hashes_the_prefix_then_each_file_by_name_and_bytes():
    digest = hashlib.sha256(b"7")
    for file in [PACKAGE / "store" / "kept_format.py", *sorted((PACKAGE / "metrics").rglob("*.py"))]:
        digest.update(file.relative_to(PACKAGE).as_posix().encode())
        digest.update(file.read_bytes())
    assert kept_format._code_fingerprint("7", ("store/kept_format.py", "metrics")) == f"7.{digest.hexdigest()[:16]}"


def test_keys_are_the_sha256_of_their_fields_and_the_layout():
    assert result_key("r", "g", 1) == hashlib.sha256(f"r|g|1|{layout()}".encode()).hexdigest()
    assert result_key("r", "g", 0) == hashlib.sha256(f"r|g|0|{layout()}".encode()).hexdigest()
    assert gold_key("nli", "g", "dev.json") == hashlib.sha256(f"nli\ng\ndev.json\n{layout()}".encode()).hexdigest()


def test_seal_and_unseal():
    text = '{"a": "가"}'
    digest = hashlib.sha256(json.dumps(["k", "1", "True"], ensure_ascii=False).encode() + b"\n" + text.encode()).hexdigest()
    assert seal(text, "k", 1, True) == f"sha256:{digest}\n{text}"
    assert unseal(f"sha256:{digest}\n{text}", "k", 1, True) == text
    lone = hashlib.sha256(b'["k"]\n' + "\ud800".encode("utf-8", "surrogatepass")).hexdigest()
    assert seal("\ud800", "k") == f"sha256:{lone}\n\ud800"  # a lone surrogate (from a \\ud800 escape) is sealed too
    for stored, why in ((None, "no checksum"), (text, "no checksum"), (f"sha256:{digest}", "the checksum does not match"),
                        (f"sha256:{digest}\n{text} ", "the checksum does not match"), (seal(text, "k", 1), "the checksum does not match")):
        with pytest.raises(Unsealed) as err:
            unseal(stored, "k", 1, True)
        assert str(err.value) == why


SUMMARY = Summary("key", "nli", "run", "gold", True, "p.jsonl", Scores({"accuracy": 50.0, "macro_f1": None}, {"macro_f1": "no class"}),
                  Coverage(4, 2, 2, 0, 0, 1), [Problem("bad", 3, "g", "p.jsonl"), Problem("whole file")], ["a note"], ["x1"],
                  {"examples": ("abc", 10), "units": ("def", 20)})


def row_of(body: dict | None = None, levels: object = None) -> SimpleNamespace:
    """A kept_scores row of SUMMARY with `body` (its summary JSON) and `levels` in place of its own, sealed as written."""
    row = summary_row(SUMMARY, "L", "2026-12-02")
    if levels is not None:
        row["levels"] = json.dumps(levels)
    fields = (row["key"], row["task"], row["run_sha256"], row["gold_sha256"], row["strict"], row["layout"], row["file_name"], row["levels"])
    if body is not None:
        row["summary"] = seal(json.dumps(body), *fields)
    return SimpleNamespace(**row)


BODY = {"scores": {"accuracy": 50, "macro_f1": None}, "reasons": {"macro_f1": "no class"},
        "coverage": {"n_gold": 4, "n_scored": 2, "n_missing": 2, "n_extra": 0, "n_invalid": 0, "unreadable_answers": 1},
        "problems": [{"message": "bad", "line": 3, "guid": "g", "file": "p.jsonl"}, {"message": "whole file"}],
        "notes": ["a note"], "extra": ["x1"]}


def test_a_summary_row_reads_back_as_written():
    assert summary_from_row(row_of()) == SUMMARY
    assert summary_from_row(row_of(BODY)) == SUMMARY


@pytest.mark.parametrize(("change", "message"), [
    ({"body": [1]}, "summary of a kept row is a list"),
    ({"levels": [["abc", 10]]}, "levels of a kept row is a list"),
    ({"levels": {"examples": {"abc": 10}}}, "level of a kept row is a dict"),
    ({"levels": {"examples": [1, 10]}}, "level digest of a kept row is a int"),
    ({"levels": {"examples": ["abc", "10"]}}, "level size of a kept row is a str"),
    ({"levels": {"examples": ["abc", True]}}, "level size of a kept row is a bool"),
    ({"scores": [50]}, "scores of a kept row is a list"),
    ({"scores": {"accuracy": "50"}}, "score of a kept row is a str"),
    ({"scores": {"accuracy": True}}, "score of a kept row is a bool"),
    ({"reasons": ["no class"]}, "reasons of a kept row is a list"),
    ({"reasons": {"macro_f1": 1}}, "reason of a kept row is a int"),
    ({"coverage": [4]}, "coverage of a kept row is a list"),
    ({"coverage": {**BODY["coverage"], "n_gold": 4.0}}, "coverage of a kept row is a float"),
    ({"coverage": {**BODY["coverage"], "n_gold": False}}, "coverage of a kept row is a bool"),
    ({"problems": {}}, "problems of a kept row is a dict"),
    ({"problems": ["bad"]}, "problem of a kept row is a str"),
    ({"problems": [{"message": 1}]}, "message of a kept row is a int"),
    ({"problems": [{"message": "m", "line": "3"}]}, "line of a kept row is a str"),
    ({"problems": [{"message": "m", "guid": 1}]}, "guid of a kept row is a int"),
    ({"problems": [{"message": "m", "file": 1}]}, "file of a kept row is a int"),
    ({"notes": "a note"}, "note of a kept row is a str"),
    ({"notes": [1]}, "note of a kept row is a int"),
    ({"extra": [None]}, "extra guid of a kept row is a NoneType"),
])
def test_each_wrong_type_of_a_summary_row_is_named(change, message):
    fields = {k: v for k, v in change.items() if k not in ("levels", "body")}
    body = change.get("body") or {**BODY, **fields}
    levels = change.get("levels")
    with pytest.raises(TypeError) as err:
        summary_from_row(row_of(body, levels))
    assert str(err.value) == message


def test_a_summary_without_its_example_frame_is_refused():
    with pytest.raises(ValueError, match="^no example frame$"):
        summary_from_row(row_of(BODY, {"units": ["def", 20]}))


def plain_parquet(frame: pd.DataFrame, metadata: dict[bytes, bytes]) -> bytes:
    table = pa.Table.from_pandas(frame, preserve_index=False)
    table = table.replace_schema_metadata({**(table.schema.metadata or {}), **metadata})
    sink = io.BytesIO()
    pq.write_table(table, sink)
    return sink.getvalue()


def test_read_frame_refuses_another_layout_in_words():
    data = parquet_bytes(pd.DataFrame({"a": [1]}), "L1")
    with pytest.raises(KeptUnreadable) as err:
        read_frame(data, "L2")
    assert str(err.value) == "written in layout 'L1', not 'L2'"
    plain = plain_parquet(pd.DataFrame({"a": [1]}), {})
    for wanted in ("L2", "XXXX", ""):
        with pytest.raises(KeptUnreadable) as err:
            read_frame(plain, wanted or None)
        assert str(err.value) == f"written in layout '?', not {wanted or layout()!r}"
    with pytest.raises(pa.ArrowException) as arrow:
        pq.read_table(io.BytesIO(b"not parquet"))
    with pytest.raises(KeptUnreadable) as err:
        read_frame(b"not parquet")
    assert str(err.value) == f"unreadable Parquet ({arrow.value})"


def test_a_file_of_the_layout_without_json_columns_is_read_as_it_is():
    frame = pd.DataFrame({"a": [1, 2], "b": ["[1]", "x"]})
    read = read_frame(plain_parquet(frame, {b"klue_viz.layout": b"L"}), "L")
    assert read["a"].tolist() == [1, 2] and read["b"].tolist() == ["[1]", "x"]


def test_json_columns_decode_one_value_per_cell_on_the_frames_own_index():
    frame = pd.DataFrame({"c": ["1,2"]}, index=[7])
    with pytest.raises(KeptUnreadable) as err:
        kept_format._decode_json_columns(frame, ["c"])
    assert str(err.value) == "column 'c': 2 values for 1 cells"
    frame = pd.DataFrame({"c": ['["a"]', "null"]}, index=[10, 11])
    kept_format._decode_json_columns(frame, ["c"])
    assert frame["c"].tolist() == [["a"], None] and frame["c"].dtype == object
    with pytest.raises(TypeError):
        kept_format._decode_json_columns(pd.DataFrame({"c": ["1", None]}), ["c"])  # a cell that is not text


@dataclasses.dataclass
class Kept:
    n: int


@dataclasses.dataclass
class Other:
    n: int


class ZeroDimensional:
    """Not numpy, with a zero `ndim`: not converted as a numpy scalar."""

    ndim = 0

    def item(self) -> int:
        return 1


def test_view_kinds_refuse_in_words():
    assert view_from_json(view_json([Kept(1), np.int64(3), np.float64(0.5), np.bool_(True)], [Kept]), [Kept]) == [Kept(1), 3, 0.5, True]
    with pytest.raises(TypeError) as err:
        view_json([Other(1)], [Kept])
    assert str(err.value) == "a Other cannot be kept (not one of the view's types)"
    with pytest.raises(TypeError) as err:
        view_json({"\u0000dataclass": "Kept"}, [Kept])
    assert str(err.value) == "a dict with the dataclass tag as a key cannot be kept exactly"
    with pytest.raises(TypeError) as err:
        view_json(np.array([1, 2]))
    assert str(err.value) == "a ndarray value cannot be kept exactly"
    with pytest.raises(TypeError) as err:
        view_json(ZeroDimensional())
    assert str(err.value) == "a ZeroDimensional value cannot be kept exactly"


def test_read_columns_reads_the_columns_asked_for_in_their_order():
    frame = pd.DataFrame({"guid": ["g1", "g2"], "n": [1, 2], "votes": [["a", "b"], None], "spans": [[[0, 1]], []]}, index=[5, 6])
    data = parquet_bytes(frame, "L")
    read = kept_format.read_columns(data, ["votes", "guid", "no such column", "votes"], "L")
    assert list(read.columns) == ["votes", "guid"] and read["votes"].tolist() == [["a", "b"], None]
    assert read["guid"].tolist() == ["g1", "g2"] and read["guid"].dtype == frame["guid"].dtype
    assert kept_format.read_columns(data, ["spans"], "L")["spans"].tolist() == [[[0, 1]], []]
    assert kept_format.read_columns(data, ["n"], "L")["n"].tolist() == [1, 2]
    plain = plain_parquet(pd.DataFrame({"b": ["[1]"]}), {b"klue_viz.layout": b"L"})
    assert kept_format.read_columns(plain, ["b"], "L")["b"].tolist() == ["[1]"]  # no JSON columns named: read as text


def test_read_columns_refuses_as_read_frame():
    data = parquet_bytes(pd.DataFrame({"a": [1]}), "L1")
    with pytest.raises(KeptUnreadable) as err:
        kept_format.read_columns(data, ["a"], "L2")
    assert str(err.value) == "written in layout 'L1', not 'L2'"
    plain = plain_parquet(pd.DataFrame({"a": [1]}), {})
    for wanted in ("L2", "XXXX", ""):
        with pytest.raises(KeptUnreadable) as err:
            kept_format.read_columns(plain, ["a"], wanted or None)
        assert str(err.value) == f"written in layout '?', not {wanted or layout()!r}"
    with pytest.raises(pa.ArrowException) as arrow:
        pq.ParquetFile(pa.BufferReader(b"not parquet"))
    with pytest.raises(KeptUnreadable) as err:
        kept_format.read_columns(b"not parquet", ["a"])
    assert str(err.value) == f"unreadable Parquet ({arrow.value})"


def test_seal_keeps_korean_fields_as_utf8_and_lone_surrogates_passed():
    text = "첫 줄\n둘째 줄"
    expected = hashlib.sha256('["가", "\ud800"]'.encode("utf-8", "surrogatepass") + b"\n" + text.encode()).hexdigest()
    assert seal(text, "가", "\ud800") == f"sha256:{expected}\n{text}"
    assert unseal(seal(text, "가"), "가") == text  # a text of several lines: the checksum is only the first


def test_summary_row_keeps_korean_and_its_creation_time():
    summary = dataclasses.replace(SUMMARY, notes=["한국어 메모"])
    row = summary_row(summary, "L", "2026-12-02T10:00:00")
    assert "한국어 메모" in row["summary"] and row["created_at"] == "2026-12-02T10:00:00"
    assert summary_from_row(SimpleNamespace(**row)).notes == ["한국어 메모"]


def test_json_cells_encode_each_list_of_its_own():
    assert kept_format.json_cells([["a"], ["b"], ["a"], None, "x", [1]]) == ['["a"]', '["b"]', '["a"]', "null", '"x"', "[1]"]
    # a dict of string keys goes through `exact` like any other value: its tuple comes back a tuple
    [cell] = kept_format.json_cells([{"a": (1, 2)}])
    assert cell == '{"a": {"\\u0000tuple": [1, 2]}}' and view_from_json(cell) == {"a": (1, 2)}


def test_parquet_keeps_the_index_and_is_written_with_zstd_and_no_statistics():
    frame = pd.DataFrame({"n": [1, 2], "votes": [["a"], {"k": [1, 2]}]}, index=[5, 6])
    data = parquet_bytes(frame, "L")
    read = read_frame(data, "L")
    assert read.index.tolist() == [5, 6] and list(read.columns) == ["n", "votes"] and read["votes"].tolist() == [["a"], {"k": [1, 2]}]
    chunk = pq.ParquetFile(io.BytesIO(data)).metadata.row_group(0).column(0)
    assert chunk.compression == "ZSTD" and not chunk.is_stats_set
