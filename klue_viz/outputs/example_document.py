"""A drawn example as a document for klue_viz.drawing.svg: what to draw (text, spans, arcs, turns, labels), no markup.

Each task module draws its own document (its `svg_document` part: entity rows for NER, word rows for DP, slot
rows for WoS, the subject and object for RE, the passage and answers for MRC); a task without one is drawn here as
the text and labels of a sentence task. The document's `kind` says which drawing of klue_viz.drawing.svg writes
it. `example_svg` does both steps.
"""

from __future__ import annotations

import numpy as np

from klue_viz.core.results import Frames
from klue_viz.drawing.svg import drawing
from klue_viz.tasks.base import Task


def _labels(task: Task, frames: Frames, guid: str) -> dict:
    ex = frames.example(guid)
    rows = [{"side": column, "text": str(ex[column]), "marks": []} for column in task.facts.text_columns if column in ex.index]
    pred = ex["pred"]
    shown = "(none)" if pred is None or (isinstance(pred, float) and np.isnan(pred)) else (f"{pred:.2f}" if isinstance(pred, float) else str(pred))
    gold = f"{ex['gold']:.2f}" if isinstance(ex["gold"], (float, np.floating)) else str(ex["gold"])
    notes = [{"side": "gold", "text": gold, "status": "correct"}, {"side": "predicted", "text": shown, "status": "correct" if ex["correct"] else "wrong"}]
    legend = [{"text": "prediction right", "status": "correct"}, {"text": "prediction wrong", "status": "wrong"}]
    return {"kind": "spans", "rows": rows, "notes": notes, "legend": legend}


def drawing_document(task: Task, frames: Frames, guids: list[str]) -> dict:
    """What the card of `guids` (one example, or a WoS dialogue's turns) shows, as a document for klue_viz.drawing.svg."""
    guid = guids[0]
    doc = _labels(task, frames, guid) if task.svg_document is None else task.svg_document.document(frames, guids)
    if task.view.card_column:
        guid = str(frames.example(guid)[task.view.card_column])
    doc["title"] = f"{task.facts.title} · {guid}"
    return doc


def example_svg(task: Task, frames: Frames, guids: list[str]) -> str:
    """The card of `guids` as one standalone SVG file (gold and prediction together, with a legend)."""
    return drawing(drawing_document(task, frames, guids))


def svg_name(task: Task, run: str, guid: str) -> str:
    """A file name for the drawing: task, run and guid, with anything but letters, digits, '-' and '_' as '_'."""
    safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in f"{task.facts.name}-{run}-{guid}")
    return safe[:150] + ".svg"

