"""The embedded demo: a small KLUE-like set in the official formats and two prediction runs per task.

Written for klue-viz (no KLUE data); `scripts/make_demo.py` regenerates it.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

#: The demo data lives in klue_viz/demo/, a data folder (no Python) beside the floors.
DEMO_DIR = Path(__file__).resolve().parent.parent / "demo"
#: Laid out like the official `klue_benchmark/` folder, so it loads through the same code as real data.
DEMO_BENCHMARK = DEMO_DIR / "klue_benchmark"
#: In every demo guid, after the example number (`klue-sts-v1_dev_00001-demo`, `klue-ner-v1_dev_00001-demo-nsmc`,
#: WoS turns `wos-v1_dev_00001-demo-2`): no demo guid is a real KLUE guid, so real predictions never half-match the demo.
DEMO_MARK = "-demo"


def demo_runs(task: str) -> Iterator[Path]:
    """The demo prediction files of a task, in name order."""
    yield from sorted((DEMO_DIR / "runs" / task).glob("*.json*"))
