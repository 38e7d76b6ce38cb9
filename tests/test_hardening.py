"""Hostile and broken input that must neither hang the server, nor turn into markup, nor break a session."""

from __future__ import annotations

import json
import subprocess
import sys

import pandas as pd
import pytest

from klue_viz.core.problems import InputError
from klue_viz.reading.demo import DEMO_BENCHMARK, demo_runs
from klue_viz.scoring.evaluate import evaluate_bytes, evaluate_file, gold_from_bytes, load_gold
from klue_viz.scoring.filtering import (
    MAX_PATTERN,
    ExampleFilter,
    FilterError,
    apply_filter,
    compile_search,
)
from klue_viz.tasks import get_task
from tests.conftest import REPO, jsonl

# ---- 1. regex search ---------------------------------------------------------------------------

CATASTROPHIC = r"""
import pandas as pd
from klue_viz.scoring.filtering import FilterError, text_mask
frame = pd.DataFrame({"guid": ["g1", "g2"], "sentence": ["a" * 5000, "x" * 40 + "#"]})
print(text_mask(frame, ("sentence",), "(?:.+.+)+#", True).tolist())
try:
    text_mask(frame, ("sentence",), r"(?:.+.+)+#|(z)\1", True)
except FilterError:
    print("refused")
"""


@pytest.mark.slow
def test_a_catastrophic_regex_finishes_instead_of_freezing_the_server():
    # The backreference made pandas fall back to Python's re, which backtracks for ever on this text
    # (the whole server stalled); RE2 runs the first pattern in linear time and refuses the second.
    done = subprocess.run([sys.executable, "-c", CATASTROPHIC], cwd=REPO, capture_output=True, text=True, timeout=60, check=False)
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
    from klue_viz.scoring.filtering import text_mask
    assert text_mask(frame, ("sentence",), ".y (", False).tolist() == [True, False, False]
    assert text_mask(frame, ("sentence",), "a.", True).tolist() == [False, True, True]
    assert text_mask(frame, ("sentence",), "abc", False).tolist() == [False, False, True]


def test_the_search_agrees_with_pythons_re_and_skips_missing_text():
    """Text columns are searched by Arrow's RE2 kernels in one call; Python's re (an independent engine) must agree,
    a missing value matches nothing (it used to crash the search), and a column of mixed values is still searched."""
    import re

    from klue_viz.scoring.filtering import text_mask
    sentences = ["서울시청에서 SEOUL 행사가", "부산은 seoul보다", "대한민국 정부가", None, "a.b+c (서울이", "Ab.C"]
    frame = pd.DataFrame({"guid": [f"g{k}" for k in range(len(sentences))], "sentence": pd.Series(sentences, dtype="str"),
                          "mixed": pd.Series([1, "SEOUL", ["x"], None, 2.5, "y"], dtype=object)})
    for text, regex in [("seoul", False), ("서울[가-힣]{1,3}(이|가)?", True), ("a.b+c (", False), ("^[가-힣]+은", True), ("b.c", True), ("g[35]", True)]:
        search = re.compile(text if regex else re.escape(text), re.IGNORECASE).search
        expected = [bool(search(g) or (s is not None and search(s))) for g, s in zip(frame["guid"], sentences)]
        assert text_mask(frame, ("sentence",), text, regex).tolist() == expected, text
    assert text_mask(frame, ("mixed",), "seoul", False).tolist() == [False, True, False, False, False, False]


@pytest.mark.parametrize("task_name", ["ner", "wos"])
def test_the_search_finds_an_example_by_its_guid(task_name):
    task = get_task(task_name)
    result = evaluate_file(task, load_gold(task, DEMO_BENCHMARK), next(demo_runs(task_name)))
    guid = result.frames.examples["guid"].iloc[3]
    shown = apply_filter(task, result.frames, None, ExampleFilter(text=guid))
    assert guid in shown["guid"].tolist() and len(shown) < len(result.frames.examples)


# ---- 2. chart labels -----------------------------------------------------------------------------

def test_chart_labels_from_files_are_text_to_plotly():
    from klue_viz.drawing.charts import confusion_counts, confusion_figure, slice_figure

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
    from klue_viz.drawing.markup import csv_cell, csv_text

    for value in FORMULAS:
        assert csv_cell(value).startswith("'") and csv_text(csv_cell(value)) == value.replace("\r", "\n")
    for value in ["-1.5", "3", "1,000", "보통 문장", "'quoted", "", None, 2.5]:
        assert csv_cell(value) == value


def test_the_annotation_csv_export_neutralises_formulas_in_app_and_cli(tmp_path, monkeypatch):
    from klue_viz.cli.main import main
    from klue_viz.store.annotation_files import parse, to_csv
    from klue_viz.store.annotations import Annotation, Store

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
    from klue_viz.scoring.filtering import export_frame

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
    from klue_viz.scoring.evaluate import official_file

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
    from klue_viz.core.problems import InputError
    from klue_viz.reading.gold_folders import allowed_gold_folder

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
    from klue_viz.cli.main import main

    deep = tmp_path / "x" / "y" / "klue-sts-v1.1"
    deep.mkdir(parents=True)
    (deep / "klue-sts-v1.1_dev.json").write_bytes((DEMO_BENCHMARK / "klue-sts-v1.1" / "klue-sts-v1.1_dev.json").read_bytes())
    run = str(next(demo_runs("sts")))
    assert main(["evaluate", "--task", "sts", "--gold", str(tmp_path), "--pred", run]) == 2
    assert "no klue-sts-v1.1/klue-sts-v1.1_dev.json" in capsys.readouterr().err
    assert main(["evaluate", "--task", "sts", "--gold", str(tmp_path / "x" / "y"), "--pred", run]) == 0


# ---- 6. broken files fail cleanly -----------------------------------------------------------------

@pytest.fixture(scope="module")
def ynat_gold():
    return load_gold(get_task("ynat"), DEMO_BENCHMARK)


def ynat_lines(gold, **first) -> list[dict]:
    rows = [{"guid": r["guid"], "label": r["gold"]} for r in gold.rows]
    rows[0] = {**rows[0], **first}
    return rows


@pytest.mark.parametrize("name, data, reason", [
    ("deep.json", b"[" * 200_000, "nested too deeply"),
    ("deep.jsonl", b'{"guid": ' + b"[" * 200_000, "nested too deeply"),
    ("number.json", b"42", "found a single int"),
    ("string.json", b'"ynat-v1_dev_00000"', "found a single str"),
    ("null.json", b"null", "found a single null"),
    ("empty-object.json", b"{}", "no record could be read"),
])
def test_files_that_hold_no_records_are_refused_in_one_line(ynat_gold, name, data, reason):
    with pytest.raises(InputError, match=reason):
        evaluate_bytes(get_task("ynat"), ynat_gold, data, name)


def _problems(result) -> list[str]:
    return [f"{p.line}|{p.guid}|{p.message}" for p in result.problems]


@pytest.mark.parametrize("first, reason", [
    ({"label": 1e400}, "must be an integer"),  # json reads 1e400 as infinity
    ({"label": 2**70}, "out of range"),
    ({"probs": [float("nan")] * 7}, "finite"),
    ({"probs": [0.1, float("inf"), 0, 0, 0, 0, 0]}, "finite"),
    ({"probs": {"IT과학": "NaN"}}, "finite"),
])
def test_numbers_a_file_cannot_mean_are_listed_problems(ynat_gold, first, reason):
    result = evaluate_bytes(get_task("ynat"), ynat_gold, jsonl(ynat_lines(ynat_gold, **first)), "p.jsonl")
    assert result.coverage.n_invalid == 1 and reason in result.problems[0].message and result.problems[0].line == 1


def test_an_integer_too_long_for_python_is_a_listed_problem(ynat_gold):
    data = jsonl(ynat_lines(ynat_gold)).replace(b'"label": "', b'"label": ' + b"9" * 5000 + b', "x": "', 1)
    result = evaluate_bytes(get_task("ynat"), ynat_gold, data, "p.jsonl")
    assert result.problems[0].line == 1 and "cannot be read as JSON" in result.problems[0].message
    assert result.coverage.n_scored == len(ynat_gold.rows) - 1


def test_a_csv_field_over_the_limit_is_a_listed_problem_and_the_rest_is_scored(ynat_gold):
    rows = ynat_lines(ynat_gold)
    text = "guid,label\n" + "\n".join(f"{r['guid']},{r['label']}" for r in rows[1:]) + f"\n{rows[0]['guid']},{'x' * 200_000}\n"
    result = evaluate_bytes(get_task("ynat"), ynat_gold, text.encode("utf-8"), "p.csv")
    assert any("field larger than field limit" in p.message and p.line == len(rows) + 1 for p in result.problems)
    assert result.coverage.n_scored == len(rows) - 1


def test_a_guid_given_twice_in_a_json_object_is_reported(ynat_gold):
    guids = [r["guid"] for r in ynat_gold.rows]
    body = ", ".join(f'"{g}": "{r["gold"]}"' for g, r in zip(guids, ynat_gold.rows))
    data = ("{" + body + f', "{guids[0]}": "정치"' + "}").encode("utf-8")
    result = evaluate_bytes(get_task("ynat"), ynat_gold, data, "predictions.json")
    assert [p.guid for p in result.problems if "duplicate guid" in p.message] == [guids[0]]
    assert result.frames.examples.set_index("guid").loc[guids[0], "pred"] == ynat_gold.rows[0]["gold"]  # the first is kept


def test_sts_scores_outside_0_to_5_and_nan_gold_labels_are_listed():
    task = get_task("sts")
    gold = load_gold(task, DEMO_BENCHMARK)
    preds = [{"guid": r["guid"], "score": 2.5} for r in gold.rows]
    preds[0]["score"], preds[1]["score"], preds[2]["score"] = 7.5, -1, "high"
    result = evaluate_bytes(task, gold, jsonl(preds), "p.jsonl")
    assert [p.line for p in result.problems if "outside 0..5; scored as given" in p.message] == [1, 2]  # convention 9
    assert [p.line for p in result.problems if "from 0 to 5" in p.message] == [3]  # not a number: left out
    assert result.coverage.n_scored == len(gold.rows) - 1 and result.coverage.n_invalid == 1
    assert result.frames.examples["pred"].tolist()[:2] == [7.5, -1.0]
    records = json.loads((DEMO_BENCHMARK / "klue-sts-v1.1" / "klue-sts-v1.1_dev.json").read_text(encoding="utf-8"))
    records[0]["labels"]["real-label"] = float("nan")
    records[1]["labels"]["real-label"] = 6
    broken = gold_from_bytes(task, json.dumps(records).encode("utf-8"), "klue-sts-v1.1_dev.json")
    assert len(broken.rows) == len(records) - 2 and len([p for p in broken.problems if "from 0 to 5" in p.message]) == 2


def test_a_dp_gold_head_beyond_its_sentence_is_listed():
    task = get_task("dp")
    text = (DEMO_BENCHMARK / "klue-dp-v1.1" / "klue-dp-v1.1_dev.tsv").read_text(encoding="utf-8")
    lines = text.split("\n")
    k = next(i for i, line in enumerate(lines) if line[:1].isdigit())
    fields = lines[k].split("\t")
    fields[4] = "99"
    lines[k] = "\t".join(fields)
    gold = gold_from_bytes(task, "\n".join(lines).encode("utf-8"), "klue-dp-v1.1_dev.tsv")
    assert [p.message for p in gold.problems if "head 99" in p.message]
    assert len(gold.rows) == len(load_gold(task, DEMO_BENCHMARK).rows) - 1


@pytest.mark.parametrize("task_name, garbage", [("ynat", b"\x00\x01garbage"), ("ner", b"42"), ("sts", b"[" * 100_000), ("wos", b"null")])
def test_an_official_named_gold_file_with_garbage_inside_is_one_line(tmp_path, task_name, garbage):
    task = get_task(task_name)
    with pytest.raises(InputError):
        gold_from_bytes(task, garbage, f"{task.facts.official_folder}_dev.{task.facts.official_ext}")


# Every parser raises RecordError (a listed problem) for any bad value, never another exception: the values a
# file can hold in each field of a real prediction record.
HOSTILE_VALUES = [None, "", "x", 0, -1, 2**70, float("inf"), float("nan"), True, [], [None], [{}], [2**70], [float("nan")],
                  {}, {"x": 1}, {"x": float("nan")}, "9" * 5000, [[[]]], "[1, 2", "NaN"]


@pytest.mark.parametrize("task_name", ["ynat", "sts", "nli", "ner", "re", "dp", "mrc", "wos"])
def test_parsers_raise_only_record_errors_and_what_they_accept_can_be_scored(task_name):
    from klue_viz.core.results import Repaired
    from klue_viz.reading.records import read_records
    from klue_viz.tasks.base import RecordError

    task = get_task(task_name)
    gold = load_gold(task, DEMO_BENCHMARK)
    run = next(p for p in demo_runs(task_name) if p.suffix == ".jsonl")
    base = task.normalise_record(read_records(run.read_bytes(), run.name).records[0][1])
    position = gold.locate(task.record_key(base))
    fields = dict.fromkeys([k for k in base if k not in ("guid", "id")] + ["probs", "label", "entities", "tags", "score", "head", "deprel", "answer", "state"])
    accepted = set()
    for field in fields:
        for value in HOSTILE_VALUES:
            try:
                prediction = task.parse_prediction({**base, field: value}, gold.rows[position])
            except RecordError:
                continue
            if isinstance(prediction, Repaired):  # scored with its defect listed (convention 9)
                prediction = prediction.prediction
            if repr(prediction) in accepted:
                continue  # already scored and drawn
            accepted.add(repr(prediction))
            frames = task.build_frames(gold.frame.iloc[[position]].reset_index(drop=True), [prediction])
            task.score(frames)
            task.render(frames, gold.rows[position]["guid"])


def test_cli_refuses_a_bad_out_and_bootstrap_before_scoring(tmp_path, capsys):
    from klue_viz.cli.main import main

    gold, run = str(DEMO_BENCHMARK), str(next(demo_runs("ynat")))
    for out, reason in [(tmp_path, "is a folder"), (tmp_path / "missing" / "m.json", "does not exist")]:
        assert main(["evaluate", "--task", "ynat", "--gold", gold, "--pred", run, "--out", str(out)]) == 2
        captured = capsys.readouterr()
        assert captured.out == "" and reason in captured.err and len(captured.err.strip().splitlines()) == 1
    with pytest.raises(SystemExit) as refused:
        main(["evaluate", "--task", "ynat", "--gold", gold, "--pred", run, "--bootstrap", "-5"])
    assert refused.value.code == 2 and "from 0 (off) to 100000" in capsys.readouterr().err


def test_cli_never_writes_control_characters_from_files_to_the_terminal(tmp_path, capsys):
    from klue_viz.cli.main import main

    task = get_task("ynat")
    gold = load_gold(task, DEMO_BENCHMARK)
    rows = [{"guid": r["guid"], "label": r["gold"]} for r in gold.rows]
    rows.append({"guid": "\x1b[2J\x1b]0;pwned\x07\rfake line\nklue-viz: all good", "label": "사회"})
    rows[0]["label"] = "\x1b[31mred\u202e"
    bad = tmp_path / "\x1b[1mrun.jsonl"
    bad.write_bytes(jsonl(rows))
    assert main(["evaluate", "--task", "ynat", "--gold", str(DEMO_BENCHMARK), "--pred", str(bad)]) == 0
    garbage = tmp_path / "broken.json"
    garbage.write_bytes(b'"\x1b[2J"')
    assert main(["evaluate", "--task", "ynat", "--gold", str(DEMO_BENCHMARK), "--pred", str(garbage)]) == 1
    captured = capsys.readouterr()
    for stream in (captured.out, captured.err):
        assert not any(c in stream for c in "\x1b\x07\r\u202e")
    assert "\\u001b[2J" in captured.out and "klue-viz: all good" not in captured.out.splitlines()


def test_cli_reports_a_broken_file_in_one_line_not_a_traceback(tmp_path, capsys):
    from klue_viz.cli.main import main

    deep = tmp_path / "deep.json"
    deep.write_bytes(b"[" * 200_000)
    gold = tmp_path / "klue_benchmark" / "ynat-v1.1"
    gold.mkdir(parents=True)
    (gold / "ynat-v1.1_dev.json").write_bytes(b"{[garbage")
    assert main(["evaluate", "--task", "ynat", "--gold", str(DEMO_BENCHMARK), "--pred", str(deep)]) == 1
    assert main(["evaluate", "--task", "ynat", "--gold", str(tmp_path / "klue_benchmark"), "--pred", str(deep)]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and "nested too deeply" in err and "invalid JSON" in err
