"""What reading an evaluation-harness log costs `klue-viz evaluate`, against the same predictions as a plain JSONL.

    python bench/bench_harness.py [--shared ../shared/klue] [--repeat 5] [--logs FOLDER]

lm-evaluation-harness (`--model dummy --log_samples`) is run once over the 3,000 pairs of the real KLUE-NLI dev file
(multiple choice, and generation; or `--logs` names a folder it wrote). The predictions klue-viz reads from the
multiple-choice log (argmax, softmax, computed here from the log) are written as a plain JSONL of `label` + `probs`,
and the generated answers of the generation log as a plain JSONL of `label`. A third pair times the answer parser
on realistic text: a JSONL of `generation` answers ("정답: 거짓입니다. 설명: ...") against the same labels.

Each pair is timed in CPU seconds (time.process_time) as `evaluate_file` in this process, the median of --repeat
runs each, and as a whole `klue-viz evaluate` process (children's getrusage). The goal: a 3,000-example log adds
at most 1 CPU s to `evaluate` over the plain JSONL.
"""

from __future__ import annotations

import argparse
import json
import math
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from harness_runs import KOREAN, run_lm_eval, write_tasks  # noqa: E402

from klue_viz.reading.prediction_files import expand_path  # noqa: E402
from klue_viz.scoring.evaluate import evaluate_file, load_gold  # noqa: E402
from klue_viz.tasks import get_task  # noqa: E402

BY_KOREAN = {v: k for k, v in KOREAN.items()}


def cpu(fn, repeat: int) -> float:
    """Median CPU seconds of fn() in this process."""
    times = []
    for _ in range(repeat):
        start = time.process_time()
        fn()
        times.append(time.process_time() - start)
    return statistics.median(times)


def process_cpu(command: list[str], repeat: int) -> float:
    """Median CPU seconds (user + system) of a whole child process."""
    times = []
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run(command, check=True, capture_output=True)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        times.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return statistics.median(times)


def plain_from_mc(log: Path, out: Path) -> int:
    """The multiple-choice log's predictions as label + probs, read here (argmax, softmax of the log-likelihoods)."""
    lines = []
    for row in map(json.loads, log.read_text(encoding="utf-8").splitlines()):
        scores = [float(pair[0]) for pair in row["filtered_resps"]]
        labels = [BY_KOREAN[row["arguments"][f"gen_args_{k}"]["arg_1"].strip()] for k in range(len(scores))]
        top = max(scores)
        weights = [math.exp(s - top) for s in scores]
        probs = {label: w / sum(weights) for label, w in zip(labels, weights)}
        lines.append(json.dumps({"guid": row["doc"]["guid"], "label": labels[scores.index(top)], "probs": probs}))
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return len(lines)


def plain_from_gen(log: Path, out: Path) -> int:
    """The generation log's first filter as plain records: the dummy model's text names no label, so `label` is the
    pseudo-label klue-viz scores an unreadable answer as (a wrong label of the same cost)."""
    rows = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    first = rows[0]["filter"]
    lines = [json.dumps({"guid": r["doc"]["guid"], "label": "neutral" if r["doc"]["gold_label"] != "neutral" else "entailment"})
             for r in rows if r["filter"] == first]
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return len(lines)


def generated_answers(gold_file: Path, labels_out: Path, text_out: Path) -> int:
    """Realistic generated answers (prefix, copula, explanation) and the same predictions as labels."""
    rows = json.loads(gold_file.read_text(encoding="utf-8"))
    wrong = {"entailment": "neutral", "neutral": "contradiction", "contradiction": "entailment"}
    labels, texts = [], []
    for k, row in enumerate(rows):
        label = row["gold_label"] if k % 3 else wrong[row["gold_label"]]
        labels.append(json.dumps({"guid": row["guid"], "label": label}))
        texts.append(json.dumps({"guid": row["guid"], "generation": f"정답: {KOREAN[label]}입니다. 설명: 전제는 '{row['premise'][:40]}'라고 말한다."},
                                ensure_ascii=False))
    labels_out.write_text("\n".join(labels) + "\n", encoding="utf-8")
    text_out.write_text("\n".join(texts) + "\n", encoding="utf-8")
    return len(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--shared", default=str(ROOT.parent / "shared" / "klue"))
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--logs", help="a folder lm_eval wrote with klue_nli_mc and klue_nli_gen over the whole dev file")
    args = parser.parse_args()
    shared = Path(args.shared)
    nli_dev = shared / "klue-nli-v1.1" / "klue-nli-v1.1_dev.json"
    work = Path(tempfile.mkdtemp(prefix="bench_harness_"))
    if args.logs:
        logs = Path(args.logs)
    else:
        write_tasks(work / "tasks", nli_dev)
        start = time.monotonic()
        logs = run_lm_eval(work / "tasks", work / "out", tasks=("klue_nli_mc", "klue_nli_gen"), limit=None)
        print(f"lm_eval --model dummy over {nli_dev.name}: {time.monotonic() - start:.0f} s wall, logs in {logs}")
    mc_log, gen_log = next(logs.glob("samples_klue_nli_mc_2*.jsonl")), next(logs.glob("samples_klue_nli_gen_2*.jsonl"))
    pairs = [("multiple-choice log", mc_log, work / "mc_plain.jsonl", plain_from_mc),
             ("generation log (2 filters; 1st)", gen_log, work / "gen_plain.jsonl", plain_from_gen)]
    text_file, labels_file = work / "answers_text.jsonl", work / "answers_labels.jsonl"
    generated_answers(nli_dev, labels_file, text_file)
    task = get_task("nli")
    gold = load_gold(task, shared)
    print(f"{'case':<34}{'n':>6}{'log/text CPU s':>16}{'plain CPU s':>13}{'added':>8}   (evaluate_file, median of {args.repeat})")
    for name, log, plain, make in pairs:
        n = make(log, plain)
        if log is gen_log:
            first = json.loads(log.read_text(encoding="utf-8").split("\n", 1)[0])["filter"]
            run = next(r for r in expand_path(log) if r.name.endswith(f"-{first}.jsonl"))
            log = work / run.name
            log.write_bytes(run.data)
        a, b = cpu(lambda p=log: evaluate_file(task, gold, p), args.repeat), cpu(lambda p=plain: evaluate_file(task, gold, p), args.repeat)
        print(f"{name:<34}{n:>6}{a:>16.3f}{b:>13.3f}{a - b:>8.3f}")
    a, b = cpu(lambda: evaluate_file(task, gold, text_file), args.repeat), cpu(lambda: evaluate_file(task, gold, labels_file), args.repeat)
    print(f"{'generated answers vs labels':<34}{3000:>6}{a:>16.3f}{b:>13.3f}{a - b:>8.3f}")
    cli = [sys.executable, "-m", "klue_viz.cli.main", "evaluate", "--task", "nli", "--gold", str(shared), "--pred"]
    a, b = process_cpu(cli + [str(mc_log)], args.repeat), process_cpu(cli + [str(work / "mc_plain.jsonl")], args.repeat)
    print(f"{'klue-viz evaluate, MC log (process)':<34}{3000:>6}{a:>16.3f}{b:>13.3f}{a - b:>8.3f}")


if __name__ == "__main__":
    main()
