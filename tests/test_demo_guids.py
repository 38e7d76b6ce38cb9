"""The embedded demo's guids are its own (issue 19, item 8): `-demo` after the example number, so no real KLUE guid
is a demo guid, real predictions opened against the demo gold match nothing and say it is the wrong gold, and the demo
runs score exactly as they did with the old guids."""

from __future__ import annotations

import json
import re
import shutil

import pytest
from streamlit.testing.v1 import AppTest

from klue_viz.cli.main import main
from klue_viz.core.problems import InputError
from klue_viz.reading.demo import DEMO_BENCHMARK, DEMO_DIR, demo_runs
from klue_viz.scoring.evaluate import evaluate_bytes, load_gold
from klue_viz.tasks import TASKS, get_task
from klue_viz.ui.home import PAGE_FILES
from tests.conftest import REPO
from tests.test_app import plain

#: A KLUE-style guid's stem up to its example number, read straight from the file text (not through the task parsers).
GUID = re.compile(r"(?:ynat|klue-sts|klue-nli|klue-ner|klue-re|klue-dp|klue-mrc|wos)-v1_dev_\d{5}")
REAL_FILES = ["klue-sts-v1.1/klue-sts-v1.1_dev.json", "klue-nli-v1.1/klue-nli-v1.1_dev.json", "klue-ner-v1.1/klue-ner-v1.1_dev.tsv",
              "klue-dp-v1.1/klue-dp-v1.1_dev.tsv", "wos-v1.1/wos-v1.1_dev_sample_10.json"]


def demo_files():
    return sorted(p for p in DEMO_DIR.rglob("*") if p.is_file() and p.suffix in (".json", ".jsonl", ".tsv"))


@pytest.mark.parametrize("path", demo_files(), ids=lambda p: p.name)
def test_every_guid_in_every_demo_file_carries_the_demo_mark(path):
    text = path.read_text(encoding="utf-8")
    stems = [m for m in GUID.finditer(text)]
    assert stems, f"{path.name}: no guid found"
    unmarked = [m.group() for m in stems if not text.startswith("-demo", m.end())]
    assert unmarked == [], f"{path.name}: guids without -demo"


def test_no_real_klue_guid_is_a_demo_guid(shared):
    demo = {g for p in demo_files() for g in re.findall(GUID.pattern + r"[^\s\"\t]*", p.read_text(encoding="utf-8"))}
    real = {g for name in REAL_FILES for g in re.findall(GUID.pattern + r"[^\s\"\t]*", (shared / name).read_text(encoding="utf-8"))}
    assert len(real) > 2000 and len(demo) > 100
    assert real & demo == set()


def real_sts(shared) -> tuple[bytes, int]:
    """Real-dev STS predictions (2.5 for each guid of the real dev file, read here as JSON) and their count."""
    records = json.loads((shared / REAL_FILES[0]).read_text(encoding="utf-8"))
    return "\n".join(json.dumps({"guid": r["guid"], "score": 2.5}) for r in records).encode("utf-8"), len(records)


def test_real_sts_predictions_match_nothing_in_the_demo_and_are_called_the_wrong_gold(shared, tmp_path, capsys):
    data, n = real_sts(shared)
    assert n == 519
    with pytest.raises(InputError) as info:
        evaluate_bytes(get_task("sts"), load_gold(get_task("sts"), DEMO_BENCHMARK), data, "real.jsonl")
    message = str(info.value)
    assert f"none of its {n} guids is in the gold" in message and "this looks like the wrong gold" in message
    assert "guids end in -demo" in message
    path = tmp_path / "real.jsonl"
    path.write_bytes(data)
    assert main(["evaluate", "--task", "sts", "--gold", str(DEMO_BENCHMARK), "--pred", str(path)]) != 0
    assert "this looks like the wrong gold" in capsys.readouterr().err
    # Against the real dev set the same file is scored in full, and nothing is called wrong.
    right = evaluate_bytes(get_task("sts"), load_gold(get_task("sts"), shared), data, "real.jsonl")
    assert right.coverage.n_scored == n and right.wrong_gold == ""


def test_files_without_task_guids_get_no_wrong_gold_hint():
    data = b'{"guid": "x0", "score": 1}\n'
    with pytest.raises(InputError) as info:
        evaluate_bytes(get_task("sts"), load_gold(get_task("sts"), DEMO_BENCHMARK), data, "p.jsonl")
    assert "wrong gold" not in str(info.value)


@pytest.mark.slow
def test_the_page_says_wrong_gold_for_real_predictions_on_the_demo(shared):
    data, _ = real_sts(shared)
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=120).run()
    at.switch_page(PAGE_FILES["sts"]).run()
    at.file_uploader(key="pred_upload").set_value([("real-dev.jsonl", data, "application/json")]).run()
    assert not at.exception
    assert any("this looks like the wrong gold" in plain(e.value) and "real-dev" in plain(e.value) for e in at.error), \
        [e.value for e in at.error]


@pytest.mark.parametrize("task_name", list(TASKS))
def test_demo_runs_score_as_with_the_old_guids(task_name, tmp_path):
    """The old demo (the same files with `-demo` taken out, as before the mark) scores every run to the same numbers,
    and NER's and DP's sources read from the guid are the same."""
    task = get_task(task_name)
    old = tmp_path / "klue_benchmark"
    shutil.copytree(DEMO_BENCHMARK, old)
    for path in old.rglob("*_dev.*"):
        path.write_text(path.read_text(encoding="utf-8").replace("-demo", ""), encoding="utf-8")
    gold, old_gold = load_gold(task, DEMO_BENCHMARK), load_gold(task, old)
    assert len(gold.rows) == len(old_gold.rows) > 0
    for run in demo_runs(task_name):
        data = run.read_bytes()
        new = evaluate_bytes(task, gold, data, run.name)
        before = evaluate_bytes(task, old_gold, data.decode("utf-8").replace("-demo", "").encode("utf-8"), run.name)
        assert new.scores == before.scores and new.coverage == before.coverage, run.name
        assert new.coverage.n_extra == 0 and new.coverage.n_scored > 0
        if "source" in new.frames.examples:
            assert new.frames.examples["source"].tolist() == before.frames.examples["source"].tolist()
