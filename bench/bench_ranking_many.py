"""Ranking 1,000 runs from kept results, in CPU seconds (issue 27.1: <= 10 CPU s).

    python bench/bench_ranking_many.py [--shared ../shared/klue] [--task nli] [--runs 1000] [--resamples 1000] [--repeat 3]

--runs runs of the task's dev set (the gold with seeded corruptions, bench_core.predictions) are scored and kept
(kept.keep, a SQLite store in a temporary folder) before the clock starts, as `klue-viz runs add` leaves them. Timed
(median of --repeat): `rank_runs` alone on the runs side by side (every official metric's 95% interval, the paired
differences to the best, every pair of runs tested for the rank intervals and the set for the best); and the path
the app's compare section takes from the store: each run loaded back (kept.load), the columns the comparison reads
(kept.column_frames), the runs side by side (run_table) and the ranking.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from bench_compare import REPO, kept_runs
from bench_core import cpu_time

from klue_viz.compare.ranking import compared_columns, rank_runs, run_table
from klue_viz.store import kept_results as kept


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--shared", default=str(REPO.parent / "shared" / "klue"))
    parser.add_argument("--task", default="nli")
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        store, load = kept_runs(args.task, Path(args.shared).resolve(), args.runs, Path(folder))

        def table_from_store():
            results = load()
            columns = compared_columns(results[0].task)
            return run_table(results, frames=None if columns is None else kept.column_frames(store, results, columns))

        table = table_from_store()
        ranked = cpu_time(lambda: rank_runs(table, samples=args.resamples), args.repeat)
        whole = cpu_time(lambda: rank_runs(table_from_store(), samples=args.resamples), args.repeat)
        ranking = rank_runs(table, samples=args.resamples)
    print(f"ranking {args.runs} kept {args.task} dev runs x {len(table.shared):,} examples, {args.resamples} resamples: "
          f"{ranked:.2f} CPU s for rank_runs, {whole:.2f} CPU s loading them from the store too (goal <= 10); "
          f"{len(ranking.best_set)} run(s) in the set for the best, {sum(r.tied_with_best for r in ranking.runs)} tied with it")
    return 0


if __name__ == "__main__":
    sys.exit(main())
