"""A training run's checkpoint folders become named steps (issue 28, items 1 and 10).

`klue-viz runs add out/` over `out/ckpt-500/ner.jsonl ... out/ckpt-5000/ner.jsonl` stored runs `ner`, `ner-2` ... in path
order and the NER page's step range read the store's suffix. Expected names below are written by hand from the
layouts; expected scores come from `evaluate_bytes` of the same bytes, read from the files the test wrote."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path, PurePosixPath

import pytest
from streamlit.testing.v1 import AppTest

from klue_viz.cli.main import main
from klue_viz.core.steps import natural_key
from klue_viz.reading.demo import DEMO_BENCHMARK, demo_runs
from klue_viz.scoring.benchmark import names_no_run, run_and_model
from klue_viz.scoring.evaluate import evaluate_bytes, load_gold
from klue_viz.store.annotations import Store
from klue_viz.store.runs import RunStore
from klue_viz.tasks import get_task
from klue_viz.ui.home import PAGE_FILES
from klue_viz.ui.run_picker import latest_run
from tests.conftest import REPO

STEPS = [500 * k for k in range(1, 51)]  # 50 checkpoints


@pytest.mark.parametrize(("path", "expected"), [
    ("out/ckpt-500/ner.jsonl", ("ckpt-500", "out")),  # <model>/<checkpoint>/<task>.jsonl
    ("roberta/checkpoint-1000/predictions.jsonl", ("checkpoint-1000", "roberta")),
    ("sweeps/roberta/ckpt-500/klue-ner_dev_preds.jsonl", ("ckpt-500", "roberta")),
    ("roberta/nli/ckpt-500.jsonl", ("", "roberta")),  # <model>/<task>/<checkpoint>.jsonl: the stem is the run
    ("model-a/ner.jsonl", ("model-a", "model-a")),  # one model's folder of task files: each run is named after it
    ("predictions/model-a/ner.jsonl", ("model-a", "model-a")),  # a folder that only says what it holds is no model
    ("model-a/my-run.jsonl", ("", "model-a")),  # a file named for itself keeps its stem, its folder is its model
    ("my-run.jsonl", ("", "")),
    ("ner.jsonl", ("", "")),  # no folder to take a name from
])
def test_a_file_takes_its_run_and_model_from_where_it_sits(path, expected):
    assert run_and_model(PurePosixPath(path)) == expected


def test_which_names_say_only_what_a_file_holds():
    assert [names_no_run(n) for n in ["ner", "NLI_predictions", "klue-re-dev", "output", "ckpt-500", "roberta", "ner-v2"]] == \
        [True, True, True, True, False, False, False]


def test_a_lone_file_names_its_run_only_when_its_layout_says_so():
    # wherever it lies on disk, none of its folders names a model; only a checkpoint folder names its run
    assert run_and_model(PurePosixPath("out/ckpt-500/ner.jsonl"), lone=True) == ("ckpt-500", "")
    assert run_and_model(PurePosixPath("home/me/my-run.jsonl"), lone=True) == ("", "")
    assert run_and_model(PurePosixPath("demo/nli/llm-few-shot.jsonl"), lone=True) == ("", "")


def test_the_inspected_run_is_the_latest_step():
    assert latest_run(["ckpt-1000", "ckpt-2000", "ckpt-10000", "base"]) == "ckpt-10000"
    assert latest_run(["base", "other"]) == "base"


def variants(path: Path, count: int) -> list[bytes]:
    """`count` distinct files of one demo run: the k-th leaves out its k-th record (mod the records), and carries k
    blank lines at its end so no two files are the same bytes (the store keeps the same bytes once)."""
    lines = [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [("\n".join(lines[:k % len(lines)] + lines[k % len(lines) + 1:]) + "\n" * (k + 1)).encode() for k in range(count)]


@pytest.fixture
def sweep(tmp_path, monkeypatch) -> Path:
    """50 checkpoints of model `roberta`, NER in `<model>/<checkpoint>/ner.jsonl` and NLI in `<model>/nli/<checkpoint>.jsonl`."""
    monkeypatch.setenv("KLUE_VIZ_DB", str(tmp_path / "store.sqlite3"))
    monkeypatch.delenv("KLUE_VIZ_DATA_DIR", raising=False)
    model = tmp_path / "roberta"
    ner, nli = variants(sorted(demo_runs("ner"))[0], len(STEPS)), variants(sorted(demo_runs("nli"))[0], len(STEPS))
    for step, ner_data, nli_data in zip(STEPS, ner, nli):
        (model / f"ckpt-{step}").mkdir(parents=True)
        (model / f"ckpt-{step}" / "ner.jsonl").write_bytes(ner_data)
        (model / "nli").mkdir(exist_ok=True)
        (model / "nli" / f"ckpt-{step}.jsonl").write_bytes(nli_data)
    return model


@pytest.mark.slow
def test_runs_add_stores_a_sweep_of_50_checkpoints_by_name_and_step(sweep, capsys):
    assert main(["runs", "add", str(sweep)]) == 0
    capsys.readouterr()
    stored = RunStore(Store(os.environ["KLUE_VIZ_DB"])).list()
    expected = [f"ckpt-{step}" for step in STEPS]
    for task in ("ner", "nli"):
        runs = [r for r in stored if r.task == task]
        assert sorted((r.name for r in runs), key=natural_key) == expected
        assert {r.model for r in runs} == {"roberta"}
    # each run holds its own checkpoint's file: the scores are those of the files the test wrote, read back
    gold = load_gold(get_task("ner"), DEMO_BENCHMARK)
    for step in (500, 12000, 25000):
        data = (sweep / f"ckpt-{step}" / "ner.jsonl").read_bytes()
        run = next(r for r in stored if r.task == "ner" and r.name == f"ckpt-{step}")
        assert RunStore(Store(os.environ["KLUE_VIZ_DB"])).data(run.sha256) == data
    assert main(["runs", "list", "--task", "ner"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split("\t")[:4] == ["task", "run", "model", "step"]
    assert [line.split("\t")[1:4] for line in out[1:]] == [[f"ckpt-{s}", "roberta", str(s)] for s in STEPS]  # steps in order
    # --model names the model of the sweep
    assert main(["runs", "add", str(sweep / "ckpt-500" / "ner.jsonl"), "--model", "other"]) == 0  # same bytes: its run is given back
    assert "ckpt-500\troberta" in capsys.readouterr().out
    # the NER page: the step range is in steps, the run inspected first is the latest checkpoint, its score is its file's
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=180).run()
    at.switch_page(PAGE_FILES["ner"]).run()
    assert not at.exception
    assert list(at.select_slider(key="run_steps").options) == [str(s) for s in STEPS] or list(at.select_slider(key="run_steps").options) == STEPS
    assert at.selectbox(key="run").value == "ckpt-25000"
    last = evaluate_bytes(get_task("ner"), gold, (sweep / "ckpt-25000" / "ner.jsonl").read_bytes(), "ner.jsonl").scores.values["entity_macro_f1"]
    table = next(df for df in at.dataframe if "entity_macro_f1" in df.value.columns).value.set_index("run")
    assert table.loc["ckpt-25000", "entity_macro_f1"] == pytest.approx(last, abs=1e-9)


def test_runs_list_into_a_reader_that_left_ends_without_a_traceback(tmp_path):
    env = {**os.environ, "KLUE_VIZ_DB": str(tmp_path / "store.sqlite3"), "PYTHONPATH": str(REPO)}
    RunStore(Store(env["KLUE_VIZ_DB"])).add("ner", "ckpt-500.jsonl", sorted(demo_runs("ner"))[0].read_bytes())  # a line to write
    # the reader closes the pipe before anything is written, as `head` does once it has its lines
    child = subprocess.Popen([sys.executable, "-m", "klue_viz.cli.main", "runs", "list"], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, env=env, cwd=tmp_path)
    assert child.stdout is not None and child.stderr is not None
    child.stdout.close()
    err = child.stderr.read().decode()
    child.wait(timeout=120)
    assert "Traceback" not in err and "BrokenPipeError" not in err, err
    assert child.returncode == 141
