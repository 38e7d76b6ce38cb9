"""CPU time of the discovery views on the real NER and DP dev sets, against scoring the same run.

    python bench/bench_discovery.py [--shared ../shared/klue] [--repeat 3]

For each dev set: two plausible runs (the gold with seeded corruptions, as in bench_core.py) are
scored once; then, in this process, the median CPU seconds of scoring a run (the reference), the
weak-slice search of one run, the paired search of two runs, and the suspect queue of two runs.
What the app computes when a panel opens is the search (cached per run); intervals are computed
for one chosen slice only.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_core import cpu_time, predictions

from klue_viz.scoring.evaluate import evaluate_bytes, load_gold
from klue_viz.tasks import get_task


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--shared", default=str(Path(__file__).resolve().parents[2] / "shared" / "klue"))
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    try:
        from klue_viz.discovery.suspects import suspects
    except ImportError:
        suspects = None
    for name in ("ner", "dp"):
        print(bench_task(name, args.shared, args.repeat, suspects))
    for name in ("ner", "dp"):
        print(bench_page(name, args.shared))
    return 0


def bench_page(name: str, shared: str) -> str:
    """CPU seconds of the task page's rerun when a panel is opened for the first time (empty caches), two real-size runs loaded.

    Streamlit's AppTest runs the page in this process, so process_time counts the page's own work;
    the reference is a rerun of the same page with nothing new to compute.
    """
    import os
    import tempfile

    from streamlit.testing.v1 import AppTest

    from klue_viz.ui.home import PAGE_FILES

    os.environ["KLUE_VIZ_DATA_DIR"] = shared
    # a fresh database each time: the uploaded runs are kept in it, and runs left from a former bench would be loaded
    # (and their panels computed) before the timed upload, which then measured nothing; nor may they reach the user's store
    os.environ["KLUE_VIZ_DB"] = os.path.join(tempfile.mkdtemp(prefix="bench-discovery-"), "annotations.sqlite3")
    task = get_task(name)
    gold = load_gold(task, shared)
    data = ["\n".join(json.dumps(p, ensure_ascii=False) for p in predictions(name, gold, random.Random(seed))).encode() for seed in (0, 1)]
    at = AppTest.from_file(str(Path(__file__).resolve().parents[1] / "app.py"), default_timeout=600).run()
    at.switch_page(PAGE_FILES[name]).run()
    timings = {}
    for label, action in (("upload two runs -> page with weak slices (scoring included)",
                           lambda: at.file_uploader(key="pred_upload").set_value([(f"run{k}.jsonl", d, "application/json") for k, d in enumerate(data)])),
                          ("rerun with nothing new (reference)", lambda: None),
                          ("slices where the runs differ", lambda: at.selectbox(key="discovery_against").set_value("run1")),
                          ("likely gold errors", lambda: at.segmented_control(key="discovery_view").set_value("Likely gold errors"))):
        start = time.process_time()
        action()
        at.run()
        timings[label] = time.process_time() - start
        assert not at.exception, at.exception
    return f"{name} page, first opening of each panel (CPU s): " + " · ".join(f"{k} {v:.2f}" for k, v in timings.items())


def bench_task(name: str, shared: str, repeat: int, suspects) -> str:
    from klue_viz.discovery.slices import paired_slices, weak_slices

    task = get_task(name)
    gold = load_gold(task, shared)
    data = ["\n".join(json.dumps(p, ensure_ascii=False) for p in predictions(name, gold, random.Random(seed))).encode() for seed in (0, 1)]
    first, second = (evaluate_bytes(task, gold, d, f"run{k}.jsonl") for k, d in enumerate(data))
    score = cpu_time(lambda: evaluate_bytes(task, gold, data[0], "run0.jsonl"), repeat)
    found = cpu_time(lambda: weak_slices(task, first.frames), repeat)
    paired = cpu_time(lambda: paired_slices(task, first, second), repeat)
    line = (f"{name}: {len(first.frames.examples):,} sentences · score a run {score:.2f} CPU s · weak slices {found:.2f} s "
            f"({found / score:.1f}x) · paired slices {paired:.2f} s ({paired / score:.1f}x)")
    if suspects is not None:
        queue = cpu_time(lambda: suspects(task, [first, second]), repeat)
        line += f" · suspects {queue:.2f} s ({queue / score:.1f}x)"
    return line


if __name__ == "__main__":
    sys.exit(main())
