"""klue_viz.scoring.user_features at the edges mutation testing showed untested (docs/mutation.md): what a cell reads
as, the quantile bins at their edges (against numpy.quantile) and merged edges, the top categories with ties, the 90%
numeric share on both sides, every refusal's and problem's words, WoS turns, NER spans at the sentence's ends, and
how the columns reach the frames, the slices, the sort orders and the summary.

Gold sets are a few examples in the official formats (tests/cases.py); expected values are counted by hand."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math

import numpy as np
import pandas as pd
import pytest

from klue_viz.core.problems import InputError
from klue_viz.core.results import Frames
from klue_viz.scoring.evaluate import evaluate_bytes
from klue_viz.scoring.user_features import (
    UserColumn,
    apply_features,
    digest_of,
    label,
    quantile_bins,
    read_features,
    summary,
    top_categories,
    user_slices,
    user_sort_orders,
    with_features,
)
from klue_viz.tasks import get_task
from tests.cases import gold_of, ner_tsv, nli, wos
from tests.conftest import jsonl

#: NER's detail level (tasks/ner.py `facts.detail`): where a file's span columns land.
ENTITY_LEVEL = "entities"

NLI, WOS, NER = get_task("nli"), get_task("wos"), get_task("ner")
GOLD = gold_of("nli", nli(["entailment"] * 12))
G = [row["guid"] for row in GOLD.rows]


def read(text: str, task=NLI, gold=GOLD, name="f.csv", **kw):
    return read_features(text.encode("utf-8"), name, task, gold.rows, **kw)


def test_quantile_bins_at_their_edges_against_numpy():
    numbers = np.array([1.0, 2.0, 3.0, 4.0, 5.0, math.nan])
    assert list(np.quantile(numbers[:5], np.linspace(0, 1, 5))) == [1, 2, 3, 4, 5]
    binned, labels = quantile_bins(numbers, 4)
    # a value on an edge belongs to the bin below it; the lowest edge to the first bin; NaN to none
    assert labels == ("[1, 2]", "(2, 3]", "(3, 4]", "(4, 5]")
    assert binned == ["[1, 2]", "[1, 2]", "(2, 3]", "(3, 4]", "(4, 5]", None]


def test_equal_quantile_edges_merge():
    numbers = np.array([0.0] * 6 + [1.0, 2.0, 3.0, 7.0, 12345.678])
    edges = np.quantile(numbers, np.linspace(0, 1, 5))
    assert list(edges[:3]) == [0, 0, 0] and np.unique(edges).size == 3  # 0, 0, 0, 2.5, 12345.678
    binned, labels = quantile_bins(numbers, 4)
    assert labels == ("[0, 2.5]", "(2.5, 1.235e+04]")
    assert binned == ["[0, 2.5]"] * 8 + ["(2.5, 1.235e+04]"] * 3


def test_as_many_distinct_values_as_bins_stay_values_one_more_is_binned():
    binned, labels = quantile_bins(np.array([3.0, 1.0, 2.5, 1.0, math.nan]), 3)
    assert labels == ("1", "2.5", "3") and binned == ["3", "1", "2.5", "1", None]
    assert quantile_bins(np.array([1.0, 2.0, 3.0, 4.0]), 3)[1] == ("[1, 2]", "(2, 3]", "(3, 4]")


def test_top_categories_ties_keep_the_first_seen():
    texts = ["b", "a", None, "a", "b", "c", "d"]
    assert top_categories(texts, 2) == (["b", "a", None, "a", "b", "other", "other"], ("b", "a", "other"))
    assert top_categories(texts, 4) == (texts, ("b", "a", "c", "d"))  # no more values than kept: no 'other'
    assert top_categories(["x", "y", "y"], 1) == (["other", "y", "y"], ("y", "other"))


def test_what_each_cell_reads_as():
    rows = [{"guid": G[0], "v": 1, "t": True}, {"guid": G[1], "v": " 2.5 ", "t": False}, {"guid": G[2], "v": True, "t": 3.0},
            {"guid": G[3], "v": 4.0, "t": " x "}, {"guid": G[4], "v": "", "t": 2.5}, {"guid": G[5], "v": None, "t": None},
            {"guid": G[6], "v": 7, "t": "  "}, {"guid": G[7], "v": 8, "t": 0}, {"guid": G[8], "v": 9, "t": 1e20},
            {"guid": G[9], "v": 10, "t": "y"}, {"guid": G[10], "v": 11, "t": "y"}, {"guid": G[11], "v": 12, "t": "y"}]
    features, problems = read_features(jsonl(rows), "f.jsonl", NLI, GOLD.rows, top=30)
    values = features.values.set_index("guid")
    # v: 9 numbers of 10 filled cells (True is not a number, "" and None are empty): numeric (9 of 9 would be text), True left empty
    assert [c.kind for c in features.columns] == ["numeric", "text"]
    assert [p.line for p in problems] == [3] and problems[0].message == "column 'v' holds numbers, found True: left empty"
    assert list(values["user_value:v"].fillna(-1)) == [1, 2.5, -1, 4, -1, -1, 7, 8, 9, 10, 11, 12]
    assert list(values["user:t"].fillna("-")) == ["true", "false", "3", "x", "2.5", "-", "-", "0", "100000000000000000000", "y", "y", "y"]
    assert values["user:t"].dtype == "string" and values["user_value:v"].dtype == np.float64


@pytest.mark.parametrize("cells, kind", [(["1"] * 9 + ["x"], "numeric"), (["1"] * 8 + ["x", "y"], "text"),
                                         (["nan", "inf", "1", "2"], "text"), (["", " "], "text")])
def test_the_numeric_share(cells, kind):
    text = "guid,v\n" + "".join(f"{G[k]},{c}\n" for k, c in enumerate(cells))
    features, problems = read(text)
    assert features.columns[0].kind == kind
    if kind == "numeric":
        assert [(p.line, p.guid, p.file) for p in problems] == [(11, G[9], "f.csv")]


def test_an_id_column_stands_for_guid_and_rows_counts_every_record():
    features, problems = read(f"id,v\n{G[0]},a\n{G[0]},b\nnobody,c\n")
    assert list(features.values["guid"]) == [G[0]] and features.rows == 3 and len(problems) == 2
    assert problems[0].message == f"{G[0]} is given twice (first on line 2); this row is left out" and problems[0].guid == G[0]
    assert {c.level for c in features.columns} == {"examples"} and {p.file for p in problems} == {"f.csv"}
    assert problems[1].message == "guid nobody is not in the gold: the row is left out" and problems[1].guid == "nobody"
    assert read(f"guid,id,v\n{G[0]},x,a\n")[0].columns[0].name == "id"  # with both, guid is the key and id a column


@pytest.mark.parametrize("text, message", [
    ("guid,v\n", "f.csv: no rows (expected a header with a guid column and your columns)"),
    ("a,b,c,d,e,f,g,h,i,j,k,l\n1,2,3,4,5,6,7,8,9,10,11,12\n", "f.csv: no 'guid' column (the examples' ids, as in the gold file); columns found: a, b, c, d, e, f, g, h, i, j"),
    (f"guid,turn\n{G[0]},1\n", "f.csv: only key columns (guid, turn); add at least one column of your own"),
    (f"guid\n{G[0]}\n", "f.csv: only key columns (guid); add at least one column of your own"),
])
def test_files_that_cannot_be_used(text, message):
    with pytest.raises(InputError) as caught:
        read(text)
    assert str(caught.value) == message


def test_a_row_without_a_guid_is_named_by_its_line():
    _, problems = read(f"guid,v\n  ,1\n{G[0]},2\n")
    assert [(p.message, p.line, p.guid) for p in problems] == [("no guid: the row is left out", 2, None)]


WOS_GOLD = gold_of("wos", wos([[[], [], []], [[]]]))
D0, D1 = "wos-v1_dev_00000", "wos-v1_dev_00001"


def test_wos_turns_and_dialogues():
    rows = [{"guid": D0, "turn": "1", "v": "a"}, {"guid": D0, "turn": 1.5, "v": "b"}, {"guid": D0, "turn": "x", "v": "c"},
            {"guid": D0, "turn": 7, "v": "d"}, {"guid": D1, "v": "e"}, {"guid": D0, "turn": 2.0, "v": "f"},
            {"guid": D1, "turn": 0, "v": "g"}, {"guid": f"{D0}-0", "v": "h"}, {"guid": "nope", "turn": "", "v": "i"}]
    features, problems = read_features(jsonl(rows), "w.jsonl", WOS, WOS_GOLD.rows)
    assert features.values.set_index("guid")["user:v"].to_dict() == {f"{D0}-1": "a", f"{D1}-0": "e", f"{D0}-2": "f", f"{D0}-0": "h"}
    assert [(p.line, p.message) for p in problems] == [
        (2, "turn 1.5 is not a whole number: the row is left out"), (3, "turn 'x' is not a whole number: the row is left out"),
        (4, f"guid {D0} turn 7 is not in the gold: the row is left out"),
        (7, f"{D1}-0 is given twice (first on line 5); this row is left out"), (9, "guid nope is not in the gold: the row is left out")]
    assert [(p.guid, p.file) for p in problems] == [(D0, "w.jsonl"), (D0, "w.jsonl"), (D0, "w.jsonl"), (D1, "w.jsonl"), ("nope", "w.jsonl")]


def test_a_dialogue_row_with_a_bad_cell_is_one_problem():
    """A dialogue's row fills its three turns: a bad cell in it is one problem, on its line, named by the first turn."""
    rows = [{"guid": D0, "v": [1]}, {"guid": D1, "v": "ok"}]
    features, problems = read_features(jsonl(rows), "w.jsonl", WOS, WOS_GOLD.rows)
    assert [(p.line, p.guid) for p in problems] == [(1, f"{D0}-0")]
    assert problems[0].message == "column 'v': a list or object cannot be a category, found [1]: left empty" and problems[0].file == "w.jsonl"
    assert features.values.set_index("guid")["user:v"].fillna("-").to_dict() == {f"{D0}-0": "-", f"{D0}-1": "-", f"{D0}-2": "-", f"{D1}-0": "ok"}
    long = {"k": "v" * 50}
    _, problems = read_features(jsonl([{"guid": D0, "v": long}, {"guid": D1, "v": "ok"}]), "w.jsonl", WOS, WOS_GOLD.rows)
    assert problems[0].message == f"column 'v': a list or object cannot be a category, found {repr(long)[:40]}…: left empty"
    for cell, shown in ((["x" * 36], repr(["x" * 36])), (["x" * 37], repr(["x" * 37])[:40] + "…")):  # reprs of 40 and 41 characters
        _, problems = read_features(jsonl([{"guid": D0, "v": cell}, {"guid": D1, "v": "ok"}]), "w.jsonl", WOS, WOS_GOLD.rows)
        assert problems[0].message == f"column 'v': a list or object cannot be a category, found {shown}: left empty"
    many = gold_of("wos", wos([[[], [], []]] + [[[]]] * 30))  # dialogue 0 has three turns, dialogues 1-30 one each
    text = "guid,v\n" + f"{D0},many\n" + "".join(f"wos-v1_dev_{d:05d},{d}\n" for d in range(1, 31))
    features, problems = read_features(text.encode(), "w.csv", WOS, many.rows)
    assert features.columns[0].kind == "numeric"  # 30 numbers of 33 filled turns: 90.9%
    assert [(p.line, p.guid, p.message) for p in problems] == [(2, f"{D0}-0", "column 'v' holds numbers, found 'many': left empty")]


NER_GOLD = gold_of("ner", ner_tsv([("g0", list(zip("서울에", ["B-LC", "I-LC", "O"]))), ("g1", list(zip("김씨", ["B-PS", "O"])))]))


def test_ner_spans_from_the_first_to_the_last_character():
    text = "guid,start,end,hard\ng0,0,3,a\ng0,0,4,b\ng0,2,2,c\ng0,-1,1,d\ng0,0.5,2,e\ng1,1,2,f\ng0,x,1,g\ng0,0,3,h\ng1,0,1,i\n"
    features, problems = read(text, NER, NER_GOLD, "e.csv")
    assert features.level == ENTITY_LEVEL and features.columns[0].level == ENTITY_LEVEL
    assert summary(features, problems) == "e.csv: 3 entity spans described by 1 column(s) (hard: text: a, f, i); 6 problem(s)"
    assert [tuple(r) for r in features.values[["guid", "start", "end", "user:hard"]].itertuples(index=False)] == [
        ("g0", 0, 3, "a"), ("g1", 1, 2, "f"), ("g1", 0, 1, "i")]
    assert [p.line for p in problems] == [3, 4, 5, 6, 8, 9]
    assert problems[0].message == ("start '0', end '4': expected whole numbers with 0 <= start < end <= 3 (the sentence's length; end is "
                                   "exclusive): the row is left out")
    assert problems[-1].message == "g0 0 3 is given twice (first on line 2); this row is left out"
    assert {(p.guid, p.file) for p in problems[:4]} == {("g0", "e.csv")}
    with_turn, _ = read("guid,start,end,turn,hard\ng0,0,2,1,x\n", NER, NER_GOLD, "e.csv")  # turn is a key column there too
    assert [c.name for c in with_turn.columns] == ["hard"]


def test_start_and_end_are_plain_columns_where_the_task_has_no_entity_slices():
    features, _ = read(f"guid,start,end\n{G[0]},0,3\n")
    assert features.level == "examples" and [c.name for c in features.columns] == ["start", "end"]


def test_the_columns_reach_the_frames_slices_sort_orders_and_summary():
    run = jsonl({"guid": g, "label": "entailment" if k % 2 else "neutral"} for k, g in enumerate(G))
    result = evaluate_bytes(NLI, GOLD, run, "r.jsonl")
    text = "guid,size,kind\n" + "".join(f"{g},{v},{'ab'[k % 2]}\n" for k, (g, v) in enumerate(zip(G[:6], [5, 1, 4, 2, 6, 3])))
    features, problems = read(text + "nobody,1,a\n")
    framed = apply_features(result.frames, features)
    examples = framed.examples.set_index("guid")
    assert list(framed.examples.index) == list(result.frames.examples.index)
    assert examples.loc[G[:6], "user_value:size"].tolist() == [5, 1, 4, 2, 6, 3] and examples.loc[G[6:], "user:kind"].isna().all()
    again = apply_features(framed, features)  # applying twice replaces the columns, it does not duplicate them
    assert list(again.examples.columns) == list(framed.examples.columns)
    assert [(s.key, s.label, s.level) for s in user_slices(framed)] == [("user:size", "size (your column)", "examples"),
                                                                        ("user:kind", "kind (your column)", "examples")]
    orders = user_sort_orders(framed)
    assert list(orders) == ["size (your column), low first", "size (your column), high first"]
    assert orders["size (your column), low first"](framed).loc[framed.examples.index[:6]].tolist() == [5, 1, 4, 2, 6, 3]
    assert orders["size (your column), high first"](framed).loc[framed.examples.index[:6]].tolist() == [-5, -1, -4, -2, -6, -3]
    assert summary(features, problems) == ("f.csv: 6 examples described by 2 column(s) (size: numeric, 4 bins: [1, 2.25], (2.25, 3.5], "
                                           "(3.5, 4.75], (4.75, 6]; kind: text: a, b); 1 problem(s)")
    assert summary(features, []).endswith("kind: text: a, b)")
    assert features.digest == digest_of((text + "nobody,1,a\n").encode()) == hashlib.sha256((text + "nobody,1,a\n").encode()).hexdigest()
    copy = with_features(dataclasses.replace(result, key="run-key"), features)
    assert copy.key == f"run-key|features:{features.digest}" and "user:kind" in copy.frames.examples
    assert with_features(result, features).key == ""  # an uncached run stays uncached
    assert label("user:size") == "size (your column)"


def test_entity_columns_reach_both_sides_of_the_entity_frame():
    run = jsonl([{"guid": "g0", "tags": ["B-LC", "I-LC", "O"]}, {"guid": "g1", "tags": ["B-PS", "I-PS"]}])
    result = evaluate_bytes(NER, NER_GOLD, run, "r.jsonl")
    features, _ = read("guid,start,end,hard\ng0,0,2,yes\ng1,0,2,wide\n", NER, NER_GOLD)
    framed = apply_features(result.frames, features)
    entities = framed.details[ENTITY_LEVEL]
    found = [tuple(None if pd.isna(v) else v for v in row) for row in entities[["guid", "side", "start", "end", "user:hard"]].itertuples(index=False)]
    assert found == [("g0", "gold", 0, 2, "yes"), ("g1", "gold", 0, 1, None), ("g0", "pred", 0, 2, "yes"), ("g1", "pred", 0, 2, "wide")]
    assert list(entities.index) == list(result.frames.details[ENTITY_LEVEL].index)
    assert framed.examples is result.frames.examples
    per_example, _ = read("guid,kind\ng0,a\n", NER, NER_GOLD)
    assert apply_features(result.frames, per_example).details.keys() == result.frames.details.keys() == {ENTITY_LEVEL}
    assert [(s.key, s.label, s.level) for s in user_slices(framed)] == [("user:hard", "hard (your column)", ENTITY_LEVEL)]
    both = apply_features(framed, per_example)
    assert [(s.key, s.level) for s in user_slices(both)] == [("user:kind", "examples"), ("user:hard", ENTITY_LEVEL)]


def test_describe_a_column():
    assert UserColumn("n", "numeric", "examples", ("[1, 2]", "(2, 3]")).describe() == "numeric, 2 bins: [1, 2], (2, 3]"
    assert UserColumn("n", "numeric", "examples", ()).describe() == "numeric: "
    many = tuple("abcdefghi")
    assert UserColumn("t", "text", "examples", many).describe() == "text: a, b, c, d, e, f, g, h…"
    assert UserColumn("t", "text", "examples", many[:8]).describe() == "text: a, b, c, d, e, f, g, h"
    assert UserColumn("t", "text", "examples").key == "user:t" and UserColumn("t", "text", "examples").value_key == "user_value:t"


def test_no_frames_no_slices():
    empty = Frames(pd.DataFrame({"guid": ["a"]}), {})
    assert user_slices(empty) == [] and user_sort_orders(empty) == {}
    assert json.dumps(UserColumn("a", "text", "examples").bins) == "[]"


def test_the_number_of_bins_is_the_callers():
    text = "guid,v\n" + "".join(f"{g},{k}\n" for k, g in enumerate(G[:5], 1))
    assert read(text, bins=2)[0].columns[0].bins == ("[1, 3]", "(3, 5]")  # numpy's median of 1..5 is 3
    assert read(text)[0].columns[0].bins == ("[1, 2]", "(2, 3]", "(3, 4]", "(4, 5]")
