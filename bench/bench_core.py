"""Speed of the scoring core on each real KLUE dev set, as ratios against references timed here.

    python bench/bench_core.py [--shared ../shared/klue] [--repeat 3] [--resamples 1000] [--tile 10]
                               [--sections score,bootstrap,process,memory]

All times are CPU seconds of this process (time.process_time) or of its children (getrusage), so
that other work on a shared machine does not count. Three sections:

score      reading the gold + matching and scoring a prediction file (the gold with seeded
           corruptions), in this process; reference: seqeval / scikit-learn on the same data
           already parsed into lists.
bootstrap  `confidence_intervals` and the paired `compare_runs` with --resamples resamples, on the
           dev set and on the dev set tiled 10 times (the ratio shows whether growth is linear);
           reference: one in-process evaluation of the same file (`evaluate_file`).
process    `klue-viz evaluate --task X` as a whole process; reference: a plain numpy scorer of the
           same files in its own process (PLAIN_SCORERS below: json/csv + numpy, no klue-viz).
memory     peak memory (GNU time -v) of `klue-viz evaluate` on NER dev tiled --tile times, against
           the plain numpy scorer on the same files.

Run it with an older checkout first on PYTHONPATH to get "before" figures (the bootstrap of the
old code is slow: use e.g. --resamples 20 and scale; every part of it is linear in resamples).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from klue_viz.core.results import Frames
from klue_viz.scoring.bootstrap import compare_runs, confidence_intervals
from klue_viz.scoring.evaluate import evaluate_file, load_gold
from klue_viz.tasks import get_task
from klue_viz.tasks.ner import tag_list

NER_TAGS = ["B-PS", "I-PS", "B-LC", "I-LC", "B-OG", "I-OG", "B-DT", "I-DT", "B-TI", "I-TI", "B-QT", "I-QT", "O"]
TASKS = ("ner", "dp", "nli", "sts", "wos")


def cpu_time(fn, repeat: int) -> float:
    """Median CPU seconds of `fn()` in this process."""
    times = []
    for _ in range(repeat):
        start = time.process_time()
        fn()
        times.append(time.process_time() - start)
    return statistics.median(times)


#: Children run as on a user's machine: Python keeps compiled bytecode (some sandboxes turn that off).
CHILD_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def child_cpu(command: list[str], repeat: int) -> float:
    """Median CPU seconds (user + system) of a child process, after one warm-up run that writes its bytecode."""
    subprocess.run(command, check=True, capture_output=True, env=CHILD_ENV)
    times = []
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run(command, check=True, capture_output=True, env=CHILD_ENV)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        times.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return statistics.median(times)


def predictions(task_name: str, gold, rng: random.Random) -> list[dict]:
    """A plausible run: the gold with about 5% of the units changed."""
    out = []
    for row in gold.rows:
        if task_name == "ner":
            out.append({"guid": row["guid"], "tags": [t if rng.random() > 0.03 else rng.choice(NER_TAGS) for t in tag_list(row["tags"])]})
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
    from scipy.stats import pearsonr
    from seqeval.metrics import f1_score as seqeval_f1
    from seqeval.scheme import IOB2
    from sklearn.metrics import accuracy_score, f1_score

    if task_name == "ner":
        g_seqs, p_seqs = [], []
        for row, pred in zip(gold.rows, preds):
            g_seqs.append([t for c, t in zip(row["sentence"], tag_list(row["tags"])) if c != " "])
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


def tiled(frames: Frames, times: int) -> Frames:
    """The frames repeated `times` times, each copy with its own guids (a data set `times` as large)."""
    def copy(frame: pd.DataFrame, k: int) -> pd.DataFrame:
        out = frame.copy()
        out["guid"] = out["guid"].astype(str) + f"#{k}"
        return out
    examples = pd.concat([copy(frames.examples, k) for k in range(times)], ignore_index=True)
    details = {name: pd.concat([copy(d, k) for k in range(times)], ignore_index=True) for name, d in frames.details.items()}
    return Frames(examples, details)


def score_section(shared: Path, tmp: Path, repeat: int) -> None:
    rng = random.Random(0)
    print(f"\n[score] CPU s, median of {repeat}")
    print(f"{'task':5} {'examples':>8} {'gold read':>10} {'pred+score':>11} {'total':>8} {'reference':>10} {'ratio':>7}")
    for name in TASKS:
        task = get_task(name)
        gold = load_gold(task, shared)
        preds = predictions(name, gold, rng)
        path = tmp / f"{name}.jsonl"
        path.write_text("".join(json.dumps(p, ensure_ascii=False) + "\n" for p in preds), encoding="utf-8")
        gold_time = cpu_time(lambda: load_gold(task, shared), repeat)
        score_time = cpu_time(lambda: evaluate_file(task, gold, path), repeat)
        ref_time = cpu_time(reference(name, gold, preds), repeat)
        total = gold_time + score_time
        print(f"{name:5} {len(gold.rows):8d} {gold_time:10.3f} {score_time:11.3f} {total:8.3f} {ref_time:10.3f} {total / ref_time:7.2f}")


def bootstrap_section(shared: Path, tmp: Path, resamples: int, tile: int) -> None:
    try:
        import scipy.sparse  # noqa: F401  (imported once by the first bootstrap of a session; not timed here)
    except ImportError:
        pass
    print(f"\n[bootstrap] CPU s for {resamples} resamples; reference = one in-process evaluation (read gold + score)")
    print(f"{'task':5} {'examples':>8} {'eval':>7} {'CI':>7} {'paired':>7} {'CI x' + str(tile):>8} {'growth':>7} {'CI/eval':>8}")
    for name in TASKS:
        task = get_task(name)
        gold = load_gold(task, shared)
        runs = []
        for seed in (1, 2):
            path = tmp / f"{name}-{seed}.jsonl"
            path.write_text("".join(json.dumps(p, ensure_ascii=False) + "\n" for p in predictions(name, gold, random.Random(seed))), encoding="utf-8")
            runs.append(evaluate_file(task, gold, path))
        one = cpu_time(lambda: evaluate_file(task, load_gold(task, shared), tmp / f"{name}-1.jsonl"), 1)
        ci = cpu_time(lambda: confidence_intervals(task, runs[0].frames, samples=resamples), 1)
        paired = cpu_time(lambda: compare_runs(task, runs[0].frames, runs[1].frames, samples=resamples), 1)
        big = tiled(runs[0].frames, tile)
        ci_big = cpu_time(lambda: confidence_intervals(task, big, samples=resamples), 1)
        print(f"{name:5} {len(runs[0].frames.examples):8d} {one:7.2f} {ci:7.2f} {paired:7.2f} {ci_big:8.2f} {ci_big / ci:7.1f} {ci / one:8.2f}")


#: Plain scorers: read the gold file and a prediction JSONL with json/csv and compute the headline metric with numpy.
PLAIN_SCORERS = {
    "ner": """
import json, sys, numpy as np
tags = ["B-DT","I-DT","B-LC","I-LC","B-OG","I-OG","B-PS","I-PS","B-QT","I-QT","B-TI","I-TI","O"]; tid = {t: i for i, t in enumerate(tags)}
gold = {}
for block in open(sys.argv[1], encoding="utf-8").read().split("\\n\\n"):
    lines = block.split("\\n"); head = [l for l in lines if l.startswith("## klue")]
    if head: gold[head[0][3:].split("\\t")[0]] = [l.split("\\t") for l in lines if l and not l.startswith("##")]
g, p = [], []
for line in open(sys.argv[2], encoding="utf-8"):
    r = json.loads(line); rows = gold[r["guid"]]
    for (c, t), q in zip(rows, r["tags"]):
        if c != " ": g.append(tid[t]); p.append(tid[q])
    g.append(12); p.append(12)
g, p = np.array(g), np.array(p)
tp = np.bincount(g[g == p], minlength=13); fp = np.bincount(p[g != p], minlength=13); fn = np.bincount(g[g != p], minlength=13)
print(np.mean(np.where(2 * tp + fp + fn > 0, 2 * tp / np.maximum(2 * tp + fp + fn, 1), 1.0)))
""",
    "dp": """
import json, sys, numpy as np
gold = {}; guid = None
for line in open(sys.argv[1], encoding="utf-8"):
    if line.startswith("## klue-dp"): guid = line[3:].split("\\t")[0]; gold[guid] = []
    elif line.strip() and not line.startswith("##"): gold[guid].append(int(line.split("\\t")[4]))
g, p = [], []
for line in open(sys.argv[2], encoding="utf-8"):
    r = json.loads(line); g += gold[r["guid"]]; p += r["head"]
g, p = np.array(g), np.array(p); k = max(g.max(), p.max()) + 1
tp = np.bincount(g[g == p], minlength=k); fp = np.bincount(p[g != p], minlength=k); fn = np.bincount(g[g != p], minlength=k)
seen = tp + fp + fn > 0
print((2 * tp / np.maximum(2 * tp + fp + fn, 1))[seen].mean(), (g == p).mean())
""",
    "nli": """
import json, sys, numpy as np
gold = {r["guid"]: r["gold_label"] for r in json.load(open(sys.argv[1], encoding="utf-8"))}
pairs = [(gold[r["guid"]], r["label"]) for r in map(json.loads, open(sys.argv[2], encoding="utf-8"))]
print(np.mean([a == b for a, b in pairs]))
""",
    "sts": """
import json, sys, numpy as np
gold = {r["guid"]: r["labels"]["real-label"] for r in json.load(open(sys.argv[1], encoding="utf-8"))}
pairs = np.array([(gold[r["guid"]], r["score"]) for r in map(json.loads, open(sys.argv[2], encoding="utf-8"))])
g, p = pairs[:, 0], pairs[:, 1]; gb, pb = g >= 3, p >= 3
print(np.corrcoef(g, p)[0, 1], 2 * (gb & pb).sum() / (gb.sum() + pb.sum()))
""",
    "wos": """
import json, sys, numpy as np
gold = {}
for d in json.load(open(sys.argv[1], encoding="utf-8")):
    turns = [t for t in d["dialogue"] if t["role"] == "user"]
    for k, t in enumerate(turns): gold[(d["guid"], k)] = set(t["state"])
hits = [gold[(r["guid"], r["turn"])] == set(r["state"]) for r in map(json.loads, open(sys.argv[2], encoding="utf-8"))]
print(np.mean(hits))
""",
}
GOLD_FILES = {
    "ner": "klue-ner-v1.1/klue-ner-v1.1_dev.tsv", "dp": "klue-dp-v1.1/klue-dp-v1.1_dev.tsv", "nli": "klue-nli-v1.1/klue-nli-v1.1_dev.json",
    "sts": "klue-sts-v1.1/klue-sts-v1.1_dev.json", "wos": "wos-v1.1/wos-v1.1_dev_sample_10.json",
}


def process_section(shared: Path, tmp: Path, repeat: int) -> None:
    print(f"\n[process] CPU s of a whole process, median of {repeat}; reference = a plain numpy scorer in its own process")
    print(f"{'task':5} {'klue-viz':>9} {'plain':>7} {'ratio':>7}")
    for name in TASKS:
        task = get_task(name)
        gold = load_gold(task, shared)
        pred = tmp / f"{name}-proc.jsonl"
        pred.write_text("".join(json.dumps(p, ensure_ascii=False) + "\n" for p in predictions(name, gold, random.Random(3))), encoding="utf-8")
        script = tmp / f"plain_{name}.py"
        script.write_text(PLAIN_SCORERS[name], encoding="utf-8")
        command = [sys.executable, "-m", "klue_viz.cli.main", "evaluate", "--task", name, "--gold", str(shared / GOLD_FILES[name]), "--pred", str(pred)]
        ours = child_cpu(command, repeat)
        plain = child_cpu([sys.executable, str(script), str(shared / GOLD_FILES[name]), str(pred)], repeat)
        print(f"{name:5} {ours:9.2f} {plain:7.2f} {ours / plain:7.2f}")


def max_rss_mb(command: list[str]) -> float:
    """Peak resident memory of a child process in MB (GNU time -v)."""
    out = subprocess.run(["/usr/bin/time", "-v", *command], check=True, capture_output=True, text=True, env=CHILD_ENV).stderr
    line = next(line for line in out.splitlines() if "Maximum resident set size" in line)
    return int(line.rsplit(":", 1)[1]) / 1024


def memory_section(shared: Path, tmp: Path, tile: int) -> None:
    """`klue-viz evaluate` on NER dev tiled `tile` times (new guids), against the plain numpy scorer on the same files."""
    text = (shared / GOLD_FILES["ner"]).read_text(encoding="utf-8")
    header, _, body = text.partition("\n## klue")
    blocks = ("## klue" + body).split("\n\n")
    gold_path, pred_path = tmp / "ner-tiled.tsv", tmp / "ner-tiled.jsonl"
    rng = random.Random(4)
    with gold_path.open("w", encoding="utf-8") as gold_file, pred_path.open("w", encoding="utf-8") as pred_file:
        gold_file.write(header + "\n")
        for k in range(tile):
            for block in blocks:
                lines = [line for line in block.split("\n") if line]
                if not lines:
                    continue
                guid, _, sentence = lines[0][3:].partition("\t")
                guid = guid.replace("_dev_", f"_dev{k}_")
                gold_file.write("\n".join([f"## {guid}\t{sentence}", *lines[1:]]) + "\n\n")
                tags = [line.split("\t")[1] if rng.random() > 0.03 else rng.choice(NER_TAGS) for line in lines[1:]]
                pred_file.write(json.dumps({"guid": guid, "tags": tags}, ensure_ascii=False) + "\n")
    script = tmp / "plain_ner.py"
    script.write_text(PLAIN_SCORERS["ner"], encoding="utf-8")
    ours = max_rss_mb([sys.executable, "-m", "klue_viz.cli.main", "evaluate", "--task", "ner", "--gold", str(gold_path), "--pred", str(pred_path)])
    cpu = child_cpu([sys.executable, "-m", "klue_viz.cli.main", "evaluate", "--task", "ner", "--gold", str(gold_path), "--pred", str(pred_path)], 1)
    plain = max_rss_mb([sys.executable, str(script), str(gold_path), str(pred_path)])
    print(f"\n[memory] NER dev x{tile} ({tile * 5000} sentences): klue-viz evaluate peak {ours:.0f} MB, {cpu:.1f} CPU s; "
          f"plain numpy scorer peak {plain:.0f} MB; ratio {ours / plain:.2f}")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--shared", default=str(Path(__file__).resolve().parents[2] / "shared" / "klue"))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--tile", type=int, default=10)
    parser.add_argument("--sections", default="score,bootstrap,process,memory")
    args = parser.parse_args()
    shared = Path(args.shared)
    sections = set(args.sections.split(","))
    with tempfile.TemporaryDirectory() as tmp:
        if "score" in sections:
            score_section(shared, Path(tmp), args.repeat)
        if "bootstrap" in sections:
            bootstrap_section(shared, Path(tmp), args.resamples, args.tile)
        if "process" in sections:
            process_section(shared, Path(tmp), args.repeat)
        if "memory" in sections:
            memory_section(shared, Path(tmp), args.tile)
    return 0


if __name__ == "__main__":
    sys.exit(main())
