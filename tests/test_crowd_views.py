"""The human baseline on the task pages (AppTest) and in the report, counted by hand from the demo gold files."""

from __future__ import annotations

import json

import pytest
from scipy.stats import pearsonr
from streamlit.testing.v1 import AppTest

from klue_viz.drawing.markup import esc
from klue_viz.outputs.report import build_report
from klue_viz.reading.demo import DEMO_BENCHMARK, demo_runs
from klue_viz.scoring.evaluate import evaluate_file, load_gold
from klue_viz.tasks import get_task
from klue_viz.ui.home import PAGE_FILES
from tests.conftest import REPO

pytestmark = pytest.mark.slow

VOTE_FIELDS = ("author", "label2", "label3", "label4", "label5")


def demo_nli_agreement() -> float:
    records = json.loads((DEMO_BENCHMARK / "klue-nli-v1.1" / "klue-nli-v1.1_dev.json").read_text(encoding="utf-8"))
    votes = [r[f] == r["gold_label"] for r in records for f in VOTE_FIELDS]
    return 100 * sum(votes) / len(votes)


def demo_nli_held_out() -> float:
    """Each vote against the majority of the other four, a tie for most split (1/k for one of k tied labels)."""
    records = json.loads((DEMO_BENCHMARK / "klue-nli-v1.1" / "klue-nli-v1.1_dev.json").read_text(encoding="utf-8"))
    scores = []
    for r in records:
        for f in VOTE_FIELDS:
            others = [r[o] for o in VOTE_FIELDS if o != f]
            top = max(others.count(x) for x in others)
            tied = {x for x in others if others.count(x) == top}
            scores.append(1 / len(tied) if r[f] in tied else 0.0)
    return 100 * sum(scores) / len(scores)


def demo_sts_pearson() -> float:
    records = json.loads((DEMO_BENCHMARK / "klue-sts-v1.1" / "klue-sts-v1.1_dev.json").read_text(encoding="utf-8"))
    own, others = [], []
    for r in records:
        scores = r["annotations"]["annotations"]
        own += scores
        others += [(sum(scores) - s) / (len(scores) - 1) for s in scores]
    return 100 * pearsonr(own, others)[0]


@pytest.mark.parametrize(("task_name", "expected", "label"), [("nli", demo_nli_held_out, "Human baseline (accuracy, held out)"),
                                                               ("sts", demo_sts_pearson, "Human baseline (pearsonr)")])
def test_the_task_page_shows_the_human_baseline(task_name, expected, label):
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=120).run()
    at.switch_page(PAGE_FILES[task_name]).run()
    assert not at.exception and not at.error
    shown = {m.label: m.value for m in at.metric}
    assert shown[label] == f"{expected():.2f}"
    assert any("The annotators" in e.label for e in at.expander)
    captions = " ".join(c.value for c in at.caption).replace("\\", "")  # Markdown-escaped text
    if task_name == "nli":  # the documented figure beside the headline
        assert f"accuracy {demo_nli_agreement():.2f}" in captions
    else:
        assert "mean of all of them" in captions


def test_the_report_has_the_human_baseline():
    task = get_task("nli")
    gold = load_gold(task, DEMO_BENCHMARK)
    results = [evaluate_file(task, gold, path) for path in demo_runs("nli")]
    html = build_report(task, results, gold.source, errors=2, samples=20, gold_rows=gold.rows)
    assert f"data-human='accuracy'>{demo_nli_agreement():.2f}<" in html
    assert "data-human" not in build_report(task, results, gold.source, errors=2, samples=20)


def test_the_reports_suspects_show_their_text():
    task = get_task("sts")
    gold = load_gold(task, DEMO_BENCHMARK)
    results = [evaluate_file(task, gold, path) for path in demo_runs("sts")]
    html = build_report(task, results, gold.source, errors=1, samples=20, gold_rows=gold.rows)
    records = {r["guid"]: r for r in json.loads((DEMO_BENCHMARK / "klue-sts-v1.1" / "klue-sts-v1.1_dev.json").read_text(encoding="utf-8"))}
    suspects_part = html.split("<h3>Likely gold errors</h3>", 1)[1]
    assert "sentence1" in suspects_part and any(esc(r["sentence2"]) in suspects_part for r in records.values())
