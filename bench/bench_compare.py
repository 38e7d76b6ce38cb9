"""Speed of comparing many runs and of the regression gate, in CPU seconds (goals of issue 16).

    python bench/bench_compare.py [--shared ../shared/klue] [--nli-runs 100] [--ner-runs 50] [--resamples 1000] [--repeat 3]

compare  ranking (every official metric, 95% intervals, paired differences to the best, Holm) +
         the example x run matrix (difficulty order) + the changes between consecutive runs, for
         --nli-runs runs of NLI dev and --ner-runs runs of NER dev (the gold with seeded corruptions,
         bench_core.predictions). The runs are scored and their frames built before the clock starts:
         the goal counts the work "after the kept results exist" (issue 15 keeps them, sufficient statistics
         included). Timed twice: with each run's statistics given (kept), and computing them from the
         frames (task.statistics, about 25-40 ms per NER run). Goal: <= 3 s each.
gate     `klue-viz gate --task ner` on NER dev with every slice (min-size 30, 1000 resamples) as a
         whole process, median of --repeat runs after one warm-up. Goal: <= 5 s.

CPU seconds: time.process_time for this process (every thread of it, so BLAS threads count), getrusage
for the child.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from bench_core import CHILD_ENV, cpu_time, predictions

from klue_viz.compare import consecutive_changes, matrix_frame, rank_runs, run_table
from klue_viz.evaluate import evaluate_bytes, load_gold
from klue_viz.tasks import get_task

REPO = Path(__file__).resolve().parents[1]


def runs(task_name: str, shared: Path, count: int) -> list:
    """`count` scored runs of the task's dev set, frames built (ckpt000, ckpt001, ...)."""
    task = get_task(task_name)
    gold = load_gold(task, shared)
    out = []
    for k in range(count):
        lines = [json.dumps(r, ensure_ascii=False) for r in predictions(task_name, gold, random.Random(k))]
        result = evaluate_bytes(task, gold, "\n".join(lines).encode("utf-8"), f"ckpt{k:03d}.jsonl", run=f"ckpt{k:03d}")
        result.frames  # noqa: B018 - built before timing: the kept results exist
        out.append(result)
    return out


def compare_once(results: list, resamples: int, statistics: list | None = None) -> None:
    table = run_table(results, statistics)
    rank_runs(table, samples=resamples)
    matrix_frame(table, "difficulty")
    consecutive_changes(table)


def gate_cpu(command: list[str], repeat: int) -> float:
    """Median CPU seconds (user + system) of the gate as a child process, after a warm-up; exit 0 (pass) or 1 (fail) both count."""
    times = []
    for k in range(repeat + 1):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        done = subprocess.run(command, capture_output=True, env=CHILD_ENV)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if done.returncode not in (0, 1):
            raise SystemExit(f"the gate failed: {done.stderr.decode()}")
        if k:
            times.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--shared", default=str(REPO.parent / "shared" / "klue"))
    parser.add_argument("--nli-runs", type=int, default=100)
    parser.add_argument("--ner-runs", type=int, default=50)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    shared = Path(args.shared).resolve()
    for task_name, count in (("nli", args.nli_runs), ("ner", args.ner_runs)):
        results = runs(task_name, shared, count)
        kept = [r.task.statistics(r.frames) for r in results]
        seconds = cpu_time(lambda: compare_once(results, args.resamples, kept), args.repeat)
        fresh = cpu_time(lambda: compare_once(results, args.resamples), args.repeat)
        n = len(results[0].frames.examples)
        print(f"compare {task_name} dev: {count} runs x {n:,} examples, {args.resamples} resamples: {seconds:.2f} CPU s with the runs' "
              f"statistics kept, {fresh:.2f} CPU s computing them from the frames (ranking + matrix + changes; goal <= 3)")
    with tempfile.TemporaryDirectory() as tmp:
        task = get_task("ner")
        gold = load_gold(task, shared)
        files = []
        for k in (1, 2):
            path = Path(tmp) / f"ner-{k}.jsonl"
            path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in predictions("ner", gold, random.Random(k))), encoding="utf-8")
            files.append(path)
        command = [sys.executable, "-m", "klue_viz.cli", "gate", "--task", "ner", "--gold", str(shared), "--baseline", str(files[0]),
                   "--candidate", str(files[1]), "--out", str(Path(tmp) / "gate.json")]
        seconds = gate_cpu(command, args.repeat)
        checked = json.loads((Path(tmp) / "gate.json").read_text(encoding="utf-8"))["checked"]
        print(f"klue-viz gate --task ner on NER dev, every slice ({checked} tests, 1000 resamples): {seconds:.2f} CPU s as a whole process (goal <= 5)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
