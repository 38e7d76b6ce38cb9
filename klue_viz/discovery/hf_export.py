"""A corrected gold as a Hugging Face `datasets` dataset on disk, with a dataset card saying what changed, why and by whom.

The folder holds the dataset as `save_to_disk` writes it (read back with `datasets.load_from_disk`), the
same split as Parquet under `data/` (the layout the hub serves, `load_dataset("parquet", ...)`), and a
`README.md` dataset card: its YAML header names the Parquet file, its body lists every corrected record
with the correction, the annotator and their note. `load_from_disk(folder).push_to_hub("you/name")`
publishes it (README.md).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from klue_viz.core.lazy import lazy_module
from klue_viz.discovery.corrected import Correction
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


def dataset_card(task: Task, version: str, base: str, corrections: list[Correction], changed: list[str], n: int) -> str:
    """The dataset card: where the data comes from, its licence, and each corrected record (correction, by whom, why)."""
    lines = ["---", "license: cc-by-sa-4.0", "language:", "- ko", "configs:", "- config_name: default", "  data_files:",
             f"  - split: {SPLIT}", f"    path: {PARQUET}", "---", "",
             f"# {task.facts.title}: {version}", "",
             f"The {task.facts.title} gold from `{base}` ({n:,} records) with {len(changed)} record(s) corrected after review in klue-viz.",
             "KLUE is released under CC BY-SA 4.0; so is this corrected copy. The `corrected` column marks the changed records.", "",
             "## Corrections", "", "| guid | turn | correction | by | why |", "| --- | --- | --- | --- | --- |"]
    for item in corrections:
        cells = [item.guid, "" if item.turn is None else str(item.turn), item.correction, item.annotator or "(anonymous)", item.note]
        lines.append("| " + " | ".join(c.replace("|", "\\|").replace("\n", " ") for c in cells) + " |")
    return "\n".join(lines) + "\n"


def export_dataset(task: Task, corrected_text: str, name: str, changed: list[str], corrections: list[Correction], folder: Path,
                   version: str, base: str) -> datasets.Dataset:
    """Write the corrected gold to `folder` (save_to_disk, Parquet under data/, README.md card) and return the split."""
    records = dataset_records(task, corrected_text, name, changed)
    keys = list(dict.fromkeys(k for record in records for k in record))  # from_list takes the first record's keys only
    split = datasets.Dataset.from_list([{k: record.get(k) for k in keys} for record in records])
    folder.mkdir(parents=True, exist_ok=True)
    datasets.DatasetDict({SPLIT: split}).save_to_disk(str(folder))
    (folder / PARQUET).parent.mkdir(parents=True, exist_ok=True)
    split.to_parquet(str(folder / PARQUET))
    (folder / "README.md").write_text(dataset_card(task, version, base, corrections, changed, len(records)), encoding="utf-8")
    return split
