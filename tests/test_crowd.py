"""Human baselines, vote cross-entropy and the crowd views, against independent readings of the real NLI and STS dev files."""

from __future__ import annotations

import dataclasses
import json
import math
import random

import numpy as np
import pytest
from scipy.stats import pearsonr, spearmanr

from klue_viz.cli.main import main
from klue_viz.core.crowd import AGREE_UNSURE, CONFIDENT_SPLIT, crowd_view, score_spread, spearman, spread_bucket
from klue_viz.discovery.annotators import annotator_table, error_by_spread, human_of
from klue_viz.reading.demo import DEMO_BENCHMARK, demo_runs
from klue_viz.scoring.evaluate import evaluate_bytes, load_gold
from klue_viz.tasks import get_task
from tests.conftest import jsonl

pytestmark = pytest.mark.slow  # each reads a real dev file

NLI_ORDER = ("entailment", "neutral", "contradiction")


def nli_file(shared):
    return shared / "klue-nli-v1.1" / "klue-nli-v1.1_dev.json"


def sts_file(shared):
    return shared / "klue-sts-v1.1" / "klue-sts-v1.1_dev.json"


def nli_run(records, seed=7, skip_every=0):
    """A run with probabilities: random distributions, argmax as the label; every `skip_every`-th pair left out."""
    rng = random.Random(seed)
    out = []
    for k, record in enumerate(records):
        if skip_every and k % skip_every == 0:
            continue
        weights = [rng.random() ** 3 for _ in NLI_ORDER]
        total = sum(weights)
        probs = [w / total for w in weights]
        if k % 11 == 0:
            probs = [1.0, 0.0, 0.0]  # zeros are clipped at 1e-12
        out.append({"guid": record["guid"], "label": NLI_ORDER[int(np.argmax(probs))], "probs": probs})
    return out


def test_nli_human_baseline_and_vote_cross_entropy_on_the_real_dev_file(shared, tmp_path):
    records = json.loads(nli_file(shared).read_text(encoding="utf-8"))
    run = nli_run(records, skip_every=10)
    pred = tmp_path / "probs.jsonl"
    pred.write_bytes(jsonl(run))
    out = tmp_path / "out.json"
    assert main(["evaluate", "--task", "nli", "--gold", str(shared), "--pred", str(pred), "--out", str(out)]) == 0
    written = json.loads(out.read_text(encoding="utf-8"))

    # Independent reading: every individual vote of the scored pairs against gold_label.
    scored = {r["guid"] for r in run}
    votes = [(r[f], r["gold_label"]) for r in records if r["guid"] in scored for f in ("author", "label2", "label3", "label4", "label5")]
    assert len(votes) == 5 * len(scored) == 5 * 2700
    expected = 100 * sum(v == g for v, g in votes) / len(votes)
    assert written["human"] == {"metric": "accuracy", "value": pytest.approx(expected, abs=1e-9), "n": 13500}

    by_guid = {r["guid"]: r for r in records}
    entropies = []
    for item in run:
        record = by_guid[item["guid"]]
        shares = [sum(record[f] == label for f in ("author", "label2", "label3", "label4", "label5")) / 5 for label in NLI_ORDER]
        entropies.append(-sum(v * math.log(max(q, 1e-12)) for v, q in zip(shares, item["probs"])))
    ce = written["runs"][0]["vote_cross_entropy"]
    assert ce["n"] == 2700
    assert ce["value"] == pytest.approx(sum(entropies) / len(entropies), rel=1e-12)


def test_sts_human_baseline_on_the_real_dev_file(shared, tmp_path):
    records = json.loads(sts_file(shared).read_text(encoding="utf-8"))
    own, others = [], []
    for record in records:
        scores = record["annotations"]["annotations"]
        for k, score in enumerate(scores):
            rest = scores[:k] + scores[k + 1:]
            own.append(score)
            others.append(sum(rest) / len(rest))
    expected = 100 * pearsonr(own, others)[0]
    pred = tmp_path / "sts.jsonl"
    pred.write_bytes(jsonl({"guid": r["guid"], "score": r["labels"]["real-label"]} for r in records))
    out = tmp_path / "out.json"
    assert main(["evaluate", "--task", "sts", "--gold", str(sts_file(shared)), "--pred", str(pred), "--out", str(out)]) == 0
    human = json.loads(out.read_text(encoding="utf-8"))["human"]
    assert human["metric"] == "pearsonr" and human["n"] == len(own) == sum(len(r["annotations"]["annotations"]) for r in records)
    assert human["value"] == pytest.approx(expected, abs=1e-9)


def test_sts_annotator_table_and_error_against_spread(shared):
    records = json.loads(sts_file(shared).read_text(encoding="utf-8"))
    task = get_task("sts")
    gold = load_gold(task, sts_file(shared))
    table = annotator_table(gold.rows).set_index("annotator")
    # Annotator "07" by hand: every pair they scored, against the mean of the others there.
    own, others = [], []
    for record in records:
        who, scores = record["annotations"]["annotators"], record["annotations"]["annotations"]
        if "07" in who:
            k = who.index("07")
            own.append(scores[k])
            others.append((sum(scores) - scores[k]) / (len(scores) - 1))
    assert table.loc["07", "pairs"] == len(own)
    assert table.loc["07", "pearsonr with the others' mean"] == pytest.approx(100 * pearsonr(own, others)[0], abs=1e-9)
    assert len(table) == len({a for r in records for a in r["annotations"]["annotators"]})
    assert table["annotator quality (cleanlab)"].between(0, 100).all()

    rng = random.Random(3)
    run = [{"guid": r["guid"], "score": min(5.0, max(0.0, r["labels"]["real-label"] + rng.gauss(0, 0.8)))} for r in records]
    result = evaluate_bytes(task, gold, jsonl(run), "noisy.jsonl")
    spread, rho = error_by_spread(result.frames.examples)
    stds = [float(np.std(r["annotations"]["annotations"])) for r in records]
    errors = [abs(p["score"] - r["labels"]["real-label"]) for p, r in zip(run, records)]
    assert rho["n"] == len(records)
    assert rho["rho"] == pytest.approx(spearmanr(stds, errors)[0], abs=1e-12)
    assert spread["pairs"].sum() == len(records)
    wide = [e for s, e in zip(stds, errors) if s >= 1]
    assert spread.set_index("annotator spread").loc["std ≥ 1", "mean |gold - predicted|"] == pytest.approx(sum(wide) / len(wide))


def test_crowd_views_and_spread_buckets_by_hand():
    split = ["entailment", "entailment", "entailment", "neutral", "neutral"]
    assert crowd_view(0.95, split, "entailment") == CONFIDENT_SPLIT
    assert crowd_view(0.95, ["entailment"] * 4 + ["neutral"], "entailment") == "neither"
    assert crowd_view(0.5, ["neutral"] * 5, "neutral") == AGREE_UNSURE
    assert crowd_view(0.6, ["neutral"] * 5, "neutral") == "neither"
    assert score_spread([5, 5, 4, 4]) == 0.5 and spread_bucket(0.5) == "0.5 ≤ std < 1"
    assert spread_bucket(score_spread([5, 5, 5])) == "std < 0.5" and spread_bucket(score_spread([0, 5])) == "std ≥ 1"
    assert math.isnan(score_spread([3]))


def test_nli_frames_slice_the_crowd_views(shared):
    task = get_task("nli")
    gold = load_gold(task, nli_file(shared))
    records = json.loads(nli_file(shared).read_text(encoding="utf-8"))
    run = nli_run(records)
    result = evaluate_bytes(task, gold, jsonl(run), "probs.jsonl")
    ex = result.frames.examples
    expected = 0
    for item, record in zip(run, records):
        agree = sum(record[f] == record["gold_label"] for f in ("author", "label2", "label3", "label4", "label5"))
        expected += max(item["probs"]) >= 0.9 and agree <= 3
    assert (ex["crowd_view"] == CONFIDENT_SPLIT).sum() == expected > 0


def test_any_label_gold_with_annotator_labels_gets_a_baseline_ynat(tmp_path):
    path = DEMO_BENCHMARK / "ynat-v1.1" / "ynat-v1.1_dev.json"
    records = json.loads(path.read_text(encoding="utf-8"))
    votes = [(v, r["label"]) for r in records for v in r["annotations"]["annotations"]["first-scope"]]
    run = next(p for p in demo_runs("ynat") if p.stem == "bert-base")
    out = tmp_path / "out.json"
    assert main(["evaluate", "--task", "ynat", "--gold", str(path), "--pred", str(run), "--out", str(out)]) == 0
    written = json.loads(out.read_text(encoding="utf-8"))
    assert written["human"] == {"metric": "accuracy", "value": pytest.approx(100 * sum(v == g for v, g in votes) / len(votes)), "n": len(votes)}
    order = ["IT과학", "경제", "사회", "생활문화", "세계", "스포츠", "정치"]
    preds = {r["guid"]: r["probs"] for r in map(json.loads, run.read_text(encoding="utf-8").splitlines()) if r}
    ce = [-sum(r["annotations"]["annotations"]["first-scope"].count(label) / 3 * math.log(max(q / math.fsum(preds[r["guid"]]), 1e-12))
               for label, q in zip(order, preds[r["guid"]]))
          for r in records if r["guid"] in preds]
    assert written["runs"][0]["vote_cross_entropy"] == {"value": pytest.approx(sum(ce) / len(ce)), "n": len(ce)}


@pytest.mark.parametrize("n", [3, 4, 7, 30, 519, 3000])
def test_spearman_and_its_p_value_are_scipys(n):
    """`spearman` (numpy and the incomplete beta function, so `evaluate --out` never imports scipy) against
    scipy.stats.spearmanr: ties (scores on a 0..5 grid), no ties, strong and no correlation, p from 1 to ~1e-200."""
    rng = np.random.default_rng(n)
    for k in range(12):
        x = rng.integers(0, 6, n).astype(float) if k % 2 else rng.normal(size=n)
        y = x * (k / 4) + rng.normal(size=n) * (0.05 if k == 11 else 1.0)
        rho, p = spearman(x, y)
        expected = spearmanr(x, y)
        assert rho == pytest.approx(expected[0], abs=1e-12)
        assert p == pytest.approx(expected[1], rel=1e-9, abs=1e-300)
    assert spearman([1, 2, 3, 4], [2, 4, 6, 8]) == (1.0, 0.0)
    assert all(math.isnan(v) for v in spearman([1, 1, 1], [1, 2, 3]) + spearman([1, 2], [2, 1]))


@pytest.mark.parametrize("name", ["ner", "dp", "wos"])
def test_a_gold_without_annotators_has_no_baseline_and_builds_no_frames_for_it(name):
    """The pages ask every task for its human baseline over the stored runs, which carry no matched guids (kept results):
    a gold that keeps no annotators answers None before the runs' frames are built to find the rows they scored (the
    NER page with 50 stored runs went from 1.7 to 4.4 CPU s when they were)."""
    task = get_task(name)
    gold = load_gold(task, DEMO_BENCHMARK)
    run = next(p for p in demo_runs(name) if p.suffix == ".jsonl")
    kept = dataclasses.replace(evaluate_bytes(task, gold, run.read_bytes(), run.name), predicted_guids=None)
    assert human_of(task, gold.rows, [kept]) is None and human_of(task, gold.rows, [kept], held_out=True) is None
    assert "frames" not in kept.__dict__
