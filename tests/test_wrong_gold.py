"""Predictions scored against the wrong gold (issue 19, item 8): said prominently on the page and in the CLI."""

from __future__ import annotations

import json

import pytest
from streamlit.testing.v1 import AppTest

from klue_viz.cli import main
from klue_viz.demo import DEMO_BENCHMARK
from klue_viz.evaluate import evaluate_bytes, load_gold
from klue_viz.tasks import get_task
from klue_viz.ui.home import PAGE_FILES
from tests.conftest import REPO
from tests.test_app import plain


def real_sts_run(shared) -> tuple[bytes, int, int]:
    """Real-dev STS predictions (their gold scores as predictions) and how many of their guids the demo gold has, counted here."""
    real = load_gold(get_task("sts"), shared)
    demo = {r["guid"] for r in load_gold(get_task("sts"), DEMO_BENCHMARK).rows}
    data = "\n".join(json.dumps({"guid": r["guid"], "score": 2.5}) for r in real.rows).encode("utf-8")
    return data, len(real.rows), sum(r["guid"] in demo for r in real.rows)


def test_most_ids_missing_from_the_gold_is_called_the_wrong_gold(shared):
    data, n, shared_ids = real_sts_run(shared)
    result = evaluate_bytes(get_task("sts"), load_gold(get_task("sts"), DEMO_BENCHMARK), data, "real.jsonl")
    assert result.coverage.n_extra == n - shared_ids and result.coverage.n_scored == shared_ids
    assert result.wrong_gold.startswith(f"this looks like the wrong gold: {n - shared_ids:,} of the {n:,} predicted ids are not in it")
    right = evaluate_bytes(get_task("sts"), load_gold(get_task("sts"), shared), data, "real.jsonl")
    assert right.wrong_gold == ""


def test_the_cli_says_so_on_stderr(shared, tmp_path, capsys):
    data, n, _ = real_sts_run(shared)
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
