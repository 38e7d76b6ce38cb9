"""The metrics along a sequence of 30 NER dev runs, overall and per slice (issue 28, item 2), in CPU seconds and MB.

    python bench/bench_sequence.py [--shared ../shared/klue] [--runs 30] [--repeat 3]

The runs are the real NER dev gold with seeded corruptions (bench_core.predictions), written as files. Three figures:

cli    `klue-viz compare --task ner --out cmp.json` over the files as a whole process (reading the gold, scoring every
       run, the ranking with 1000 resamples, the changes and the sequence that `--out` holds): median CPU s (user +
       system, getrusage of the child) of --repeat runs after a warm-up, and the child's peak RSS. Goal: <= 8 CPU s,
       <= 1 GB.
kept   the app's path: each run scored and kept (kept.keep, SQLite in a temporary folder) before the clock starts, then
       loaded back (kept.load) as a page gets them, in a fresh child process each time. `new`: run_sequence over the
       columns it reads (kept.column_frames with sequence_columns), as "Along the sequence" now does; `old`: the
       sequence before issue 28 (each run's whole frames read, a slice table built per slice: slice_table, which
       recomputed the run's statistics for each slice). CPU s of the computation, the child's peak RSS and its RSS
       after, the results' frames dropped. Goal (new): <= 2 CPU s, memory back under 500 MB.
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_core import CHILD_ENV, predictions

REPO = Path(__file__).resolve().parents[1]


def write_runs(shared: Path, folder: Path, count: int) -> list[Path]:
    from klue_viz.scoring.evaluate import load_gold
    from klue_viz.tasks import get_task
    gold = load_gold(get_task("ner"), shared)
    paths = []
    for k in range(count):
        path = folder / f"ckpt-{(k + 1) * 500}.jsonl"
        path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in predictions("ner", gold, random.Random(k))), encoding="utf-8")
        paths.append(path)
    return paths


def cli_figures(shared: Path, paths: list[Path], out: Path, repeat: int) -> tuple[float, float]:
    """Median CPU s and the largest peak RSS (MB) of `klue-viz compare --out` over the files, after a warm-up."""
    command = [sys.executable, "-m", "klue_viz.cli.main", "compare", "--task", "ner", "--gold", str(shared),
               *[a for p in paths for a in ("--pred", str(p))], "--out", str(out)]
    times, peaks = [], []
    for k in range(repeat + 1):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        done = subprocess.run([sys.executable, "-c", "import resource, runpy, sys; sys.argv = sys.argv[1:]; "
                               "code = 0\ntry:\n    runpy.run_module('klue_viz.cli.main', run_name='__main__')\n"
                               "except SystemExit as e:\n    code = e.code\n"
                               "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, file=sys.stderr); sys.exit(code)",
                               *command[2:]], capture_output=True, text=True, env=CHILD_ENV, cwd=REPO)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if done.returncode != 0:
            raise SystemExit(done.stderr)
        if k:
            times.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
            peaks.append(float(done.stderr.strip().splitlines()[-1]))
    return statistics.median(times), max(peaks)


def keep_runs(shared: Path, paths: list[Path], database: Path) -> None:
    from klue_viz.scoring.evaluate import evaluate_with_frames, load_gold
    from klue_viz.store import kept_format, kept_scoring
    from klue_viz.store.annotations import Store
    from klue_viz.store.kept_results import KeptResults
    from klue_viz.tasks import get_task
    task = get_task("ner")
    gold = load_gold(task, shared)
    store = KeptResults(Store(str(database)))
    for path in paths:
        data = path.read_bytes()
        kept_scoring.keep(store, evaluate_with_frames(task, gold, data, path.name, run=path.stem), kept_format.sha256(data), gold.sha256, False)


def rss_mb() -> float:
    with open("/proc/self/status", encoding="ascii") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmRSS:")) / 1024


def child(how: str, shared: Path, paths: list[Path], database: Path) -> None:
    """In a fresh process: load the kept runs back, compute the sequence the `how` way, print CPU s, peak and after RSS."""
    from klue_viz.compare.ranking import PREDICTION_FEATURES, run_sequence, sequence_columns
    from klue_viz.scoring.evaluate import load_gold
    from klue_viz.scoring.slicing import slice_table
    from klue_viz.store import kept_format, kept_scoring
    from klue_viz.store.annotations import Store
    from klue_viz.store.kept_results import KeptResults
    from klue_viz.tasks import get_task
    task = get_task("ner")
    gold = load_gold(task, shared)
    store = KeptResults(Store(str(database)))
    results = [kept_scoring.load(store, task, kept_format.sha256(p.read_bytes()), gold.sha256, False, p.stem) for p in paths]
    assert all(r is not None for r in results)
    gc.collect()
    start = time.process_time()
    if how == "new":
        columns = sequence_columns(task)
        assert columns is not None
        found = run_sequence(task, results, kept_scoring.column_frames(store, results, columns))
        size = sum(len(v) for s in found.slices.values() for v in s.values())
    else:
        tables = [slice_table(task, r.frames, spec) for r in results for spec in task.facts.slices if spec.key not in PREDICTION_FEATURES]
        size = sum(len(t) for t in tables)
    cpu = time.process_time() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    for r in results:  # what a page keeps afterwards: the results, without the frames the sequence read
        r.__dict__.pop("frames", None)
    gc.collect()
    print(json.dumps({"cpu": cpu, "peak": peak, "after": rss_mb(), "size": size}))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--shared", default=str(REPO.parent / "shared" / "klue"))
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--child", choices=["new", "old"], help=argparse.SUPPRESS)
    parser.add_argument("--folder", help=argparse.SUPPRESS)
    args = parser.parse_args()
    shared = Path(args.shared)
    if args.child:
        folder = Path(args.folder)
        child(args.child, shared, sorted(folder.glob("*.jsonl")), folder / "kept.sqlite3")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        paths = write_runs(shared, folder, args.runs)
        cpu, peak = cli_figures(shared, paths, folder / "cmp.json", args.repeat)
        sequence = json.loads((folder / "cmp.json").read_text(encoding="utf-8"))["sequence"]
        print(f"cli   klue-viz compare --out, {args.runs} NER dev runs: {cpu:.2f} CPU s (median of {args.repeat}), peak {peak:.0f} MB; "
              f"sequence of {len(sequence['overall'])} overall metrics and {len(sequence['slices'])} slices in --out")
        keep_runs(shared, paths, folder / "kept.sqlite3")
        for how in ("old", "new"):
            figures = []
            for _ in range(args.repeat):
                done = subprocess.run([sys.executable, __file__, "--child", how, "--shared", str(shared), "--folder", str(folder)],
                                      capture_output=True, text=True, env=CHILD_ENV, cwd=REPO)
                if done.returncode != 0:
                    raise SystemExit(done.stderr)
                figures.append(json.loads(done.stdout.strip().splitlines()[-1]))
            cpu = statistics.median(f["cpu"] for f in figures)
            print(f"kept  {how}: {cpu:.2f} CPU s (median of {args.repeat}), peak {max(f['peak'] for f in figures):.0f} MB, "
                  f"after {max(f['after'] for f in figures):.0f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
