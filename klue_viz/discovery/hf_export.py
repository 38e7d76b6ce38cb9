"""A corrected gold as a Hugging Face `datasets` dataset on disk, with a dataset card saying what changed, why and by whom.

The folder holds the dataset as `save_to_disk` writes it (read back with `datasets.load_from_disk`), the
same split as Parquet under `data/` (the layout the hub serves, `load_dataset("parquet", ...)`), and a
`README.md` dataset card: its YAML header names the Parquet file, its body lists every applied correction
with the record, the annotator and their note (escaped for Markdown), and counts the corrections left out.
A dataset goes only into a new or empty folder. `load_from_disk(folder).push_to_hub("you/name")` publishes it
(README.md).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from klue_viz.core.lazy import lazy_module
from klue_viz.core.problems import InputError
from klue_viz.discovery.corrected import CorrectedFile
from klue_viz.drawing.markup import md
from klue_viz.scoring.evaluate import gold_from_bytes
from klue_viz.tasks.base import Task

if TYPE_CHECKING:
    import datasets
else:
    datasets = lazy_module("datasets")

SPLIT = "validation"
PARQUET = f"data/{SPLIT}-00000-of-00001.parquet"


def dataset_records(task: Task, corrected_text: str, name: str, changed: Iterable[str]) -> list[dict]:
    """One record per evaluation example with a `corrected` flag: the official records of a JSON list file as they are,
    MRC's questions with their passage, and for NER/DP the rows the task's reader makes (tags as names)."""
    changed = set(changed)
    stripped = corrected_text.lstrip()
    if stripped.startswith("["):
        return [{**record, "corrected": str(record.get("guid")) in changed} for record in json.loads(corrected_text)]
    if stripped.startswith("{"):
        data = json.loads(corrected_text)
        return [{"title": d.get("title", ""), "source": d.get("source", ""), "context": p["context"], **qa,
                 "corrected": str(qa.get("guid")) in changed}
                for d in data.get("data", []) for p in d.get("paragraphs", []) for qa in p.get("qas", [])]
    rows = gold_from_bytes(task, corrected_text.encode("utf-8"), name).rows
    return [{k: _plain(v) for k, v in row.items()} | {"corrected": row["guid"] in changed} for row in rows]


def _plain(value: object) -> object:
    """A gold row's value as Arrow takes it (NER keeps its tags as bytes of tag ids)."""
    return list(value) if isinstance(value, (bytes, tuple)) else value


def check_dataset_folder(folder: Path) -> None:
    """Refuse, before anything is written, a dataset folder that is not new or empty: `save_to_disk` and the card would
    write beside (and over) what is there, and `/` or a home folder given by mistake would be filled with files."""
    if folder.exists() and not folder.is_dir():
        raise InputError(f"--dataset {folder}: is a file; a dataset is written only into a new or empty folder")
    if folder.is_dir() and any(folder.iterdir()):
        raise InputError(f"--dataset {folder}: the folder is not empty; a dataset is written only into a new or empty folder "
                         "(give a new folder name)")


def dataset_card(task: Task, version: str, base: str, found: CorrectedFile, n: int) -> str:
    """The dataset card: where the data comes from, its licence, and each applied correction (the record, by whom, why).

    Names, notes and corrections are people's text: each is escaped for Markdown (`klue_viz.drawing.markup.md`), so a
    hub shows them as typed and no HTML, image or link gets in. Only what was applied is listed; the corrections left
    out (`CorrectedFile.left_out`) are counted here and listed by the export command."""
    lines = ["---", "license: cc-by-sa-4.0", "language:", "- ko", "configs:", "- config_name: default", "  data_files:",
             f"  - split: {SPLIT}", f"    path: {PARQUET}", "---", "",
             f"# {md(task.facts.title)}: {md(version)}", "",
             f"The {md(task.facts.title)} gold from {md(base)} ({n:,} records) with {len(found.changed)} record(s) corrected after review "
             "in klue-viz.",
             "KLUE is released under CC BY-SA 4.0; so is this corrected copy. The `corrected` column marks the changed records.", ""]
    if found.left_out:
        lines += [f"{len(found.left_out)} correction(s) were not applied (conflicting corrections of one record, records not in "
                  "the gold, corrections that could not be read); they are not listed here.", ""]
    lines += ["## Corrections", "", "| guid | turn | correction | by | why |", "| --- | --- | --- | --- | --- |"]
    for item in found.applied:
        cells = [item.guid, "" if item.turn is None else str(item.turn), item.correction, item.annotator or "(anonymous)", item.note]
        lines.append("| " + " | ".join(md(c) for c in cells) + " |")
    return "\n".join(lines) + "\n"


def export_dataset(task: Task, found: CorrectedFile, name: str, folder: Path, version: str, base: str) -> datasets.Dataset:
    """Write the corrected gold to `folder`, which must be new or empty (`check_dataset_folder`): save_to_disk, Parquet
    under data/, the README.md card; returns the split."""
    check_dataset_folder(folder)
    records = dataset_records(task, found.text, name, found.changed)
    keys = list(dict.fromkeys(k for record in records for k in record))  # from_list takes the first record's keys only
    split = datasets.Dataset.from_list([{k: record.get(k) for k in keys} for record in records])
    folder.mkdir(parents=True, exist_ok=True)
    datasets.DatasetDict({SPLIT: split}).save_to_disk(str(folder))
    (folder / PARQUET).parent.mkdir(parents=True, exist_ok=True)
    split.to_parquet(str(folder / PARQUET))
    (folder / "README.md").write_text(dataset_card(task, version, base, found, len(records)), encoding="utf-8")
    return split
