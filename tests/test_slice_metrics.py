"""Slice tables hold each slice's own official numbers, checked against a computation on that slice made here.

The expected values come from the official files read in the test (`tests/official.py`) and from
scikit-learn / seqeval / scipy, or by hand; a slice that showed the whole-run numbers, or another
slice's, fails.
"""

from __future__ import annotations

import json
import random
import warnings
from collections import defaultdict

import numpy as np
import pandas as pd
import pytest
from scipy.stats import pearsonr
from seqeval.metrics import classification_report
from seqeval.metrics import f1_score as seqeval_f1
from seqeval.scheme import IOB2
from sklearn.metrics import accuracy_score, auc, f1_score, precision_recall_curve

from klue_viz.metrics import official as metrics
from klue_viz.reading.demo import DEMO_BENCHMARK
from klue_viz.scoring.evaluate import evaluate_bytes, load_gold
from klue_viz.scoring.slicing import slice_table
from klue_viz.tasks import get_task
from klue_viz.tasks.base import Slice
from klue_viz.tasks.ner import tag_list
from tests import cases
from tests.cases import nli_run
from tests.conftest import jsonl
from tests.official import dp_sentences, json_list, ner_sentences

NER_TAGS = ["B-PS", "I-PS", "B-LC", "I-LC", "B-OG", "I-OG", "B-DT", "I-DT", "B-TI", "I-TI", "B-QT", "I-QT", "O"]


def by_value(table) -> dict:
    return {row["value"]: row for row in table.to_dict("records")}


def test_nli_accuracy_per_source_on_dev(shared):
    path = shared / "klue-nli-v1.1" / "klue-nli-v1.1_dev.json"
    official = json_list(path)
    rng = random.Random(8)
    # A different error rate per source, so that every slice has its own accuracy.
    rates = {"airbnb": 0.1, "NSMC": 0.3, "wikinews": 0.2, "policy": 0.05, "wikitree": 0.25, "wikipedia": 0.4}
    wrong = {"entailment": "neutral", "neutral": "contradiction", "contradiction": "entailment"}
    predicted = [wrong[r["gold_label"]] if rng.random() < rates[r["source"]] else r["gold_label"] for r in official]
    task = get_task("nli")
    result = evaluate_bytes(task, load_gold(task, path), jsonl({"guid": r["guid"], "label": p} for r, p in zip(official, predicted)), "p.jsonl")
    table = by_value(slice_table(task, result.frames, Slice("source", "Source")))
    hits, totals = defaultdict(int), defaultdict(int)
    for record, pred in zip(official, predicted):
        totals[record["source"]] += 1
        hits[record["source"]] += pred == record["gold_label"]
    assert set(table) == set(totals)
    for source, n in totals.items():
        row = table[source]
        assert row["n"] == n and row["errors"] == n - hits[source]
        assert row["accuracy"] == pytest.approx(100 * hits[source] / n, abs=1e-9), source
        assert row["error_rate"] == pytest.approx(100 * (n - hits[source]) / n)
    assert len({round(row["accuracy"], 6) for row in table.values()}) == len(table)


def test_a_slice_without_errors_shows_zero_errors_wherever_it_comes(shared):
    """Every source but the one met last in the file has errors: the error-free slice still gets its own row of zeros."""
    path = shared / "klue-nli-v1.1" / "klue-nli-v1.1_dev.json"
    official = json_list(path)
    last = list(dict.fromkeys(r["source"] for r in official))[-1]
    wrong = {"entailment": "neutral", "neutral": "contradiction", "contradiction": "entailment"}
    predicted = [wrong[r["gold_label"]] if r["source"] != last and k % 4 == 0 else r["gold_label"] for k, r in enumerate(official)]
    task = get_task("nli")
    result = evaluate_bytes(task, load_gold(task, path), jsonl({"guid": r["guid"], "label": p} for r, p in zip(official, predicted)), "p.jsonl")
    table = by_value(slice_table(task, result.frames, Slice("source", "Source")))
    n_last = sum(r["source"] == last for r in official)
    assert (table[last]["n"], table[last]["errors"], table[last]["accuracy"]) == (n_last, 0, 100.0)
    assert all(row["errors"] > 0 for value, row in table.items() if value != last)


@pytest.fixture(scope="module")
def ner_run(shared):
    path = shared / "klue-ner-v1.1" / "klue-ner-v1.1_dev.tsv"
    official = ner_sentences(path)
    rng = random.Random(21)
    predicted = []
    for sentence in official:
        rate = 0.02 if sentence["guid"].endswith("wikitree") else 0.08
        predicted.append([rng.choice(NER_TAGS) if rng.random() < rate else t for t in sentence["tags"]])
    task = get_task("ner")
    result = evaluate_bytes(task, load_gold(task, path), jsonl({"guid": s["guid"], "tags": t} for s, t in zip(official, predicted)), "p.jsonl")
    gold_seqs = [[t for c, t in zip(s["chars"], s["tags"]) if c != " "] for s in official]
    pred_seqs = [[t for c, t in zip(s["chars"], p) if c != " "] for s, p in zip(official, predicted)]
    return official, gold_seqs, pred_seqs, result


@pytest.mark.slow
def test_ner_per_type_f1_matches_seqeval_per_type_report(ner_run):
    _, gold_seqs, pred_seqs, result = ner_run
    report = classification_report(gold_seqs, pred_seqs, mode="strict", scheme=IOB2, output_dict=True, zero_division=0)
    table = by_value(slice_table(get_task("ner"), result.frames, Slice("label", "Entity type", level="entities")))
    assert set(table) == {"PS", "LC", "OG", "DT", "TI", "QT"}
    for label, row in table.items():
        assert row["precision"] == pytest.approx(100 * report[label]["precision"], abs=1e-9), label
        assert row["recall"] == pytest.approx(100 * report[label]["recall"], abs=1e-9), label
        assert row["f1"] == pytest.approx(100 * report[label]["f1-score"], abs=1e-9), label


@pytest.mark.slow
def test_ner_official_metrics_per_source_are_the_source_subsets(ner_run):
    official, gold_seqs, pred_seqs, result = ner_run
    table = by_value(slice_table(get_task("ner"), result.frames, Slice("source", "Source")))
    for source in ("wikitree", "nsmc"):
        keep = [k for k, s in enumerate(official) if s["guid"].endswith(source)]
        g = [gold_seqs[k] for k in keep]
        p = [pred_seqs[k] for k in keep]
        entity = 100 * seqeval_f1(g, p, average="macro", mode="strict", scheme=IOB2)
        flat_g = [t for s in g for t in ["O", *s, "O"]]
        flat_p = [t for s in p for t in ["O", *s, "O"]]
        character = 100 * f1_score(flat_g, flat_p, labels=NER_TAGS, average="macro", zero_division=1)
        assert table[source]["n"] == len(keep)
        assert table[source]["entity_macro_f1"] == pytest.approx(entity, abs=1e-9), source
        assert table[source]["character_macro_f1"] == pytest.approx(character, abs=1e-9), source
    # The two sources were corrupted at different rates: neither slice may show the whole-run number.
    whole = result.scores.values["entity_macro_f1"]
    assert table["wikitree"]["entity_macro_f1"] > whole > table["nsmc"]["entity_macro_f1"]


def test_sts_pearson_and_f1_per_source_on_dev(shared):
    path = shared / "klue-sts-v1.1" / "klue-sts-v1.1_dev.json"
    official = json_list(path)
    rng = np.random.default_rng(4)
    gold = np.array([r["labels"]["real-label"] for r in official], dtype=np.float64)
    noise = np.array([0.3 if r["source"].startswith("airbnb") else 1.2 for r in official])
    pred = np.clip(gold + rng.normal(0, 1, len(gold)) * noise, 0, 5)
    task = get_task("sts")
    result = evaluate_bytes(task, load_gold(task, path), jsonl({"guid": r["guid"], "score": float(p)} for r, p in zip(official, pred)), "p.jsonl")
    table = by_value(slice_table(task, result.frames, Slice("source", "Source")))
    sources = np.array([r["source"] for r in official])
    assert len(table) == 6
    for source, row in table.items():
        mask = sources == source
        assert row["n"] == int(mask.sum())
        assert row["pearsonr"] == pytest.approx(100 * pearsonr(pred[mask], gold[mask])[0], abs=1e-9), source
        assert row["f1"] == pytest.approx(100 * f1_score(gold[mask] >= 3, pred[mask] >= 3), abs=1e-9), source


def test_wos_per_slot_precision_recall_f1_by_hand():
    a, b, c = "식당-가격대-dontcare", "식당-지역-서울 동쪽", "관광-이름-남산"
    gold = cases.gold_of("wos", cases.wos([[[a, b], [a, b, c]]]))
    preds = [["식당-가격대-저렴", b], [a, b, "관광-이름-명동"]]
    task = get_task("wos")
    result = evaluate_bytes(task, gold, jsonl({"guid": "wos-v1_dev_00000", "turn": t, "state": s} for t, s in enumerate(preds)), "p.jsonl")
    table = by_value(slice_table(task, result.frames, Slice("domain_slot", "Domain-slot", level="slots")))
    # 식당-가격대: turn 0 wrong value (fp 1, fn 1), turn 1 right (tp 1) -> P 1/2, R 1/2, F1 1/2.
    assert (table["식당-가격대"]["precision"], table["식당-가격대"]["recall"], table["식당-가격대"]["f1"]) == (50.0, 50.0, 50.0)
    # 식당-지역: right in both turns -> 100; 관광-이름: one wrong value -> 0, recall 0.
    assert table["식당-지역"]["f1"] == 100.0 and table["식당-지역"]["errors"] == 0
    assert table["관광-이름"]["f1"] == 0.0 and table["관광-이름"]["n"] == 1
    # The run itself: turn F1s 1/2 and 2/3 -> slot F1 7/12; no turn is joint.
    assert result.scores.values == {"joint_goal_acc": 0.0, "slot_micro_f1": pytest.approx(100 * 7 / 12)}


def test_ynat_slice_by_news_section_rescores_each_section():
    labels = ["정치", "정치", "경제", "경제", "사회", "사회"]
    sections = ["정치", "정치", "정치", "경제", "경제", "경제"]
    preds = ["정치", "경제", "경제", "경제", "사회", "정치"]
    task = get_task("ynat")
    gold = cases.gold_of("ynat", cases.ynat(labels, sections))
    result = evaluate_bytes(task, gold, jsonl({"guid": f"ynat-v1_dev_{k:05d}", "label": p} for k, p in enumerate(preds)), "p.jsonl")
    table = by_value(slice_table(task, result.frames, Slice("predefined_news_category", "Section")))
    # Section 정치: gold (정치, 정치, 경제), pred (정치, 경제, 경제): 정치 tp 1 fn 1 -> 2/3; 경제 tp 1 fp 1 -> 2/3 -> 2/3.
    assert table["정치"]["macro_f1"] == pytest.approx(200 / 3) and table["정치"]["errors"] == 1
    # Section 경제: gold (경제, 사회, 사회), pred (경제, 사회, 정치): 경제 1; 사회 tp 1 fn 1 -> 2/3; 정치 fp 1 -> 0 -> 5/9.
    assert table["경제"]["macro_f1"] == pytest.approx(500 / 9) and table["경제"]["errors"] == 1
    # Whole run (for contrast): 정치 tp1 fp1 fn1 -> 1/2; 경제 tp2 fp1 -> 4/5; 사회 tp1 fn1 -> 2/3 -> (1/2 + 4/5 + 2/3) / 3.
    assert result.scores.values["macro_f1"] == pytest.approx(100 * (0.5 + 0.8 + 2 / 3) / 3)


def test_re_micro_f1_per_gold_relation_group_by_hand():
    gold_labels = ["per:title", "per:title", "org:founded", "no_relation", "no_relation"]
    predicted = ["per:title", "org:founded", "org:founded", "org:founded", "no_relation"]
    task = get_task("re")
    gold = cases.gold_of("re", cases.re_records(gold_labels))
    result = evaluate_bytes(task, gold, jsonl({"guid": f"klue-re-v1_dev_{k:05d}", "label": p} for k, p in enumerate(predicted)), "p.jsonl")
    table = by_value(slice_table(task, result.frames, Slice("relation_group", "Relation group")))
    # per (examples 0, 1): tp 1, fp 1 (org:founded), fn 1 -> 2/4. org (2): tp 1 -> 1.
    # no_relation (3, 4): fp 1, nothing else -> 0.
    assert table["per"]["micro_f1"] == pytest.approx(50.0) and table["per"]["errors"] == 1
    assert table["org"]["micro_f1"] == 100.0
    assert table["no_relation"]["micro_f1"] == 0.0 and table["no_relation"]["errors"] == 1
    # Whole run: tp 2, fp 2, fn 1 -> 4/7, which no slice shows.
    assert result.scores.values["micro_f1"] == pytest.approx(400 / 7)


@pytest.mark.slow
def test_dp_word_metrics_per_gold_relation_on_dev(shared):
    path = shared / "klue-dp-v1.1" / "klue-dp-v1.1_dev.tsv"
    official = dp_sentences(path)
    rng = random.Random(13)
    predictions = []
    for s in official:
        n = len(s["heads"])
        heads = [rng.randint(0, n) if rng.random() < 0.15 else h for h in s["heads"]]
        rels = [rng.choice(["NP", "VP", "NP_SBJ", "NP_AJT"]) if rng.random() < 0.1 else d for d in s["deprels"]]
        predictions.append({"guid": s["guid"], "head": heads, "deprel": rels})
    task = get_task("dp")
    result = evaluate_bytes(task, load_gold(task, path), jsonl(predictions), "p.jsonl")
    table = by_value(slice_table(task, result.frames, Slice("gold_deprel", "Gold relation", level="words")))
    kept = {"NP", "NP_AJT", "VP", "NP_SBJ", "VP_MOD", "NP_OBJ", "AP", "NP_CNJ", "NP_MOD", "VNP", "DP", "VP_AJT", "VNP_MOD", "NP_CMP", "VP_SBJ"}
    words = defaultdict(lambda: [0, 0, 0])  # gold relation -> [n, head right, head and merged relation right]
    for s, p in zip(official, predictions):
        for gh, ph, gd, pd_ in zip(s["heads"], p["head"], s["deprels"], p["deprel"]):
            merged_ok = (gd if gd in kept else "others") == (pd_ if pd_ in kept else "others")
            counts = words[gd]
            counts[0] += 1
            counts[1] += gh == ph
            counts[2] += gh == ph and merged_ok
    assert set(table) == set(words)
    for relation in ("NP_SBJ", "VP", "NP_AJT", "VP_CMP"):
        n, uas, las = words[relation]
        assert table[relation]["n"] == n
        assert table[relation]["uas_micro_f1"] == pytest.approx(100 * uas / n, abs=1e-9), relation
        assert table[relation]["las_micro_f1"] == pytest.approx(100 * las / n, abs=1e-9), relation


# ---- Per-slice metrics against scikit-learn and seqeval on the dev sets, and the table's shape ---


@pytest.fixture(scope="module")
def ner_gold(shared):
    return load_gold(get_task("ner"), shared / "klue-ner-v1.1" / "klue-ner-v1.1_dev.tsv")


@pytest.fixture(scope="module")
def nli_gold(shared):
    return load_gold(get_task("nli"), shared / "klue-nli-v1.1" / "klue-nli-v1.1_dev.json")


def test_slice_metrics_match_an_independent_computation_per_slice(shared):
    """NLI accuracy per source, DP LAS macro F1 per gold relation and RE AUPRC per source, each against scikit-learn."""
    nli = get_task("nli")
    data = json.loads((shared / "klue-nli-v1.1" / "klue-nli-v1.1_dev.json").read_text(encoding="utf-8"))
    rng = random.Random(8)
    preds = [rng.choice(["entailment", "neutral", "contradiction"]) if rng.random() < 0.3 else r["gold_label"] for r in data]
    result = evaluate_bytes(nli, load_gold(nli, shared), jsonl({"guid": r["guid"], "label": p} for r, p in zip(data, preds)), "p.jsonl")
    table = slice_table(nli, result.frames, next(s for s in nli.facts.slices if s.key == "source")).set_index("value")
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


def test_slice_table_counts_errors_rates_order_and_missing_values(nli_gold):
    nli = get_task("nli")
    result, hits = nli_run(nli_gold, 0.3, 6)
    frames = result.frames
    sources = frames.examples["source"].astype(object).to_numpy().copy()
    sources[:7] = None  # seven examples without a source form their own slice
    frames.examples["source"] = pd.array(sources, dtype="string")
    table = slice_table(nli, frames, next(s for s in nli.facts.slices if s.key == "source"))
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


@pytest.mark.slow
def test_entity_type_slices_match_seqeval_per_type(ner_gold):
    ner = get_task("ner")
    rng = random.Random(9)
    preds = [[t if rng.random() > 0.04 else rng.choice(list(metrics.NER_TAGS)) for t in tag_list(r["tags"])] for r in ner_gold.rows]
    result = evaluate_bytes(ner, ner_gold, jsonl({"guid": r["guid"], "tags": p} for r, p in zip(ner_gold.rows, preds)), "p.jsonl")
    g = [[t for c, t in zip(r["sentence"], tag_list(r["tags"])) if c != " "] for r in ner_gold.rows]
    p = [[t for c, t in zip(r["sentence"], tags) if c != " "] for r, tags in zip(ner_gold.rows, preds)]
    report = classification_report(g, p, mode="strict", scheme=IOB2, output_dict=True, zero_division=0)
    table = slice_table(ner, result.frames, next(s for s in ner.facts.slices if s.key == "label")).set_index("value")
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
    table = slice_table(wos, result.frames, next(s for s in wos.facts.slices if s.key == "domain_slot")).set_index("value")
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
    table = slice_table(nli, result.frames.subset([]), nli.facts.slices[0])
    assert table.empty and list(table.columns) == ["value", "n", "errors"]


def test_an_sts_slice_without_similar_pairs_shows_f1_undefined_with_its_reason():
    sts = get_task("sts")
    gold = cases.gold_of("sts", cases.sts([1.0, 2.0, 4.0, 4.5], sources=["airbnb-rtt", "airbnb-rtt", "policy-rtt", "policy-rtt"]))
    preds = [{"guid": f"klue-sts-v1_dev_{k:05d}", "score": s} for k, s in enumerate([1.5, 2.5, 4.0, 3.5])]
    result = evaluate_bytes(sts, gold, jsonl(preds), "p.jsonl")
    assert result.scores.values["f1"] == 100.0  # the whole run has similar pairs: defined
    table = slice_table(sts, result.frames, next(s for s in sts.facts.slices if s.key == "source")).set_index("value")
    assert table.loc["policy-rtt", "f1"] == 100.0
    # airbnb-rtt: no pair >= 3.0 on either side -> undefined (scikit-learn's ill-defined 0 is not shown as a score)
    assert table.loc["airbnb-rtt", "f1"] is None or np.isnan(table.loc["airbnb-rtt", "f1"])
    scores = sts.score(result.frames.subset(["klue-sts-v1_dev_00000", "klue-sts-v1_dev_00001"]))
    assert scores.values["f1"] is None and "no pair is similar" in scores.reasons["f1"]
