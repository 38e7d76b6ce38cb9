"""One gold decision (klue_viz.store.gold_choice) for the app's pages and `klue-viz runs add`: the same source gives
the same gold in both, the demo stands in where a source has none and says why, and a gold that cannot be read is a
problem that `runs add` scores nothing against."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from klue_viz.cli.runs import gold_of, score_line
from klue_viz.reading.demo import DEMO_BENCHMARK
from klue_viz.reading.gold_folders import DATA_DIR_ENV, GOLD_ROOTS_ENV
from klue_viz.scoring.evaluate import load_gold
from klue_viz.store.gold_choice import GoldReaders, gold_choice
from klue_viz.tasks import get_task

NER = get_task("ner")


def readers(read: list[str]) -> GoldReaders:
    """Readers that load golds plainly and note each path read."""
    def path(task, source, _modified):
        read.append(source)
        return load_gold(task, source)
    return GoldReaders(path=path, upload=lambda task, key, kept: pytest.fail("no upload here"), hf=lambda task: "the hub is off here.",
                       stored=lambda key: None)


@pytest.fixture
def allowed(monkeypatch, shared):
    monkeypatch.setenv(DATA_DIR_ENV, str(shared))
    monkeypatch.delenv(GOLD_ROOTS_ENV, raising=False)
    return shared


def test_the_app_and_runs_add_choose_the_same_gold_from_the_data_folder(allowed):
    read: list[str] = []
    page = gold_choice(NER, "folder", readers(read), folder=str(allowed))
    cli = gold_of("ner", None)
    expected = (allowed / "klue-ner-v1.1" / "klue-ner-v1.1_dev.tsv").resolve()
    assert read == [str(expected)]
    assert page.gold.source == cli.gold.source == str(expected)
    assert not page.is_demo and not cli.is_demo and page.problem == cli.problem == ""
    assert page.key.startswith(f"file:{expected}:")


def test_a_folder_without_the_tasks_file_shows_the_demo_and_says_so(allowed, tmp_path, monkeypatch):
    monkeypatch.setenv(GOLD_ROOTS_ENV, str(tmp_path))
    choice = gold_choice(NER, "folder", readers([]), folder=str(tmp_path))
    assert choice.is_demo and choice.problem == ""
    assert choice.note == f"No klue-ner-v1.1 dev file in {tmp_path.resolve()}: showing the embedded demo for NER."
    assert Path(choice.gold.source).is_relative_to(DEMO_BENCHMARK)


def test_a_folder_outside_the_allowed_ones_is_refused_with_its_reason(allowed, tmp_path):
    choice = gold_choice(NER, "folder", readers([]), folder=str(tmp_path))
    assert choice.is_demo
    assert "not under a folder this server allows gold from" in choice.problem
    assert choice.note.endswith("Showing the embedded demo for NER.")


def test_a_broken_given_gold_is_a_problem_and_runs_add_scores_nothing_against_the_demo(tmp_path, monkeypatch):
    monkeypatch.delenv(DATA_DIR_ENV, raising=False)
    broken = tmp_path / "klue-nli-v1.1_dev.json"
    broken.write_text('[{"guid": "klue-nli-v1_dev_00000", "premise": ', encoding="utf-8")
    choice = gold_of("nli", str(broken))
    assert choice.is_demo and choice.problem, choice
    assert str(broken) in choice.problem
    run = SimpleNamespace(task="nli", name="mine", model="")
    line = score_line(None, run, b"", choice, False)  # type: ignore[arg-type]  # nothing is read or kept before the check
    assert line == f"nli\tmine\t-\tstored, not scored: no gold for it ({choice.problem}); it is scored when a page opens it with its gold"


def test_runs_add_without_a_gold_or_a_data_folder_takes_the_demo_like_the_app(monkeypatch):
    monkeypatch.delenv(DATA_DIR_ENV, raising=False)
    cli = gold_of("ner", None)
    page = gold_choice(NER, "demo", readers([]))
    assert cli.is_demo and page.is_demo and cli.gold.source == page.gold.source and cli.problem == ""
    assert page.note == "Gold: the embedded demo set (our own sentences in the official KLUE format)."


def test_an_upload_this_server_lacks_warns_and_the_hub_says_why_it_failed():
    missing = gold_choice(NER, "upload", readers([]), upload_key="ab" * 32)
    assert missing.is_demo and "(sha256 abababababab…) that this server does not have" in missing.warning
    hub = gold_choice(NER, "hf", readers([]))
    assert hub.is_demo and hub.problem == "the hub is off here." and hub.note == "the hub is off here. Showing the embedded demo meanwhile."
