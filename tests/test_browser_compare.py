"""End-to-end in headless Chromium: three NLI runs compared, a click on a matrix cell draws that example for that run."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from klue_viz.reading.demo import demo_runs
from tests.test_browser import ARTIFACTS, CHROMIUM, browser, open_task, page, start_server, stop_server, upload, wait_idle  # noqa: F401

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not Path(CHROMIUM).exists() and not os.environ.get("CI"), reason="no system chromium (CI installs it)"),
]

FIRST_CELL = """() => {
  const gd = document.querySelector('.st-key-cmp_matrix .js-plotly-plot');
  const xa = gd._fullLayout.xaxis, ya = gd._fullLayout.yaxis;
  const box = gd.querySelector('.nsewdrag').getBoundingClientRect();
  const example = gd.data[0].y[0], run = gd.data[0].x[1];
  return {example, run, x: box.left + xa.d2p(run), y: box.top + ya.d2p(example)};
}"""


@pytest.fixture
def own_server(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "KLUE_VIZ_DATA_DIR"}
    env["KLUE_VIZ_DB"] = str(tmp_path / "browser.sqlite3")
    process, url = start_server(env)
    yield url
    stop_server(process)


def third_run(tmp_path):
    """A third NLI run: the demo's roberta-base with every fourth label changed."""
    source = next(p for p in demo_runs("nli") if p.stem == "roberta-base")
    records = [json.loads(line) for line in source.read_text(encoding="utf-8").splitlines() if line.strip()]
    for k, record in enumerate(records):
        if k % 4 == 0:
            record["label"] = "neutral" if record["label"] != "neutral" else "contradiction"
    path = tmp_path / "roberta-base-ckpt-3.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in records), encoding="utf-8")
    return path


def test_three_runs_compared_and_a_clicked_matrix_cell_draws_that_example(own_server, page, tmp_path):  # noqa: F811 - the fixture
    open_task(page, own_server, "nli")
    upload(page, third_run(tmp_path))
    page.wait_for_selector(".st-key-cmp_on", timeout=90_000)
    page.locator(".st-key-cmp_on").get_by_text("Compare the 3 runs", exact=False).click()
    wait_idle(page)
    page.wait_for_selector(".st-key-cmp_matrix .js-plotly-plot", timeout=90_000)
    page.get_by_text("Ranking", exact=True).scroll_into_view_if_needed()  # a data grid draws its cells once on screen
    ranking = page.locator('[data-testid="stDataFrame"]').filter(has_text="tied with best")
    ranking.first.wait_for(timeout=30_000)
    assert ranking.count() == 1
    page.locator(".st-key-cmp_matrix").scroll_into_view_if_needed()
    wait_idle(page)
    cell = page.evaluate(FIRST_CELL)
    page.mouse.click(cell["x"], cell["y"])
    wait_idle(page)
    drawing = page.locator(f'.kv-compare-drawing[data-run="{cell["run"]}"] .kv-example[data-guid="{cell["example"]}"]')
    drawing.first.wait_for(timeout=60_000)
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "compare-nli.png"), full_page=True)
    assert drawing.count() >= 1
    assert cell["example"] in page.locator(".kv-head").filter(has_text=cell["example"]).first.inner_text()
