"""Symbolic links inside an allowed gold folder (issue 19, item 16): every file is resolved and checked, the roots stay in the log."""

from __future__ import annotations

import logging
import shutil

import pytest

from klue_viz.core.problems import InputError
from klue_viz.reading.demo import DEMO_BENCHMARK
from klue_viz.reading.gold_folders import allowed_gold_file, allowed_gold_folder
from klue_viz.scoring.evaluate import official_file
from klue_viz.tasks import get_task


@pytest.fixture
def allowed(tmp_path, monkeypatch):
    root = tmp_path / "allowed"
    root.mkdir()
    monkeypatch.delenv("KLUE_VIZ_DATA_DIR", raising=False)
    monkeypatch.setenv("KLUE_VIZ_GOLD_ROOTS", str(root))
    return root


def test_a_linked_folder_outside_the_root_is_not_read_as_gold(allowed, tmp_path):
    outside = tmp_path / "outside"
    shutil.copytree(DEMO_BENCHMARK, outside)
    (allowed / "klue_benchmark").symlink_to(outside)
    folder = allowed_gold_folder(str(allowed))  # the folder itself is allowed
    found = official_file(get_task("ynat"), folder)
    assert found is not None and not found.resolve().is_relative_to(allowed)
    with pytest.raises(InputError, match="leads outside"):
        allowed_gold_file(found)


def test_a_linked_file_to_etc_passwd_is_refused(allowed):
    (allowed / "ynat-v1.1").mkdir()
    (allowed / "ynat-v1.1" / "ynat-v1.1_dev.json").symlink_to("/etc/passwd")
    found = official_file(get_task("ynat"), allowed_gold_folder(str(allowed)))
    with pytest.raises(InputError, match="leads outside"):
        allowed_gold_file(found)


def test_a_file_inside_the_root_is_read_and_the_refusal_names_no_root(allowed, tmp_path, caplog):
    shutil.copytree(DEMO_BENCHMARK / "ynat-v1.1", allowed / "ynat-v1.1")
    found = official_file(get_task("ynat"), allowed_gold_folder(str(allowed)))
    assert allowed_gold_file(found) == found.resolve()
    with caplog.at_level(logging.WARNING, logger="klue_viz"), pytest.raises(InputError) as refused:
        allowed_gold_folder(str(tmp_path / "elsewhere"))
    assert str(allowed) not in str(refused.value) and "not under a folder" in str(refused.value)
    assert str(allowed) in caplog.text, "the operator finds the allowed folders in the log"
