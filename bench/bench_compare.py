"""Speed of comparing many runs and of the regression gate, in CPU seconds (goals of issue 16).

    python bench/bench_compare.py [--shared ../shared/klue] [--nli-runs 100] [--ner-runs 50] [--resamples 1000] [--repeat 3] [--no-gate]

compare  ranking (every official metric, 95% intervals, paired differences to the best, Holm) +
         the example x run matrix (difficulty order) + the changes between consecutive runs, for
         --nli-runs runs of NLI dev and --ner-runs runs of NER dev (the gold with seeded corruptions,
         bench_core.predictions), on the path a user takes: each run is scored and kept (kept_scoring.keep, a
         SQLite store in a temporary folder) before the clock starts, then loaded back (kept_scoring.load) as the
         app gets it; run_table rebuilds each run's statistics from its kept frames, cut to the columns it
         reads (kept_scoring.column_frames, as the app's compare section does). Timed three times (median of
         --repeat): with the kept frames already read (the server's frame cache); including the reading
         of those columns from Parquet (a first view after a start: the goal); and, for reference,
         including the reading of the whole frames (the path before column_frames). Goal: <= 3 s.
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
from collections.abc import Callable
from pathlib import Path

from bench_core import CHILD_ENV, cpu_time, predictions

from klue_viz.compare.ranking import compared_columns, consecutive_changes, matrix_frame, rank_runs, run_table
from klue_viz.scoring.evaluate import RunResult, evaluate_with_frames, load_gold
from klue_viz.store import kept_format, kept_results, kept_scoring
from klue_viz.store.annotations import Store
from klue_viz.tasks import get_task

REPO = Path(__file__).resolve().parents[1]


def kept_runs(task_name: str, shared: Path, count: int, folder: Path) -> tuple[kept_results.KeptResults, Callable[[], list[RunResult]]]:
    """`count` runs of the task's dev set (ckpt000, ckpt001, ...) scored and kept; returns the store and how to load them back."""
    task = get_task(task_name)
    gold = load_gold(task, shared)
    store = kept_results.KeptResults(Store(str(folder / f"{task_name}.sqlite3")))
    shas = []
    for k in range(count):
        data = "\n".join(json.dumps(r, ensure_ascii=False) for r in predictions(task_name, gold, random.Random(k))).encode("utf-8")
        result = evaluate_with_frames(task, gold, data, f"ckpt{k:03d}.jsonl", run=f"ckpt{k:03d}")
        shas.append(kept_format.sha256(data))
        kept_scoring.keep(store, result, shas[-1], gold.sha256, False)

    def load() -> list[RunResult]:
        loaded = [kept_scoring.load(store, task, sha, gold.sha256, False, f"ckpt{k:03d}") for k, sha in enumerate(shas)]
        if any(r is None for r in loaded):
            raise SystemExit(f"a kept {task_name} run could not be loaded back")
        return [r for r in loaded if r is not None]
    return store, load


def compare_once(store: kept_results.KeptResults, results: list[RunResult], resamples: int, whole: bool) -> None:
    columns = compared_columns(results[0].task)
    table = run_table(results, frames=None if whole or columns is None else kept_scoring.column_frames(store, results, columns))
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
    parser.add_argument("--no-gate", action="store_true", help="time compare only")
    args = parser.parse_args()
    shared = Path(args.shared).resolve()
    for task_name, count in (("nli", args.nli_runs), ("ner", args.ner_runs)):
        with tempfile.TemporaryDirectory() as folder:
            store, load = kept_runs(task_name, shared, count, Path(folder))
            results = load()
            for r in results:
                r.frames  # noqa: B018 - read before timing: the frames are in the server's cache
            cached = cpu_time(lambda: compare_once(store, results, args.resamples, False), args.repeat)
            cold = cpu_time(lambda: compare_once(store, load(), args.resamples, False), args.repeat)
            whole = cpu_time(lambda: compare_once(store, load(), args.resamples, True), args.repeat)
            n = len(results[0].frames.examples)
        print(f"compare {task_name} dev: {count} kept runs x {n:,} examples, {args.resamples} resamples: {cached:.2f} CPU s with their "
              f"frames read, {cold:.2f} CPU s reading the columns it needs too (goal <= 3; ranking + matrix + changes), "
              f"{whole:.2f} CPU s reading the whole frames instead")
    if args.no_gate:
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        task = get_task("ner")
        gold = load_gold(task, shared)
        files = []
        for k in (1, 2):
            path = Path(tmp) / f"ner-{k}.jsonl"
            path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in predictions("ner", gold, random.Random(k))), encoding="utf-8")
            files.append(path)
        command = [sys.executable, "-m", "klue_viz.cli.main", "gate", "--task", "ner", "--gold", str(shared), "--baseline", str(files[0]),
                   "--candidate", str(files[1]), "--out", str(Path(tmp) / "gate.json")]
        seconds = gate_cpu(command, args.repeat)
        checked = json.loads((Path(tmp) / "gate.json").read_text(encoding="utf-8"))["checked"]
        print(f"klue-viz gate --task ner on NER dev, every slice ({checked} tests, 1000 resamples): {seconds:.2f} CPU s as a whole process (goal <= 5)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
