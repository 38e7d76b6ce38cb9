"""Predictions scored against the wrong gold (issue 19, item 8): said prominently on the page and in the CLI."""

from __future__ import annotations

import json

import pytest
from streamlit.testing.v1 import AppTest

from klue_viz.cli.main import main
from klue_viz.reading.demo import DEMO_BENCHMARK, demo_runs
from klue_viz.scoring.evaluate import evaluate_bytes, load_gold
from klue_viz.tasks import get_task
from klue_viz.ui.home import PAGE_FILES
from tests.conftest import REPO
from tests.test_app import plain


def real_sts_run(shared) -> tuple[bytes, int, int]:
    """Real-dev STS predictions (2.5 for each real guid) followed by a demo run's lines: (bytes, real lines, demo lines),
    counted here. Since the demo's guids are its own (`-demo`), the real lines are the ones the demo gold lacks."""
    real = load_gold(get_task("sts"), shared)
    demo_lines = next(demo_runs("sts")).read_bytes().decode("utf-8").splitlines()
    lines = [json.dumps({"guid": r["guid"], "score": 2.5}) for r in real.rows] + demo_lines
    return "\n".join(lines).encode("utf-8"), len(real.rows), len(demo_lines)


def test_most_ids_missing_from_the_gold_is_called_the_wrong_gold(shared):
    data, n_real, n_demo = real_sts_run(shared)
    result = evaluate_bytes(get_task("sts"), load_gold(get_task("sts"), DEMO_BENCHMARK), data, "real.jsonl")
    assert result.coverage.n_extra == n_real and result.coverage.n_scored == n_demo
    total = n_real + n_demo
    assert result.wrong_gold.startswith(f"this looks like the wrong gold: {n_real:,} of the {total:,} predicted ids are not in it")
    right = evaluate_bytes(get_task("sts"), load_gold(get_task("sts"), shared), data, "real.jsonl")
    assert right.wrong_gold == ""


def test_the_cli_says_so_on_stderr(shared, tmp_path, capsys):
    data, _, _ = real_sts_run(shared)
    path = tmp_path / "real.jsonl"
    path.write_bytes(data)
    main(["evaluate", "--task", "sts", "--gold", str(DEMO_BENCHMARK), "--pred", str(path)])
    assert "this looks like the wrong gold" in capsys.readouterr().err


@pytest.mark.slow
def test_the_page_says_so_above_the_metrics(shared):
    data, _, _ = real_sts_run(shared)
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=120).run()
    at.switch_page(PAGE_FILES["sts"]).run()
    at.file_uploader(key="pred_upload").set_value([("real-dev.jsonl", data, "application/json")]).run()
    assert not at.exception
    assert any("this looks like the wrong gold" in plain(w.value) and "real-dev" in plain(w.value) for w in at.warning)
