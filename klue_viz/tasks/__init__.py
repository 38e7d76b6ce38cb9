"""The registry of KLUE tasks: every module in this package that defines `TASK` is one task.

The CLI, the app and the tests go through `TASKS`; adding a task means adding a module here. A
task module is imported the first time its task is used, so `klue-viz evaluate --task ner` loads
NER alone (the names come from the package's files, which are read, not imported).
May import: drawing, reading, metrics, core.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from collections.abc import Iterator, Mapping
from pathlib import Path

from klue_viz.tasks.base import Task

#: The benchmark's own order, used for listing; a module missing here is listed last.
KLUE_ORDER = ("ynat", "sts", "nli", "ner", "re", "dp", "mrc", "wos")
DEFINES_TASK = re.compile(r"^TASK\s*=", re.M)


def _task_modules() -> list[str]:
    """Modules of this package that define `TASK` at top level, in KLUE order."""
    folder = Path(__file__).parent
    names = [info.name for info in pkgutil.iter_modules(__path__)
             if DEFINES_TASK.search((folder / f"{info.name}.py").read_text(encoding="utf-8"))]
    order = {name: k for k, name in enumerate(KLUE_ORDER)}
    return sorted(names, key=lambda name: order.get(name, len(order)))


class Registry(Mapping[str, Task]):
    """Task name -> task, importing a task's module on first use."""

    def __init__(self, names: list[str]) -> None:
        self._names = names
        self._loaded: dict[str, Task] = {}

    def __getitem__(self, name: str) -> Task:
        if name not in self._names:
            raise KeyError(name)
        if name not in self._loaded:
            task = importlib.import_module(f"{__name__}.{name}").TASK
            if not isinstance(task, Task) or task.facts.name != name:
                raise TypeError(f"{__name__}.{name}.TASK must be a Task named {name!r}")
            self._loaded[name] = task
        return self._loaded[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)


TASKS: Registry = Registry(_task_modules())


def get_task(name: str) -> Task:
    try:
        return TASKS[name.lower()]
    except KeyError:
        raise KeyError(f"unknown task {name!r}; expected one of {', '.join(TASKS)}") from None


def _names_a_label(labels: tuple[str, ...], value: object) -> bool:
    """Whether a record's `label` is a string naming one of `labels`, by name or by its Hugging Face id."""
    if not isinstance(value, str):
        return False
    text = value.strip()
    if text in labels:
        return True
    return text.lstrip("-").isdigit() and len(text) <= 12 and 0 <= int(text) < len(labels)


def detect_task(records: list[dict]) -> str | None:
    """The task a list of prediction or gold records most likely belongs to (by guid prefix, then fields)."""
    sample = records[:200]
    best, best_score = None, 0.0
    for task in TASKS.values():
        prefix_hits = sum(str(r.get("guid", r.get("id", ""))).startswith(task.facts.guid_prefix + "_") for r in sample)
        field_hits = sum(bool(task.facts.signature_fields & r.keys()) for r in sample)
        label_hits = 0
        if task.labels is not None and not task.facts.signature_fields:
            label_hits = sum(_names_a_label(task.labels, r.get("label")) for r in sample)
        score = 2 * prefix_hits + field_hits + label_hits
        if score > best_score:
            best, best_score = task.facts.name, score
    return best
