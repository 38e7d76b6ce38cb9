"""`klue-viz report`: one self-contained HTML file with the right numbers, escaped, with the stored annotations."""

from __future__ import annotations

import json
import re
from html import unescape
from pathlib import Path

import pytest
from sklearn.metrics import accuracy_score

from klue_viz.cli.main import main
from klue_viz.drawing.markup import STYLE
from klue_viz.outputs.report import build_report
from klue_viz.reading.demo import DEMO_BENCHMARK, demo_runs
from klue_viz.scoring.evaluate import evaluate_bytes, evaluate_file, load_gold
from klue_viz.store.annotations import Annotation, Store
from klue_viz.tasks import TASKS

HOSTILE = '<img src=x onerror="alert(1)">'


def nli_accuracy(path) -> float:
    gold_file = next((DEMO_BENCHMARK / "klue-nli-v1.1").glob("*_dev.json"))
    gold = {r["guid"]: r["gold_label"] for r in json.loads(gold_file.read_text(encoding="utf-8"))}
    preds = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    names = [p["label"] if isinstance(p["label"], str) else TASKS["nli"].labels[p["label"]] for p in preds]
    return 100 * accuracy_score([gold[p["guid"]] for p in preds], names)


def shown_metrics(html: str) -> list[str]:
    return re.findall(r"data-metric='accuracy'>([^<]+)<", html)


def test_cli_report_of_two_runs_has_the_official_numbers_the_comparison_and_opens_offline(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("KLUE_VIZ_DB", str(tmp_path / "db.sqlite3"))
    first, second = demo_runs("nli")
    out = tmp_path / "report.html"
    assert main(["report", "--task", "nli", "--gold", str(DEMO_BENCHMARK), "--pred", str(first), "--pred", str(second),
                 "--out", str(out), "--bootstrap", "200", "--errors", "3"]) == 0
    html = out.read_text(encoding="utf-8")
    assert shown_metrics(html) == [f"{nli_accuracy(first):.2f}", f"{nli_accuracy(second):.2f}"]
    gold = load_gold(TASKS["nli"], DEMO_BENCHMARK)
    wrong = [int((~evaluate_file(TASKS["nli"], gold, p).frames.examples["correct"]).sum()) for p in (first, second)]
    assert "Paired comparison" in html and html.count("class='kv-error'") == sum(min(3, n) for n in wrong) > 3
    assert "<script" not in html and not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", html), "nothing is fetched"
    assert STYLE.strip() in html and "default-src 'none'" in html
    assert "wrote" in capsys.readouterr().out


def test_errors_are_drawn_as_the_app_draws_them_annotated_first_and_every_string_escaped():
    task = TASKS["ner"]
    gold = load_gold(task, DEMO_BENCHMARK)
    path = next(demo_runs("ner"))
    result = evaluate_bytes(task, gold, path.read_bytes(), f"{HOSTILE}.jsonl", run=HOSTILE)
    ex = result.frames.examples
    wrong = ex.loc[~ex["correct"], "guid"].tolist()
    last = wrong[-1]
    remarks = [Annotation("ner", last, HOSTILE, f"{HOSTILE}지민", tags=[HOSTILE], note=f"경계 {HOSTILE} **bold**"),
               Annotation("ner", last, "gold", "서연", gold_wrong=True, corrected_label=f"{HOSTILE}:LC"),
               Annotation("ner", wrong[0], "another run", "x", note="not this run's")]
    html = build_report(task, [result], "demo", remarks, errors=2, samples=50)
    blocks = [unescape(b) for b in re.findall(r"<div class='kv-error' data-guid='([^']+)'>", html)]
    assert blocks[0] == last and len(blocks) == 2  # the annotated error leads
    assert task.render(result.frames, last) in html
    assert HOSTILE not in html and "<img" not in html and HOSTILE in unescape(html)
    assert "gold marked wrong" in html and "not this run" not in html


@pytest.mark.slow
def test_report_metrics_match_the_store_free_evaluation_for_every_task():
    for name, task in TASKS.items():
        gold = load_gold(task, DEMO_BENCHMARK)
        result = evaluate_file(task, gold, next(demo_runs(name)))
        html = build_report(task, [result], "demo", errors=1, samples=20)
        for metric in task.facts.metrics:
            value = result.scores.values.get(metric.key)
            shown = unescape(re.search(rf"data-metric='{metric.key}'>([^<]+)<", html).group(1))
            assert shown == ("n/a" if value is None else f"{value:.2f}"), (name, metric.key)


def test_a_report_considers_the_annotations_of_the_default_store(tmp_path, monkeypatch):
    monkeypatch.setenv("KLUE_VIZ_DB", str(tmp_path / "db.sqlite3"))
    path = next(demo_runs("ynat"))
    result = evaluate_file(TASKS["ynat"], load_gold(TASKS["ynat"], DEMO_BENCHMARK), path)
    wrong = result.frames.examples.loc[~result.frames.examples["correct"], "guid"].tolist()
    Store().save(Annotation("ynat", wrong[-1], path.stem, "지민", tags=["ambiguous"], note="제목만으로는 모호함"))
    out = tmp_path / "ynat.html"
    assert main(["report", "--task", "ynat", "--gold", str(DEMO_BENCHMARK), "--pred", str(path), "--out", str(out), "--bootstrap", "20", "--errors", "1"]) == 0
    html = out.read_text(encoding="utf-8")
    assert "제목만으로는 모호함" in html and unescape(re.findall(r"data-guid='([^']+)'>", html)[-1]) == wrong[-1]


def test_the_report_carries_what_the_discovery_layer_finds():
    """Weak slices, calibration and likely gold errors: the same functions as the app and the CLI, escaped."""
    from klue_viz.discovery.calibration import run_calibration
    from klue_viz.discovery.slices import weak_slices

    task = TASKS["ynat"]
    gold = load_gold(task, DEMO_BENCHMARK)
    results = [evaluate_file(task, gold, path) for path in demo_runs("ynat")]
    html = build_report(task, results, "demo", errors=1, samples=20)
    assert "<h2>Found for you</h2>" in html
    top = weak_slices(task, results[0].frames, top=1)
    if top:
        first = " & ".join(f"{k} = {v}" for k, v in top[0].conditions.items())
        assert first in unescape(html)
    with_probs = [r for r in results if run_calibration(task, r.frames.examples) is not None]
    assert with_probs, "a demo YNAT run gives probabilities"
    ece = run_calibration(task, with_probs[0].frames.examples).ece
    assert f"ECE {ece:.2f}" in html


def test_two_files_with_the_same_stem_are_reported_as_two_runs_each_with_its_own_confusions(tmp_path, monkeypatch):
    """model-a/nli.jsonl and model-b/nli.jsonl: the second is named nli-2 (as the app names it) and its confusions are its own."""
    from collections import Counter

    monkeypatch.setenv("KLUE_VIZ_DB", str(tmp_path / "db.sqlite3"))
    gold_file = next((DEMO_BENCHMARK / "klue-nli-v1.1").glob("*_dev.json"))
    gold = {r["guid"]: r["gold_label"] for r in json.loads(gold_file.read_text(encoding="utf-8"))}
    paths = []
    for folder, run in zip(("model-a", "model-b"), demo_runs("nli")):
        (tmp_path / folder).mkdir()
        paths.append(tmp_path / folder / "nli.jsonl")
        paths[-1].write_bytes(run.read_bytes())
    out = tmp_path / "report.html"
    assert main(["report", "--task", "nli", "--gold", str(DEMO_BENCHMARK), "--pred", str(paths[0]), "--pred", str(paths[1]),
                 "--out", str(out), "--bootstrap", "50", "--errors", "1"]) == 0
    html = unescape(out.read_text(encoding="utf-8"))  # demo text: nothing in it that unescaped would look like markup
    assert "<title>NLI report: nli vs nli-2</title>" in html
    for name, path in zip(("nli", "nli-2"), paths):
        preds = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
        names = [p["label"] if isinstance(p["label"], str) else TASKS["nli"].labels[p["label"]] for p in preds]
        mistakes = Counter((gold[p["guid"]], label) for p, label in zip(preds, names) if gold[p["guid"]] != label)
        section = html.split(f"<h3>Most frequent confusions: {name}</h3>")[1].split("</table>")[0]
        shown = {(g, p): int(n) for g, p, n in re.findall(r"<tr><td>([^<]+)</td><td>([^<]+)</td><td[^>]*>(\d+)</td></tr>", section)}
        assert shown == dict(mistakes), name


def test_report_and_folder_evaluation_refuse_an_out_they_cannot_write_with_one_line(tmp_path, capsys):
    """No traceback after the work is done: a missing folder is refused before scoring, a write failure is one line."""
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "nli.jsonl").write_bytes(next(demo_runs("nli")).read_bytes())
    gold = str(DEMO_BENCHMARK)
    commands = [["evaluate", "--gold", gold, "--pred", str(folder)],
                ["report", "--task", "nli", "--gold", gold, "--pred", str(folder / "nli.jsonl"), "--bootstrap", "10"]]
    for command in commands:
        for out, reason in [(tmp_path / "missing" / "out", "does not exist"), (tmp_path, "is a folder")]:
            assert main([*command, "--out", str(out)]) == 2
            captured = capsys.readouterr()
            assert captured.out == "" and reason in captured.err and len(captured.err.strip().splitlines()) == 1, captured.err
    def full_disk(self, *args, **kwargs):
        raise OSError(28, "No space left on device")

    for command in commands:
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(Path, "write_text", full_disk)
            assert main([*command, "--out", str(tmp_path / "out")]) == 2
        captured = capsys.readouterr()
        assert captured.err.strip().splitlines()[-1] == f"klue-viz: cannot write --out {tmp_path / 'out'}: No space left on device"


def test_the_reports_weak_slices_take_the_stored_error_tags(tmp_path):
    """Tags the user stored are slice conditions in the report, as in the app and `klue-viz slices`."""
    task = TASKS["ynat"]
    path = next(demo_runs("ynat"))
    result = evaluate_file(task, load_gold(task, DEMO_BENCHMARK), path)
    examples = result.frames.examples
    tagged = examples.loc[~examples["correct"], "guid"].tolist() + examples.loc[examples["correct"], "guid"].tolist()[:6]  # 10 at least
    remarks = [Annotation("ynat", guid, path.stem, "지민", tags=["<b>제목만</b>"]) for guid in tagged]
    html = build_report(task, [result], "demo", remarks, errors=1, samples=20)
    found = html.split("<h2>Found for you</h2>")[1].split("<h2>Errors</h2>")[0]
    assert "tag: <b>제목만</b> = yes" in unescape(found) and "<b>제목만" not in found
