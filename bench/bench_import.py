"""Importing a large annotation file: CPU seconds for N records, and whether a save gets through meanwhile.

    python bench/bench_import.py [--records 200000] [--db sqlite|postgresql://...]

Writes N records (ynat guids, one annotator, a tag and a note each) as a JSONL export, then times
(process CPU seconds, so other work on a shared machine does not count) the three steps of
`klue-viz annotations import`: reading the file (annotations.files.parse), planning (Store.plan_import)
and applying (Store.apply_import). A second thread saves one record while the import is applied and
reports how long that save waited and whether it was written. Issue 19, item 18's goal: 200,000
records in at most 30 CPU s, a save let through, the file all-or-nothing.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import threading
import time
from pathlib import Path

from klue_viz.store.annotation_files import parse
from klue_viz.store.annotations import Annotation, Store


def export(n: int) -> bytes:
    lines = (json.dumps({"task": "ynat", "guid": f"ynat-v1_dev_{k:06d}", "turn": None, "run": "bert-base", "tags": ["ambiguous"],
                         "note": f"메모 {k}", "gold_wrong": False, "corrected_label": None, "annotator": "지민",
                         "updated_at": "2026-03-01T00:00:00+00:00"}, ensure_ascii=False) for k in range(n))
    return ("\n".join(lines) + "\n").encode("utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--db", default="")
    args = parser.parse_args()
    url = args.db or str(Path(tempfile.mkdtemp(prefix="klue-viz-bench-")) / "import.sqlite3")
    store = Store(url)
    data = export(args.records)
    started = time.process_time()
    items, problems = parse(data, "bench.jsonl")
    read = time.process_time() - started
    started = time.process_time()
    plan = store.plan_import(items)
    planned = time.process_time() - started
    waited: dict[str, float | str] = {}

    def save_meanwhile() -> None:
        time.sleep(0.5)
        begun = time.monotonic()
        try:
            Store(url).save(Annotation("nli", "klue-nli-v1.1_dev_00001", "run", "수아", tags=["negation"]))
            waited["save"] = time.monotonic() - begun
        except Exception as err:  # noqa: BLE001 - the figure is whether it got through
            waited["save"] = f"failed: {err}"

    saver = threading.Thread(target=save_meanwhile)
    saver.start()
    started, wall = time.process_time(), time.monotonic()
    written = store.apply_import(plan)
    applied, applied_wall = time.process_time() - started, time.monotonic() - wall
    saver.join()
    stored = len(store.find(task="ynat"))
    print(json.dumps({"records": args.records, "problems": len(problems), "written": written, "stored": stored,
                      "cpu_s": {"read": round(read, 2), "plan": round(planned, 2), "apply": round(applied, 2),
                                "total": round(read + planned + applied, 2)},
                      "apply_wall_s": round(applied_wall, 2), "save_during_import_waited_s": waited.get("save")}, indent=2))


if __name__ == "__main__":
    main()
