"""Ranking many runs by a metric the user picks (`rank_runs(metric=)`, `klue-viz compare --metric`, the page's "Rank by"):
two planted STS runs, one best on Pearson r and the other on the binary F1, rank in opposite orders, and the p-values and
ties follow the metric picked. Expected values come from scipy and scikit-learn."""

from __future__ import annotations

import json

import numpy as np
import pytest
from cases import gold_of, sts
from conftest import jsonl
from scipy.stats import pearsonr
from sklearn.metrics import f1_score

from klue_viz.cli.main import main
from klue_viz.compare.ranking import rank_runs, ranking_text, run_table
from klue_viz.reading.demo import demo_runs
from klue_viz.scoring.evaluate import evaluate_bytes
from klue_viz.tasks import get_task
from klue_viz.ui.home import PAGE_FILES
from tests.test_app import open_page

STS = get_task("sts")
N = 200
#: Gold similarities spread over 0..5.
REAL = [round(5 * k / (N - 1), 4) for k in range(N)]
#: "linear": a perfect linear function of the gold (Pearson r = 1), whose threshold sits at 3.2 instead of 3.0, so
#: the gold pairs in [3.0, 3.2) are missed by the binary F1. "sided": every pair on the right side of 3.0 (F1 = 1),
#: moved by 0 or 1.5 points away from it, which costs Pearson r.
LINEAR = [0.5 * r + 1.4 for r in REAL]
SIDED = [min(5.0, r + 1.5 * (k % 2)) if r >= 3 else max(0.0, r - 1.5 * (k % 2)) for k, r in enumerate(REAL)]


def records(scores: list[float]) -> list[dict]:
    return [{"guid": f"klue-sts-v1_dev_{k:05d}", "score": s} for k, s in enumerate(scores)]


def expected(scores: list[float]) -> dict[str, float]:
    """Pearson r against the gold, and F1 of score >= 3 against gold >= 3, both on 0..100 (scipy, scikit-learn)."""
    gold = np.array(REAL)
    return {"pearsonr": 100 * pearsonr(gold, scores).statistic,
            "f1": 100 * f1_score(gold >= 3, np.array(scores) >= 3)}


@pytest.fixture(scope="module")
def runs():
    gold = gold_of("sts", sts(REAL))
    return [evaluate_bytes(STS, gold, jsonl(records(scores)), f"{name}.jsonl", run=name) for name, scores in (("linear", LINEAR), ("sided", SIDED))]


def test_the_planted_runs_disagree_on_which_metric_is_better():
    linear, sided = expected(LINEAR), expected(SIDED)
    assert linear["pearsonr"] > sided["pearsonr"] and linear["f1"] < sided["f1"] == 100


@pytest.mark.parametrize("metric, best, other", [("pearsonr", "linear", "sided"), ("f1", "sided", "linear")])
def test_the_ranking_follows_the_metric_picked(runs, metric, best, other):
    ranking = rank_runs(run_table(runs), samples=1000, metric=metric)
    by_run = {r.run: r for r in ranking.runs}
    assert ranking.metric == metric and ranking.best == best
    assert (by_run[best].rank, by_run[other].rank) == (1, 2)
    truth = {"linear": expected(LINEAR), "sided": expected(SIDED)}
    for name, run in by_run.items():
        assert run.metrics == pytest.approx(truth[name], abs=1e-9)  # every metric is still shown
    # the difference, its p-value and the tie are on the metric picked: far apart there, so the other is not tied
    assert by_run[other].difference[metric] == pytest.approx(truth[other][metric] - truth[best][metric], abs=1e-9)
    assert by_run[best].p_value is None and by_run[other].p_value < 0.01
    assert by_run[best].tied_with_best and not by_run[other].tied_with_best
    assert f"on {metric}" in ranking.correction
    assert ranking_text(ranking, STS).startswith(f"Ranked by {metric};")


def test_an_unknown_metric_is_refused(runs):
    with pytest.raises(ValueError, match="pearsonr, f1"):
        rank_runs(run_table(runs), samples=10, metric="accuracy")


def test_compare_command_ranks_by_metric(tmp_path, capsys):
    gold = tmp_path / "klue-sts-v1.1_dev.json"
    gold.write_text(json.dumps(sts(REAL), ensure_ascii=False), encoding="utf-8")
    paths = []
    for name, scores in (("linear", LINEAR), ("sided", SIDED)):
        path = tmp_path / f"{name}.jsonl"
        path.write_bytes(jsonl(records(scores)))
        paths += ["--pred", str(path)]
    for metric, first in ((None, "linear"), ("pearsonr", "linear"), ("f1", "sided")):
        out = tmp_path / f"cmp-{metric}.json"
        option = [] if metric is None else ["--metric", metric]
        assert main(["compare", "--task", "sts", "--gold", str(gold), *paths, "--out", str(out), "--bootstrap", "200", *option]) == 0
        assert f"Ranked by {metric or 'pearsonr'};" in capsys.readouterr().out
        payload = json.loads(out.read_text(encoding="utf-8"))
        assert {r["run"]: r["rank"] for r in payload["runs"]}[first] == 1
        assert [r["tied_with_best"] for r in payload["runs"] if r["run"] != first] == [False]
    assert main(["compare", "--task", "sts", "--gold", str(gold), *paths, "--metric", "accuracy"]) == 2
    assert "--metric 'accuracy': sts ranks by one of pearsonr, f1" in capsys.readouterr().err


@pytest.mark.slow
def test_the_page_ranks_by_the_metric_picked():
    at = open_page(PAGE_FILES["dp"])  # four metrics: biaffine-roberta is ahead on UAS macro F1, biaffine-bert on UAS micro F1
    at.toggle(key="cmp_on").set_value(True).run()
    assert not at.exception
    assert at.selectbox(key="cmp_rank_by").value == "uas_macro_f1"
    first = []
    for metric in ("uas_macro_f1", "uas_micro_f1"):
        at.selectbox(key="cmp_rank_by").set_value(metric).run()
        assert not at.exception
        label = next(m.label for m in get_task("dp").facts.metrics if m.key == metric)
        table = next(df.value for df in at.dataframe if "tied with best" in df.value.columns)
        assert f"difference to best ({label})" in table.columns
        # rank 1 holds the largest value of the metric picked, and the ranks follow that column down
        ordered = table.sort_values("rank")
        assert list(ordered[label]) == sorted(ordered[label], reverse=True)
        assert ordered["rank"].iloc[0] == 1 and ordered[f"difference to best ({label})"].iloc[0] == 0
        first.append(ordered["run"].iloc[0])
    assert first == ["biaffine-roberta", "biaffine-bert"]
    assert sorted(table["run"]) == sorted(p.stem for p in demo_runs("dp"))
