"""The metrics engine: public functions, slices and paired resampling against independent computations."""

from __future__ import annotations

import doctest
import json
import random
import subprocess
import sys
import warnings

import numpy as np
import pandas as pd
import pytest
from seqeval.metrics import f1_score as seqeval_f1
from seqeval.scheme import IOB2
from sklearn.metrics import accuracy_score, auc, f1_score, precision_recall_curve

from klue_viz import metrics
from klue_viz.bootstrap import compare_runs, confidence_intervals
from klue_viz.demo import DEMO_BENCHMARK
from klue_viz.evaluate import evaluate_bytes, load_gold
from klue_viz.slicing import slice_table
from klue_viz.tasks import get_task
from klue_viz.tasks.ner import tag_list
from tests.conftest import REPO, jsonl

NER_TAGS = list(metrics.NER_TAGS)


def test_the_metric_examples_in_the_docstrings_hold():
    result = doctest.testmod(metrics, optionflags=doctest.ELLIPSIS)
    assert result.attempted >= 18 and result.failed == 0


def test_metrics_import_without_pandas_sklearn_scipy_or_streamlit():
    code = "import sys, klue_viz.metrics; print([m for m in ('pandas', 'sklearn', 'scipy', 'streamlit') if m in sys.modules])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=True).stdout
    assert out.strip() == "[]"


@pytest.fixture(scope="module")
def ner_gold(shared):
    return load_gold(get_task("ner"), shared / "klue-ner-v1.1" / "klue-ner-v1.1_dev.tsv")


def read_ner_file(path):
    """The official TSV read independently: per sentence its characters and tags."""
    sentences, tags = [], []
    for block in path.read_text(encoding="utf-8").split("\n\n"):
        lines = [line for line in block.split("\n") if line and not line.startswith("##")]
        if lines:
            sentences.append("".join(line[0] for line in lines))
            tags.append([line.split("\t")[1] for line in lines])
    return sentences, tags


def test_public_ner_functions_match_seqeval_and_sklearn_on_dev(shared):
    sentences, gold = read_ner_file(shared / "klue-ner-v1.1" / "klue-ner-v1.1_dev.tsv")
    assert len(sentences) == 5000
    rng = random.Random(3)
    pred = [[t if rng.random() > 0.05 else rng.choice(NER_TAGS) for t in tags] for tags in gold]
    g_seq = [[t for c, t in zip(s, tags) if c != " "] for s, tags in zip(sentences, gold)]
    p_seq = [[t for c, t in zip(s, tags) if c != " "] for s, tags in zip(sentences, pred)]
    entity = seqeval_f1(g_seq, p_seq, average="macro", mode="strict", scheme=IOB2) * 100
    chars_g = [t for seq in g_seq for t in ["O", *seq, "O"]]
    chars_p = [t for seq in p_seq for t in ["O", *seq, "O"]]
    character = f1_score(chars_g, chars_p, labels=NER_TAGS, average="macro", zero_division=True) * 100
    assert metrics.ner_entity_macro_f1(gold, pred, sentences) == pytest.approx(entity, abs=1e-9)
    assert metrics.ner_character_macro_f1(gold, pred, sentences) == pytest.approx(character, abs=1e-9)
    ids = [[metrics.NER_TAG_ID[t] for t in tags] for tags in pred]
    assert metrics.ner_entity_macro_f1(gold, ids, sentences) == pytest.approx(entity, abs=1e-9)


def test_public_dp_functions_match_sklearn_on_dev(shared):
    heads, rels = [], []
    for line in (shared / "klue-dp-v1.1" / "klue-dp-v1.1_dev.tsv").read_text(encoding="utf-8").split("\n"):
        if line.startswith("## klue-dp"):
            heads.append([])
            rels.append([])
        elif line and not line.startswith("##"):
            fields = line.split("\t")
            heads[-1].append(int(fields[4]))
            rels[-1].append(fields[5])
    rng = random.Random(4)
    pred_heads = [[h if rng.random() > 0.1 else rng.randint(0, len(hs)) for h in hs] for hs in heads]
    pred_rels = [[r if rng.random() > 0.1 else rng.choice(metrics.DP_RELATIONS) for r in rs] for rs in rels]
    gh, ph = sum(heads, []), sum(pred_heads, [])
    kept = set(metrics.DP_RELATIONS[:15])
    gc = [r if r in kept else "others" for r in sum(rels, [])]
    pc = [(r if r in kept else "others") if g == p else "PAD" for r, g, p in zip(sum(pred_rels, []), gh, ph)]
    assert metrics.dp_uas_macro_f1(heads, pred_heads) == pytest.approx(100 * f1_score(gh, ph, average="macro"), abs=1e-9)
    assert metrics.dp_uas_micro_f1(heads, pred_heads) == pytest.approx(100 * accuracy_score(gh, ph), abs=1e-9)
    assert metrics.dp_las_macro_f1(heads, rels, pred_heads, pred_rels) == pytest.approx(100 * f1_score(gc, pc, average="macro"), abs=1e-9)
    las = np.mean([g == p and a == b for g, p, a, b in zip(gh, ph, gc, pc)]) * 100
    assert metrics.dp_las_micro_f1(heads, rels, pred_heads, pred_rels) == pytest.approx(las, abs=1e-9)


def test_public_functions_give_none_where_undefined():
    assert metrics.sts_pearsonr([1.0], [2.0]) is None
    assert metrics.sts_pearsonr([1.0, 2.0, 3.0], [2.0, 2.0, 2.0]) is None
    assert metrics.ner_entity_macro_f1([["O", "O"]], [["O", "O"]]) is None
    assert metrics.ynat_macro_f1([], []) is None
    assert metrics.wos_joint_goal_acc([], []) == 0.0 and metrics.wos_slot_micro_f1([], []) is None


def test_overlapping_ner_spans_are_scored_with_the_later_span_on_top(ner_gold):
    """Convention 9: overlapping spans become tags in order, the record is scored and each overlap is a problem on its line."""
    ner = get_task("ner")
    row = next(r for r in ner_gold.rows if len(r["sentence"]) > 12)
    records = [
        {"guid": row["guid"], "entities": [
            {"start": 0, "end": 6, "label": "PS"}, {"start": 3, "end": 9, "label": "LC"}, {"start": 10, "end": 12, "label": "DT"},
        ]},
    ]
    result = evaluate_bytes(ner, ner_gold, jsonl(records), "p.jsonl")
    assert result.coverage.n_scored == 1 and result.coverage.n_invalid == 0
    (problem,) = [p for p in result.problems if "overlaps" in p.message]
    assert problem.line == 1 and problem.guid == row["guid"]
    tags = ["O"] * len(row["sentence"])
    tags[0:6] = ["B-PS"] + ["I-PS"] * 5
    tags[3:9] = ["B-LC"] + ["I-LC"] * 5
    tags[10:12] = ["B-DT", "I-DT"]
    g = [[t for c, t in zip(row["sentence"], tag_list(row["tags"])) if c != " "]]
    p = [[t for c, t in zip(row["sentence"], tags) if c != " "]]
    if any(t != "O" for t in g[0] + p[0]):
        assert result.scores.values["entity_macro_f1"] == pytest.approx(100 * seqeval_f1(g, p, average="macro", mode="strict", scheme=IOB2), abs=1e-9)
    drawing = ner.render(result.frames, row["guid"])
    assert drawing.count('data-status="given"') == 3


def test_slice_metrics_match_an_independent_computation_per_slice(shared):
    """NLI accuracy per source, DP LAS macro F1 per gold relation and RE AUPRC per source, each against scikit-learn."""
    nli = get_task("nli")
    data = json.loads((shared / "klue-nli-v1.1" / "klue-nli-v1.1_dev.json").read_text(encoding="utf-8"))
    rng = random.Random(8)
    preds = [rng.choice(["entailment", "neutral", "contradiction"]) if rng.random() < 0.3 else r["gold_label"] for r in data]
    result = evaluate_bytes(nli, load_gold(nli, shared), jsonl({"guid": r["guid"], "label": p} for r, p in zip(data, preds)), "p.jsonl")
    table = slice_table(nli, result.frames, next(s for s in nli.slices if s.key == "source")).set_index("value")
    for source in {r["source"] for r in data}:
        pairs = [(r["gold_label"], p) for r, p in zip(data, preds) if r["source"] == source]
        assert table.loc[source, "accuracy"] == pytest.approx(100 * accuracy_score(*zip(*pairs)), abs=1e-9)
        assert table.loc[source, "n"] == len(pairs)

    re_task = get_task("re")
    records = json.loads((DEMO_BENCHMARK / "klue-re-v1.1" / "klue-re-v1.1_dev.json").read_text(encoding="utf-8"))  # no RE dev set here
    relations = list(metrics.RE_RELATIONS)
    gen = np.random.default_rng(2)
    probs = gen.dirichlet(np.ones(30) * 0.3, size=len(records))
    for k, r in enumerate(records):
        probs[k, relations.index(r["label"])] += gen.random()
    probs /= probs.sum(axis=1, keepdims=True)
    lines = [{"guid": r["guid"], "probs": p.tolist()} for r, p in zip(records, probs)]
    result = evaluate_bytes(re_task, load_gold(re_task, DEMO_BENCHMARK), jsonl(lines), "p.jsonl")
    table = slice_table(re_task, result.frames, next(s for s in re_task.facts.slices if s.key == "source")).set_index("value")
    for source in {r["source"] for r in records}:
        mine = [k for k, r in enumerate(records) if r["source"] == source]
        gold = np.array([records[k]["label"] for k in mine])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            areas = [auc(*precision_recall_curve(gold == label, probs[mine, c])[1::-1]) for c, label in enumerate(relations)]
        assert table.loc[source, "auprc"] == pytest.approx(100 * np.mean(areas), abs=1e-9)


@pytest.fixture(scope="module")
def nli_gold(shared):
    return load_gold(get_task("nli"), shared / "klue-nli-v1.1" / "klue-nli-v1.1_dev.json")


def test_paired_comparison_resamples_both_runs_alike(nli_gold):
    """B is A with 30 more errors: on every paired resample A >= B, so the paired interval starts at or above 0;
    resampling the runs independently would put it well below 0."""
    nli = get_task("nli")
    rng = random.Random(11)
    first = [r["gold"] if rng.random() < 0.8 else "neutral" for r in nli_gold.rows]
    right = [k for k, (r, p) in enumerate(zip(nli_gold.rows, first)) if r["gold"] == p and p != "contradiction"]
    second = list(first)
    for k in right[:30]:
        second[k] = "contradiction"
    runs = [evaluate_bytes(nli, nli_gold, jsonl({"guid": r["guid"], "label": p} for r, p in zip(nli_gold.rows, preds)), "p.jsonl") for preds in (first, second)]
    (paired,) = compare_runs(nli, runs[0].frames, runs[1].frames, samples=400)
    assert paired.difference == pytest.approx(100 * 30 / len(first))
    assert 0 <= paired.low < paired.difference < paired.high and paired.first_better > 0.99
    # Unpaired, the difference of two accuracies of ~80% on 3,000 pairs spreads about +-2 points.
    a = confidence_intervals(nli, runs[0].frames, samples=400)["accuracy"]
    assert a[1] - a[0] > 2 * (paired.high - paired.low)
    # The share of resamples is counted over exactly `samples` resamples.
    (few,) = compare_runs(nli, runs[0].frames, runs[1].frames, samples=7)
    assert (few.first_better * 7) == pytest.approx(round(few.first_better * 7))


def test_paired_comparison_uses_only_the_examples_both_runs_scored(nli_gold):
    nli = get_task("nli")
    rows = nli_gold.rows
    wrong = {"entailment": "neutral", "neutral": "contradiction", "contradiction": "entailment"}
    # Right on the first 1,000 pairs, wrong on the other 2,000; the second run covers only the first 1,000.
    labels = [r["gold"] if k < 1000 else wrong[r["gold"]] for k, r in enumerate(rows)]
    full = evaluate_bytes(nli, nli_gold, jsonl({"guid": r["guid"], "label": label} for r, label in zip(rows, labels)), "a.jsonl")
    half = evaluate_bytes(nli, nli_gold, jsonl({"guid": r["guid"], "label": "neutral"} for r in rows[999::-1]), "b.jsonl")
    (comparison,) = compare_runs(nli, full.frames, half.frames, samples=50)
    expected = 100 - 100 * accuracy_score([r["gold"] for r in rows[:1000]], ["neutral"] * 1000)
    assert comparison.difference == pytest.approx(expected)
    assert comparison.low > 0.9 * expected and comparison.first_better == 1.0


def test_paired_auprc_follows_each_run_s_examples_to_the_shared_ones():
    """AUPRC does not sum: its paired resamples carry each run's own probability rows, matched by guid."""
    re_task = get_task("re")
    gold = load_gold(re_task, DEMO_BENCHMARK)
    gen = np.random.default_rng(3)
    runs, tables = [], []
    for size in (len(gold.rows), 20):
        rows = gold.rows[:size][::-1] if size < len(gold.rows) else gold.rows
        probs = gen.dirichlet(np.ones(30), size=len(rows))
        runs.append(evaluate_bytes(re_task, gold, jsonl({"guid": r["guid"], "probs": p.tolist()} for r, p in zip(rows, probs)), "p.jsonl"))
        tables.append({r["guid"]: p for r, p in zip(rows, probs)})
    shared = [r["guid"] for r in gold.rows[:20]]
    labels = np.array([r["gold"] for r in gold.rows[:20]])

    def auprc(table):
        probs = np.array([table[g] for g in shared])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return 100 * np.mean([auc(*precision_recall_curve(labels == rel, probs[:, c])[1::-1]) for c, rel in enumerate(metrics.RE_RELATIONS)])

    comparisons = {c.metric: c for c in compare_runs(re_task, runs[0].frames, runs[1].frames, samples=30)}
    assert comparisons["auprc"].difference == pytest.approx(auprc(tables[0]) - auprc(tables[1]), abs=1e-9)
    assert comparisons["auprc"].low <= comparisons["auprc"].high


def test_a_metric_undefined_for_one_run_is_left_out_of_the_comparison(shared):
    sts = get_task("sts")
    gold = load_gold(sts, shared)
    constant = evaluate_bytes(sts, gold, jsonl({"guid": r["guid"], "score": 3.0} for r in gold.rows), "a.jsonl")
    rng = random.Random(2)
    noisy = evaluate_bytes(sts, gold, jsonl({"guid": r["guid"], "score": r["gold"] + rng.gauss(0, 1)} for r in gold.rows), "b.jsonl")
    assert [c.metric for c in compare_runs(sts, constant.frames, noisy.frames, samples=20)] == ["f1"]
    assert [c.metric for c in compare_runs(sts, noisy.frames, constant.frames, samples=20)] == ["f1"]


def test_one_resample_or_one_example_still_gives_an_interval(nli_gold):
    nli = get_task("nli")
    (result, hits) = nli_run(nli_gold, 0.3, 3, 50)
    low, high = confidence_intervals(nli, result.frames, samples=1)["accuracy"]
    assert low == high and 0 <= low <= 100
    assert len(compare_runs(nli, result.frames, result.frames, samples=1)) == 1
    one = evaluate_bytes(nli, nli_gold, jsonl([{"guid": nli_gold.rows[0]["guid"], "label": nli_gold.rows[0]["gold"]}]), "p.jsonl")
    assert confidence_intervals(nli, one.frames, samples=5)["accuracy"] == (100.0, 100.0)


def test_resamples_taken_in_chunks_are_the_same_resamples(nli_gold, monkeypatch):
    from klue_viz import bootstrap

    nli = get_task("nli")
    (first, _), (second, _) = nli_run(nli_gold, 0.3, 1, 500), nli_run(nli_gold, 0.4, 2, 500)
    whole_ci = confidence_intervals(nli, first.frames, samples=7, level=0.5)
    whole = compare_runs(nli, first.frames, second.frames, samples=7, level=0.5)
    monkeypatch.setattr(bootstrap, "CHUNK_CELLS", 3 * 500)  # three resamples per chunk: 3 + 3 + 1
    assert confidence_intervals(nli, first.frames, samples=7, level=0.5) == whole_ci
    assert compare_runs(nli, first.frames, second.frames, samples=7, level=0.5) == whole


def test_an_interval_is_none_where_the_metric_is_undefined_on_every_resample(shared):
    sts = get_task("sts")
    gold = load_gold(sts, shared)
    result = evaluate_bytes(sts, gold, jsonl({"guid": r["guid"], "score": 3.0} for r in gold.rows), "p.jsonl")
    intervals = confidence_intervals(sts, result.frames, samples=50)
    assert intervals["pearsonr"] is None and intervals["f1"] is not None


def nli_run(gold, rate: float, seed: int, size: int | None = None):
    rng = random.Random(seed)
    rows = gold.rows[:size] if size else gold.rows
    preds = [r["gold"] if rng.random() > rate else rng.choice(["entailment", "neutral", "contradiction"]) for r in rows]
    result = evaluate_bytes(get_task("nli"), gold, jsonl({"guid": r["guid"], "label": p} for r, p in zip(rows, preds)), "p.jsonl")
    return result, np.array([r["gold"] == p for r, p in zip(rows, preds)], dtype=float)


def test_intervals_equal_a_bootstrap_written_out_with_the_same_draws(nli_gold):
    """Accuracy on resamples drawn with numpy's seeded generator (n draws with replacement each), percentiles by hand."""
    nli = get_task("nli")
    (first, hits_a), (second, hits_b) = nli_run(nli_gold, 0.3, 1, 300), nli_run(nli_gold, 0.25, 2, 300)
    draws = np.random.default_rng(4).integers(0, 300, size=(200, 300))
    acc_a, acc_b = 100 * hits_a[draws].mean(axis=1), 100 * hits_b[draws].mean(axis=1)
    low, high = confidence_intervals(nli, first.frames, samples=200, level=0.9, seed=4)["accuracy"]
    assert (low, high) == (pytest.approx(np.percentile(acc_a, 5), abs=1e-9), pytest.approx(np.percentile(acc_a, 95), abs=1e-9))
    (c,) = compare_runs(nli, first.frames, second.frames, samples=200, level=0.8, seed=4)
    diff = acc_a - acc_b
    assert c.metric == "accuracy" and c.difference == pytest.approx(100 * (hits_a.mean() - hits_b.mean()), abs=1e-9)
    assert (c.low, c.high) == (pytest.approx(np.percentile(diff, 10), abs=1e-9), pytest.approx(np.percentile(diff, 90), abs=1e-9))
    assert c.first_better == pytest.approx(np.mean(diff > 0), abs=1e-12)


def test_paired_pearson_intervals_equal_a_bootstrap_written_out(shared):
    sts = get_task("sts")
    gold = load_gold(sts, shared)
    rng = random.Random(8)
    y = np.array([r["gold"] for r in gold.rows])
    xa = y + np.array([rng.gauss(0, 0.8) for _ in y])
    xb = y + np.array([rng.gauss(0, 1.0) for _ in y])
    runs = [evaluate_bytes(sts, gold, jsonl({"guid": r["guid"], "score": float(v)} for r, v in zip(gold.rows, x)), "p.jsonl") for x in (xa, xb)]
    draws = np.random.default_rng(6).integers(0, len(y), size=(100, len(y)))
    diff = 100 * np.array([np.corrcoef(xa[d], y[d])[0, 1] - np.corrcoef(xb[d], y[d])[0, 1] for d in draws])
    (c, _) = compare_runs(sts, runs[0].frames, runs[1].frames, samples=100, level=0.8, seed=6)
    assert c.metric == "pearsonr"
    assert (c.low, c.high) == (pytest.approx(np.percentile(diff, 10), abs=1e-9), pytest.approx(np.percentile(diff, 90), abs=1e-9))


def test_bootstrap_defaults_are_1000_resamples_at_95_percent_with_seed_0(shared):
    sts = get_task("sts")
    gold = load_gold(sts, shared)
    rng = random.Random(5)
    first, second = (evaluate_bytes(sts, gold, jsonl({"guid": r["guid"], "score": r["gold"] + rng.gauss(0, noise)} for r in gold.rows), "p.jsonl").frames
                     for noise in (0.7, 0.9))
    assert confidence_intervals(sts, first) == confidence_intervals(sts, first, samples=1000, level=0.95, seed=0)
    assert confidence_intervals(sts, first)["pearsonr"] != confidence_intervals(sts, first, samples=1001)["pearsonr"]
    assert confidence_intervals(sts, first)["pearsonr"] != confidence_intervals(sts, first, seed=1)["pearsonr"]
    assert confidence_intervals(sts, first)["pearsonr"] != confidence_intervals(sts, first, level=0.9)["pearsonr"]
    assert compare_runs(sts, first, second) == compare_runs(sts, first, second, samples=1000, level=0.95, seed=0)
    assert compare_runs(sts, first, second)[0] != compare_runs(sts, first, second, samples=999)[0]
    assert compare_runs(sts, first, second)[0] != compare_runs(sts, first, second, seed=1)[0]
    assert compare_runs(sts, first, second)[0] != compare_runs(sts, first, second, level=0.9)[0]
    assert confidence_intervals(sts, first, samples=0) == {"pearsonr": None, "f1": None}
    assert compare_runs(sts, first, second, samples=0) == []


def test_slice_table_counts_errors_rates_order_and_missing_values(nli_gold):
    nli = get_task("nli")
    result, hits = nli_run(nli_gold, 0.3, 6)
    frames = result.frames
    sources = frames.examples["source"].astype(object).to_numpy().copy()
    sources[:7] = None  # seven examples without a source form their own slice
    frames.examples["source"] = pd.array(sources, dtype="string")
    table = slice_table(nli, frames, next(s for s in nli.slices if s.key == "source"))
    assert list(table.columns) == ["value", "n", "errors", "accuracy", "error_rate"]
    expected = {}
    for source in set(sources):
        mask = np.array([s == source for s in sources]) if source is not None else np.array([s is None for s in sources])
        expected["(missing)" if source is None else source] = (int(mask.sum()), int((hits[mask] == 0).sum()), 100 * hits[mask].mean())
    assert set(table["value"]) == set(expected)
    for row in table.itertuples():
        n, errors, accuracy = expected[row.value]
        assert (row.n, row.errors) == (n, errors)
        assert row.accuracy == pytest.approx(accuracy, abs=1e-9) and row.error_rate == pytest.approx(100 * errors / n)
    assert list(zip(table["n"], table["value"])) == sorted(zip(table["n"], table["value"]), key=lambda t: (-t[0], t[1]))
    assert list(table.index) == list(range(len(table))) and table["errors"].dtype.kind == "i"


def test_entity_type_slices_match_seqeval_per_type(ner_gold):
    from seqeval.metrics import classification_report

    ner = get_task("ner")
    rng = random.Random(9)
    preds = [[t if rng.random() > 0.04 else rng.choice(NER_TAGS) for t in tag_list(r["tags"])] for r in ner_gold.rows]
    result = evaluate_bytes(ner, ner_gold, jsonl({"guid": r["guid"], "tags": p} for r, p in zip(ner_gold.rows, preds)), "p.jsonl")
    g = [[t for c, t in zip(r["sentence"], tag_list(r["tags"])) if c != " "] for r in ner_gold.rows]
    p = [[t for c, t in zip(r["sentence"], tags) if c != " "] for r, tags in zip(ner_gold.rows, preds)]
    report = classification_report(g, p, mode="strict", scheme=IOB2, output_dict=True, zero_division=0)
    table = slice_table(ner, result.frames, next(s for s in ner.slices if s.key == "label")).set_index("value")
    for kind in metrics.NER_TYPES:
        assert table.loc[kind, "precision"] == pytest.approx(100 * report[kind]["precision"], abs=1e-9)
        assert table.loc[kind, "recall"] == pytest.approx(100 * report[kind]["recall"], abs=1e-9)
        assert table.loc[kind, "f1"] == pytest.approx(100 * report[kind]["f1-score"], abs=1e-9)


def test_slot_slices_count_a_wrong_value_as_both_a_miss_and_a_false_alarm(shared):
    wos = get_task("wos")
    gold = load_gold(wos, shared)
    rng = random.Random(12)
    records, pairs = [], []
    for row in gold.rows:
        state = []
        for item in row["gold_state"]:
            roll = rng.random()
            if roll < 0.1:
                continue  # missed
            state.append(item + "X" if roll < 0.2 else item)  # wrong value, or right
        if rng.random() < 0.1:
            state.append("택시-출발 시간-09:00")  # spurious (or a wrong value when gold has it)
        records.append({"guid": row["dialogue"], "turn": row["turn"], "state": state})
        pairs.append((row["gold_state"], state))
    result = evaluate_bytes(wos, gold, jsonl(records), "p.jsonl")
    table = slice_table(wos, result.frames, next(s for s in wos.slices if s.key == "domain_slot")).set_index("value")
    for slot in table.index:
        tp = fp = fn = 0
        for g_state, p_state in pairs:
            g = {"-".join(i.split("-", 2)[:2]): i.split("-", 2)[2] for i in g_state}
            p = {"-".join(i.split("-", 2)[:2]): i.split("-", 2)[2] for i in p_state}
            if slot in g and slot in p and g[slot] == p[slot]:
                tp += 1
            else:
                fn += slot in g
                fp += slot in p
        rows = sum(slot in {"-".join(i.split("-", 2)[:2]) for i in g_state + p_state} for g_state, p_state in pairs)
        assert table.loc[slot, "n"] == rows
        assert table.loc[slot, "precision"] == (pytest.approx(100 * tp / (tp + fp), abs=1e-9) if tp + fp else None)
        assert table.loc[slot, "recall"] == (pytest.approx(100 * tp / (tp + fn), abs=1e-9) if tp + fn else None)
        assert table.loc[slot, "f1"] == pytest.approx(100 * 2 * tp / (2 * tp + fp + fn), abs=1e-9)


def test_re_auprc_matches_scikit_learn_on_random_probabilities():
    rng = np.random.default_rng(1)
    gold = rng.choice(30, size=200, p=np.r_[0.5, np.full(29, 0.5 / 29)])
    gold[gold == 7] = 8  # relation 7 never occurs in gold: its curve is the 0.5 case
    probs = rng.dirichlet(np.ones(30), size=200)
    probs[:, 3] = np.round(probs[:, 3], 2)  # ties in one column
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        areas = [auc(*precision_recall_curve(gold == c, probs[:, c])[1::-1]) for c in range(30)]
    assert metrics.re_auprc(gold.tolist(), probs) == pytest.approx(100 * np.mean(areas), abs=1e-9)
    names = [metrics.RE_RELATIONS[k] for k in gold]
    assert metrics.re_auprc(names, probs.tolist()) == pytest.approx(100 * np.mean(areas), abs=1e-9)
    assert metrics.re_auprc([], np.zeros((0, 30))) is None
    with pytest.raises(ValueError):
        metrics.re_auprc(names, probs[:, :29])
    with pytest.raises(ValueError):
        metrics.re_auprc(["per:nothing"] + names[1:], probs)


def test_public_functions_refuse_mismatched_or_unknown_input():
    with pytest.raises(ValueError, match=r"^gold has 1 labels and pred 2$"):
        metrics.ynat_macro_f1(["정치"], ["정치", "경제"])
    with pytest.raises(ValueError, match=r"^gold label id 7 is outside 0\.\.6$"):
        metrics.ynat_macro_f1([7], ["정치"])  # YNAT ids are 0..6
    with pytest.raises(ValueError, match=r"^predicted label id -1 is outside 0\.\.2$"):
        metrics.nli_accuracy(["neutral"], [-1])
    assert metrics.nli_accuracy([2], ["contradiction"]) == 100.0 and metrics.nli_accuracy(["neutral"], ["entailment"]) == 0.0
    with pytest.raises(ValueError, match=r"^1 questions but 2 predictions$"):
        metrics.mrc_exact_match([["a"]], ["a", "b"])
    with pytest.raises(ValueError, match=r"^1 gold turns but 0 predicted$"):
        metrics.wos_joint_goal_acc([[]], [])
    with pytest.raises(ValueError, match=r"^gold has 2 scores and pred 1$"):
        metrics.sts_pearsonr([1.0, 2.0], [1.0])
    with pytest.raises(ValueError, match=r"^sentence 0: gold, prediction \(and sentence\) differ in length$"):
        metrics.ner_entity_macro_f1([["O"]], [["O", "O"]])
    with pytest.raises(ValueError, match=r"^gold_tags, pred_tags \(and sentences\) must have one entry per sentence$"):
        metrics.ner_entity_macro_f1([["O"]], [["O"], ["O"]])
    with pytest.raises(ValueError, match=r"^gold sentence 0: 'B-XX' is not a KLUE-NER tag name or id 0\.\.12$"):
        metrics.ner_entity_macro_f1([["O", "B-XX"]], [["O", "O"]])
    with pytest.raises(ValueError, match=r"^sentence 0: gold, prediction \(and sentence\) differ in length$"):
        metrics.ner_character_macro_f1([["O", "O"]], [["O", "O"]], sentences=["abc"])
    with pytest.raises(ValueError, match=r"^sentence 0: 2 gold heads, 1 predicted$"):
        metrics.dp_uas_micro_f1([[0, 1]], [[0]])
    with pytest.raises(ValueError, match=r"^gold_heads and pred_heads must have one entry per sentence$"):
        metrics.dp_uas_micro_f1([[0, 1]], [])
    with pytest.raises(ValueError, match=r"^heads are word indices from 1, or 0 for the root$"):
        metrics.dp_uas_micro_f1([[0, 1]], [[0, -1]])
    with pytest.raises(ValueError, match=r"^deprels must have one relation per word$"):
        metrics.dp_las_micro_f1([[0]], [["VP", "NP"]], [[0]], [["VP"]])
    with pytest.raises(ValueError, match=r"^probs must be 2 x 30 \(one row of relation probabilities per example\)$"):
        metrics.re_auprc(["no_relation", "per:title"], [[1.0] * 30])
    with pytest.raises(ValueError, match=r"^gold label 'per:nothing' is not a KLUE-RE relation$"):
        metrics.re_auprc(["per:nothing"], [[1.0] * 30])
    with pytest.raises(ValueError, match=r"^predicted sentence 0: 13 is not a KLUE-NER tag name or id 0\.\.12$"):
        metrics.ner_entity_macro_f1([[12]], [[13]])
    assert metrics.ner_character_macro_f1([[12, 0]], [["O", "B-DT"]]) == 100.0


def test_public_functions_on_empty_input():
    assert metrics.ynat_macro_f1([], []) is None and metrics.nli_accuracy([], []) is None and metrics.re_micro_f1([], []) is None
    assert metrics.sts_f1([], []) is None and metrics.sts_pearsonr([], []) is None
    assert metrics.ner_character_macro_f1([], []) is None and metrics.dp_uas_micro_f1([], []) is None
    assert metrics.dp_las_macro_f1([], [], [], []) is None and metrics.mrc_rouge_w([], []) is None


def test_public_known_answers_that_tell_close_formulas_apart():
    # Pearson: two pairs suffice; a tiny but real spread is not "constant"; a perfect inverse is -100.
    assert metrics.sts_pearsonr([1.0, 2.0], [1.0, 3.0]) == pytest.approx(100.0)
    assert metrics.sts_pearsonr([1.0, 2.0, 3.0], [3.0, 3.001, 3.002]) == pytest.approx(100.0)
    assert metrics.sts_pearsonr([1.0, 2.0, 4.0], [4.0, 3.0, 1.0]) == pytest.approx(-100.0)
    # STS F1: 3.0 itself is positive on both sides.
    assert metrics.sts_f1([3.0, 1.0], [3.0, 1.0]) == 100.0 and metrics.sts_f1([2.99, 1.0], [3.0, 1.0]) == 0.0
    # WoS: the set of items decides the joint goal; per-turn F1 with tp = fp = 1 is 0.5; a missed state scores 0.
    assert metrics.wos_joint_goal_acc([["a-b-1", "a-c-2"], ["a-b-1"]], [["a-c-2", "a-b-1"], ["a-b-2"]]) == 50.0
    assert metrics.wos_slot_micro_f1([["a-b-1", "a-c-2"]], [["a-b-1", "a-d-3"]]) == pytest.approx(50.0)
    assert metrics.wos_slot_micro_f1([["a-b-1"]], [[]]) == 0.0 and metrics.wos_slot_micro_f1([[]], [["a-b-1"]]) == 0.0
    assert metrics.wos_slot_micro_f1([[], ["a-b-1"]], [[], ["a-b-1"]]) == 100.0
    # RE micro F1 leaves no_relation out on both sides; macro F1 of YNAT averages over the classes seen.
    assert metrics.re_micro_f1(["no_relation", "no_relation"], ["no_relation", "per:title"]) == 0.0
    assert metrics.re_micro_f1(["per:title", "no_relation"], ["per:title", "no_relation"]) == 100.0
    assert metrics.ynat_macro_f1(["정치", "경제"], ["정치", "정치"]) == pytest.approx(100 * (2 / 3 + 0) / 2)
    # NER: an I- after O starts nothing; the [CLS]/[SEP] pair is counted; spaces are dropped with `sentences`.
    assert metrics.ner_entity_macro_f1([["O", "I-PS"]], [["O", "O"]]) is None
    assert metrics.ner_entity_macro_f1([["B-PS", "O", "I-PS"]], [["B-PS", "I-PS", "I-PS"]]) == 0.0
    assert metrics.ner_entity_macro_f1([["B-PS", "I-PS", "I-PS"]], [["B-PS", "O", "I-PS"]], sentences=["가 나"]) == 100.0
    # DP: UAS macro F1 over head values; LAS puts PAD on a word with a wrong head.
    assert metrics.dp_uas_macro_f1([[0, 1]], [[0, 1]]) == 100.0
    assert metrics.dp_las_macro_f1([[0, 1]], [["VP", "NP"]], [[0, 0]], [["VP", "NP"]]) == pytest.approx(100 * (1 + 0 + 0) / 3)


def test_mrc_public_functions_normalise_and_take_the_best_gold():
    # Case and ASCII punctuation are dropped, whitespace collapsed; Korean punctuation stays.
    assert metrics.mrc_exact_match([["Seoul  City!"]], ["seoul city"]) == 100.0
    assert metrics.mrc_exact_match([["《서울》"]], ["서울"]) == 0.0
    # The best of several golds counts; an unanswerable question is matched only by "".
    assert metrics.mrc_exact_match([["서울", "서울특별시"], []], ["서울특별시", ""]) == 100.0
    assert metrics.mrc_rouge_w([[]], ["서울"]) == 0.0
    # Longest common substring, not subsequence: "서울특별시" in "서울의 특별시" matches 3 characters, F1 = 0.5.
    assert metrics.mrc_rouge_w([["서울특별시", "부산"]], ["서울의 특별시"]) == pytest.approx(50.0)


def test_label_metrics_match_scikit_learn_on_random_labels():
    rng = np.random.default_rng(7)
    ynat = list(metrics.YNAT_LABELS)
    gold, pred = rng.choice(ynat, 500).tolist(), rng.choice(ynat[:5] + ["(none)"], 500).tolist()
    assert metrics.ynat_macro_f1(gold, pred) == pytest.approx(100 * f1_score(gold, pred, average="macro"), abs=1e-9)
    assert metrics.nli_accuracy(gold, pred) == pytest.approx(100 * accuracy_score(gold, pred), abs=1e-9)
    relations = list(metrics.RE_RELATIONS)
    weights = np.r_[0.4, np.full(29, 0.6 / 29)]
    gold, pred = rng.choice(relations, 800, p=weights).tolist(), rng.choice(relations + ["other"], 800, p=np.r_[weights * 0.9, 0.1]).tolist()
    expected = 100 * f1_score(gold, pred, average="micro", labels=relations[1:], zero_division=0)
    assert metrics.re_micro_f1(gold, pred) == pytest.approx(expected, abs=1e-9)


def test_re_micro_f1_counts_only_the_29_relations():
    # no_relation hits count nowhere; a label outside the relation list is never a false positive.
    assert metrics.re_micro_f1(["per:title", "no_relation"], ["org:founded", "no_relation"]) == 0.0
    assert metrics.re_micro_f1(["per:title", "per:title"], ["per:title", "other"]) == pytest.approx(100 * 2 / 3)
    assert metrics.re_micro_f1(["org:dissolved", "per:title"], ["org:dissolved", "no_relation"]) == pytest.approx(100 * 2 / 3)


def test_re_auprc_of_a_single_record():
    # per:title ranks its only (positive) example first: area 1; 29 relations without a positive score 0.5 each.
    onehot = [0.0] * 29 + [1.0]
    assert metrics.re_auprc(["per:title"], [onehot]) == pytest.approx(100 * (1 + 29 * 0.5) / 30)


def test_re_slices_score_micro_f1_per_slice():
    re_task = get_task("re")
    gold = load_gold(re_task, DEMO_BENCHMARK)
    rng = random.Random(4)
    preds = [r["gold"] if rng.random() < 0.6 else rng.choice(metrics.RE_RELATIONS) for r in gold.rows]
    result = evaluate_bytes(re_task, gold, jsonl({"guid": r["guid"], "label": p} for r, p in zip(gold.rows, preds)), "p.jsonl")
    table = slice_table(re_task, result.frames, next(s for s in re_task.facts.slices if s.key == "source")).set_index("value")
    for source in table.index:
        pairs = [(r["gold"], p) for r, p in zip(gold.rows, preds) if r["source"] == source]
        g, p = zip(*pairs)
        expected = 100 * f1_score(g, p, average="micro", labels=list(metrics.RE_RELATIONS[1:]), zero_division=0)
        assert table.loc[source, "micro_f1"] == pytest.approx(expected, abs=1e-9)
        assert table.loc[source, "auprc"] is None


def test_a_slice_table_of_no_examples_is_empty_with_its_columns(nli_gold):
    nli = get_task("nli")
    result, _ = nli_run(nli_gold, 0.3, 1, 10)
    table = slice_table(nli, result.frames.subset([]), nli.slices[0])
    assert table.empty and list(table.columns) == ["value", "n", "errors"]


def test_official_answer_normalisation():
    # Lower case; ASCII punctuation dropped, other punctuation kept; the official bracket pattern ('()‘’ after a quote) is a space.
    assert metrics.normalise_answer("  Seoul,   CITY! ") == "seoul city"
    assert metrics.normalise_answer("《서울》·부산") == "《서울》·부산"
    assert metrics.normalise_answer("a'()‘’b") == "a b"


def test_turn_prf_counts():
    assert metrics.turn_prf([], []) == (0, 0, 0, 1.0)
    assert metrics.turn_prf([], ["a-b-c"]) == (0, 1, 0, 0.0)
    assert metrics.turn_prf(["a-b-c", "a-d-e"], ["a-b-c", "a-f-g", "a-h-i"]) == (1, 2, 1, pytest.approx(0.4))


def test_re_auprc_names_the_bad_gold_id():
    with pytest.raises(ValueError, match="gold label id 30 is outside 0..29"):
        metrics.re_auprc([30], [[1.0] * 30])


def test_ner_entities_in_the_shortest_inputs():
    # A two-character corpus still joins B-PS I-PS into one entity; a sentence of no characters has none.
    assert metrics.ner_entity_macro_f1([["B-PS", "I-PS"]], [["B-PS", "O"]]) == 0.0
    assert metrics.ner_entity_macro_f1([[]], [[]]) is None and metrics.ner_character_macro_f1([[]], [[]]) == 100.0


def test_f1_with_nothing_to_find_is_undefined_not_zero_nor_100():
    # scikit-learn returns 0 with an "ill-defined" warning; klue-viz reports undefined (docs/metrics.md, convention 2).
    assert metrics.re_micro_f1(["no_relation"], ["no_relation"]) is None
    assert metrics.sts_f1([1.0, 2.0], [1.0, 2.5]) is None
    # one positive anywhere makes it defined again: a false positive alone is 0.
    assert metrics.re_micro_f1(["no_relation"], ["per:title"]) == 0.0
    assert metrics.sts_f1([1.0, 2.0], [1.0, 3.5]) == 0.0


def test_an_sts_slice_without_similar_pairs_shows_f1_undefined_with_its_reason():
    from tests import cases

    sts = get_task("sts")
    gold = cases.gold_of("sts", cases.sts([1.0, 2.0, 4.0, 4.5], sources=["airbnb-rtt", "airbnb-rtt", "policy-rtt", "policy-rtt"]))
    preds = [{"guid": f"klue-sts-v1_dev_{k:05d}", "score": s} for k, s in enumerate([1.5, 2.5, 4.0, 3.5])]
    result = evaluate_bytes(sts, gold, jsonl(preds), "p.jsonl")
    assert result.scores.values["f1"] == 100.0  # the whole run has similar pairs: defined
    table = slice_table(sts, result.frames, next(s for s in sts.slices if s.key == "source")).set_index("value")
    assert table.loc["policy-rtt", "f1"] == 100.0
    # airbnb-rtt: no pair >= 3.0 on either side -> undefined (scikit-learn's ill-defined 0 is not shown as a score)
    assert table.loc["airbnb-rtt", "f1"] is None or np.isnan(table.loc["airbnb-rtt", "f1"])
    scores = sts.score(result.frames.subset(["klue-sts-v1_dev_00000", "klue-sts-v1_dev_00001"]))
    assert scores.values["f1"] is None and "no pair is similar" in scores.reasons["f1"]
