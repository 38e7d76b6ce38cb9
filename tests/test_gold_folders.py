"""klue_viz.reading.gold_folders: the folders the app's gold box may read under, and every refusal with its message.
Written to kill the mutants that survived the earlier tests (docs/mutation.md; mutated when this code was in
evaluate.py); expected values are the folders and variables planted here."""

from __future__ import annotations

import os

import pytest

from klue_viz.core.problems import InputError
from klue_viz.reading.gold_folders import DATA_DIR_ENV, GOLD_ROOTS_ENV, allowed_gold_folder, gold_roots

# ---- where the app may read gold from -----------------------------------------------------------------


@pytest.fixture
def no_roots(monkeypatch):
    monkeypatch.delenv(DATA_DIR_ENV, raising=False)
    monkeypatch.delenv(GOLD_ROOTS_ENV, raising=False)
    return monkeypatch


def test_gold_roots_are_the_existing_folders_named_each_once(no_roots, tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir(), b.mkdir()
    no_roots.setenv(DATA_DIR_ENV, str(a))
    no_roots.setenv(GOLD_ROOTS_ENV, os.pathsep.join([str(a), str(tmp_path / "missing"), "", f"  {b}  ", str(b)]))
    assert gold_roots() == [a.resolve(), b.resolve()]
    no_roots.delenv(DATA_DIR_ENV)
    no_roots.delenv(GOLD_ROOTS_ENV)
    assert gold_roots() == []


@pytest.mark.parametrize("typed, message", [("", "no folder given"), ("   ", "no folder given"), ("a" * 1001, "not a folder path"),
                                            ("gold\x00", "not a folder path")])
def test_the_gold_box_refuses_what_is_no_folder_path_with_one_line(no_roots, tmp_path, typed, message):
    no_roots.setenv(GOLD_ROOTS_ENV, str(tmp_path))
    with pytest.raises(InputError) as info:
        allowed_gold_folder(typed)
    assert str(info.value) == message


def test_a_path_of_1000_characters_is_still_a_path(no_roots, tmp_path):
    no_roots.setenv(GOLD_ROOTS_ENV, str(tmp_path))
    typed = str(tmp_path)
    while len(typed) < 1000:  # folder names of at most 200 characters (a longer one is an OSError of its own)
        typed += "/" + "d" * min(200, 999 - len(typed))
    assert len(typed) == 1000
    with pytest.raises(InputError, match="no such folder$"):
        allowed_gold_folder(typed)


def test_a_symlink_loop_cannot_be_resolved(no_roots, tmp_path):
    no_roots.setenv(GOLD_ROOTS_ENV, str(tmp_path))
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    with pytest.raises(InputError) as info:
        allowed_gold_folder(str(tmp_path / "a"))
    assert str(info.value) == f"{tmp_path / 'a'}: cannot be resolved as a folder"


def test_a_folder_inside_proc_is_refused_even_when_the_operator_allows_everything(no_roots):
    no_roots.setenv(GOLD_ROOTS_ENV, "/")
    with pytest.raises(InputError, match="gold is never read from the root of the file system or from /proc, /sys or /dev"):
        allowed_gold_folder("/proc/sys")


def test_a_folder_outside_the_roots_names_the_roots_to_the_operator_only(no_roots, tmp_path, caplog):
    """Issue 19 item 16: the refusal a user sees names the settings, never the operator's folders; the log lists them."""
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir(), b.mkdir()
    no_roots.setenv(GOLD_ROOTS_ENV, os.pathsep.join([str(a), str(b)]))
    with caplog.at_level("WARNING"), pytest.raises(InputError) as info:
        allowed_gold_folder(str(tmp_path))
    message = str(info.value)
    assert "KLUE_VIZ_DATA_DIR" in message and "KLUE_VIZ_GOLD_ROOTS" in message
    assert str(a.resolve()) not in message and str(b.resolve()) not in message
    assert f"{a.resolve()}, {b.resolve()}" in caplog.text


def test_a_folder_name_longer_than_the_file_system_allows_is_a_one_line_error(tmp_path, monkeypatch):
    """A 300-character folder name under an allowed root: Path.is_dir raises ENAMETOOLONG instead of returning False."""
    monkeypatch.setenv("KLUE_VIZ_GOLD_ROOTS", str(tmp_path))
    monkeypatch.delenv("KLUE_VIZ_DATA_DIR", raising=False)
    with pytest.raises(InputError, match="no such folder"):
        allowed_gold_folder(str(tmp_path / ("d" * 300)))
