"""The last functions of klue_viz/compare/ranking.py and gate.py that mutmut had not run (issue 31): `consecutive_changes`,
`sequence_columns`, `compare_payload` (with `_pairs` and `_value`), `frames_of`, `_defined`, and the gate's
`unit_name` and `_strings`. Expected values are written out by hand: the changes and the payload's examples read off
the PATTERNS of tests/test_ranking_mutants.py, the columns from the task stand-ins below, the undefined Pearson r of
a run that predicts one score everywhere (its variance is 0)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import cast

import numpy as np
import pandas as pd
import pytest
from cases import gold_of, sts
from conftest import jsonl
from test_compare import guid
from test_ranking_mutants import DIFFICULTY, PATTERNS, RUNS, patterned_runs

from klue_viz.compare.gate import _strings, gate, unit_name
from klue_viz.compare.ranking import (
    RankedRun,
    Ranking,
    RunSequence,
    compare_payload,
    consecutive_changes,
    frames_of,
    rank_runs,
    run_sequence,
    run_table,
    sequence_columns,
)
from klue_viz.scoring.evaluate import evaluate_bytes
from klue_viz.tasks import get_task
from klue_viz.tasks.base import Slice, Task

STS = get_task("sts")


@pytest.fixture(scope="module")
def patterned():
    """m-1..m-4 of PATTERNS (R right, W wrong, - not scored) as a run table."""
    return run_table(patterned_runs())


def changes(found) -> list[tuple[str, str, list[str], list[str]]]:
    return [(c.first, c.second, c.fixed, c.broke) for c in found]


def test_consecutive_changes_in_the_table_s_order_and_in_the_order_given(patterned):
    # read off PATTERNS column by column: fixed = W then R, broke = R then W ('-' is neither)
    assert changes(consecutive_changes(patterned)) == [
        ("m-1", "m-2", [guid(k) for k in (2, 4, 9)], [guid(k) for k in (5, 7)]),
        ("m-2", "m-3", [guid(k) for k in (5, 8)], [guid(k) for k in (3, 4, 9)]),
        ("m-3", "m-4", [guid(4)], [guid(5)])]
    assert changes(consecutive_changes(patterned, ["m-3", "m-1"])) == [("m-3", "m-1", [guid(3)], [guid(k) for k in (2, 8)])]
    assert consecutive_changes(patterned, ["m-2"]) == []


def test_frames_of_is_the_run_s_own_frames(patterned):
    for k, name in enumerate(RUNS):
        assert frames_of(patterned, name) is patterned.results[k].frames


def stand_in(own: dict[str, tuple[str, ...]] | None, detail: dict[str, tuple[str, ...]], slices: list[Slice]) -> Task:
    """A task as `sequence_columns` reads it: its statistics' columns, each detail level's, and its slices."""
    return cast(Task, SimpleNamespace(statistics_columns=lambda: own, detail_statistics_columns=lambda level: detail.get(level),
                                      facts=SimpleNamespace(slices=tuple(slices))))


def test_sequence_columns_of_a_task_written_out():
    """An outcome feature first (passed over, not the end), an entity-level slice whose column the detail statistics
    read already (once), no example columns of the statistics' own (the examples level is made), a slot level the
    statistics do not name."""
    task = stand_in({"entities": ("side", "label")}, {"entities": ("guid", "side", "label"), "slots": ("status",)},
                    [Slice("error_type", "Error"), Slice("source", "Source"), Slice("label", "Type", "entities"),
                     Slice("correct", "Correct", "entities"), Slice("domain_slot", "Slot", "slots"), Slice("length", "Length")])
    assert sequence_columns(task) == {"entities": ("side", "label", "guid"), "examples": ("guid", "correct", "source", "length"),
                                      "slots": ("status", "domain_slot")}
    task = stand_in({"examples": ("gold", "pred")}, {}, [Slice("source", "Source"), Slice("gold", "Gold")])
    assert sequence_columns(task) == {"examples": ("gold", "pred", "guid", "correct", "source")}


def test_sequence_columns_are_none_where_the_task_or_a_detail_level_reads_every_column():
    assert sequence_columns(stand_in(None, {}, [Slice("source", "Source")])) is None
    assert sequence_columns(stand_in({"examples": ("gold",)}, {}, [Slice("source", "Source"), Slice("label", "Type", "entities")])) is None
    # a detail level that is never sliced does not matter
    assert sequence_columns(stand_in({"examples": ("gold",)}, {}, [Slice("source", "Source")])) == {"examples": ("gold", "guid", "correct",
                                                                                                                  "source")}


def test_sequence_columns_of_re_and_wos():
    """RE's `gold` slice is a column its statistics read already; WoS's slots add the slot status its detail
    statistics read (klue_viz/tasks/re.py, wos.py)."""
    assert sequence_columns(get_task("re")) == {"examples": ("gold", "pred", "probs", "guid", "correct", "source", "type_pair",
                                                             "relation_group", "sentence_length", "confidence_bin")}
    assert sequence_columns(get_task("wos")) == {
        "examples": ("gold_state", "pred_state", "f1", "dialogue", "turn", "guid", "correct", "domain_count", "domains", "turn_bucket"),
        "slots": ("status", "domain_slot", "value_type", "change")}


def one_run(name: str, rank: int, ci: tuple[float, float] | None, diff_ci: tuple[float, float] | None, p: float | None) -> RankedRun:
    return RankedRun(name, {"accuracy": 50.0 + rank}, {"accuracy": ci}, {"accuracy": -float(rank - 1)}, {"accuracy": diff_ci}, p, rank,
                     rank == 1, (1, rank + 1), rank < 3)


def test_compare_payload_written_out_field_by_field(patterned):
    runs = [one_run("m-2", 1, (40.0, 60.5), (0.0, 0.0), None), one_run("m-1", 2, None, (-3.0, 1.0), 0.25),
            one_run("m-4", 3, (10.0, 20.0), None, 0.001)]
    ranking = Ranking("accuracy", "m-2", 4, 250, runs, "The method.", ["m-2", "m-1"])
    found = compare_payload(patterned, ranking, consecutive_changes(patterned, ["m-4", "m-3"]))
    cell = {"R": True, "W": False, "-": None}
    assert found == {
        "task": "nli",
        "ranking": {"metric": "accuracy", "best": "m-2", "best_set": ["m-2", "m-1"], "n_shared": 4, "samples": 250, "method": "The method."},
        "runs": [
            {"run": "m-2", "metrics": {"accuracy": 51.0}, "ci95": {"accuracy": [40.0, 60.5]}, "rank": 1, "rank_ci95": [1, 2],
             "difference": {"accuracy": -0.0}, "difference_ci95": {"accuracy": [0.0, 0.0]}, "p_value": None, "tied_with_best": True,
             "could_be_best": True},
            {"run": "m-1", "metrics": {"accuracy": 52.0}, "ci95": {"accuracy": None}, "rank": 2, "rank_ci95": [1, 3],
             "difference": {"accuracy": -1.0}, "difference_ci95": {"accuracy": [-3.0, 1.0]}, "p_value": 0.25, "tied_with_best": False,
             "could_be_best": True},
            {"run": "m-4", "metrics": {"accuracy": 53.0}, "ci95": {"accuracy": [10.0, 20.0]}, "rank": 3, "rank_ci95": [1, 4],
             "difference": {"accuracy": -2.0}, "difference_ci95": {"accuracy": None}, "p_value": 0.001, "tied_with_best": False,
             "could_be_best": False}],
        "examples": [{"guid": guid(k), "turn": None, "correct": [cell[c] for c in pattern], "difficulty": pytest.approx(DIFFICULTY[k])}
                     for k, pattern in enumerate(PATTERNS)],
        # m-4 -> m-3 read off PATTERNS: R then W at 4 (broke), W then R at 5 (fixed); 8 is - then R
        "changes": [{"from": "m-4", "to": "m-3", "fixed": [guid(5)], "broke": [guid(4)]}]}
    assert all(type(v) is bool for e in found["examples"] for v in e["correct"] if v is not None)
    assert all(type(e["difficulty"]) is float for e in found["examples"])
    sequence = RunSequence(RUNS, {"accuracy": [1.0, None, 3.0, 4.0]}, [12, 10, 9, 7], {"source": {"policy": {"accuracy": [1.0, 2.0, None, 4.0]}}},
                           {"source": {"policy": [3, 3, 0, 2]}}, {"source": "Source"})
    with_sequence = compare_payload(patterned, ranking, [], sequence)
    assert with_sequence["changes"] == [] and with_sequence["sequence"] == {
        "overall": {"accuracy": [1.0, None, 3.0, 4.0]}, "slices": {"source": {"policy": {"accuracy": [1.0, 2.0, None, 4.0]}}}}
    assert list(with_sequence) == ["task", "ranking", "runs", "examples", "changes", "sequence"]


def constant_runs() -> list:
    """STS: run `a` close to the gold, run `c` 2.0 everywhere (Pearson r undefined: no variance; F1 0: nothing at 3 or
    more); the first four pairs from airbnb, the last four from policy."""
    gold = [0.5, 4.0, 3.5, 1.0, 2.0, 4.5, 3.0, 0.0]
    gold_file = gold_of("sts", sts(gold, sources=["airbnb-rtt"] * 4 + ["policy-sampled"] * 4))

    def run(name: str, scores: list[float]):
        return evaluate_bytes(STS, gold_file, jsonl([{"guid": f"klue-sts-v1_dev_{k:05d}", "score": s} for k, s in enumerate(scores)]),
                              f"{name}.jsonl", run=name)

    return [run("a", [1.0, 3.5, 3.0, 1.5, 2.0, 4.0, 2.5, 0.5]), run("c", [2.0] * 8)]


@pytest.fixture(scope="module")
def constant_run():
    return constant_runs()


def test_an_undefined_metric_is_none_in_the_ranking_and_its_file(constant_run):
    table = run_table(constant_run)
    ranking = rank_runs(table, samples=200)
    a, c = sorted(ranking.runs, key=lambda r: r.run)
    assert (a.rank, c.rank) == (1, 2)
    assert c.metrics == {"pearsonr": None, "f1": 0.0} and c.difference["pearsonr"] is None and c.ci95["pearsonr"] is None
    # a's F1 by hand: gold >= 3 at 1, 2, 5, 6; a says >= 3 at 1, 2, 5 -> tp 3, fn 1, fp 0 -> 6 / 7
    assert a.metrics["f1"] == pytest.approx(100 * 6 / 7) and type(a.metrics["f1"]) is float
    assert c.difference["f1"] == pytest.approx(-100 * 6 / 7)
    payload = compare_payload(table, ranking, [])
    (row,) = [r for r in payload["runs"] if r["run"] == "c"]
    assert row["metrics"]["pearsonr"] is None and row["ci95"]["pearsonr"] is None and row["difference"]["pearsonr"] is None


def test_the_sequence_says_none_where_a_metric_is_undefined(constant_run):
    found = run_sequence(STS, constant_run)
    assert found.overall["pearsonr"][1] is None and found.overall["f1"] == [pytest.approx(100 * 6 / 7), 0.0]
    assert type(found.overall["f1"][1]) is float
    # policy (pairs 4..7): gold >= 3 at 5, 6; a says >= 3 at 5 only -> F1 2 / 3; c nothing -> 0
    assert found.slices["source"]["policy-sampled"]["f1"] == [pytest.approx(100 * 2 / 3), 0.0]
    assert found.slices["source"]["policy-sampled"]["pearsonr"][1] is None
    assert found.slices["gold_bin"]["1-2"]["pearsonr"] == [None, None]  # one pair: no variance in either run


def test_unit_name_is_the_task_s_unit_at_the_examples_level_and_the_level_elsewhere():
    assert unit_name(STS, "examples") == "pairs"
    assert unit_name(get_task("ner"), "examples") == "sentences"
    assert unit_name(get_task("ner"), "entities") == "entities"


def test_strings_keeps_each_value_and_none_for_a_missing_one():
    found = _strings(pd.Series([3, None, 12], dtype="Int64"))
    assert found.tolist() == [3, None, 12] and [type(v) for v in found] == [int, type(None), int]
    found = _strings(pd.Series(["a", np.nan, "b"], dtype=object))
    assert found.tolist() == ["a", None, "b"] and found.dtype == object


def test_the_gate_groups_an_integer_slice_by_its_integer_and_leaves_missing_values_out():
    """A user column of whole numbers, missing on two pairs: its groups are `1` and `2` (not `1.0`), and the missing
    pairs are in none."""
    base, cand = constant_runs()
    for run in (base, cand):
        run.frames.examples["user:bucket"] = pd.array([1, 1, 2, 2, None, 1, 2, None], dtype="Int64")
    result = gate(STS, base, cand, min_size=3, samples=200)
    groups = sorted({t.name: (t.slice, t.size, t.unit) for t in result.tests if t.feature == "bucket (your column)"}.items())
    assert groups == [("bucket (your column) = 1", ({"user:bucket": "1"}, 3, "pairs")),
                      ("bucket (your column) = 2", ({"user:bucket": "2"}, 3, "pairs"))]
