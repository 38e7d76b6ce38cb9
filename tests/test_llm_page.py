"""An LLM run on a task page (AppTest): unreadable answers in the coverage line, the confusion column, the error type,
the "Generated answer read" slice and filter, and the generation, choices and prompt on the card, escaped."""

from __future__ import annotations

import json

import pytest
from streamlit.testing.v1 import AppTest

from klue_viz.reading.answers import UNREADABLE
from klue_viz.reading.demo import DEMO_BENCHMARK
from klue_viz.scoring.evaluate import load_gold
from klue_viz.tasks import TASKS
from klue_viz.ui.home import PAGE_FILES
from tests.conftest import REPO

KOREAN = {"entailment": "참", "neutral": "중립", "contradiction": "거짓"}


def llm_run() -> tuple[bytes, list[dict]]:
    """Three demo NLI pairs: a right answer with an explanation, a hostile unreadable one, a multiple-choice row."""
    rows = load_gold(TASKS["nli"], DEMO_BENCHMARK).rows[:3]
    records = [
        {"guid": rows[0]["guid"], "generation": f"정답: {KOREAN[rows[0]['gold']]}입니다. 설명: 전제와 같다.", "prompt": "전제: <i>x</i>"},
        {"guid": rows[1]["guid"], "generation": "<img src=x onerror=alert(1)> 참 또는 거짓"},
        {"guid": rows[2]["guid"], "choices": [" 참", " 중립", " 거짓"], "loglikelihoods": [-2.0, -0.5, -1.5], "target": 1},
    ]
    return "\n".join(json.dumps(r, ensure_ascii=False) for r in records).encode(), rows


@pytest.mark.slow
def test_an_llm_run_on_the_nli_page():
    data, rows = llm_run()
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=120).run()
    at.switch_page(PAGE_FILES["nli"]).run()
    at.file_uploader(key="pred_upload").set_value([("llm.jsonl", data, "application/json")]).run()
    assert not at.exception and not at.error
    at.selectbox(key="run").set_value("llm").run()
    assert not at.exception
    assert any("unreadable answers 1 (scored as wrong)" in c.value.replace("\\", "") for c in at.caption)
    assert any("by their text" in c.value.replace("\\", "") for c in at.caption)
    assert "Generated answer read" in at.selectbox(key="slice_by").options
    assert UNREADABLE in at.multiselect(key="f_errors").options
    assert UNREADABLE in at.multiselect(key="f_pred").options  # its own column of the confusion matrix
    cards = "".join(m.value for m in at.markdown if "kv-llm" in m.value)
    assert cards.count('class="kv-llm"') == 3
    assert '<mark class="kv-used">' in cards and "<img" not in cards and "&#60;img" in cards and "<i>x" not in cards
    assert 'data-chosen="yes">중립' in cards  # the most likely choice of the third pair
    at.multiselect(key="f_errors").set_value([UNREADABLE]).run()
    shown = [m.value for m in at.markdown if 'class="kv-example"' in m.value]
    assert len(shown) == 1 and rows[1]["guid"] in shown[0]
