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


# ---- 4. CSV formula injection ----------------------------------------------------------------------

FORMULAS = ["=HYPERLINK(\"http://evil.example\",\"x\")", "+1+1", "-2+3", "@SUM(A1)", "\t=1", "\r=1", "'=1", "''+x"]


def _cells(text: str) -> list[str]:
    import csv
    import io
    return [cell for row in csv.reader(io.StringIO(text, newline="")) for cell in row]


def test_csv_cells_never_start_a_formula_and_read_back_unchanged():
    from klue_viz.markup import csv_cell, csv_text

    for value in FORMULAS:
        assert csv_cell(value).startswith("'") and csv_text(csv_cell(value)) == value.replace("\r", "\n")
    for value in ["-1.5", "3", "1,000", "보통 문장", "'quoted", "", None, 2.5]:
        assert csv_cell(value) == value


def test_the_annotation_csv_export_neutralises_formulas_in_app_and_cli(tmp_path, monkeypatch):
    from klue_viz.annotations.files import parse, to_csv
    from klue_viz.annotations.store import Annotation, Store
    from klue_viz.cli import main

    items = [Annotation("nli", f"g{k}", "-run", "@me", tags=[f], note=f, corrected_label=f) for k, f in enumerate(FORMULAS)]
    text = to_csv(items)
    assert not [c for c in _cells(text) if c[:1] in ("=", "+", "-", "@", "\t", "\r")]
    back, problems = parse(text.encode("utf-8"), "export.csv")
    read = [f.replace("\r", "\n") for f in FORMULAS]  # reading any file turns a CR into a newline
    assert not problems and [(a.note, a.tags, a.corrected_label, a.run, a.annotator) for a in back] == [
        (f, [tag], f, "-run", "@me") for f, tag in zip(read, FORMULAS)]  # tags travel as a JSON list
    monkeypatch.setenv("KLUE_VIZ_DB", str(tmp_path / "formulas.sqlite3"))
    store = Store()
    for item in items:
        store.save(item)
    assert main(["annotations", "export", "--out", str(tmp_path / "out.csv")]) == 0
    cells = _cells((tmp_path / "out.csv").read_bytes().decode("utf-8"))
    assert not [c for c in cells if c[:1] in ("=", "+", "-", "@", "\t", "\r")]


def test_the_examples_csv_download_neutralises_formulas():
    from klue_viz.filtering import export_frame

    task = get_task("ynat")
    result = evaluate_file(task, load_gold(task, DEMO_BENCHMARK), next(demo_runs("ynat")))
    examples = result.frames.examples.copy()
    examples["title"] = [FORMULAS[k % len(FORMULAS)] for k in range(len(examples))]
    examples["guid"] = "=" + examples["guid"]
    text = export_frame(examples).to_csv(index=False)
    cells = _cells(text)
    assert "'=HYPERLINK(\"http://evil.example\",\"x\")" in cells
    assert not [c for c in cells if c[:1] in ("=", "+", "@", "\t", "\r") or (c[:1] == "-" and not c[1:].replace(".", "").isdigit())]


# ---- 5. gold folders -------------------------------------------------------------------------------

def test_the_gold_search_keeps_to_the_official_layout(tmp_path):
    from klue_viz.evaluate import official_file

    task = get_task("ner")
    deep = tmp_path / "a" / "b" / "c" / "klue-ner-v1.1"
    deep.mkdir(parents=True)
    (deep / "klue-ner-v1.1_dev.tsv").write_text("x")
    assert official_file(task, tmp_path) is None  # three levels down: never walked to
    one_down = tmp_path / "klue_benchmark" / "klue-ner-v1.1"
    one_down.mkdir(parents=True)
    (one_down / "klue-ner-v1.1_dev.tsv").write_text("x")
    assert official_file(task, tmp_path) == one_down / "klue-ner-v1.1_dev.tsv"


def test_the_gold_folder_box_accepts_only_folders_the_operator_allowed(tmp_path, monkeypatch):
    from klue_viz.evaluate import allowed_gold_folder
    from klue_viz.problems import InputError

    allowed, other = tmp_path / "gold", tmp_path / "elsewhere"
    (allowed / "klue_benchmark").mkdir(parents=True)
    other.mkdir()
    (allowed / "escape").symlink_to(other)
    monkeypatch.delenv("KLUE_VIZ_DATA_DIR", raising=False)
    monkeypatch.delenv("KLUE_VIZ_GOLD_ROOTS", raising=False)
    with pytest.raises(InputError, match="KLUE_VIZ_GOLD_ROOTS"):
        allowed_gold_folder(str(allowed))
    monkeypatch.setenv("KLUE_VIZ_GOLD_ROOTS", f"{allowed}:/")
    assert allowed_gold_folder(str(allowed / "klue_benchmark")) == (allowed / "klue_benchmark").resolve()
    assert allowed_gold_folder(str(allowed / "klue_benchmark" / "..")) == allowed.resolve()
    monkeypatch.setenv("KLUE_VIZ_GOLD_ROOTS", str(allowed))
    for refused, reason in [(other, "not under"), (allowed / "escape", "not under"), (allowed / "..", "not under"),
                            ("/", "root of the file system"), ("/proc", "/proc"), ("/proc/self/root", "root of the file system"),
                            (allowed / "missing", "no such folder")]:
        with pytest.raises(InputError, match=reason):
            allowed_gold_folder(str(refused))


def test_the_cli_still_reads_any_folder_its_user_names_without_walking_it(tmp_path, capsys):
    from klue_viz.cli import main

    deep = tmp_path / "x" / "y" / "klue-sts-v1.1"
    deep.mkdir(parents=True)
    (deep / "klue-sts-v1.1_dev.json").write_bytes((DEMO_BENCHMARK / "klue-sts-v1.1" / "klue-sts-v1.1_dev.json").read_bytes())
    run = str(next(demo_runs("sts")))
    assert main(["evaluate", "--task", "sts", "--gold", str(tmp_path), "--pred", run]) == 2
    assert "no klue-sts-v1.1/klue-sts-v1.1_dev.json" in capsys.readouterr().err
    assert main(["evaluate", "--task", "sts", "--gold", str(tmp_path / "x" / "y"), "--pred", run]) == 0
