"""Hostile and broken input that must neither hang the server, nor turn into markup, nor break a session."""

from __future__ import annotations

import subprocess
import sys

import pandas as pd
import pytest

from klue_viz.demo import DEMO_BENCHMARK, demo_runs
from klue_viz.evaluate import evaluate_file, load_gold
from klue_viz.filtering import MAX_PATTERN, ExampleFilter, FilterError, apply_filter, compile_search
from klue_viz.tasks import get_task
from tests.conftest import REPO

# ---- 1. regex search ---------------------------------------------------------------------------

CATASTROPHIC = r"""
import pandas as pd
from klue_viz.filtering import FilterError, text_mask
frame = pd.DataFrame({"guid": ["g1", "g2"], "sentence": ["a" * 5000, "x" * 40 + "#"]})
print(text_mask(frame, ("sentence",), "(?:.+.+)+#", True).tolist())
try:
    text_mask(frame, ("sentence",), r"(?:.+.+)+#|(z)\1", True)
except FilterError:
    print("refused")
"""


def test_a_catastrophic_regex_finishes_instead_of_freezing_the_server():
    # The backreference made pandas fall back to Python's re, which backtracks for ever on this text
    # (the whole server stalled); RE2 runs the first pattern in linear time and refuses the second.
    done = subprocess.run([sys.executable, "-c", CATASTROPHIC], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["[False,", "True]", "refused"]


@pytest.mark.parametrize("pattern, reason", [
    (r"(?:.+.+)+#|(z)\1", "backreferences"),
    (r"(?=x)y", "look-arounds"),
    ("a" * (MAX_PATTERN + 1), "at most"),
])
def test_patterns_re2_cannot_run_are_refused_with_a_clear_message(pattern, reason):
    with pytest.raises(FilterError, match=reason):
        compile_search(pattern, regex=True)


def test_plain_search_is_literal_and_case_insensitive():
    frame = pd.DataFrame({"guid": ["a", "b", "c"], "sentence": ["x.y (z", "XAY", "Abc"]})
    from klue_viz.filtering import text_mask
    assert text_mask(frame, ("sentence",), ".y (", False).tolist() == [True, False, False]
    assert text_mask(frame, ("sentence",), "a.", True).tolist() == [False, True, True]
    assert text_mask(frame, ("sentence",), "abc", False).tolist() == [False, False, True]


@pytest.mark.parametrize("task_name", ["ner", "wos"])
def test_the_search_finds_an_example_by_its_guid(task_name):
    task = get_task(task_name)
    result = evaluate_file(task, load_gold(task, DEMO_BENCHMARK), next(demo_runs(task_name)))
    guid = result.frames.examples["guid"].iloc[3]
    shown = apply_filter(task, result.frames, None, ExampleFilter(text=guid))
    assert guid in shown["guid"].tolist() and len(shown) < len(result.frames.examples)


# ---- 2. chart labels -----------------------------------------------------------------------------

def test_chart_labels_from_files_are_text_to_plotly():
    from klue_viz.charts import confusion_counts, confusion_figure, slice_figure

    hostile = "<a href='http://evil.example'>x</a><img src=x><br><b>b</b>"
    pairs = pd.DataFrame({"guid": ["g1", "g2"], "gold": [hostile, "ok"], "pred": ["ok", hostile]})
    figures = [confusion_figure(confusion_counts(pairs), "label"),
               slice_figure(pd.DataFrame({"value": [hostile], "n": [3], "f1": [50.0]}), "f1", "Source")]
    for figure in figures:
        labels = [str(v) for trace in figure.data for axis in ("x", "y") for v in (getattr(trace, axis) or ())]
        assert any("&lt;a href" in v for v in labels)
        assert not any("<" in v for v in labels)
