"""Behavioural test suites and the runs on them kept in the store (issue 30): `klue-viz runs add --probes DIR PRED`,
`runs list --probes`, `probe score --suite NAME` giving the same figures as the files, and the Behaviour section of a
task page listing a stored suite's runs without an upload.

Expected failure counts are the planted ones, counted here from the predictions the test writes."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from scipy.stats import binomtest
from streamlit.testing.v1 import AppTest

from klue_viz.cli.main import main
from klue_viz.core.problems import InputError
from klue_viz.probes.make import make_suite, write_suite
from klue_viz.reading.demo import DEMO_BENCHMARK
from klue_viz.store.annotations import Store
from klue_viz.store.golds import GoldStore
from klue_viz.store.probe_runs import SuiteStore
from klue_viz.store.runs import RunStore
from klue_viz.tasks import get_task
from klue_viz.ui.home import PAGE_FILES
from tests.conftest import REPO


def cell_name(failures: int, n: int) -> str:
    """A Behaviour cell's label: the failure rate, the cases and the 95% Wilson interval as scipy computes it."""
    interval = binomtest(failures, n).proportion_ci(method="wilson")
    return f"{100 * failures / n:.1f}% of {n} [{100 * interval.low:.1f}, {100 * interval.high:.1f}]"

NLI_GOLD = DEMO_BENCHMARK / "klue-nli-v1.1" / "klue-nli-v1.1_dev.json"
FLIP = {"entailment": "neutral", "neutral": "contradiction", "contradiction": "entailment"}


@pytest.fixture
def db(db_url, monkeypatch) -> str:
    """The store the commands and the app use: an empty database, on SQLite and on PostgreSQL (conftest's db_url)."""
    monkeypatch.setenv("KLUE_VIZ_DB", db_url)
    monkeypatch.delenv("KLUE_VIZ_DATA_DIR", raising=False)
    return db_url


@pytest.fixture(scope="module")
def suite(tmp_path_factory) -> tuple[Path, list]:
    """A suite of the demo NLI set (typo and spacing), written as `probe make` writes it, in a folder named nli-suite."""
    folder = tmp_path_factory.mktemp("suites") / "nli-suite"
    task = get_task("nli")
    made = make_suite(task, NLI_GOLD.read_text(encoding="utf-8"), NLI_GOLD.name, tests=["typo", "spacing"], seed=2)
    write_suite(task, made, folder)
    return folder, made.cases


def write_run(path: Path, records: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return path


def planted_records(cases: list, planted: set[str], with_sources: bool = True) -> list[dict]:
    """Gold labels as predictions, flipped on the planted perturbed guids (and the sources' gold labels, if asked)."""
    records = [{"guid": c.example.guid, "label": FLIP[c.example.label] if c.example.guid in planted else c.example.label} for c in cases]
    if with_sources:
        records += [{"guid": c.source.guid, "label": c.source.label} for c in {c.source.guid: c for c in cases}.values()]
    return records


def results_by_test(path: Path) -> dict[str, dict]:
    return {t["test"]: t for t in json.loads(path.read_text(encoding="utf-8"))["runs"][0]["tests"]}


@pytest.mark.slow
def test_runs_add_list_and_score_from_the_store_give_the_files_figures(db, suite, tmp_path, capsys):
    folder, cases = suite
    typo = [c.example.guid for c in cases if c.test == "typo"]
    planted = set(typo[::3])
    run = write_run(tmp_path / "planted.jsonl", planted_records(cases, planted))
    assert main(["runs", "add", "--probes", str(folder), str(run)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("suite\tnli\tnli-suite\t") and f"{len(cases)} cases" in out[0]
    assert out[1].startswith("nli\tnli-suite\tplanted\t") and f"{len(planted)} of {len(cases)} cases fail" in out[1]
    # the suite's gold is stored as an uploaded gold is, under the sha256 of its bytes
    gold_bytes = (folder / "klue-nli-v1.1_dev.json").read_bytes()
    assert GoldStore(Store(db)).get(hashlib.sha256(gold_bytes).hexdigest()).data == gold_bytes

    assert main(["runs", "list", "--probes"]) == 0
    listed = capsys.readouterr().out.splitlines()
    assert listed[0].split("\t") == ["task", "suite", "run", "model", "file", "size", "added", "uploader"]
    assert [line.split("\t")[:5] for line in listed[1:]] == [["nli", "nli-suite", "planted", "-", "planted.jsonl"]]

    assert main(["probe", "score", "--task", "nli", "--suite", "nli-suite", "--out", str(tmp_path / "stored.json")]) == 0
    assert main(["probe", "score", "--task", "nli", "--probes", str(folder), "--pred", str(run), "--out", str(tmp_path / "files.json")]) == 0
    stored, files = results_by_test(tmp_path / "stored.json"), results_by_test(tmp_path / "files.json")
    assert stored == files
    assert (stored["typo"]["failures"], stored["typo"]["n"]) == (len(planted), len(typo))
    assert stored["spacing"]["failures"] == 0


@pytest.mark.slow
def test_a_suite_run_without_sources_takes_the_stored_dev_run_of_its_name(db, suite, tmp_path, capsys):
    folder, cases = suite
    spacing = [c.example.guid for c in cases if c.test == "spacing"]
    planted = set(spacing[:2])
    # the dev-set run, stored as an ordinary run: the demo gold's labels, so each source keeps its own label
    dev = write_run(tmp_path / "dev" / "model-b.jsonl", [{"guid": r["guid"], "label": r["gold_label"]}
                                                          for r in json.loads(NLI_GOLD.read_text(encoding="utf-8"))])
    on_suite = write_run(tmp_path / "suite" / "model-b.jsonl", planted_records(cases, planted, with_sources=False))
    assert main(["runs", "add", str(dev)]) == 0
    assert main(["runs", "add", "--probes", str(folder), str(on_suite)]) == 0
    assert "the sources' predictions from stored run model-b" in capsys.readouterr().out
    assert main(["probe", "score", "--task", "nli", "--suite", "nli-suite", "--out", str(tmp_path / "stored.json")]) == 0
    assert main(["probe", "score", "--task", "nli", "--probes", str(folder), "--pred", str(on_suite), "--source-pred", str(dev),
                 "--out", str(tmp_path / "files.json")]) == 0
    stored = results_by_test(tmp_path / "stored.json")
    assert stored == results_by_test(tmp_path / "files.json")
    assert (stored["spacing"]["failures"], stored["spacing"]["n"]) == (len(planted), len(spacing))
    # removing the ordinary run keeps the bytes a suite run shares with it
    runs = RunStore(Store(db))
    same = write_run(tmp_path / "again" / "model-b-copy.jsonl", planted_records(cases, planted, with_sources=False))
    assert main(["runs", "add", str(same)]) == 0  # no gold matches it: stored, scored later
    copy = runs.get("nli", "model-b-copy")
    runs.remove("nli", "model-b-copy", copy.version)
    suites = SuiteStore(Store(db))
    digest = suites.runs("nli", "nli-suite")[0].sha256
    assert suites.data(digest) == on_suite.read_bytes()
    # and removing the run on the suite removes them, the ordinary dev run staying
    capsys.readouterr()
    assert main(["runs", "remove", "--task", "nli", "--probes", "nli-suite", "model-b"]) == 0
    assert suites.runs("nli", "nli-suite") == [] and runs.get("nli", "model-b") is not None
    with pytest.raises(InputError, match="removed meanwhile"):
        suites.data(digest)
    assert main(["runs", "remove", "--task", "nli", "--probes", "nli-suite", "model-b"]) == 1
    assert "no NLI run named model-b on the suite nli-suite" in capsys.readouterr().err


@pytest.mark.slow
def test_stored_suites_are_named_once_and_bad_ones_are_said(db, suite, tmp_path, capsys):
    folder, cases = suite
    run = write_run(tmp_path / "r.jsonl", planted_records(cases, set()))
    assert main(["runs", "add", "--probes", str(folder), str(run)]) == 0
    assert main(["runs", "add", "--probes", str(folder), str(run)]) == 0  # the same suite and run: stored once
    other = tmp_path / "elsewhere" / "nli-suite"
    task = get_task("nli")
    write_suite(task, make_suite(task, NLI_GOLD.read_text(encoding="utf-8"), NLI_GOLD.name, tests=["typo"], seed=5), other)
    assert main(["runs", "add", "--probes", str(other), str(run)]) in (0, 1)
    assert SuiteStore(Store(db)).suites("nli") == ["nli-suite", "nli-suite-2"]
    assert [r.suite for r in SuiteStore(Store(db)).runs("nli")][:1] == ["nli-suite"]
    capsys.readouterr()
    (tmp_path / "empty").mkdir()
    assert main(["runs", "add", "--probes", str(tmp_path / "empty"), str(run)]) == 2
    assert "no manifest.jsonl" in capsys.readouterr().err
    assert main(["probe", "score", "--task", "nli", "--suite", "missing"]) == 2
    assert "stored: nli-suite, nli-suite-2" in capsys.readouterr().err


@pytest.mark.slow
def test_the_behaviour_section_lists_a_stored_suites_runs(db, suite, tmp_path):
    folder, cases = suite
    typo = [c.example.guid for c in cases if c.test == "typo"]
    planted = set(typo[:2])
    run = write_run(tmp_path / "kept-run.jsonl", planted_records(cases, planted))
    assert main(["runs", "add", "--probes", str(folder), str(run)]) == 0
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=180).run()
    at.switch_page(PAGE_FILES["nli"]).run()
    picker = at.selectbox(key="behaviour_folder_nli")
    assert "stored suite: nli-suite" in picker.options
    picker.set_value("stored suite: nli-suite").run()
    assert not at.exception
    spacing = sum(c.test == "spacing" for c in cases)
    labels = {b.label for b in at.button}
    assert cell_name(len(planted), len(typo)) in labels  # the planted share, with its 95% interval as scipy gives it
    assert cell_name(0, spacing) in labels
    assert any(m.value.replace("\\", "") == "kept-run" for m in at.markdown)  # the run's row, without an upload
