"""The metrics engine: public functions, slices and paired resampling against independent computations."""

from __future__ import annotations

import doctest
import json
import random
import subprocess
import sys
import warnings

import numpy as np
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
    g = [[t for c, t in zip(row["sentence"], row["tags"]) if c != " "]]
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
    table = slice_table(re_task, result.frames, next(s for s in re_task.slices if s.key == "source")).set_index("value")
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
    full = evaluate_bytes(nli, nli_gold, jsonl({"guid": r["guid"], "label": r["gold"]} for r in rows), "a.jsonl")
    half = evaluate_bytes(nli, nli_gold, jsonl({"guid": r["guid"], "label": "neutral"} for r in rows[:1000]), "b.jsonl")
    (comparison,) = compare_runs(nli, full.frames, half.frames, samples=50)
    expected = 100 - 100 * accuracy_score([r["gold"] for r in rows[:1000]], ["neutral"] * 1000)
    assert comparison.difference == pytest.approx(expected)


def test_an_interval_is_none_where_the_metric_is_undefined_on_every_resample(shared):
    sts = get_task("sts")
    gold = load_gold(sts, shared)
    result = evaluate_bytes(sts, gold, jsonl({"guid": r["guid"], "score": 3.0} for r in gold.rows), "p.jsonl")
    intervals = confidence_intervals(sts, result.frames, samples=50)
    assert intervals["pearsonr"] is None and intervals["f1"] is not None
