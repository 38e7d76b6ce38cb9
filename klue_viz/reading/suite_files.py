"""Telling a behavioural test suite (`klue-viz probe make --out DIR`, klue_viz.probes) by its manifest, not by its name.

A zip or a folder is a suite when it holds `manifest.jsonl` at its top, or in one top-level folder (what zipping the
folder itself makes), and the manifest's first line has the documented fields (docs/probes.md: guid, source_guid, test,
capability, type, expect, edits). This sits on the reading floor so that the prediction-file readers refuse a suite
dropped among prediction files (its gold files would otherwise be stored as runs) and the suite readers find its files.
"""

from __future__ import annotations

import json
import zipfile
from collections.abc import Callable, Iterable
from pathlib import Path, PurePosixPath

from klue_viz.core.problems import InputError

MANIFEST = "manifest.jsonl"
#: The fields every line of a suite's manifest has (`expect` is null but for DIR tests).
MANIFEST_FIELDS = ("guid", "source_guid", "test", "capability", "type", "expect", "edits")
#: The manifest fields that hold text (the others: `expect` text or null, `edits` a list).
TEXT_FIELDS = ("guid", "source_guid", "test", "capability", "type")
#: What a suite's zip or folder is expected to hold, for the messages that refuse one.
EXPECTED = (f"{MANIFEST} at its top or in one top-level folder, beside the perturbed gold file and sources/ "
            "(the folder `klue-viz probe make --out DIR` writes)")


def is_manifest_line(item: object) -> bool:
    """Whether one parsed manifest line has the documented fields of a suite's case."""
    return (isinstance(item, dict) and all(key in item for key in MANIFEST_FIELDS)
            and all(isinstance(item[key], str) for key in TEXT_FIELDS) and isinstance(item["edits"], list))


def first_case(text: str) -> dict | None:
    """The first line of a manifest when it is a suite's case (documented fields), else None."""
    line = next((line for line in text.splitlines() if line.strip()), "")
    try:
        item = json.loads(line)
    except json.JSONDecodeError:
        return None
    return item if is_manifest_line(item) else None


def _hidden(path: str) -> bool:
    return any(part.startswith((".", "__MACOSX")) for part in path.split("/"))


def manifest_prefixes(names: Iterable[str]) -> list[str]:
    """Where manifests sit among a zip's member paths: `""` for one at the top, else `"<folder>/"` for each top-level
    folder holding one (a zip of several suites has several); hidden and macOS resource folders are left out."""
    names = [name for name in names if not _hidden(name)]
    if MANIFEST in names:
        return [""]
    return sorted(name[:-len(MANIFEST)] for name in names if name.count("/") == 1 and name.endswith("/" + MANIFEST))


def suite_in_zip(archive: zipfile.ZipFile) -> str | None:
    """The member path of the first suite manifest (documented fields) at the top of a zip or in one top-level folder;
    None when the zip holds no suite."""
    for prefix in manifest_prefixes(archive.namelist()):
        with archive.open(prefix + MANIFEST) as member:
            head = member.read(64 * 1024).decode("utf-8", errors="replace")
        if first_case(head.split("\n", 1)[0]) is not None:
            return prefix + MANIFEST
    return None


def folder_case(folder: Path) -> dict | None:
    """The first case of the suite manifest at the top of a folder; None when the folder holds no suite's manifest."""
    path = folder / MANIFEST
    if not path.is_file():
        return None
    with path.open("rb") as handle:
        return first_case(handle.readline(1024 * 1024).decode("utf-8", errors="replace"))


def folder_is_suite(folder: Path) -> bool:
    """Whether a folder holds a suite's manifest (documented fields on its first line) at its top."""
    return folder_case(folder) is not None


def suite_folders_among(files: Iterable[tuple[str, Callable[[], bytes]]]) -> set[str]:
    """The folders of an uploaded folder (files named by their path in it, each with a reader) that hold a suite's
    manifest: every file under one belongs to a suite, not to a model's predictions."""
    found = set()
    for name, read in files:
        path = PurePosixPath(name)
        if path.name == MANIFEST and len(path.parts) > 1 and first_case(read()[:1024 * 1024].decode("utf-8", errors="replace")):
            found.add(str(path.parent))
    return found


def refuse_suite_zip(archive: zipfile.ZipFile, name: str) -> None:
    """InputError when a zip given as prediction files is a behavioural test suite: its gold files are not runs."""
    manifest = suite_in_zip(archive)
    if manifest is not None:
        raise InputError(f"{name} is a behavioural test suite ({manifest}), not prediction files: nothing was stored. Add it in "
                         "a task page's Behaviour section or with `klue-viz runs add --probes`, and its runs there")
