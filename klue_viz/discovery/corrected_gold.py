"""A corrected gold ready to score against: from a corrections file or a gold version kept in the database.

Shared by the CLI (`evaluate --corrections`, `--gold-version`, `gold make|export`) and the app: the
base official file, the corrections, the corrected whole file, the corrected `Gold`, and what it
changes in the runs' scores (`klue_viz.discovery.corrected.rescore`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from klue_viz.core.problems import InputError
from klue_viz.discovery.corrected import (
    CorrectedFile,
    Correction,
    Rescored,
    RunInput,
    corrected_gold,
    official_text,
    read_corrections,
    rescore,
    version_name,
)
from klue_viz.discovery.review import accepted_corrections
from klue_viz.drawing.markup import visible
from klue_viz.reading.records import read_bytes
from klue_viz.scoring.evaluate import Gold
from klue_viz.store.annotations import Annotation, Store, StoreError
from klue_viz.store.gold_versions import GoldVersion, GoldVersions
from klue_viz.tasks.base import Task


@dataclass
class CorrectedGold:
    """The gold of `base` with `corrections` applied, named `version`."""

    version: str
    base: str
    base_name: str
    corrections: list[Correction]
    file: CorrectedFile
    gold: Gold

    @classmethod
    def build(cls, task: Task, source: str | Path, corrections: list[Correction], version: str | None = None) -> CorrectedGold:
        """Corrections applied to the official file a source names (a file or a klue_benchmark/ folder)."""
        text, name = official_text(task, source)
        return cls.from_text(task, text, name, str(source), corrections, version)

    @classmethod
    def from_text(cls, task: Task, text: str, name: str, base: str, corrections: list[Correction], version: str | None = None) -> CorrectedGold:
        """Corrections applied to an official file's text (`name` its file name, `base` where it came from)."""
        gold, found = corrected_gold(task, text, name, corrections)
        stem = Path(name).name.rsplit(".", 1)[0].rsplit("_", 1)[-1] or "gold"  # "dev" of klue-nli-v1.1_dev.json
        return cls(version or version_name(stem, len(found.changed)), base, name, corrections, found, gold)

    @classmethod
    def from_file(cls, task: Task, source: str | Path, path: str | Path) -> CorrectedGold:
        """Corrections read from a JSONL file (klue_viz.discovery.corrected.read_corrections)."""
        return cls.build(task, source, read_corrections(read_bytes(Path(path)), Path(path).name))

    @classmethod
    def from_version(cls, task: Task, source: str | Path, name: str, store: Store | None = None) -> CorrectedGold:
        """A gold version kept in the database (KLUE_VIZ_DB), applied to the base official file `source`."""
        version = GoldVersions(store or Store()).get(task.facts.name, name)
        if version is None:
            raise InputError(f"no {task.facts.name.upper()} gold version named {name!r} (klue-viz gold versions --task {task.facts.name} lists them)")
        return cls.of_version(task, source, version)

    @classmethod
    def of_version(cls, task: Task, source: str | Path, version: GoldVersion) -> CorrectedGold:
        return cls.build(task, source, [Correction(**c) for c in version.corrections], version.name)

    def runs(self, paths: Iterable[str | Path]) -> list[RunInput]:
        return [RunInput(Path(p).stem, Path(p).name, read_bytes(Path(p))) for p in paths]

    def rescored(self, task: Task, before: Gold, paths: Iterable[str | Path], strict: bool = False) -> Rescored:
        return rescore(task, before, self.gold, self.runs(paths), strict=strict)

    def summary(self, task: Task, before: Gold, paths: Iterable[str | Path], strict: bool = False) -> dict:
        """The `--out` block: the version, the records changed and each run before and after."""
        return {"version": self.version, "records": len(self.file.changed), "changed": self.file.changed,
                "corrections": [c.to_dict() for c in self.corrections], "problems": [p.to_dict() for p in self.file.problems],
                **self.rescored(task, before, paths, strict).to_dict()}

    def table(self, task: Task, before: Gold, paths: Iterable[str | Path], strict: bool = False) -> str:
        """What the corrections change, as text: each run's metrics and rank before and after, and Kendall's tau."""
        found = self.rescored(task, before, paths, strict)
        return change_table(found, self.version)


def change_table(found: Rescored, version: str) -> str:
    """A Rescored as plain text for a terminal."""
    def number(value: float | None) -> str:
        return "n/a" if value is None else f"{value:.2f}"

    lines = [f"== what the corrections change ({visible(version)}), ranked by {found.metric} =="]
    for row in found.rows:
        change = row["change"][found.metric]
        moved = f" (moved {'up' if row['moved'] > 0 else 'down'} {abs(row['moved'])})" if row["moved"] else ""
        lines.append(f"  {visible(row['run'])}: {found.metric} {number(row['before'][found.metric])} -> {number(row['after'][found.metric])} "
                     f"({'n/a' if change is None else f'{change:+.2f}'}), rank {row['rank_before']} -> {row['rank_after']}{moved}")
    lines.append(f"  Kendall tau of the two orderings: {number(found.kendall_tau) if found.kendall_tau is None else f'{found.kendall_tau:.3f}'}")
    return "\n".join(lines)


def make_version(task: Task, source: str | Path, store: Store, items: Iterable[Annotation], name: str | None = None,
                 reviews: int = 1, created_by: str = "", text: str | None = None) -> GoldVersion:
    """Keep the accepted corrections among `items` (with `reviews` reviews per unit) as a new named gold version of the
    official file `source` (or of its `text`, already read)."""
    corrections = accepted_corrections(task, items, reviews)
    if not corrections:
        raise StoreError(f"no accepted {task.facts.name.upper()} correction" + (f" with {reviews} reviews per unit" if reviews > 1 else ""))
    if text is None:
        built = CorrectedGold.build(task, source, corrections, name)
    else:
        built = CorrectedGold.from_text(task, text, Path(str(source)).name, str(source), corrections, name)
    return GoldVersions(store).add(task.facts.name, built.version, built.base, len(built.file.changed), [c.to_dict() for c in corrections],
                                   created_by=created_by)
