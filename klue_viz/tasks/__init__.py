"""The registry of KLUE tasks: every module in this package that defines `TASK` is one task.

The CLI, the app and the tests iterate `TASKS`; adding a task means adding a module here.
"""

from __future__ import annotations

import importlib
import pkgutil

from klue_viz.tasks.base import Task

#: The benchmark's own order, used for listing; a module missing here is listed last.
KLUE_ORDER = ("ynat", "sts", "nli", "ner", "re", "dp", "mrc", "wos")


def _discover() -> dict[str, Task]:
    found = {}
    for info in pkgutil.iter_modules(__path__):
        module = importlib.import_module(f"{__name__}.{info.name}")
        task = getattr(module, "TASK", None)
        if isinstance(task, Task):
            found[task.name] = task
    order = {name: k for k, name in enumerate(KLUE_ORDER)}
    return dict(sorted(found.items(), key=lambda item: order.get(item[0], len(order))))


TASKS: dict[str, Task] = _discover()


def get_task(name: str) -> Task:
    try:
        return TASKS[name.lower()]
    except KeyError:
        raise KeyError(f"unknown task {name!r}; expected one of {', '.join(TASKS)}") from None


def detect_task(records: list[dict]) -> str | None:
    """The task a list of prediction or gold records most likely belongs to (by guid prefix, then fields)."""
    sample = records[:200]
    best, best_score = None, 0.0
    for task in TASKS.values():
        prefix_hits = sum(str(r.get("guid", r.get("id", ""))).startswith(task.guid_prefix + "_") for r in sample)
        field_hits = sum(bool(task.signature_fields & r.keys()) for r in sample)
        label_hits = 0
        if hasattr(task, "labels") and not task.signature_fields:
            for r in sample:
                try:
                    label_hits += r.get("label") is not None and task.label_of(r["label"]) is not None and isinstance(r["label"], str)
                except ValueError:
                    pass
        score = 2 * prefix_hits + field_hits + label_hits
        if score > best_score:
            best, best_score = task.name, score
    return best
