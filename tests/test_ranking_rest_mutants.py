"""Mutation testing of the rest of klue_viz/compare/ranking.py (issue 31): `RunTable`'s labels, the row mapping
`annotation_key` reads (`_Columns`, `_Row`), `compared_columns`, `dense`, `product_type`, `_stacks` and `change`.

Every expected value is written out by hand from the case in the test: the dense matrix from its triples, the float32
choice from the rule "every sum of a resample is an integer below 2**24" (with numpy's float32 as the witness that 2**24
is where exactness ends), the stacks by filling groups of at most STACK_CELLS cells in order."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from cases import gold_of, nli, wos
from conftest import jsonl

from klue_viz.compare import ranking
from klue_viz.compare.ranking import _Columns, _Row, _stacks, change, compared_columns, dense, product_type, run_table
from klue_viz.metrics.official import Statistics
from klue_viz.scoring.evaluate import evaluate_bytes
from klue_viz.tasks import get_task

WOS = get_task("wos")
NLI = get_task("nli")


def statistics(n: int, width: int, rows=(), cols=(), values=()) -> Statistics:
    """Statistics given as triples; the aggregate is never called by the functions tested here."""
    return Statistics(n, width, np.asarray(rows, dtype=np.int64), np.asarray(cols, dtype=np.int64), np.asarray(values, dtype=float),
                      lambda summed: {})


def test_a_wos_example_is_labelled_by_dialogue_and_turn_and_an_nli_one_by_its_guid():
    """`RunTable.label`: "guid turn k" for a WoS turn (turn 0 too), the bare guid where the task has no turns."""
    gold = gold_of("wos", wos([[["식당-가격대-저렴"], ["식당-가격대-저렴", "식당-지역-서울 중앙"]]]))
    states = {0: ["식당-가격대-저렴"], 1: ["식당-가격대-저렴"]}
    records = [{"guid": "wos-v1_dev_00000", "turn": t, "state": s} for t, s in states.items()]
    runs = [evaluate_bytes(WOS, gold, jsonl(records), f"{name}.jsonl", run=name) for name in ("a", "b")]
    table = run_table(runs)
    labels = {table.guids[row]: table.label(row) for row in range(len(table.guids))}
    assert labels == {"wos-v1_dev_00000-0": "wos-v1_dev_00000 turn 0", "wos-v1_dev_00000-1": "wos-v1_dev_00000 turn 1"}

    nli_gold = gold_of("nli", nli(["entailment", "neutral"]))
    answers = jsonl([{"guid": "klue-nli-v1_dev_00000", "label": "entailment"}, {"guid": "klue-nli-v1_dev_00001", "label": "entailment"}])
    table = run_table([evaluate_bytes(NLI, nli_gold, answers, f"{name}.jsonl", run=name) for name in ("a", "b")])
    assert [table.label(row) for row in range(2)] == ["klue-nli-v1_dev_00000", "klue-nli-v1_dev_00001"]


def test_a_row_mapping_reads_its_row_and_names_a_missing_column():
    """`_Row` is a read-only mapping of one row: the columns in frame order, their values at its position, and a
    KeyError naming the column it lacks (what `Mapping.get` and `in` rely on, and what a traceback would show)."""
    frame = pd.DataFrame({"guid": ["d1-0", "d2-3"], "dialogue": ["d1", "d2"], "turn": [0, 3]})
    row = _Row(_Columns(frame), 1)
    assert list(row) == ["guid", "dialogue", "turn"]
    assert len(row) == 3
    assert dict(row) == {"guid": "d2-3", "dialogue": "d2", "turn": 3}
    assert "text" not in row and row.get("text") is None
    with pytest.raises(KeyError, match="text"):
        row["text"]


def test_compared_columns_add_the_guid_and_correctness_to_the_levels_a_task_names(monkeypatch):
    """The examples' `guid` and `correct` always, before what the task's statistics read; a task whose statistics read
    a detail level only still gets the examples level (the two columns alone)."""
    assert compared_columns(NLI) == {"examples": ("guid", "correct", "gold", "pred", "probs")}
    dp = get_task("dp")
    monkeypatch.setattr(dp, "statistics_columns", lambda: {"words": ("guid", "gold_head", "pred_head")})
    assert compared_columns(dp) == {"words": ("guid", "gold_head", "pred_head"), "examples": ("guid", "correct")}


def test_dense_sums_the_triples_and_fills_every_other_cell_with_zero():
    """3 examples x 2 columns from (0, 1, 2), (1, 0, 5), (0, 1, 1): the repeated cell summed, the last example (no
    triple at all) a row of zeros."""
    found = dense(statistics(3, 2, rows=[0, 1, 0], cols=[1, 0, 1], values=[2.0, 5.0, 1.0]))
    assert found.shape == (3, 2)
    assert found.tolist() == [[0.0, 3.0], [5.0, 0.0], [0.0, 0.0]]


def test_float32_only_where_every_sum_of_a_resample_is_an_integer_below_2_24():
    """A resample's sum of a column is at most (the column's sum of absolute values) x (the largest count); float32
    holds every integer below 2**24 exactly and not 2**24 + 1 (numpy's float32 is the witness)."""
    edge = 2**24
    assert float(np.float32(edge - 1)) == edge - 1 and float(np.float32(edge + 1)) != edge + 1
    f32, f64 = np.dtype(np.float32), np.dtype(np.float64)
    small = np.array([[1.0, 0.0], [2.0, 3.0]])
    assert product_type([small], 4) == f32  # column sums 3 and 3, times 4
    assert product_type([small, np.array([[0.5]])], 4) == f64  # the second run's statistics are not integers
    half = np.array([[2.0**23]])
    assert product_type([half], 2) == f64  # 2**23 x 2 = 2**24: not below
    assert product_type([half - 1], 2) == f32  # 2**24 - 2
    assert product_type([np.array([[2.0**23], [-(2.0**23)]])], 1) == f64  # sums to 0, but a resample may draw only the first
    assert product_type([np.array([[2.0**23, 2.0**23]])], 1) == f32  # each column alone is 2**23; the whole row is not summed
    assert product_type([np.array([[2.0**23], [2.0**23]])], 1) == f64  # one column over two examples: 2**24
    assert product_type([np.zeros((3, 0))], edge) == f32  # no column: no sum to overflow, whatever the counts


def test_stacks_fill_groups_of_at_most_stack_cells_in_run_order(monkeypatch):
    """STACK_CELLS = 12, runs of 2 examples and widths 3, 3, 1, 5, 8, 1 (cells 6, 6, 2, 10, 16, 2): 6 + 6 = 12 fits,
    + 2 does not; 2 + 10 = 12 fits; 16 is over the limit alone and gets a group of its own; the last 2 cannot join it."""
    monkeypatch.setattr(ranking, "STACK_CELLS", 12)
    runs = [statistics(2, width) for width in (3, 3, 1, 5, 8, 1)]
    assert _stacks(runs) == [[0, 1], [2, 3], [4], [5]]


def test_change_keeps_a_guid_that_ends_in_a_nul_character():
    """The readers take a guid ending in U+0000 as it is (JSON allows it); what a run fixed and broke names it the same
    way, not cut at the NUL as a fixed-width numpy string would."""
    records = nli(["entailment", "neutral", "contradiction"])
    records[0]["guid"] = "klue-nli-v1_dev_00000\u0000"
    gold = gold_of("nli", records)
    guids = [r["guid"] for r in records]
    first = evaluate_bytes(NLI, gold, jsonl([{"guid": g, "label": lab} for g, lab in zip(guids, ("neutral", "neutral", "neutral"))]),
                           "first.jsonl", run="first")
    second = evaluate_bytes(NLI, gold, jsonl([{"guid": g, "label": lab} for g, lab in zip(guids, ("entailment", "entailment", "neutral"))]),
                            "second.jsonl", run="second")
    table = run_table([first, second])
    forward = change(table, "first", "second")
    assert (forward.fixed, forward.broke) == (["klue-nli-v1_dev_00000\u0000"], ["klue-nli-v1_dev_00001"])
    back = change(table, "second", "first")
    assert (back.fixed, back.broke) == (["klue-nli-v1_dev_00001"], ["klue-nli-v1_dev_00000\u0000"])


def test_common_errors_keep_a_guid_that_ends_in_a_nul_character():
    """The examples every run gets wrong (`complementarity`'s common errors) name a NUL-ending guid as it is (its
    mutants 59/61, guids without `dtype=object`, cut it at the NUL)."""
    records = nli(["entailment", "neutral", "contradiction"])
    records[2]["guid"] = "klue-nli-v1_dev_00002\u0000"
    gold = gold_of("nli", records)
    guids = [r["guid"] for r in records]
    runs = [evaluate_bytes(NLI, gold, jsonl([{"guid": g, "label": lab} for g, lab in zip(guids, labels)]), f"{name}.jsonl", run=name)
            for name, labels in (("first", ("entailment", "entailment", "neutral")), ("second", ("neutral", "neutral", "entailment")))]
    found = ranking.complementarity(run_table(runs))
    assert found.common_errors == ["klue-nli-v1_dev_00002\u0000"]
