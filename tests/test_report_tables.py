"""The report's tables as the app shows them (issue 19, item 24): no all-zero outcome row, one 'gold' in the header,
calibration bins on the 0..100 scale of the accuracy beside them."""

from __future__ import annotations

import re

from klue_viz.outputs.report import build_report
from klue_viz.reading.demo import DEMO_BENCHMARK, demo_runs
from klue_viz.scoring.evaluate import evaluate_file, load_gold
from klue_viz.tasks import get_task


def rows_of(html: str, table_class: str) -> list[str]:
    table = re.search(rf"<table class='kv-table {table_class}'>(.*?)</table>", html, re.S).group(1)
    return re.findall(r"<tr><th>(.*?)</th>", table)


def test_the_ner_confusion_has_no_wrong_boundary_row_and_the_header_says_gold_once():
    task = get_task("ner")
    result = evaluate_file(task, load_gold(task, DEMO_BENCHMARK), next(demo_runs("ner")))
    html = build_report(task, [result], "Gold: the embedded demo set", samples=0, errors=1)
    assert "wrong boundary" not in rows_of(html, "kv-confusion")
    assert "gold: Gold:" not in html and "gold: the embedded demo set" in html


def test_calibration_bins_are_on_the_scale_of_the_accuracy():
    task = get_task("ynat")
    path = next(p for p in demo_runs("ynat") if "probs" in p.read_text(encoding="utf-8"))
    result = evaluate_file(task, load_gold(task, DEMO_BENCHMARK), path)
    html = build_report(task, [result], "demo", samples=0, errors=1)
    section = html[html.index("<h3>Calibration"):]
    table = section[section.index("<table"):section.index("</table>")]
    header = re.findall(r"<th>(.*?)</th>", table)
    assert header[:2] == ["low", "high"]
    first_row = re.findall(r"<td[^>]*>(.*?)</td>", table)[:2]
    assert first_row == ["0.00", "10.00"] or first_row == ["0", "10"], first_row
