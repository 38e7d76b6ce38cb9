"""The ranking's and the gate's texts name the confidence level they were computed at (issue 31).

`rank_runs(level=, alpha=)` and `gate(level=)` take the level as an argument, but `ranking_text`, `gate_text` and
`gate_markdown` said "95%" (and the gate "5%") whatever it was; the CLI passes the defaults, so only API callers saw
the wrong figure. Here the levels are 90% (a round figure other than the default) and 97.5% (one `:.0%` would round
to 98%), and every percentage expected is written out by hand."""

from __future__ import annotations

import numpy as np
import pytest
from cases import gold_of, nli, sts
from conftest import jsonl
from test_gate_mutants import LABELS, MIN_SIZE, SOURCES, N, behaviour, records, tags

from klue_viz.compare.gate import GateResult, gate, gate_markdown, gate_text
from klue_viz.compare.gate import Test as GateTest
from klue_viz.compare.ranking import rank_runs, ranking_text, run_table
from klue_viz.scoring.evaluate import evaluate_bytes
from klue_viz.tasks import get_task

STS, NLI = get_task("sts"), get_task("nli")


@pytest.fixture(scope="module")
def sts_table():
    """Three STS runs of 40 pairs: the gold plus normal noise of growing width."""
    rng = np.random.default_rng(5)
    gold = np.round(rng.uniform(0, 5, 40), 1)
    gold_file = gold_of("sts", sts(gold.tolist()))
    results = [evaluate_bytes(STS, gold_file, jsonl([{"guid": f"klue-sts-v1_dev_{k:05d}", "score": float(s)}
                                                     for k, s in enumerate(np.clip(np.round(gold + rng.normal(0, width, 40), 2), 0, 5))]),
                              f"{name}.jsonl", run=name) for name, width in (("run-a", 0.5), ("run-b", 1.0), ("run-c", 2.0))]
    return run_table(results)


@pytest.mark.parametrize(("level", "alpha", "shown", "error"), [(0.90, 0.10, "90%", "10%"), (0.975, 0.025, "97.5%", "2.5%")])
def test_the_ranking_text_names_the_level_and_alpha_it_was_ranked_at(sts_table, level, alpha, shown, error):
    ranking = rank_runs(sts_table, samples=400, level=level, alpha=alpha)
    lines = ranking_text(ranking, STS).splitlines()
    width = max(9, len(f"{shown} rank"))  # the rank interval's column is as wide as its header, 9 at least
    assert lines[1].startswith(f"rank {f'{shown} rank':>{width}}  run ")
    assert f" {f'diff to best [paired {shown}]':>28} " in lines[1]
    best = sorted(ranking.runs, key=lambda r: r.rank)[0]
    low, high = best.rank_ci95
    assert lines[2].startswith(f"{best.rank:>4} {f'{low}-{high}':>{width}}  {best.run:<28} ")
    assert lines[-2] == f"{shown} confidence set for the best: {', '.join(ranking.best_set)}"
    assert f"(family-wise error {error})" in lines[-1] and f"with {shown} confidence" in lines[-1]
    assert f"form the {shown} confidence set for the best." in lines[-1]
    assert "95%" not in "\n".join(lines)


def test_the_gate_s_texts_name_the_level_it_was_run_at():
    gold = gold_of("nli", nli([LABELS[k % 3] for k in range(N)], SOURCES))
    base = evaluate_bytes(NLI, gold, jsonl(records(set(range(0, N, 9)))), "base.jsonl", run="base")
    cand = evaluate_bytes(NLI, gold, jsonl(records(set(range(0, N, 7)))), "cand.jsonl", run="cand")
    result = gate(NLI, base, cand, min_size=MIN_SIZE, tags=tags(), samples=100, seed=4, level=0.90, behaviour=behaviour())
    text = gate_text(result)
    assert "one-sided step-down max-t, family-wise error 10%; critical value" in text.splitlines()[0]
    assert text.count("90% upper bound") == len(result.overall) + len([t for t in result.regressions if t.slice]) > 0
    markdown = gate_markdown(result, NLI)
    assert "A regression is a drop whose one-sided 90% upper bound is below 0" in markdown
    assert "a candidate that differs only by chance fails at most 10% of the time" in markdown
    assert "| slice | metric | baseline | candidate | difference | 90% upper bound | size |" in markdown.splitlines()
    assert "95%" not in text + markdown and " 5%" not in text + markdown


def test_a_gate_result_at_97_5_percent_is_written_with_its_decimal():
    overall = GateTest({}, "accuracy", 120, 80.0, 70.0, -10.0, 2.0, "overall", "", "pairs", "Accuracy", 2.5, -5.0)
    result = GateResult("base", "cand", [overall], [2.5], 400, 120, unit="pairs", level=0.975)
    assert gate_text(result).splitlines() == [
        "gate FAIL: cand against base, 1 tests on 120 pairs both scored (400 paired resamples; one-sided step-down max-t, "
        "family-wise error 2.5%; critical value 2.50)",
        "  regression: overall Accuracy: 80.00 -> 70.00 (-10.00, 97.5% upper bound -5.00), 120 pairs"]
    lines = gate_markdown(result, NLI).splitlines()
    assert lines[2].endswith("A regression is a drop whose one-sided 97.5% upper bound is below 0 (paired bootstrap, 400 resamples, "
                             "step-down max-t over all tests: a candidate that differs only by chance fails at most 2.5% of the time).")
    assert lines[4:7] == ["| slice | metric | baseline | candidate | difference | 97.5% upper bound | size |", "|---|---|---:|---:|---:|---:|---:|",
                          "| **overall** | Accuracy | 80.00 | 70.00 | -10.00 | -5.00 | 120 pairs |"]
    assert "95%" not in gate_text(result) + "\n".join(lines)
