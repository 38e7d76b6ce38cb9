"""Speed of reading + matching + scoring each real KLUE dev set, against a reference implementation.

    python bench/bench_core.py [--shared ../shared/klue] [--repeat 5]

For every dev set in ../shared/klue it times, in this process: reading the gold file, reading a
prediction file (the gold with seeded corruptions), matching and scoring (all official metrics and
the per-example frames). In the same run it times a reference implementation on the same data
already parsed into lists: seqeval (entity F1) for NER, scikit-learn for the rest. Reported figures
are medians over the repeats, and the ratio ours / reference.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from scipy.stats import pearsonr
from seqeval.metrics import f1_score as seqeval_f1
from seqeval.scheme import IOB2
from sklearn.metrics import accuracy_score, f1_score

from klue_viz.evaluate import evaluate_file, load_gold
from klue_viz.tasks import get_task

NER_TAGS = ["B-PS", "I-PS", "B-LC", "I-LC", "B-OG", "I-OG", "B-DT", "I-DT", "B-TI", "I-TI", "B-QT", "I-QT", "O"]


def median_time(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def predictions(task_name: str, gold, rng: random.Random) -> list[dict]:
    """A plausible run: the gold with about 5% of the units changed."""
    out = []
    for row in gold.rows:
        if task_name == "ner":
            out.append({"guid": row["guid"], "tags": [t if rng.random() > 0.03 else rng.choice(NER_TAGS) for t in row["tags"]]})
        elif task_name == "dp":
            heads = [h if rng.random() > 0.08 else rng.randint(0, row["n_words"]) for h in row["heads"]]
            out.append({"guid": row["guid"], "head": heads, "deprel": row["deprels"]})
        elif task_name == "nli":
            out.append({"guid": row["guid"], "label": row["gold"] if rng.random() > 0.15 else "neutral"})
        elif task_name == "sts":
            out.append({"guid": row["guid"], "score": min(5.0, max(0.0, row["gold"] + rng.gauss(0, 0.6)))})
        elif task_name == "wos":
            out.append({"guid": row["dialogue"], "turn": row["turn"], "state": [s for s in row["gold_state"] if rng.random() > 0.05]})
    return out


def reference(task_name: str, gold, preds: list[dict]):
    """The reference implementation's work, on data already parsed into Python lists."""
    if task_name == "ner":
        g_seqs, p_seqs = [], []
        for row, pred in zip(gold.rows, preds):
            g_seqs.append([t for c, t in zip(row["sentence"], row["tags"]) if c != " "])
            p_seqs.append([t for c, t in zip(row["sentence"], pred["tags"]) if c != " "])
        return lambda: seqeval_f1(g_seqs, p_seqs, average="macro", mode="strict", scheme=IOB2)
    if task_name == "dp":
        gh = np.array([h for r in gold.rows for h in r["heads"]])
        ph = np.array([h for p in preds for h in p["head"]])
        return lambda: (f1_score(gh, ph, average="macro"), (gh == ph).mean())
    if task_name == "nli":
        g, p = [r["gold"] for r in gold.rows], [p["label"] for p in preds]
        return lambda: accuracy_score(g, p)
    if task_name == "sts":
        g, p = np.array([r["gold"] for r in gold.rows]), np.array([p["score"] for p in preds])
        return lambda: (pearsonr(p, g)[0], f1_score(g >= 3, p >= 3))
    if task_name == "wos":
        g, p = [set(r["gold_state"]) for r in gold.rows], [set(p["state"]) for p in preds]
        return lambda: accuracy_score([1] * len(g), [int(a == b) for a, b in zip(g, p)])
    raise KeyError(task_name)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--shared", default=str(Path(__file__).resolve().parents[2] / "shared" / "klue"))
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    shared = Path(args.shared)
    rng = random.Random(0)
    print(f"{'task':5} {'examples':>8} {'gold read':>10} {'pred+score':>11} {'total':>8} {'reference':>10} {'ratio':>7}")
    with tempfile.TemporaryDirectory() as tmp:
        for name in ("ner", "dp", "nli", "sts", "wos"):
            task = get_task(name)
            gold = load_gold(task, shared)
            preds = predictions(name, gold, rng)
            path = Path(tmp) / f"{name}.jsonl"
            path.write_text("".join(json.dumps(p, ensure_ascii=False) + "\n" for p in preds), encoding="utf-8")
            gold_time = median_time(lambda: load_gold(task, shared), args.repeat)
            score_time = median_time(lambda: evaluate_file(task, gold, path), args.repeat)
            ref_time = median_time(reference(name, gold, preds), args.repeat)
            total = gold_time + score_time
            print(f"{name:5} {len(gold.rows):8d} {gold_time:9.3f}s {score_time:10.3f}s {total:7.3f}s {ref_time:9.3f}s {total / ref_time:7.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
