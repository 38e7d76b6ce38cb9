"""Honest human baselines and the standard divergences to the votes (issue 27.4), against independent readings of the
real NLI dev file; divergences from scipy (scipy.stats.entropy, scipy.spatial.distance.jensenshannon)."""

from __future__ import annotations

import json
import random
from collections import Counter

import numpy as np
import pytest
from scipy.spatial.distance import jensenshannon
from scipy.stats import entropy

from klue_viz.cli.main import main
from klue_viz.core.crowd import vote_held_out
from tests.conftest import jsonl

ORDER = ("entailment", "neutral", "contradiction")
FIELDS = ("author", "label2", "label3", "label4", "label5")


def _held_out_by_hand(vote: str, others: list[str]) -> float:
    """1 when the vote is the others' majority, 1/k when it is one of k tied for most, 0 otherwise."""
    counts = Counter(others)
    top = max(counts.values())
    tied = [label for label, c in counts.items() if c == top]
    return 1.0 / len(tied) if vote in tied else 0.0


def test_each_vote_against_the_majority_of_the_others_ties_split_by_hand():
    rows = [{"gold": "neutral", "votes": ["neutral", "neutral", "entailment", "entailment", "neutral"]},
            {"gold": "entailment", "votes": ["entailment", "neutral", "contradiction", "entailment", "neutral"]},
            {"gold": "neutral", "votes": ["neutral"]}]  # one vote: no others to hold it against
    # row 1: n vs {n2,e2}: 1/2 each (x3), e vs {n3,e1}: 0 (x2) -> 1.5; row 2: e vs {e1,n2,c1}: 0 (x2),
    # n vs {e2,n1,c1}: 0 (x2), c vs {e2,n2}: 0 -> 0
    found = vote_held_out(rows)
    assert found is not None and found.n == 10 and found.value == pytest.approx(100 * 1.5 / 10)


@pytest.mark.slow
def test_held_out_baseline_and_divergences_on_the_real_dev_file(shared, tmp_path):
    records = json.loads((shared / "klue-nli-v1.1" / "klue-nli-v1.1_dev.json").read_text(encoding="utf-8"))
    rng = random.Random(5)
    run = []
    for k, record in enumerate(records):
        weights = [rng.random() ** 3 for _ in ORDER]
        probs = [w / sum(weights) for w in weights]
        if k % 7 == 0:
            probs = [0.0, 1.0, 0.0]  # one-hot: the KL reads the floor, the JS distance does not
        run.append({"guid": record["guid"], "label": ORDER[int(np.argmax(probs))], "probs": probs})
    pred = tmp_path / "probs.jsonl"
    pred.write_bytes(jsonl(run))
    out = tmp_path / "out.json"
    assert main(["evaluate", "--task", "nli", "--gold", str(shared), "--pred", str(pred), "--out", str(out)]) == 0
    written = json.loads(out.read_text(encoding="utf-8"))

    held = [_held_out_by_hand(r[f], [r[o] for o in FIELDS if o != f]) for r in records for f in FIELDS]
    assert written["human_held_out"] == {"metric": "accuracy", "value": pytest.approx(100 * sum(held) / len(held)), "n": len(held)}
    assert round(written["human_held_out"]["value"], 2) == 92.53  # the figure
    assert round(written["human"]["value"], 2) == 94.05  # the documented one stays beside it

    kl, jsd, h = [], [], []
    for record, item in zip(records, run):
        v = np.array([sum(record[f] == label for f in FIELDS) / 5 for label in ORDER])
        q = np.clip(np.array(item["probs"]), 1e-12, None)
        kl.append(entropy(v, q))
        jsd.append(jensenshannon(v, np.array(item["probs"])))
        h.append(entropy(v))
    found = written["runs"][0]["vote_divergence"]
    assert found["n"] == len(records)
    assert found["kl"] == pytest.approx(float(np.mean(kl)), rel=1e-9)
    assert found["jsd"] == pytest.approx(float(np.mean(jsd)), rel=1e-9)
    assert found["vote_entropy"] == pytest.approx(float(np.mean(h)), rel=1e-9)
    # the cross-entropy is the KL plus the votes' own entropy
    assert written["runs"][0]["vote_cross_entropy"]["value"] == pytest.approx(found["kl"] + found["vote_entropy"], rel=1e-9)
