"""Runs in the app: stored once for every session, zips routed to their tasks, the model table, the bounded cache."""

from __future__ import annotations

import html
import io
import json
import re
import zipfile

import pytest
from sklearn.metrics import f1_score
from streamlit.testing.v1 import AppTest

from klue_viz.core.cache import BoundedCache
from klue_viz.core.problems import InputError
from klue_viz.reading.demo import DEMO_BENCHMARK, demo_runs
from klue_viz.scoring.benchmark import prediction_files
from klue_viz.store.annotations import Annotation, Store
from klue_viz.store.runs import RunStore
from klue_viz.tasks import TASKS
from klue_viz.ui.home import PAGE_FILES
from tests.conftest import REPO
from tests.test_app import plain

TIMEOUT = 120
HOSTILE = "<img src=x onerror=alert(1)>"


@pytest.fixture
def db(monkeypatch, tmp_path) -> str:
    """A database of this test's own, so runs stored by other tests do not show."""
    path = str(tmp_path / "runs.sqlite3")
    monkeypatch.setenv("KLUE_VIZ_DB", path)
    return path


def open_page(page: str | None = None) -> AppTest:
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=TIMEOUT).run()
    if page:
        at.switch_page(page).run()
    assert not at.exception
    return at


def zipped(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def ynat_macro_f1(path) -> str:
    """YNAT macro F1 of a demo run, by scikit-learn straight from the files."""
    gold_file = next((DEMO_BENCHMARK / "ynat-v1.1").glob("*_dev.json"))
    gold = {r["guid"]: r["label"] for r in json.loads(gold_file.read_text(encoding="utf-8"))}
    preds = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    names = [p["label"] if isinstance(p["label"], str) else TASKS["ynat"].labels[p["label"]] for p in preds]
    return f"{100 * f1_score([gold[p['guid']] for p in preds], names, average='macro'):.2f}"


def test_a_zip_of_one_model_is_routed_to_its_tasks_and_named_by_its_folder():
    ner, ynat = next(demo_runs("ner")), next(demo_runs("ynat"))
    data = zipped({"klue-bert/ner.jsonl": ner.read_bytes(), "klue-bert/ynat.jsonl": ynat.read_bytes(), "__MACOSX/._ner.jsonl": b"x", "README.md": b"hi"})
    files = prediction_files("predictions.zip", data)
    assert [(f.name, f.model) for f in files] == [("ner.jsonl", "klue-bert"), ("ynat.jsonl", "klue-bert")]
    flat = prediction_files("my-model.zip", zipped({"ner.jsonl": ner.read_bytes()}))
    assert [f.model for f in flat] == ["my-model"]
    with pytest.raises(InputError, match="not a readable zip"):
        prediction_files("broken.zip", b"PK not really")


@pytest.mark.slow
def test_an_uploaded_folder_is_routed_to_its_tasks_and_named_by_the_folder(db):
    """The browser names a folder's files by their path in it (klue-bert/ner.jsonl); hidden files are left out."""
    ner, ynat = next(demo_runs("ner")), list(demo_runs("ynat"))[1]
    at = open_page()
    at.file_uploader(key="home_folder_upload").set_value([("klue-bert/ner.jsonl", ner.read_bytes(), "application/json"),
                                                          ("klue-bert/ynat.jsonl", ynat.read_bytes(), "application/json"),
                                                          ("klue-bert/._ner.jsonl", b"\x00\x05", "application/json")]).run()
    assert not at.exception and not at.error
    # a file named after its task takes its folder's name (issue 28): one run per task, named after the model
    assert [(r.task, r.name, r.file_name, r.model) for r in RunStore(Store(db)).list()] == [
        ("ner", "klue-bert", "ner.jsonl", "klue-bert"), ("ynat", "klue-bert", "ynat.jsonl", "klue-bert")]
    table = html.unescape(next(m.value for m in at.markdown if "kv-model-table" in m.value))
    row = next(part for part in table.split("<tr>") if "<th scope='row'>klue-bert</th>" in part)
    assert '<a href="/ynat?run=klue-bert" target="_self">' + ynat_macro_f1(ynat) in row and 'href="/ner?run=klue-bert"' in row


def test_a_zip_bomb_is_refused_before_it_is_unpacked(monkeypatch):
    monkeypatch.setenv("KLUE_VIZ_MAX_UPLOAD_MB", "0.01")  # about 10 KB
    data = zipped({"big/ner.jsonl": b"0" * 200_000})
    assert len(data) < 2_000
    with pytest.raises(InputError, match="over the 10.2 KB limit"):
        prediction_files("bomb.zip", data)


@pytest.mark.slow
def test_runs_uploaded_in_one_session_are_seen_by_a_new_one_with_the_model_table(db):
    at = open_page()
    ner, ynat = next(demo_runs("ner")), list(demo_runs("ynat"))[1]
    data = zipped({"klue-bert/ner.jsonl": ner.read_bytes(), "klue-bert/ynat.jsonl": ynat.read_bytes()})
    at.file_uploader(key="home_upload").set_value([("klue-bert.zip", data, "application/zip")]).run()
    assert not at.exception and not at.error
    assert at.dataframe[0].value[["task", "run", "model"]].values.tolist() == [["ner", "klue-bert", "klue-bert"], ["ynat", "klue-bert", "klue-bert"]]
    assert [(r.task, r.name, r.model) for r in RunStore(Store(db)).list()] == [("ner", "klue-bert", "klue-bert"), ("ynat", "klue-bert", "klue-bert")]

    fresh = open_page()  # another session: a new tab, or after a restart
    table = html.unescape(next(m.value for m in fresh.markdown if "kv-model-table" in m.value))
    row = next(part for part in re.split(r"<tr\b", table) if "<th scope='row'>klue-bert</th>" in part)  # demo rows carry a class
    assert '<a href="/ynat?run=klue-bert" target="_self">' + ynat_macro_f1(ynat) in row
    assert 'href="/ner?run=klue-bert"' in row and row.count("kv-empty") == 6
    assert fresh.selectbox(key="manage_run").options == ["NER · klue-bert", "YNAT · klue-bert"]


@pytest.mark.slow
def test_a_file_over_the_limit_is_refused_with_the_limit_and_how_to_raise_it(db, monkeypatch):
    monkeypatch.setenv("KLUE_VIZ_MAX_UPLOAD_MB", "0.001")
    at = open_page(PAGE_FILES["ner"])
    run = next(demo_runs("ner"))
    at.file_uploader(key="pred_upload").set_value([("big.jsonl", run.read_bytes(), "application/json")]).run()
    assert not at.exception
    message = " ".join(e.value for e in at.error).replace("\\", "")
    assert "over the 1.0 KB limit" in message and "KLUE_VIZ_MAX_UPLOAD_MB" in message
    assert RunStore(Store(db)).list() == []


@pytest.mark.slow
def test_a_file_of_another_task_or_with_nothing_readable_is_not_stored(db):
    at = open_page(PAGE_FILES["ner"])
    ynat = next(demo_runs("ynat"))
    at.file_uploader(key="pred_upload").set_value([("ynat.jsonl", ynat.read_bytes(), "application/json"),
                                                   ("broken.jsonl", b'{"guid": 1\n{{{', "application/json")]).run()
    assert not at.exception
    errors = " ".join(e.value for e in at.error).replace("\\", "")
    assert "looks like a YNAT file, not NER" in errors and "no record could be read" in errors
    assert RunStore(Store(db)).list() == []


@pytest.mark.slow
def test_intervals_in_the_model_table_on_demand(db):
    at = open_page()
    at.toggle(key="home_ci").set_value(True).run()
    table = html.unescape(next(m.value for m in at.markdown if "kv-model-table" in m.value))
    assert not at.exception and re.search(r"\d+\.\d\d \[\d+\.\d\d, \d+\.\d\d\]", table)


@pytest.mark.slow
def test_rename_then_remove_a_run_keeping_or_deleting_its_annotations(db):
    at = open_page(PAGE_FILES["ner"])
    run = next(demo_runs("ner"))
    at.file_uploader(key="pred_upload").set_value([("mine.jsonl", run.read_bytes(), "application/json")]).run()
    store = Store(db)
    store.save(Annotation("ner", "klue-ner-v1_dev_00000", "mine", "지민", tags=["boundary"]))
    home = open_page()
    home.selectbox(key="manage_run").set_value("NER · mine").run()
    rename = next(t for t in home.text_input if t.key.startswith("rename_"))
    rename.set_value(f"{HOSTILE} v2").run()
    home.button(key="rename_run").click().run()
    assert not home.exception and [r.name for r in RunStore(store).list()] == [f"{HOSTILE} v2"]
    assert [a.run for a in store.find()] == [f"{HOSTILE} v2"]
    assert not any(HOSTILE in m.value for m in home.markdown)  # escaped in the table
    assert any(HOSTILE in html.unescape(m.value) for m in home.markdown if "kv-model-table" in m.value)
    home.checkbox(key="remove_annotations").check().run()
    home.button(key="remove_run").click().run()
    assert not home.exception and RunStore(store).list() == [] and store.find() == []
    page = open_page(PAGE_FILES["ner"])
    assert f"{HOSTILE} v2" not in (page.selectbox(key="run").options if page.selectbox else [])


def test_the_cache_is_bounded_in_bytes_and_forgets_what_nobody_used():
    now = [0.0]
    cache = BoundedCache(max_bytes=100, ttl=60, size_of=len, clock=lambda: now[0])
    calls = []

    def make(value):
        calls.append(value)
        return value

    assert cache.get("a", lambda: make("x" * 40)) == "x" * 40
    cache.get("a", lambda: make("never"))
    cache.get("b", lambda: make("y" * 40))
    cache.get("a", lambda: make("never"))  # a is now the most recently used
    cache.get("c", lambda: make("z" * 40))  # 120 bytes > 100: b, the least recently used, leaves
    assert calls == ["x" * 40, "y" * 40, "z" * 40] and "b" not in cache and cache.total == 80
    assert cache.get("huge", lambda: "h" * 500) == "h" * 500 and "huge" not in cache  # larger than the budget: not kept
    now[0] = 61
    assert cache.get("d", lambda: "d") == "d" and len(cache) == 1 and cache.total == 1  # a and c expired


@pytest.mark.slow
def test_cli_evaluates_a_folder_of_several_tasks_against_the_real_dev_sets(shared, tmp_path, capsys):
    """Each file's task is detected; the numbers agree with scikit-learn and scipy reading the same files."""
    from scipy.stats import pearsonr
    from sklearn.metrics import accuracy_score

    from klue_viz.cli.main import main

    rng = __import__("random").Random(7)
    nli_gold = json.loads((shared / "klue-nli-v1.1" / "klue-nli-v1.1_dev.json").read_text(encoding="utf-8"))
    sts_gold = json.loads((shared / "klue-sts-v1.1" / "klue-sts-v1.1_dev.json").read_text(encoding="utf-8"))
    labels = ["entailment", "neutral", "contradiction"]
    nli_pred = [r["gold_label"] if rng.random() < 0.8 else rng.choice(labels) for r in nli_gold]
    sts_pred = [min(5.0, max(0.0, r["labels"]["label"] + rng.gauss(0, 0.8))) for r in sts_gold]
    model = tmp_path / "predictions" / "my-model"
    model.mkdir(parents=True)
    (model / "nli.jsonl").write_text("\n".join(json.dumps({"guid": r["guid"], "label": p}) for r, p in zip(nli_gold, nli_pred)), encoding="utf-8")
    (model / "sts.jsonl").write_text("\n".join(json.dumps({"guid": r["guid"], "score": p}) for r, p in zip(sts_gold, sts_pred)), encoding="utf-8")
    (tmp_path / "predictions" / "notes.csv").write_text("a,b\n1,2\n", encoding="utf-8")
    out = tmp_path / "table.json"
    assert main(["evaluate", "--gold", str(shared), "--pred", str(tmp_path / "predictions"), "--out", str(out)]) == 0
    printed = capsys.readouterr()
    assert "my-model" in printed.out and "NLI accuracy" in printed.out and "notes.csv: cannot tell which KLUE task" in printed.err
    payload = json.loads(out.read_text(encoding="utf-8"))
    by_task = {r["task"]: r for r in payload["runs"]}
    assert set(by_task) == {"nli", "sts"} and {r["model"] for r in payload["runs"]} == {"my-model"}
    assert by_task["nli"]["metrics"]["accuracy"] == pytest.approx(100 * accuracy_score([r["gold_label"] for r in nli_gold], nli_pred))
    assert by_task["sts"]["metrics"]["pearsonr"] == pytest.approx(100 * pearsonr([r["labels"]["real-label"] for r in sts_gold], sts_pred)[0])
    assert by_task["nli"]["coverage"]["n_scored"] == 3000 and by_task["nli"]["run"] == "my-model"  # named after its folder (issue 28)
    assert len(payload["failed"]) == 1


@pytest.mark.slow
def test_a_dropped_harness_folder_skips_its_yaml_and_scripts_with_one_note(db):
    """Issue 28, item 8: the folder uploader takes a harness folder's task YAMLs and scripts (a type it refused showed
    a red "not allowed" error per file) and the page skips them with one note; the prediction file is stored."""
    at = open_page()
    assert {"yaml", "yml", "py"} <= {t.lstrip(".") for t in at.file_uploader(key="home_folder_upload").proto.type}
    ner = next(demo_runs("ner"))
    at.file_uploader(key="home_folder_upload").set_value([("my-model/ner.jsonl", ner.read_bytes(), "application/json"),
                                                          ("my-model/klue_nli_mc.yaml", b"task: klue_nli_mc\n", "application/yaml"),
                                                          ("my-model/utils.py", b"def drop_guid(d):\n    return d\n", "text/x-python")]).run()
    assert not at.exception and not at.error
    assert [(r.task, r.model) for r in RunStore(Store(db)).list()] == [("ner", "my-model")]
    note = next(plain(i.value) for i in at.info if "Skipped" in i.value)
    assert "Skipped 2 file(s)" in note and "klue_nli_mc.yaml" in note and "utils.py" in note
