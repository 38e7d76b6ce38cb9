"""Suites told by their manifest, kept in the store and removed from it (issue 30: "a probe set is added like a gold").

The suite here is written by hand, two NLI cases made from the demo's first two examples, so every expected figure is
read off the files below: which zip or folder is a suite, which runs a removal takes, which bytes and golds it leaves.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
import sqlite3
import zipfile
from pathlib import Path

import pytest
import sqlalchemy as sa
from streamlit.testing.v1 import AppTest

from klue_viz.cli.main import main
from klue_viz.core.problems import InputError
from klue_viz.probes.score import holds_suite, probe_set_from_zip, score_run, suite_files_from_zip
from klue_viz.reading.demo import DEMO_BENCHMARK
from klue_viz.reading.suite_files import manifest_prefixes
from klue_viz.scoring.benchmark import folder_files, prediction_files
from klue_viz.store.annotations import Store
from klue_viz.store.golds import GoldStore
from klue_viz.store.probe_runs import SuiteStore
from klue_viz.store.runs import RunStore
from klue_viz.tasks import get_task
from klue_viz.ui.behaviour import suite_folders
from klue_viz.ui.home import PAGE_FILES
from tests.conftest import REPO
from tests.test_app import plain

GOLD_NAME = "klue-nli-v1.1_dev.json"
SOURCES = json.loads((DEMO_BENCHMARK / "klue-nli-v1.1" / GOLD_NAME).read_text(encoding="utf-8"))[:2]
#: The two perturbed copies: a typo in the first premise (세종대왕 → 세종대앙), a space dropped in the second hypothesis.
PERTURBED = [dict(SOURCES[0], guid="klue-nli-v1_typo~dev_00000-demo", premise=SOURCES[0]["premise"].replace("세종대왕", "세종대앙")),
             dict(SOURCES[1], guid="klue-nli-v1_spacing~dev_00001-demo", hypothesis=SOURCES[1]["hypothesis"].replace("한글 외에", "한글외에"))]
CASES = [{"guid": PERTURBED[0]["guid"], "source_guid": SOURCES[0]["guid"], "test": "typo", "capability": "robustness", "type": "INV",
          "expect": None, "edits": [{"field": "premise", "before": "왕", "after": "앙"}]},
         {"guid": PERTURBED[1]["guid"], "source_guid": SOURCES[1]["guid"], "test": "spacing", "capability": "robustness", "type": "INV",
          "expect": None, "edits": [{"field": "hypothesis", "before": " ", "after": ""}]}]


def suite_files(cases: list[dict] = CASES) -> dict[str, bytes]:
    """The files of the hand-made suite, by path in its folder, as `klue-viz probe make` lays them out."""
    return {"manifest.jsonl": "".join(json.dumps(c, ensure_ascii=False) + "\n" for c in cases).encode("utf-8"),
            GOLD_NAME: json.dumps(PERTURBED, ensure_ascii=False).encode("utf-8"),
            f"sources/{GOLD_NAME}": json.dumps(SOURCES, ensure_ascii=False).encode("utf-8"),
            "README.md": b"# a suite written by hand\n"}


def write_folder(folder: Path, files: dict[str, bytes]) -> Path:
    for rel, data in files.items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_bytes(data)
    return folder


def zipped(files: dict[str, bytes], prefix: str = "") -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for rel, data in files.items():
            archive.writestr(prefix + rel, data)
    return out.getvalue()


def run_bytes(flip_first: bool) -> bytes:
    """Predictions on the suite and its sources: the gold labels, the first perturbed case's flipped when asked."""
    labels = {r["guid"]: r["gold_label"] for r in [*SOURCES, *PERTURBED]}
    if flip_first:
        labels[PERTURBED[0]["guid"]] = "contradiction"
    return "".join(json.dumps({"guid": g, "label": label}) + "\n" for g, label in labels.items()).encode("utf-8")


@pytest.fixture
def db(db_url, monkeypatch) -> str:
    """The store the app uses: an empty database, on SQLite and on PostgreSQL (conftest's db_url), its tables made here (the
    app's store, kept once per server and URL, made them for the test before)."""
    Store(db_url)
    monkeypatch.setenv("KLUE_VIZ_DB", db_url)
    monkeypatch.delenv("KLUE_VIZ_DATA_DIR", raising=False)
    return db_url


# ---- a suite is told by its manifest ---------------------------------------------------------------------------

def test_the_manifest_is_looked_for_at_the_top_or_in_one_top_level_folder():
    assert manifest_prefixes(["manifest.jsonl", "a/manifest.jsonl"]) == [""]
    assert manifest_prefixes(["suite/manifest.jsonl", "suite/x.json"]) == ["suite/"]
    assert manifest_prefixes(["ner/manifest.jsonl", "nli/manifest.jsonl"]) == ["ner/", "nli/"]
    assert manifest_prefixes(["out/suites/manifest.jsonl"]) == []  # two folders down: not a zip of a suite folder
    assert manifest_prefixes(["__MACOSX/manifest.jsonl", ".hidden/manifest.jsonl"]) == []


@pytest.mark.parametrize("prefix", ["", "nli-suite/"])
def test_a_zip_of_the_folder_or_of_its_files_is_read_the_same(prefix):
    task = get_task("nli")
    found, files = suite_files_from_zip(zipped(suite_files(), prefix), "s.zip")
    assert found.facts.name == "nli" and files == suite_files()
    probes = probe_set_from_zip(task, zipped(suite_files(), prefix), "s.zip")
    assert [line["guid"] for line in probes.manifest] == [c["guid"] for c in CASES]
    behaviour = score_run(probes, "r", run_bytes(flip_first=True), "r.jsonl")
    assert {t.test: (t.failures, t.n) for t in behaviour.tests} == {"typo": (1, 1), "spacing": (0, 1)}


def test_a_zip_that_is_no_suite_is_named_with_what_was_expected():
    task = get_task("nli")
    with pytest.raises(InputError, match=r"^predictions\.zip: no manifest\.jsonl in the zip; expected manifest\.jsonl at its top or in "
                                         r"one top-level folder, beside the perturbed gold file and sources/"):
        probe_set_from_zip(task, zipped({"model/nli.jsonl": run_bytes(False)}), "predictions.zip")
    with pytest.raises(InputError, match=r"^deep\.zip: no manifest\.jsonl in the zip"):
        probe_set_from_zip(task, zipped(suite_files(), "out/suites/"), "deep.zip")
    other = {rel: data for rel, data in suite_files().items() if rel == "manifest.jsonl"}
    with pytest.raises(InputError, match=r"^bare\.zip: no suite of NLI beside manifest\.jsonl; expected"):
        probe_set_from_zip(task, zipped(other), "bare.zip")
    impostor = dict(suite_files(), **{"manifest.jsonl": b'{"file": "a.json", "sha": "00"}\n'})
    with pytest.raises(InputError, match=r"^other\.zip: manifest\.jsonl is not a suite's manifest \(its first line needs guid, "
                                         r"source_guid, test, capability, type, expect, edits\)"):
        probe_set_from_zip(task, zipped(impostor), "other.zip")
    both = io.BytesIO(zipped(suite_files(), "a/"))
    with zipfile.ZipFile(both, "a") as archive:
        for rel, data in suite_files().items():
            archive.writestr("b/" + rel, data)
    with pytest.raises(InputError, match=r"^two\.zip: more than one suite of NLI beside a/manifest\.jsonl, b/manifest\.jsonl"):
        probe_set_from_zip(task, both.getvalue(), "two.zip")


def test_a_folder_is_a_suite_of_a_task_by_its_manifest_and_gold(tmp_path, monkeypatch):
    nli, ner = get_task("nli"), get_task("ner")
    suite = write_folder(tmp_path / "data" / "suites" / "kept", suite_files())
    # named like a suite, with a manifest of another tool: not one
    impostor = write_folder(tmp_path / "data" / "nli-suite", dict(suite_files(), **{"manifest.jsonl": b'{"path": "x", "size": 3}\n'}))
    # a manifest of a test NLI has not (distractor is MRC's) beside NLI's gold file
    foreign = write_folder(tmp_path / "data" / "mrc-like", suite_files([dict(c, test="distractor") for c in CASES]))
    assert holds_suite(nli, suite) and not holds_suite(ner, suite)
    assert not holds_suite(nli, impostor) and not holds_suite(nli, foreign)
    monkeypatch.setenv("KLUE_VIZ_DATA_DIR", str(tmp_path / "data"))
    assert suite_folders(nli) == [suite]
    assert suite_folders(ner) == []


def test_a_suite_given_as_prediction_files_is_refused_not_stored_as_runs(tmp_path, capsys):
    with pytest.raises(InputError, match=r"^suite\.zip is a behavioural test suite \(nli-suite/manifest\.jsonl\), not prediction files: "
                                         r"nothing was stored"):
        prediction_files("suite.zip", zipped(suite_files(), "nli-suite/"))
    folder = write_folder(tmp_path / "nli-suite", suite_files())
    with pytest.raises(InputError, match=r"nli-suite is a behavioural test suite \(manifest\.jsonl\), not prediction files"):
        folder_files(folder)
    (tmp_path / "suite.zip").write_bytes(zipped(suite_files(), "nli-suite/"))
    assert main(["runs", "add", str(tmp_path / "suite.zip"), str(folder)]) == 1
    out = capsys.readouterr().out
    assert out.count("is a behavioural test suite") == 2
    assert RunStore(Store()).list() == []
    # a zip of prediction files that happens to hold a manifest of something else is read as before
    files = prediction_files("model.zip", zipped({"manifest.jsonl": b'{"file": "nli.jsonl"}\n', "nli.jsonl": run_bytes(False)}, "model/"))
    assert sorted(f.name for f in files) == ["manifest.jsonl", "nli.jsonl"]


# ---- kept and removed --------------------------------------------------------------------------------------------

def test_removing_a_suite_takes_its_runs_and_their_unshared_bytes(db_url):
    files = suite_files()
    database = Store(db_url)
    suites, runs, golds = SuiteStore(database), RunStore(database), GoldStore(database)
    added = suites.add_suite("nli", "kept", files["manifest.jsonl"].decode(), (GOLD_NAME, files[GOLD_NAME]),
                             (f"sources/{GOLD_NAME}", files[f"sources/{GOLD_NAME}"]), uploader="지민")
    other = suites.add_suite("nli", "other", files["manifest.jsonl"].decode(), (GOLD_NAME, files[GOLD_NAME]),
                             (f"sources/{GOLD_NAME}", files[f"sources/{GOLD_NAME}"]), readme="another README")
    assert (added, other) == ("kept", "other")
    flipped, plain = run_bytes(True), run_bytes(False)
    suites.add_run("nli", "kept", "flipped.jsonl", flipped)
    suites.add_run("nli", "kept", "plain.jsonl", plain)
    suites.add_run("nli", "other", "plain.jsonl", plain)
    runs.add("nli", "dev.jsonl", flipped)  # an ordinary run with the bytes of a run on the suite
    assert [(e.name, e.runs, e.uploader) for e in suites.entries("nli")] == [("kept", 2, "지민"), ("other", 1, "")]
    assert suites.entries("ner") == []

    assert suites.remove_suite("nli", "kept") == 2
    assert suites.suites("nli") == ["other"] and [r.suite for r in suites.runs("nli")] == ["other"]
    sha = {name: hashlib.sha256(data).hexdigest() for name, data in [("flipped", flipped), ("plain", plain)]}
    assert suites.data(sha["flipped"]) == flipped  # the ordinary run still points at them
    assert suites.data(sha["plain"]) == plain  # the run on the other suite does
    assert golds.get(hashlib.sha256(files[GOLD_NAME]).hexdigest()).data == files[GOLD_NAME]  # golds stay, as uploaded golds do
    assert suites.remove_suite("nli", "kept") is None

    assert suites.remove_suite("nli", "other") == 1
    with pytest.raises(InputError, match="removed meanwhile"):
        suites.data(sha["plain"])  # nothing points at them any more
    assert runs.data(sha["flipped"]) == flipped and suites.entries() == []


def test_runs_remove_whole_suite_and_runs_add_take_a_zip(db_url, monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("KLUE_VIZ_DB", db_url)
    (tmp_path / "kept.zip").write_bytes(zipped(suite_files(), "anything/"))
    run = tmp_path / "flipped.jsonl"
    run.write_bytes(run_bytes(True))
    assert main(["runs", "add", "--probes", str(tmp_path / "kept.zip"), str(run)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("suite\tnli\tkept\t2 cases") and out[1].startswith("nli\tkept\tflipped\t1 of 2 cases fail")

    assert main(["runs", "remove", "--task", "nli", "--probes", "kept"]) == 2
    assert "give run NAMEs, or --probes SUITE --whole-suite" in capsys.readouterr().err
    assert main(["runs", "remove", "--task", "nli", "--probes", "kept", "--whole-suite", "flipped"]) == 2
    assert main(["runs", "remove", "--task", "nli", "--whole-suite"]) == 2
    assert SuiteStore(Store(db_url)).suites("nli") == ["kept"]  # nothing removed by a refused command
    capsys.readouterr()
    assert main(["runs", "remove", "--task", "nli", "--probes", "kept", "--whole-suite"]) == 0
    assert capsys.readouterr().out == "removed the nli suite kept and its 1 run(s); its gold files stay stored as uploaded golds\n"
    assert SuiteStore(Store(db_url)).entries() == []
    assert main(["runs", "remove", "--task", "nli", "--probes", "kept", "--whole-suite"]) == 1
    assert "there is no NLI suite named kept (stored: none)" in capsys.readouterr().err


# ---- in the app: an uploaded suite and its runs are kept; a stored suite is removed on the home page -----------------

def nli_page() -> AppTest:
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=180).run()
    at.switch_page(PAGE_FILES["nli"]).run()
    assert not at.exception
    return at


def upload_suite_and_run(at: AppTest) -> AppTest:
    at.file_uploader(key="behaviour_zip_nli").set_value(("kept.zip", zipped(suite_files(), "kept/"), "application/zip")).run()
    at.file_uploader(key="behaviour_runs_nli").set_value([("flipped.jsonl", run_bytes(True), "application/json")]).run()
    assert not at.exception
    return at


#: The two cells of the hand-made suite: one case each, one failing (Wilson 95% by hand: z²/(1+z²) = 0.793 for 0 of 1).
def cells(at: AppTest) -> set[str]:
    return {b.label for b in at.button if b.key and b.key.startswith("behaviour-")}


@pytest.mark.slow
def test_an_uploaded_suite_and_its_run_are_kept_and_offered_after_a_reload(db):
    at = upload_suite_and_run(nli_page())
    assert cells(at) == {"100.0% of 1 [20.7, 100.0]", "0.0% of 1 [0.0, 79.3]"}  # typo: its one case flipped; spacing: kept
    said = [plain(c.value) for c in at.caption]
    assert any("kept.zip: stored as the suite kept; a reload offers it as «stored suite: kept»" in c for c in said), said
    assert not at.warning
    suites = SuiteStore(Store(db))
    assert suites.suites("nli") == ["kept"] and [(r.name, r.file_name) for r in suites.runs("nli", "kept")] == [("flipped", "flipped.jsonl")]

    again = nli_page()  # a reload: a new session, nothing uploaded
    picker = again.selectbox(key="behaviour_folder_nli")
    assert picker.options == ["(none)", "stored suite: kept"]
    picker.set_value("stored suite: kept").run()
    assert not again.exception
    assert cells(again) == {"100.0% of 1 [20.7, 100.0]", "0.0% of 1 [0.0, 79.3]"}
    assert any(plain(m.value) == "flipped" for m in again.markdown)  # the run's row, kept without an upload


@pytest.mark.slow
def test_a_full_disk_keeps_the_upload_in_the_session_and_says_so(db, monkeypatch):
    def disk_full(conn, cursor, statement, parameters, context, executemany):
        if re.match(r"\s*(INSERT|UPDATE|DELETE)", statement, re.I):
            raise sqlite3.OperationalError("database or disk is full")

    at = nli_page()
    sa.event.listen(sa.engine.Engine, "before_cursor_execute", disk_full)
    try:
        upload_suite_and_run(at)
    finally:
        sa.event.remove(sa.engine.Engine, "before_cursor_execute", disk_full)
    assert cells(at) == {"100.0% of 1 [20.7, 100.0]", "0.0% of 1 [0.0, 79.3]"}  # scored from the upload all the same
    warnings = [plain(w.value) for w in at.warning]
    assert any(w.startswith("kept.zip is read in this session only, not stored: the disk holding the annotation database is full")
               for w in warnings), warnings
    assert any(w.startswith("flipped.jsonl is scored in this session only, not stored: its suite could not be stored") for w in warnings)
    assert SuiteStore(Store(db)).entries() == []


@pytest.mark.slow
def test_a_stored_suite_is_removed_on_the_home_page(db):
    upload_suite_and_run(nli_page())
    home = AppTest.from_file(str(REPO / "app.py"), default_timeout=180).run()
    assert home.selectbox(key="manage_suite").options == ["NLI · kept"]
    assert any("1 run(s) kept on it" in plain(c.value) for c in home.caption)
    home.button(key="remove_suite").click().run()
    assert not home.exception
    assert [plain(s.value) for s in home.success] == ["Removed the suite kept and its 1 run(s)."]
    assert SuiteStore(Store(db)).entries() == []
    assert not [s for s in home.selectbox if s.key == "manage_suite"]


@pytest.mark.slow
def test_a_suite_folder_dropped_among_prediction_folders_is_refused_once(db):
    home = AppTest.from_file(str(REPO / "app.py"), default_timeout=180).run()
    files = [(f"nli-suite/{rel}", data, "application/json") for rel, data in suite_files().items()]
    home.file_uploader(key="home_folder_upload").set_value([*files, ("model-a/nli.jsonl", run_bytes(False), "application/json")]).run()
    assert not home.exception
    assert [plain(e.value) for e in home.error] == [
        "nli-suite/ is a behavioural test suite (nli-suite/manifest.jsonl), not prediction files: nothing of it was stored. "
        "Add it zipped in a task page's Behaviour section, or with `klue-viz runs add --probes`"]
    assert [(r.task, r.name) for r in RunStore(Store(db)).list()] == [("nli", "model-a")]  # the model's file, and only it


@pytest.mark.slow
def test_a_run_on_a_folder_suite_is_said_to_be_kept_in_the_session_only(db, tmp_path, monkeypatch):
    folder = write_folder(tmp_path / "data" / "suites" / "nli", suite_files())
    monkeypatch.setenv("KLUE_VIZ_DATA_DIR", str(tmp_path / "data"))
    at = nli_page()
    at.selectbox(key="behaviour_folder_nli").set_value(str(folder)).run()
    at.file_uploader(key="behaviour_runs_nli").set_value([("flipped.jsonl", run_bytes(True), "application/json")]).run()
    assert not at.exception
    assert cells(at) == {"100.0% of 1 [20.7, 100.0]", "0.0% of 1 [0.0, 79.3]"}
    assert any(plain(w.value).startswith("flipped.jsonl is scored in this session only, not stored: its suite is a folder, not a "
                                         "stored suite") for w in at.warning)
    assert SuiteStore(Store(db)).entries() == []


@pytest.mark.slow
def test_the_problems_of_a_suite_and_of_its_runs_are_listed_in_the_section(db):
    at = nli_page()
    lost = dict(CASES[0], guid="klue-nli-v1_typo~dev_00099-demo")  # a case whose perturbed example is not in the gold file
    at.file_uploader(key="behaviour_zip_nli").set_value(("odd.zip", zipped(suite_files([*CASES, lost])), "application/zip")).run()
    run = run_bytes(True) + b'{"guid": "stray", "label": "neutral"}\n{broken\n'
    at.file_uploader(key="behaviour_runs_nli").set_value([("odd-run.jsonl", run, "application/json")]).run()
    assert not at.exception
    assert cells(at) == {"100.0% of 1 [20.7, 100.0]", "0.0% of 1 [0.0, 79.3]"}
    labels = [e.label for e in at.expander]
    assert "1 problem(s) in the suite's files" in labels and "2 problem(s) in these runs' files" in labels, labels
    tables = [t.value for t in at.dataframe]
    said = [message for frame in tables if "message" in frame for message in frame["message"]]
    assert any(m.startswith("1 of 3 cases left out: their perturbed example or their source is not in the suite's gold files "
                            "(e.g. klue-nli-v1_typo~dev_00099-demo)") for m in said), said
    assert "1 guid(s) in neither the suite's perturbed nor its source examples were ignored: stray" in said
    assert any(m.startswith("invalid JSON") for m in said), said
