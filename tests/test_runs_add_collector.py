"""`klue-viz runs add` pauses the cyclic garbage collector while each file is stored and scored (issue 15: a file's
records and frames are many containers that go with it) and gives it back after every file, also one refused or one
whose scoring fails."""

from __future__ import annotations

import gc
from pathlib import Path
from typing import Any

import pytest

from klue_viz.cli import runs as runs_cli
from klue_viz.cli.main import main
from klue_viz.reading.demo import demo_runs

NER_DEMO = sorted(demo_runs("ner"))


@pytest.fixture
def db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "store.sqlite3"
    monkeypatch.setenv("KLUE_VIZ_DB", str(path))
    monkeypatch.delenv("KLUE_VIZ_DATA_DIR", raising=False)
    return path


def test_the_collector_is_paused_for_each_file_and_running_after(db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "not-a-run.jsonl"
    bad.write_text('{"nothing": 1}\n', encoding="utf-8")
    seen: list[bool] = []
    score_line = runs_cli.score_line

    def watched(*args: Any, **kwargs: Any) -> str:
        seen.append(gc.isenabled())
        return score_line(*args, **kwargs)

    monkeypatch.setattr(runs_cli, "score_line", watched)
    assert gc.isenabled()
    assert main(["runs", "add", str(NER_DEMO[0]), str(bad)]) == 0
    assert seen == [False] and gc.isenabled()
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("ner\t") and out[1].startswith("refused\t")


def test_the_collector_runs_again_after_a_file_whose_scoring_fails(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: object, **kwargs: object) -> str:
        raise RuntimeError("scoring failed")

    monkeypatch.setattr(runs_cli, "score_line", broken)
    with pytest.raises(RuntimeError, match="scoring failed"):
        main(["runs", "add", str(NER_DEMO[0])])
    assert gc.isenabled()
