"""Official metrics on the real KLUE v1.1 dev sets, against reference implementations computed here.

Predictions are the gold with seeded, realistic corruptions; the expected numbers come from
seqeval / scikit-learn / scipy or from the official formula written out independently below, on
gold read from the official files by `tests/official.py` (never from klue-viz's own gold rows).
"""

from __future__ import annotations

import random
import re
from collections import Counter

import numpy as np
import pytest
from scipy.stats import pearsonr
from seqeval.metrics import f1_score as seqeval_f1
from seqeval.scheme import IOB2
from sklearn.metrics import accuracy_score, f1_score

from klue_viz.scoring.evaluate import evaluate_bytes, load_gold
from klue_viz.tasks import get_task
from klue_viz.tasks.ner import tag_list
from tests.conftest import jsonl
from tests.official import dp_sentences, json_list, ner_sentences, wos_turns

NER_TAGS = ["B-PS", "I-PS", "B-LC", "I-LC", "B-OG", "I-OG", "B-DT", "I-DT", "B-TI", "I-TI", "B-QT", "I-QT", "O"]


@pytest.fixture(scope="module")
def ner_gold(shared):
    return load_gold(get_task("ner"), shared / "klue-ner-v1.1" / "klue-ner-v1.1_dev.tsv")


@pytest.fixture(scope="module")
def ner_official(shared):
    """The NER dev sentences read here from the TSV lines, independently of klue-viz's reader."""
    return ner_sentences(shared / "klue-ner-v1.1" / "klue-ner-v1.1_dev.tsv")


def test_ner_dev_set_is_read_whole(ner_gold, ner_official):
    assert len(ner_official) == 5000 and len(ner_gold.frame) == 5000 and not ner_gold.problems
    assert ner_gold.frame["guid"].tolist() == [s["guid"] for s in ner_official]
    assert ner_gold.frame["sentence"].tolist() == ["".join(s["chars"]) for s in ner_official]
    assert [tag_list(r["tags"]) for r in ner_gold.rows] == [s["tags"] for s in ner_official]
    assert ner_gold.frame["source"].value_counts().to_dict() == {"wikitree": 2534, "nsmc": 2466}
    # 2,878 spaces carry an entity tag in the file: 2,876 inside entities (I-), 2 starting one (B-).
    inside_spaces = sum(t != "O" for s in ner_official for c, t in zip(s["chars"], s["tags"]) if c == " ")
    assert inside_spaces == 2878


def corrupt_tags(tags: list[str], rng: random.Random, rate: float) -> list[str]:
    out = list(tags)
    for k in range(len(out)):
        if rng.random() < rate:
            out[k] = rng.choice(NER_TAGS)
    return out


def ner_reference(sentences, predicted_tags):
    """seqeval strict IOB2 entity F1 and sklearn character F1, over non-space characters, with [CLS]/[SEP] O pairs."""
    gold_seqs, pred_seqs, gold_chars, pred_chars = [], [], [], []
    for sentence, tags in zip(sentences, predicted_tags):
        g = [t for c, t in zip(sentence["chars"], sentence["tags"]) if c != " "]
        p = [t for c, t in zip(sentence["chars"], tags) if c != " "]
        gold_seqs.append(g)
        pred_seqs.append(p)
        gold_chars += ["O"] + g + ["O"]
        pred_chars += ["O"] + p + ["O"]
    entity = seqeval_f1(gold_seqs, pred_seqs, average="macro", mode="strict", scheme=IOB2) * 100
    character = f1_score(gold_chars, pred_chars, labels=NER_TAGS, average="macro", zero_division=True) * 100
    return entity, character


@pytest.mark.slow
@pytest.mark.parametrize("rate", [0.0, 0.02, 0.15])
def test_ner_matches_seqeval_and_sklearn_on_dev(ner_gold, ner_official, rate):
    rng = random.Random(int(rate * 1000))
    tags = [corrupt_tags(s["tags"], rng, rate) for s in ner_official]
    result = evaluate_bytes(get_task("ner"), ner_gold, jsonl({"guid": s["guid"], "tags": t} for s, t in zip(ner_official, tags)), "p.jsonl")
    entity, character = ner_reference(ner_official, tags)
    assert result.scores.values["entity_macro_f1"] == pytest.approx(entity, abs=1e-9)
    assert result.scores.values["character_macro_f1"] == pytest.approx(character, abs=1e-9)
    assert result.coverage.n_scored == 5000


def test_ner_entity_spans_match_tag_predictions(ner_gold, ner_official):
    """The same prediction given as entity spans and as character tags scores the same."""
    rng = random.Random(7)
    records_spans, records_tags = [], []
    for row in ner_official[:800]:
        sentence = "".join(row["chars"])
        entities, tags, k = [], ["O"] * len(sentence), 0
        while k < len(sentence):
            if sentence[k] != " " and rng.random() < 0.08:
                end = min(len(sentence), k + rng.randint(1, 4))
                label = rng.choice(["PS", "LC", "OG", "DT", "TI", "QT"])
                entities.append({"start": k, "end": end, "label": label})
                tags[k:end] = [f"B-{label}"] + [f"I-{label}"] * (end - k - 1)
                k = end + 1
            else:
                k += 1
        records_spans.append({"guid": row["guid"], "entities": entities})
        records_tags.append({"guid": row["guid"], "tags": tags})
    ner = get_task("ner")
    by_spans = evaluate_bytes(ner, ner_gold, jsonl(records_spans), "spans.jsonl").scores.values
    by_tags = evaluate_bytes(ner, ner_gold, jsonl(records_tags), "tags.jsonl").scores.values
    assert by_spans == by_tags
    expected = ner_reference(ner_official[:800], [r["tags"] for r in records_tags])
    assert by_spans["entity_macro_f1"] == pytest.approx(expected[0], abs=1e-9)
    assert by_spans["character_macro_f1"] == pytest.approx(expected[1], abs=1e-9)


@pytest.mark.slow
def test_ner_gold_entities_starting_on_a_space_are_not_gold_entities(ner_gold, shared):
    """Strict IOB2 after space removal drops the 2 dev entities that start on a space (klue-tasks.md §4)."""
    markup = dict(line[3:].split("\t", 1) for line in (shared / "klue-ner-v1.1" / "klue-ner-v1.1_dev.tsv").read_text(encoding="utf-8").split("\n")
                  if line.startswith("## klue-ner-v1"))
    tags = {s["guid"]: s["tags"] for s in ner_sentences(shared / "klue-ner-v1.1" / "klue-ner-v1.1_dev.tsv")}
    result = evaluate_bytes(get_task("ner"), ner_gold, jsonl({"guid": g, "tags": t} for g, t in tags.items()), "gold.jsonl")
    entities = result.frames.details["entities"]
    starts_on_space = [guid for guid, text in markup.items() if re.search(r"< [^<>]*:(?:PS|LC|OG|DT|TI|QT)>", text)]
    assert len(starts_on_space) == 2
    for guid in starts_on_space:
        n_markup_entities = len(re.findall(r"<[^<>]+:(?:PS|LC|OG|DT|TI|QT)>", markup[guid]))
        assert (entities[(entities["guid"] == guid) & (entities["side"] == "gold")].shape[0]) == n_markup_entities - 1
    assert result.scores.values == {"entity_macro_f1": 100.0, "character_macro_f1": 100.0}


@pytest.fixture(scope="module")
def dp_gold(shared):
    return load_gold(get_task("dp"), shared / "klue-dp-v1.1" / "klue-dp-v1.1_dev.tsv")


@pytest.fixture(scope="module")
def dp_official(shared):
    """The DP dev sentences read here from the TSV word lines, independently of klue-viz's reader."""
    return dp_sentences(shared / "klue-dp-v1.1" / "klue-dp-v1.1_dev.tsv")


def dp_reference(gold_rows, predictions):
    """The baseline's four DP metrics written out from klue-tasks.md §6, independently of klue_viz."""
    labels = ["NP", "NP_AJT", "VP", "NP_SBJ", "VP_MOD", "NP_OBJ", "AP", "NP_CNJ", "NP_MOD", "VNP", "DP", "VP_AJT", "VNP_MOD", "NP_CMP", "VP_SBJ"]
    index = {label: k for k, label in enumerate(labels)}
    gh, ph, gl, pl = [], [], [], []
    for row, pred in zip(gold_rows, predictions):
        for g_head, p_head, g_rel, p_rel in zip(row["heads"], pred["head"], row["deprels"], pred["deprel"]):
            gh.append(g_head)
            ph.append(p_head)
            g_cls = index.get(g_rel, 15)
            p_cls = index.get(p_rel, 15) if g_head == p_head else -2
            gl.append(g_cls)
            pl.append(p_cls)
    gh, ph, gl, pl = map(np.array, (gh, ph, gl, pl))
    return {
        "uas_macro_f1": f1_score(gh, ph, average="macro") * 100,
        "uas_micro_f1": (gh == ph).mean() * 100,
        "las_macro_f1": f1_score(gl, pl, average="macro") * 100,
        "las_micro_f1": ((gh == ph) & (gl == pl)).mean() * 100,
    }


def test_dp_dev_set_is_read_whole(dp_gold, dp_official):
    assert len(dp_official) == 2000 and len(dp_gold.frame) == 2000 and not dp_gold.problems
    assert sum(len(s["heads"]) for s in dp_official) == 22496 and int(dp_gold.frame["n_words"].sum()) == 22496
    assert all(s["heads"].count(0) == 1 for s in dp_official)
    assert dp_gold.frame["heads"].tolist() == [s["heads"] for s in dp_official]
    assert dp_gold.frame["deprels"].tolist() == [s["deprels"] for s in dp_official]
    assert dp_gold.frame["source"].value_counts().to_dict() == {"wikitree": 1000, "airbnb": 1000}


@pytest.mark.parametrize("rate", [0.0, 0.1])
def test_dp_matches_reference_on_dev(dp_gold, dp_official, rate):
    rng = random.Random(11)
    relations = ["NP", "NP_SBJ", "VP", "NP_OBJ", "VP_MOD", "NP_AJT", "VP_CMP", "X_AJT", "AP"]
    predictions = []
    for row in dp_official:
        n = len(row["heads"])
        heads = [rng.randint(0, n) if rng.random() < rate else h for h in row["heads"]]
        rels = [rng.choice(relations) if rng.random() < rate else d for d in row["deprels"]]
        predictions.append({"guid": row["guid"], "head": heads, "deprel": rels})
    result = evaluate_bytes(get_task("dp"), dp_gold, jsonl(predictions), "p.jsonl")
    expected = dp_reference(dp_official, predictions)
    for key, value in expected.items():
        assert result.scores.values[key] == pytest.approx(value, abs=1e-9), key
    assert len(result.frames.details["words"]) == 22496


def test_dp_merges_rare_relations_for_las(dp_gold, dp_official):
    """Predicting X_AJT for a gold VP_CMP (both past the 15th baseline label) counts as LAS-correct."""
    rows = [r for r in dp_official if "VP_CMP" in r["deprels"]][:1]
    row = rows[0]
    rels = ["X_AJT" if d == "VP_CMP" else d for d in row["deprels"]]
    result = evaluate_bytes(get_task("dp"), dp_gold, jsonl([{"guid": row["guid"], "head": row["heads"], "deprel": rels}]), "p.jsonl")
    assert result.scores.values["las_micro_f1"] == 100.0


@pytest.fixture(scope="module")
def sts_gold(shared):
    return load_gold(get_task("sts"), shared / "klue-sts-v1.1" / "klue-sts-v1.1_dev.json")


def test_sts_matches_scipy_and_sklearn_on_dev(sts_gold, shared):
    official = json_list(shared / "klue-sts-v1.1" / "klue-sts-v1.1_dev.json")
    rng = np.random.default_rng(3)
    gold = np.array([r["labels"]["real-label"] for r in official], dtype=np.float64)
    pred = np.clip(gold + rng.normal(0, 0.8, len(gold)), 0, 5)
    records = [{"guid": r["guid"], "score": float(p)} for r, p in zip(official, pred)]
    result = evaluate_bytes(get_task("sts"), sts_gold, jsonl(records), "p.jsonl")
    assert result.scores.values["pearsonr"] == pytest.approx(pearsonr(pred, gold)[0] * 100, abs=1e-9)
    assert result.scores.values["f1"] == pytest.approx(f1_score(gold >= 3, pred >= 3) * 100, abs=1e-9)
    assert len(official) == 519 and len(sts_gold.frame) == 519 and result.coverage.n_scored == 519
    # binary-label equals real-label >= 3 on all 519 dev pairs (klue-tasks.md §2)
    assert all(r["labels"]["binary-label"] == int(r["labels"]["real-label"] >= 3) for r in official)
    assert sts_gold.frame["source"].value_counts()["airbnb-sampled"] == 148


def test_nli_accuracy_and_hf_integer_ids_on_dev(shared):
    nli = get_task("nli")
    gold = load_gold(nli, shared / "klue-nli-v1.1" / "klue-nli-v1.1_dev.json")
    official = json_list(shared / "klue-nli-v1.1" / "klue-nli-v1.1_dev.json")
    assert len(official) == 3000 and len(gold.frame) == 3000
    assert sorted(Counter(r["gold_label"] for r in official).values()) == [1000, 1000, 1000]
    rng = random.Random(5)
    hf_order = ["entailment", "neutral", "contradiction"]
    predicted = [r["gold_label"] if rng.random() < 0.8 else rng.choice(hf_order) for r in official]
    records = [{"guid": r["guid"], "label": hf_order.index(p)} for r, p in zip(official, predicted)]
    result = evaluate_bytes(nli, gold, jsonl(records), "p.jsonl")
    assert result.scores.values["accuracy"] == pytest.approx(accuracy_score([r["gold_label"] for r in official], predicted) * 100, abs=1e-9)


def wos_reference(gold_turns, pred_turns):
    """Joint goal accuracy and the mean of per-turn TRADE F1, written out from BL-U compute_prf_for_wos."""
    joint, f1s = [], []
    for gold, pred in zip(gold_turns, pred_turns):
        joint.append(set(gold) == set(pred))
        if not gold:
            f1s.append(1.0 if not pred else 0.0)
            continue
        tp = len([g for g in gold if g in pred])
        fn = len(gold) - tp
        fp = len([p for p in pred if p not in gold])
        p = tp / (tp + fp) if tp + fp else 0
        r = tp / (tp + fn) if tp + fn else 0
        f1s.append(2 * p * r / (p + r) if p + r else 0)
    return 100 * np.mean(joint), 100 * np.mean(f1s)


def test_wos_sample_matches_reference(shared):
    wos = get_task("wos")
    gold = load_gold(wos, shared / "wos-v1.1")
    official = wos_turns(shared / "wos-v1.1" / "wos-v1.1_dev_sample_10.json")
    assert gold.frame["dialogue"].nunique() == 10 and len(gold.frame) == len(official)
    rng = random.Random(2)
    records, preds = [], []
    for row in official:
        state = [s for s in row["state"] if rng.random() > 0.1]
        if rng.random() < 0.2:
            state.append("식당-가격대-dontcare")
        if rng.random() < 0.05:
            state.append("택시-도착지-none")
        preds.append(state)
        records.append({"guid": row["dialogue"], "turn": row["turn"], "state": state})
    result = evaluate_bytes(wos, gold, jsonl(records), "p.jsonl")
    jga, slot_f1 = wos_reference([r["state"] for r in official], preds)
    assert result.scores.values["joint_goal_acc"] == pytest.approx(jga)
    assert result.scores.values["slot_micro_f1"] == pytest.approx(slot_f1)


def test_sts_gold_on_dev_is_the_real_label(sts_gold, shared):
    """Predicting the rounded `label` of each dev pair: 343 of 519 differ from `real-label`, so r is below 100
    (scipy's r of the two fields); a gold read from `label` would give exactly 100."""
    official = json_list(shared / "klue-sts-v1.1" / "klue-sts-v1.1_dev.json")
    rounded = np.array([r["labels"]["label"] for r in official], dtype=np.float64)
    real = np.array([r["labels"]["real-label"] for r in official], dtype=np.float64)
    assert int((rounded != real).sum()) == 343
    result = evaluate_bytes(get_task("sts"), sts_gold, jsonl({"guid": r["guid"], "score": float(s)} for r, s in zip(official, rounded)), "p.jsonl")
    assert result.scores.values["pearsonr"] == pytest.approx(100 * pearsonr(rounded, real)[0], abs=1e-9)
    assert result.scores.values["pearsonr"] < 99.99
    assert result.scores.values["f1"] == 100.0  # rounding to 0.1 moves no pair across 3.0 on dev
