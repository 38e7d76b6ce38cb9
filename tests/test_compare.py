"""Comparing many runs: planted runs whose fixes, breaks, ranks and ties are known by construction."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest
from cases import gold_of, nli, wos
from conftest import jsonl
from scipy.stats import binomtest
from statsmodels.stats.contingency_tables import mcnemar

from klue_viz.cli.main import main
from klue_viz.compare.ranking import (
    change,
    compare_payload,
    complementarity,
    consecutive_changes,
    difficulty,
    holm_rejections,
    matrix_frame,
    matrix_rows,
    order_runs,
    paired_resamples,
    rank_runs,
    run_sequence,
    run_table,
)
from klue_viz.outputs.report import build_report
from klue_viz.reading.demo import DEMO_BENCHMARK, demo_runs
from klue_viz.scoring.bootstrap import resampled_scores
from klue_viz.scoring.evaluate import evaluate_bytes, evaluate_file, load_gold
from klue_viz.tasks import get_task
from klue_viz.tasks.ner import entity_f1

LABELS = ("entailment", "neutral", "contradiction")
SOURCES = ("airbnb", "policy", "wikinews", "wikipedia")
N = 400
NLI = get_task("nli")


def gold_labels(n: int = N) -> list[str]:
    return [LABELS[k % 3] for k in range(n)]


def nli_gold(n: int = N):
    return gold_of("nli", nli(gold_labels(n), [SOURCES[k % len(SOURCES)] for k in range(n)]))


def wrong_label(gold: str) -> str:
    return LABELS[(LABELS.index(gold) + 1) % 3]


def run_records(wrong: set[int], n: int = N) -> list[dict]:
    """Predictions right everywhere except at the positions in `wrong`."""
    labels = gold_labels(n)
    return [{"guid": f"klue-nli-v1_dev_{k:05d}", "label": wrong_label(g) if k in wrong else g} for k, g in enumerate(labels)]


def nli_run(gold, name: str, wrong: set[int], n: int = N):
    return evaluate_bytes(NLI, gold, jsonl(run_records(wrong, n)), f"{name}.jsonl", run=name)


def guid(k: int) -> str:
    return f"klue-nli-v1_dev_{k:05d}"


# ---- a planted sequence ----------------------------------------------------------------------------

#: ckpt-1 is wrong on 0..59; ckpt-2 fixes 0..19 and breaks 100..109; ckpt-3 fixes 100..104 and 20..29 and breaks 200..202.
WRONG_1 = set(range(60))
WRONG_2 = (WRONG_1 - set(range(20))) | set(range(100, 110))
WRONG_3 = (WRONG_2 - set(range(100, 105)) - set(range(20, 30))) | {200, 201, 202}


@pytest.fixture(scope="module")
def sequence():
    gold = nli_gold()
    return [nli_run(gold, name, wrong) for name, wrong in (("ckpt-1", WRONG_1), ("ckpt-2", WRONG_2), ("ckpt-3", WRONG_3))]


def test_each_run_of_a_planted_sequence_reports_exactly_what_it_fixed_and_broke(sequence):
    table = run_table(sequence)
    first, second = consecutive_changes(table)
    assert (first.first, first.second) == ("ckpt-1", "ckpt-2")
    assert first.fixed == [guid(k) for k in range(20)]
    assert first.broke == [guid(k) for k in range(100, 110)]
    assert second.fixed == [guid(k) for k in range(20, 30)] + [guid(k) for k in range(100, 105)]
    assert second.broke == [guid(k) for k in (200, 201, 202)]
    # any two runs: ckpt-1 -> ckpt-3 fixed 0..29 (100..104 were right in ckpt-1) and broke 105..109 and 200..202
    jump = change(table, "ckpt-1", "ckpt-3")
    assert jump.fixed == [guid(k) for k in range(30)]
    assert jump.broke == [guid(k) for k in range(105, 110)] + [guid(k) for k in (200, 201, 202)]


def test_the_matrix_holds_each_runs_correctness_and_the_share_of_runs_wrong(sequence):
    table = run_table(sequence)
    for column, wrong in enumerate((WRONG_1, WRONG_2, WRONG_3)):
        assert set(np.flatnonzero(table.correct[:, column] == 0)) == wrong
    hard = difficulty(table)
    assert hard[0] == pytest.approx(1 / 3)  # wrong for ckpt-1 only
    assert hard[30] == 1.0 and hard[105] == pytest.approx(2 / 3) and hard[300] == 0.0
    every = matrix_rows(table, "wrong for every run")
    assert set(every) == set(range(30, 60))  # never fixed
    only_one = matrix_rows(table, "right for only one run")
    assert set(only_one) == set(range(20, 30)) | set(range(105, 110))  # right in ckpt-3 only, right in ckpt-1 only
    order = matrix_rows(table, "difficulty")
    assert set(order[:30]) == set(range(30, 60)) and set(order[30:45]) == set(range(20, 30)) | set(range(105, 110))


def test_solved_late_and_forgotten_read_the_runs_in_order(sequence):
    table = run_table(sequence)
    frame = matrix_frame(table, "solved late / forgotten")
    by_guid = frame.set_index("guid")["trajectory"]
    assert by_guid[guid(0)] == "solved at ckpt-2" and by_guid[guid(25)] == "solved at ckpt-3"
    assert by_guid[guid(107)] == "forgotten at ckpt-2" and by_guid[guid(201)] == "forgotten at ckpt-3"
    assert by_guid[guid(102)] == "solved at ckpt-3"  # broken by ckpt-2, fixed again by ckpt-3
    assert by_guid[guid(40)] == "" and by_guid[guid(350)] == ""
    top = list(frame["guid"][:8])
    # forgotten first, latest forgetting first (ckpt-3: 200..202), then ckpt-2's (105..109)
    assert set(top[:3]) == {guid(200), guid(201), guid(202)} and set(top[3:8]) == {guid(k) for k in range(105, 110)}


def test_the_sequence_of_metrics_gives_each_runs_accuracy_overall_and_per_source(sequence):
    found = run_sequence(NLI, sequence)
    assert found.runs == [r.run for r in sequence]
    for k, wrong in enumerate((WRONG_1, WRONG_2, WRONG_3)):
        assert found.overall["accuracy"][k] == pytest.approx(100 * (N - len(wrong)) / N)
        for s, source in enumerate(SOURCES):
            members = [i for i in range(N) if i % len(SOURCES) == s]
            expected = 100 * sum(i not in wrong for i in members) / len(members)
            assert found.slices["source"][source]["accuracy"][k] == pytest.approx(expected)
            assert found.counts["source"][source][k] == len(members)
    assert found.labels["source"] == "Source" and "correct" not in found.slices  # the outcome itself is no slice


def test_complementarity_counts_the_oracle_the_best_pair_and_the_common_errors(sequence):
    found = complementarity(run_table(sequence))
    # wrong for all three: 30..59 (30 examples); the oracle is everything else
    assert found.oracle == pytest.approx((N - 30) / N)
    assert found.common_errors == [guid(k) for k in range(30, 60)]
    # pairs: 1+2 miss 20..59 (40); 1+3 miss 30..59 (30); 2+3 miss 30..59 and 105..109 (35)
    assert found.best_pair == ("ckpt-1", "ckpt-3", pytest.approx((N - 30) / N))
    assert found.best_single == ("ckpt-3", pytest.approx((N - len(WRONG_3)) / N))


# ---- ranking -----------------------------------------------------------------------------------------

def test_a_run_planted_clearly_better_ranks_first_and_alone():
    gold = nli_gold()
    rng = random.Random(7)
    runs = [nli_run(gold, "b-weaker", set(rng.sample(range(N), 80))),
            nli_run(gold, "a-best", set(rng.sample(range(N), 20))),
            nli_run(gold, "c-weaker", set(rng.sample(range(N), 84)))]
    ranking = rank_runs(run_table(runs), samples=1000)
    by_name = {r.run: r for r in ranking.runs}
    assert ranking.best == "a-best"
    assert by_name["a-best"].rank == 1 and by_name["a-best"].tied_with_best
    assert not by_name["b-weaker"].tied_with_best and not by_name["c-weaker"].tied_with_best
    assert {by_name["b-weaker"].rank, by_name["c-weaker"].rank} == {2, 3}
    assert by_name["b-weaker"].metrics["accuracy"] == pytest.approx(80.0)
    assert by_name["b-weaker"].difference["accuracy"] == pytest.approx(80.0 - 95.0)
    low, high = by_name["b-weaker"].difference_ci95["accuracy"]
    assert low < -15 < high < 0  # the paired interval lies below 0, around the observed -15
    assert "Holm" in ranking.correction


def test_two_runs_differing_only_by_resampling_noise_are_tied():
    gold = nli_gold()
    base = set(range(0, N, 10))  # 40 errors
    noisy = (base - {0, 10, 20, 30, 40}) | {1, 11, 21, 31, 41, 51, 61}  # 5 fixes, 7 breaks
    runs = [nli_run(gold, "seed-1", base), nli_run(gold, "seed-2", noisy)]
    ranking = rank_runs(run_table(runs), samples=2000)
    assert all(r.tied_with_best for r in ranking.runs)
    other = next(r for r in ranking.runs if r.p_value is not None)
    # 12 discordant examples split 7:5: the normal p from the paired bootstrap's standard error is McNemar's asymptotic
    # one (chi2 = (7 - 5)^2 / 12, no continuity correction), near enough; the exact binomial one is larger (0.77)
    reference = mcnemar([[N - 47, 5], [7, 35]], exact=False, correction=False).pvalue
    assert other.p_value == pytest.approx(reference, abs=0.05)
    assert binomtest(5, 12).pvalue > other.p_value


def test_holm_rejects_step_down_as_counted_by_hand():
    # sorted 0.005 <= .05/4, 0.01 <= .05/3, then 0.03 > .05/2: stop
    assert holm_rejections([0.01, 0.04, 0.03, 0.005]).tolist() == [True, False, False, True]
    assert holm_rejections([0.2, 0.001]).tolist() == [False, True]


def test_runs_are_ordered_by_name_with_steps_read_as_numbers_or_by_upload_time():
    names = ["ckpt-10000", "ckpt-2000", "Ckpt-300", "base"]
    assert order_runs(names) == ["base", "Ckpt-300", "ckpt-2000", "ckpt-10000"]
    times = {"ckpt-10000": "2026-01-01T10:00:00", "ckpt-2000": "2026-01-02T10:00:00"}
    assert order_runs(names, by="time", uploaded=times) == ["ckpt-10000", "ckpt-2000", "base", "Ckpt-300"]


@pytest.mark.slow
def test_resampling_many_runs_at_once_gives_the_sparse_bootstraps_numbers():
    for name in ("ner", "sts", "dp", "wos"):
        task = get_task(name)
        gold = load_gold(task, DEMO_BENCHMARK)
        results = [evaluate_file(task, gold, path) for path in demo_runs(name)]
        table = run_table(results)
        ours = paired_resamples(table.stats, 300, seed=3, observed=False)
        reference = resampled_scores(table.stats, 300, seed=3)
        for mine, theirs in zip(ours, reference):
            for key in theirs:
                np.testing.assert_allclose(mine[key], theirs[key], rtol=1e-9, atol=1e-9, equal_nan=True)


def test_wos_units_are_turns_named_by_dialogue_and_turn():
    gold = gold_of("wos", wos([[["식당-가격대-저렴"], ["식당-가격대-저렴", "식당-지역-서울 중앙"]], [[], ["관광-이름-N서울타워"]]]))
    task = get_task("wos")

    def run(name, states):
        records = [{"guid": f"wos-v1_dev_{d:05d}", "turn": t, "state": s} for (d, t), s in states.items()]
        return evaluate_bytes(task, gold, jsonl(records), f"{name}.jsonl", run=name)

    right = {(0, 0): ["식당-가격대-저렴"], (0, 1): ["식당-가격대-저렴", "식당-지역-서울 중앙"], (1, 0): [], (1, 1): ["관광-이름-N서울타워"]}
    half = dict(right) | {(0, 1): ["식당-가격대-저렴"]}
    table = run_table([run("a", right), run("b", half)])
    ranking = rank_runs(table, samples=200)
    payload = compare_payload(table, ranking, consecutive_changes(table))
    rows = {(e["guid"], e["turn"]): e for e in payload["examples"]}
    assert set(rows) == {("wos-v1_dev_00000", 0), ("wos-v1_dev_00000", 1), ("wos-v1_dev_00001", 0), ("wos-v1_dev_00001", 1)}
    assert rows[("wos-v1_dev_00000", 1)]["correct"] == [True, False]
    assert payload["changes"][0]["broke"] == ["wos-v1_dev_00000-1"]
    # the per-turn score of the broken turn: 1 of 2 gold slots, nothing spurious -> F1 2/3
    assert table.score[table.guids.index("wos-v1_dev_00000-1")].tolist() == pytest.approx([1.0, 2 / 3])


# ---- the command -------------------------------------------------------------------------------------

def test_compare_command_writes_the_issues_json_and_prints_the_ranking(tmp_path, capsys):
    gold = tmp_path / "klue-nli-v1.1_dev.json"
    gold.write_text(json.dumps(nli(gold_labels(), [SOURCES[k % 4] for k in range(N)]), ensure_ascii=False), encoding="utf-8")
    paths = []
    for name, wrong in (("ckpt-1", WRONG_1), ("ckpt-2", WRONG_2), ("ckpt-3", WRONG_3)):
        path = tmp_path / f"{name}.jsonl"
        path.write_bytes(jsonl(run_records(wrong)))
        paths += ["--pred", str(path)]
    out = tmp_path / "cmp.json"
    assert main(["compare", "--task", "nli", "--gold", str(gold), *paths, "--out", str(out), "--bootstrap", "300"]) == 0
    printed = capsys.readouterr().out
    assert "ckpt-3" in printed and "Holm" in printed
    payload = json.loads(out.read_text(encoding="utf-8"))
    assert set(payload) == {"task", "ranking", "runs", "examples", "changes", "sequence"}
    assert [set(r) for r in payload["runs"]] == [{"run", "metrics", "ci95", "rank", "rank_ci95", "difference", "difference_ci95", "p_value",
                                                  "tied_with_best", "could_be_best"}] * 3
    assert [r["run"] for r in payload["runs"]] == ["ckpt-1", "ckpt-2", "ckpt-3"]
    assert [r["metrics"]["accuracy"] for r in payload["runs"]] == pytest.approx([85.0, 87.5, 90.5])
    assert len(payload["examples"]) == N and set(payload["examples"][0]) == {"guid", "turn", "correct", "difficulty"}
    assert payload["examples"][105]["correct"] == [True, False, False]
    assert payload["changes"][1] == {"from": "ckpt-2", "to": "ckpt-3", "fixed": [guid(k) for k in [*range(20, 30), *range(100, 105)]],
                                     "broke": [guid(k) for k in (200, 201, 202)]}


def test_compare_command_refuses_one_run_and_a_missing_gold(tmp_path, capsys):
    path = tmp_path / "a.jsonl"
    path.write_bytes(jsonl(run_records(set())))
    assert main(["compare", "--task", "nli", "--gold", str(DEMO_BENCHMARK), "--pred", str(path)]) == 2
    assert "at least two runs" in capsys.readouterr().err
    assert main(["compare", "--task", "nli", "--gold", str(tmp_path / "nowhere.json"), "--pred", str(path), "--pred", str(path)]) == 2


def test_ner_sentence_scores_from_the_example_columns_equal_the_entity_f1_of_the_entity_rows():
    task = get_task("ner")
    gold = load_gold(task, DEMO_BENCHMARK)
    for path in demo_runs("ner"):
        frames = evaluate_file(task, gold, path).frames
        np.testing.assert_allclose(task.example_scores(frames).to_numpy(), entity_f1(frames).to_numpy() / 100.0)


@pytest.mark.slow
def test_the_report_ranks_more_than_two_runs_and_leaves_two_to_the_paired_comparison(sequence):
    html = build_report(NLI, sequence, "planted", errors=1, samples=200)
    ranking = html[html.index("<h2>Ranking</h2>"):html.index("<h2>Paired comparison</h2>")]
    # ckpt-3 is the most accurate (38 errors), then ckpt-2 (50), then ckpt-1 (60)
    assert ranking.index("ckpt-3") < ranking.index("ckpt-2") < ranking.index("ckpt-1")
    assert "Holm" in ranking and "90.50" in ranking
    assert "<h2>Ranking</h2>" not in build_report(NLI, sequence[:2], "planted", errors=1, samples=50)
