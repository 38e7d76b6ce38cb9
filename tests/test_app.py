"""Every page of the app through Streamlit's AppTest: renders the demo, shows the right numbers, filters narrow."""

from __future__ import annotations

import json
import re

import pytest
from sklearn.metrics import accuracy_score, f1_score
from streamlit.testing.v1 import AppTest

from klue_viz.reading.demo import DEMO_BENCHMARK, demo_runs
from klue_viz.scoring.evaluate import evaluate_file, load_gold
from klue_viz.tasks import TASKS
from klue_viz.ui.home import PAGE_FILES
from tests.conftest import REPO

pytestmark = pytest.mark.slow  # every test here opens whole pages in AppTest

TIMEOUT = 120


def open_page(page: str | None = None) -> AppTest:
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=TIMEOUT).run()
    assert not at.exception
    if page:
        at.switch_page(page).run()
    return at


def shown_count(at: AppTest) -> tuple[int, int]:
    block = next(m.value for m in at.markdown if "kv-count" in m.value)
    shown, total = re.search(r"data-shown='(\d+)' data-total='(\d+)'", block).groups()
    return int(shown), int(total)


def plain(markdown: str) -> str:
    """Markdown text as the reader sees it (file text is backslash-escaped before it reaches Markdown)."""
    return markdown.replace("\\", "")


def drawn(at: AppTest) -> list[str]:
    return [m.value for m in at.markdown if 'class="kv-example"' in m.value]


@pytest.mark.parametrize("task_name", list(TASKS))
def test_each_task_page_shows_the_demo_runs_metrics_and_filters(task_name):
    task = TASKS[task_name]
    at = open_page(PAGE_FILES[task_name])
    assert not at.exception and not at.error
    gold = load_gold(task, DEMO_BENCHMARK)
    shown_metrics = [(m.label, m.value) for m in at.metric]
    for run in demo_runs(task_name):
        result = evaluate_file(task, gold, run)
        for metric in task.facts.metrics:
            value = result.scores.values[metric.key]
            assert (metric.label, "n/a" if value is None else f"{value:.2f}") in shown_metrics
    assert drawn(at), "examples are drawn"
    before, total = shown_count(at)
    at.radio(key="f_status").set_value("wrong").run()
    after, _ = shown_count(at)
    wrong = sum(not c for c in evaluate_file(task, gold, next(demo_runs(task_name))).frames.examples["correct"])
    assert before == total and after == wrong < total
    assert not at.exception


def test_ynat_and_nli_numbers_agree_with_scikit_learn_on_the_demo_files():
    for task_name, label_field in (("ynat", "label"), ("nli", "gold_label")):
        gold_file = next((DEMO_BENCHMARK / TASKS[task_name].facts.official_folder).glob("*_dev.json"))
        gold = {r["guid"]: r[label_field] for r in json.loads(gold_file.read_text(encoding="utf-8"))}
        at = open_page(PAGE_FILES[task_name])
        values = [m.value for m in at.metric if m.label in ("Macro F1", "Accuracy")]
        expected = []
        for run in demo_runs(task_name):
            preds = [json.loads(line) for line in run.read_text(encoding="utf-8").splitlines()]
            names = [p["label"] if isinstance(p["label"], str) else TASKS[task_name].labels[p["label"]] for p in preds]
            golds = [gold[p["guid"]] for p in preds]
            score = f1_score(golds, names, average="macro") if task_name == "ynat" else accuracy_score(golds, names)
            expected.append(f"{100 * score:.2f}")
        assert values == expected


def test_upload_on_a_task_page_adds_a_run_and_bad_files_are_explained():
    at = open_page(PAGE_FILES["ner"])
    run = next(demo_runs("ner"))
    at.file_uploader(key="pred_upload").set_value([("my-model.jsonl", run.read_bytes(), "application/json")]).run()
    assert not at.exception
    assert "my-model" in at.selectbox(key="run").options
    at.file_uploader(key="pred_upload").set_value([("broken.jsonl", b'{"guid": 1\n{{{', "application/json")]).run()
    assert not at.exception and any("no record could be read" in e.value for e in at.error)


def test_search_filters_and_a_bad_regex_is_an_error_not_a_crash():
    at = open_page(PAGE_FILES["ynat"])
    at.text_input(key="f_text").set_value("금리").run()
    assert shown_count(at)[0] == 2
    at.checkbox(key="f_regex").check().run()
    at.text_input(key="f_text").set_value("금리(").run()
    assert not at.exception and any("regular expression" in e.value for e in at.error)


def test_confusion_cell_filters_gold_and_predicted_labels():
    result = evaluate_file(TASKS["nli"], load_gold(TASKS["nli"], DEMO_BENCHMARK), next(demo_runs("nli")))
    ex = result.frames.examples
    wrong = ex[ex["gold"] != ex["pred"]]
    gold, pred = wrong.groupby(["gold", "pred"]).size().idxmax()
    at = open_page(PAGE_FILES["nli"])
    at.multiselect(key="f_gold").set_value([gold]).run()
    at.multiselect(key="f_pred").set_value([pred]).run()
    assert shown_count(at)[0] == int(((ex["gold"] == gold) & (ex["pred"] == pred)).sum()) > 0


def test_two_runs_compare_side_by_side():
    at = open_page(PAGE_FILES["wos"])
    at.selectbox(key="compare").set_value(at.selectbox(key="compare").options[1]).run()
    assert not at.exception
    shown, _ = shown_count(at)
    block = next(m.value for m in at.markdown if "kv-count" in m.value)
    cards = int(re.search(r"data-cards='(\d+)'", block).group(1))
    assert 0 < cards <= shown < 18 and len(drawn(at)) == 2 * min(cards, 10)  # WoS: one card per dialogue, per run


def test_home_page_detects_the_task_of_each_upload():
    at = open_page()
    files = [(p.name, p.read_bytes(), "application/json") for p in (next(demo_runs("dp")), next(demo_runs("re")))]
    files.append(("notes.csv", b"a,b\n1,2\n", "text/csv"))
    at.file_uploader(key="home_upload").set_value(files).run()
    assert not at.exception
    detected = at.dataframe[0].value
    assert detected["task"].tolist() == ["dp", "re", "?"]
    overview = at.dataframe[1].value
    assert set(overview["task"]) == set(TASKS)


def test_data_dir_replaces_the_demo_for_the_tasks_it_has(monkeypatch, shared):
    monkeypatch.setenv("KLUE_VIZ_DATA_DIR", str(shared))
    at = open_page(PAGE_FILES["ynat"])
    assert any("embedded demo" in plain(c.value) for c in at.caption)  # no YNAT dev file in shared/klue
    at.switch_page(PAGE_FILES["sts"]).run()
    assert any("klue-sts-v1.1_dev.json" in plain(c.value) and "519" in c.value for c in at.caption)
    assert any("No STS run" in i.value for i in at.info)


def test_hostile_file_names_and_values_stay_text(tmp_path):
    """A file name and a label carrying Markdown and HTML are shown literally, never rendered."""
    at = open_page(PAGE_FILES["ynat"])
    hostile = "<img src=x onerror=alert(1)>![x](http://e.vil)"
    data = ('{"guid": "ynat-v1_dev_00000-demo", "label": "' + hostile.replace('"', "'") + '"}\n').encode()
    at.file_uploader(key="pred_upload").set_value([(f"{hostile}.jsonl", data, "application/json")]).run()
    assert not at.exception
    texts = [e.value for e in at.error] + [m.value for m in at.markdown] + [c.value for c in at.caption]
    assert any("\\<img" in t or "&lt;img" in t for t in texts)
    assert not any("<img src=x" in t and "\\<img" not in t and "&lt;img" not in t for t in texts)
    assert not any("](http://e.vil)" in t for t in texts)


def test_confidence_intervals_and_paired_comparison_on_the_page():
    at = open_page(PAGE_FILES["nli"])
    at.toggle(key="show_ci").set_value(True).run()
    assert not at.exception and any("95% CI accuracy" in plain(c.value) for c in at.caption)
    at.selectbox(key="compare").set_value(at.selectbox(key="compare").options[1]).run()
    at.toggle(key="paired").set_value(True).run()
    assert not at.exception
    assert any("difference" in df.value.columns for df in at.dataframe)


def test_uploaded_official_gold_replaces_the_demo_for_its_task(shared):
    at = open_page()
    at.radio(key="gold_source_widget").set_value("upload").run()
    gold = shared / "klue-sts-v1.1" / "klue-sts-v1.1_dev.json"
    at.file_uploader(key="gold_upload").set_value([("my-sts-dev.json", gold.read_bytes(), "application/json")]).run()
    assert not at.exception and any("STS gold" in plain(c.value) for c in at.caption)
    at.switch_page(PAGE_FILES["sts"]).run()
    assert any("uploaded my-sts-dev.json" in plain(c.value) and "519" in c.value for c in at.caption)
    at.switch_page(PAGE_FILES["nli"]).run()
    assert any("No gold file uploaded for NLI" in plain(c.value) for c in at.caption)
