"""Regenerate the harness-log fixtures under tests/data/harness/ with the real tools, over the embedded demo
(our own sentences, never KLUE's): run from the repository root with lm-evaluation-harness and inspect-ai installed.

- `eee_nli_mc.jsonl`: lm-evaluation-harness's dummy model on the demo KLUE-NLI file (multiple choice), converted
  to Every Eval Ever instance-level JSONL by every_eval_ever's own lm-eval adapter (EEE_WHEEL_DIR: the unpacked
  every-eval-ever wheel, which declares Python >= 3.12 but runs here).
- `inspect_nli.eval`: Inspect AI's mockllm/model on the first demo NLI pairs with the answers in INSPECT_OUTPUTS,
  written in Inspect's own .eval format.
- `lm_eval/`: the folder lm-evaluation-harness itself wrote (`--log_samples`) for its dummy model on the first
  LM_EVAL_LIMIT demo NLI pairs, multiple choice and generation: the samples logs and their results file, so the
  lm-eval reader is tested without the harness installed.

`python scripts/make_harness_fixtures.py lm_eval` remakes only the lm_eval/ folder (no EEE_WHEEL_DIR needed).
"""

from __future__ import annotations

import importlib
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from harness_runs import run_inspect, run_lm_eval, write_tasks  # noqa: E402

from klue_viz.reading.demo import DEMO_BENCHMARK  # noqa: E402

OUT = ROOT / "tests" / "data" / "harness"
DEMO_NLI = DEMO_BENCHMARK / "klue-nli-v1.1" / "klue-nli-v1.1_dev.json"
#: What the mock model answers on the first four demo pairs (test_harness_logs reads them by hand).
INSPECT_OUTPUTS = ["참입니다.", "정답: 거짓", "참 또는 거짓", "잘 모르겠습니다"]
#: Documents of the kept lm-eval logs (a few KB each).
LM_EVAL_LIMIT = 3


def lm_eval_fixture() -> None:
    """tests/data/harness/lm_eval/: the samples and results files of one dummy-model run, as the harness wrote them."""
    target = OUT / "lm_eval"
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        write_tasks(work / "tasks", DEMO_NLI)
        logs = run_lm_eval(work / "tasks", work / "out", tasks=("klue_nli_mc", "klue_nli_gen"), limit=LM_EVAL_LIMIT)
        shutil.rmtree(target, ignore_errors=True)
        target.mkdir(parents=True)
        for path in logs.glob("*.json*"):
            shutil.copy(path, target / path.name)


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    if sys.argv[1:] == ["lm_eval"]:
        lm_eval_fixture()
        for path in sorted((OUT / "lm_eval").iterdir()):
            print(path.relative_to(ROOT), path.stat().st_size, "bytes")
        return
    lm_eval_fixture()
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        write_tasks(work / "tasks", DEMO_NLI)
        logs = run_lm_eval(work / "tasks", work / "out", tasks=("klue_nli_mc",), limit=6)
        samples = next(logs.glob("samples_klue_nli_mc_*.jsonl"))
        sys.path.insert(0, os.environ["EEE_WHEEL_DIR"])  # not installable on Python 3.11: loaded from the unpacked wheel
        adapter = importlib.import_module("every_eval_ever.converters.lm_eval.instance_level_adapter").LMEvalInstanceLevelAdapter
        instances = adapter().transform_samples(samples, "klue-viz-fixture", "dummy", "klue_nli_mc")
        lines = [json.dumps(i.model_dump(mode="json", exclude_none=True), ensure_ascii=False) for i in instances]
        (OUT / "eee_nli_mc.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
        rows = json.loads(DEMO_NLI.read_text(encoding="utf-8"))[: len(INSPECT_OUTPUTS)]
        log = run_inspect(rows, INSPECT_OUTPUTS, work / "inspect", log_format="eval")
        shutil.copy(log, OUT / "inspect_nli.eval")
    for path in sorted(OUT.iterdir()):
        print(path.relative_to(ROOT), path.stat().st_size, "bytes")


if __name__ == "__main__":
    main()
