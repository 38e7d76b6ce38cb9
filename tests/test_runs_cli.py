"""`klue-viz runs add | list | remove` (klue_viz/cli/runs.py) on the demo and the real dev sets."""

from __future__ import annotations

import json
import os
import random
import zipfile
from pathlib import Path

import pytest

from klue_viz.cli.main import main
from klue_viz.reading.demo import DEMO_BENCHMARK, demo_runs
from klue_viz.reading.gold_folders import allowed_gold_file, allowed_gold_folder
from klue_viz.scoring.evaluate import evaluate_file, load_gold, official_file
from klue_viz.store import kept_results, kept_scoring, parsed_golds
from klue_viz.store.annotations import Annotation, Store
from klue_viz.store.parsed_golds import ParsedGolds
from klue_viz.store.runs import RunStore
from klue_viz.tasks import get_task
from klue_viz.tasks.ner import tag_list

NER_DEMO = sorted(demo_runs("ner"))
NLI_DEMO = sorted(demo_runs("nli"))


@pytest.fixture
def db(tmp_path, monkeypatch) -> Path:
    path = tmp_path / "store.sqlite3"
    monkeypatch.setenv("KLUE_VIZ_DB", str(path))
    monkeypatch.delenv("KLUE_VIZ_DATA_DIR", raising=False)
    return path


def lines(capsys) -> tuple[list[str], str]:
    out = capsys.readouterr()
    return out.out.splitlines(), out.err


def test_add_files_folder_and_zip(db, tmp_path, capsys):
    folder = tmp_path / "model-x"
    folder.mkdir()
    (folder / "ner.jsonl").write_bytes(NER_DEMO[0].read_bytes())
    archive = tmp_path / "zipped-model.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("nli.jsonl", NLI_DEMO[1].read_bytes())
    assert main(["runs", "add", str(NLI_DEMO[0]), str(folder), str(archive)]) == 0
    out, err = lines(capsys)
    assert len(out) == 3
    task, run, model, coverage, metrics = out[0].split("\t")
    expected = evaluate_file(get_task("nli"), load_gold(get_task("nli"), DEMO_BENCHMARK), NLI_DEMO[0])
    assert (task, run, model) == ("nli", NLI_DEMO[0].stem, "-")
    assert coverage.startswith(f"{expected.coverage.n_scored}/{expected.coverage.n_gold} scored")
    assert metrics == f"accuracy={expected.scores.values['accuracy']:.2f}"
    # a file named after its task takes its folder's name; with no folder above, that folder names the model too
    assert out[1].split("\t")[:3] == ["ner", "model-x", "model-x"]
    assert out[2].split("\t")[:3] == ["nli", "zipped-model", "zipped-model"]  # so does the zip
    assert "[3/3]" in err
    stored = RunStore(Store(str(db))).list()
    assert sorted((r.task, r.name, r.model) for r in stored) == [("ner", "model-x", "model-x"), ("nli", NLI_DEMO[0].stem, ""),
                                                                 ("nli", "zipped-model", "zipped-model")]
    # every one of them is kept: the app reads them back without scoring
    results = kept_results.KeptResults(Store(str(db)))
    for run in stored:
        gold = load_gold(get_task(run.task), DEMO_BENCHMARK)
        assert results.summary(run.task, run.sha256, gold.sha256, False) is not None


def test_same_bytes_are_stored_once_and_model_overrides(db, tmp_path, capsys):
    copy = tmp_path / "again.jsonl"
    copy.write_bytes(NER_DEMO[0].read_bytes())
    assert main(["runs", "add", str(NER_DEMO[0]), str(copy), "--model", "mine"]) == 0
    out, _ = lines(capsys)
    assert [line.split("\t")[1] for line in out] == [NER_DEMO[0].stem, NER_DEMO[0].stem]
    assert [(r.name, r.model) for r in RunStore(Store(str(db))).list()] == [(NER_DEMO[0].stem, "mine")]


def test_refused_files_and_exit_codes(db, tmp_path, capsys, monkeypatch):
    junk = tmp_path / "notes.jsonl"
    junk.write_text('{"hello": 1}\n', encoding="utf-8")
    assert main(["runs", "add", str(junk), str(tmp_path / "missing.jsonl")]) == 1
    out, _ = lines(capsys)
    assert out[0].startswith(f"refused\t{junk}\t") and "cannot tell which KLUE task" in out[0]
    assert out[1].startswith("refused") and "no such file or folder" in out[1]
    monkeypatch.setenv("KLUE_VIZ_MAX_UPLOAD_MB", "0.001")
    assert main(["runs", "add", str(NER_DEMO[1])]) == 1
    out, _ = lines(capsys)
    assert "over the" in out[0] and "limit" in out[0]
    assert RunStore(Store(str(db))).list() == []
    assert main(["runs", "add", str(NER_DEMO[0]), "--gold", str(tmp_path / "nowhere")]) == 2


def test_a_run_without_its_gold_is_stored_and_scored_later(db, tmp_path, capsys, shared):
    assert main(["runs", "add", str(NER_DEMO[0]), "--gold", str(shared / "klue-nli-v1.1")]) == 0
    out, _ = lines(capsys)
    assert "stored, not scored: no gold for it" in out[0] and "scored when a page opens it" in out[0]
    run = RunStore(Store(str(db))).list()[0]
    results = kept_results.KeptResults(Store(str(db)))
    gold = load_gold(get_task("ner"), DEMO_BENCHMARK)
    assert results.summary("ner", run.sha256, gold.sha256, False) is None
    found, failures = kept_scoring.results_for(results, get_task("ner"), gold, [kept_scoring.RunInput(run.name, run.sha256, run.file_name, lambda: NER_DEMO[0].read_bytes())], False)
    assert not failures and found[run.name].coverage.n_scored == 24


def test_list_and_remove(db, capsys):
    assert main(["runs", "add", *map(str, NER_DEMO)]) == 0
    capsys.readouterr()
    assert main(["runs", "list"]) == 0
    out, err = lines(capsys)
    assert out[0].split("\t") == ["task", "run", "model", "step", "file", "size", "added", "uploader"]
    assert [line.split("\t")[:2] for line in out[1:]] == [["ner", p.stem] for p in NER_DEMO]
    assert "2 run(s)" in err
    store = Store(str(db))
    store.save(Annotation(task="ner", guid=load_gold(get_task("ner"), DEMO_BENCHMARK).rows[0]["guid"], run=NER_DEMO[0].stem,
                          annotator="ann", tags=["boundary"]))
    results = kept_results.KeptResults(store)
    sha = RunStore(store).get("ner", NER_DEMO[0].stem).sha256
    assert main(["runs", "remove", "--task", "ner", NER_DEMO[0].stem, "nothing-here"]) == 0
    out, err = lines(capsys)
    assert out == [f"removed ner {NER_DEMO[0].stem}; its annotations are kept"] and "no NER run named nothing-here" in err
    assert [r.name for r in RunStore(store).list()] == [NER_DEMO[1].stem]
    assert len(store.find(task="ner")) == 1
    gold = load_gold(get_task("ner"), DEMO_BENCHMARK)
    assert results.summary("ner", sha, gold.sha256, False) is None
    assert len([p for p in results.folder.iterdir() if not p.name.startswith(".")]) == 1
    assert main(["runs", "remove", "--task", "ner", "nothing-here"]) == 1


@pytest.mark.slow
def test_add_real_dev_runs_as_the_app_reads_them(db, tmp_path, capsys, shared, monkeypatch):
    """KLUE_VIZ_DATA_DIR is the app's gold: runs added with it are kept under the bytes of the real dev files."""
    monkeypatch.setenv("KLUE_VIZ_DATA_DIR", str(shared))
    ner, nli = get_task("ner"), get_task("nli")
    ner_gold, nli_gold = load_gold(ner, shared), load_gold(nli, shared)
    rng = random.Random(5)
    folder = tmp_path / "ckpts" / "model-a"
    folder.mkdir(parents=True)
    tag_sets = ["B-PS", "I-PS", "O", "B-LC"]
    (folder / "ner-ckpt1.jsonl").write_text("\n".join(json.dumps({"guid": r["guid"], "tags": [rng.choice(tag_sets) if rng.random() < 0.05 else t
                                                                                             for t in tag_list(r["tags"])]}, ensure_ascii=False)
                                                      for r in ner_gold.rows), encoding="utf-8")
    right = [r["gold"] if k % 4 else "neutral" for k, r in enumerate(nli_gold.rows)]
    (folder / "nli-ckpt1.jsonl").write_text("\n".join(json.dumps({"guid": r["guid"], "label": label}) for r, label in zip(nli_gold.rows, right)),
                                            encoding="utf-8")
    assert main(["runs", "add", str(tmp_path / "ckpts")]) == 0
    out, _ = lines(capsys)
    by_task = {line.split("\t")[0]: line.split("\t") for line in out}
    accuracy = 100 * sum(label == r["gold"] for r, label in zip(nli_gold.rows, right)) / len(right)  # counted here, not by klue_viz
    assert by_task["nli"][4] == f"accuracy={accuracy:.2f}"
    assert by_task["ner"][3].startswith("5000/5000 scored")
    results = kept_results.KeptResults(Store(os.environ["KLUE_VIZ_DB"]))
    for run in RunStore(Store(os.environ["KLUE_VIZ_DB"])).list():
        gold = ner_gold if run.task == "ner" else nli_gold
        assert run.model == "model-a"
        assert results.summary(run.task, run.sha256, gold.sha256, False) is not None


def test_the_gold_runs_add_parsed_is_read_back_by_the_app_without_parsing(db, capsys, shared, monkeypatch):
    """`runs add` keeps the gold it parsed under the name the app reads it by (the resolved file of KLUE_VIZ_DATA_DIR)."""
    monkeypatch.setenv("KLUE_VIZ_DATA_DIR", str(shared))
    nli = get_task("nli")
    gold = load_gold(nli, shared)
    run = "\n".join(json.dumps({"guid": r["guid"], "label": r["gold"]}) for r in gold.rows[:50])
    path = db.with_name("nli-run.jsonl")
    path.write_text(run, encoding="utf-8")
    assert main(["runs", "add", str(path)]) == 0
    app_name = allowed_gold_file(official_file(nli, allowed_gold_folder(str(shared))))  # as ui/state.chosen_gold names it

    def no_parse(*args):
        raise AssertionError("parsed again")
    monkeypatch.setattr(parsed_golds, "gold_from_bytes", no_parse)
    again = ParsedGolds(Store(os.environ["KLUE_VIZ_DB"])).gold(nli, app_name.read_bytes(), str(app_name))
    assert repr(again.rows) == repr(gold.rows) and again.sha256 == gold.sha256
