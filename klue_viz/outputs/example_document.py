"""A drawn example as a document for klue_viz.drawing.svg: what to draw (text, spans, arcs, turns, labels), no markup.

The document is read off the run's frames: entity rows (NER), word rows (DP), slot rows (WoS),
the subject and object (RE), the passage and answers (MRC), or the text and labels of a sentence
task; its `kind` says which drawing of klue_viz.drawing.svg writes it. `example_svg` does both steps.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

import numpy as np

from klue_viz.core.results import Frames
from klue_viz.drawing.markup import LABEL_COLOURS
from klue_viz.drawing.svg import drawing
from klue_viz.tasks.base import Task
from klue_viz.tasks.mrc import answer_segments

ANSWER_COLOURS = {"gold": "#2da44e", "pred": "#fb8f44", "both": "#54aeff"}
STATUS_TEXT = {"correct": "right", "missed": "missed (dashed)", "spurious": "spurious (dashed)", "wrong type": "wrong type",
               "wrong boundary": "wrong boundary", "wrong type and boundary": "wrong type and boundary"}


def _status_legend(statuses: Iterable[object]) -> list[dict]:
    seen = list(dict.fromkeys(str(s) for s in statuses))
    return [{"text": STATUS_TEXT.get(s, s), "status": s} for s in seen]


def _ner(task: Task, frames: Frames, guid: str) -> dict:
    ex = frames.example(guid)
    ents = frames.rows(guid, "entities")
    rows = []
    for side, name in (("gold", "gold"), ("pred", "predicted")):
        marks = [{"start": int(e.start), "end": int(e.end), "tag": e.label, "colour": LABEL_COLOURS.get(e.label, "#d0d7de"), "status": e.error_type}
                 for e in ents[ents["side"] == side].itertuples()]
        rows.append({"side": name, "text": ex["sentence"], "marks": marks})
    types = sorted(set(ents["label"].astype(str)))
    legend = [{"text": t, "colour": LABEL_COLOURS.get(t, "#d0d7de")} for t in types] + _status_legend(ents["error_type"])
    return {"kind": "spans", "rows": rows, "legend": legend}


def _re(task: Task, frames: Frames, guid: str) -> dict:
    ex = frames.example(guid)
    subj, obj = ex["subject"], ex["object"]
    marks = [{"start": int(subj["start"]), "end": int(subj["end"]), "tag": f"subj · {subj['type']}", "colour": LABEL_COLOURS.get(subj["type"], "#d0d7de")},
             {"start": int(obj["start"]), "end": int(obj["end"]), "tag": f"obj · {obj['type']}", "colour": LABEL_COLOURS.get(obj["type"], "#d0d7de")}]
    right = bool(ex["correct"])
    notes = [{"side": "gold", "text": str(ex["gold"]), "status": "correct"},
             {"side": "predicted", "text": str(ex["pred"]) if isinstance(ex["pred"], str) else "(none)", "status": "correct" if right else "wrong"}]
    legend = [{"text": f"{subj['type']} (subject)", "colour": marks[0]["colour"]}, {"text": f"{obj['type']} (object)", "colour": marks[1]["colour"]},
              {"text": "prediction right", "status": "correct"}, {"text": "prediction wrong", "status": "wrong"}]
    return {"kind": "spans", "rows": [{"side": "text", "text": ex["sentence"], "marks": marks}], "notes": notes, "legend": legend}


def _mrc(task: Task, frames: Frames, guid: str) -> dict:
    ex = frames.example(guid)
    context, pred = str(ex["context"]), ex["pred"] if isinstance(ex["pred"], str) else ""
    at = context.find(pred) if pred else -1
    segments = answer_segments(context, list(ex["answer_spans"]), (at, at + len(pred)) if at >= 0 else None)
    marks = [{"start": a, "end": b, "colour": ANSWER_COLOURS[side]} for a, b, side in segments if side]
    status = "correct" if ex["correct"] else ("partial" if ex["rouge_w"] > 0 else "wrong")
    notes = [{"side": "gold", "text": str(ex["gold"]), "status": "correct"},
             {"side": "predicted", "text": (pred or "(no answer)") + f"  (EM {ex['em']:.0f}, ROUGE-W {ex['rouge_w']:.1f})", "status": status}]
    legend = [{"text": "gold answer", "colour": ANSWER_COLOURS["gold"]}, {"text": "predicted", "colour": ANSWER_COLOURS["pred"]},
              {"text": "both", "colour": ANSWER_COLOURS["both"]}]
    rows = [{"side": "question", "text": str(ex["question"]), "marks": []}, {"side": "passage", "text": context, "marks": marks}]
    return {"kind": "spans", "rows": rows, "notes": notes, "legend": legend}


def _dp(task: Task, frames: Frames, guid: str) -> dict:
    ex = frames.example(guid)
    words = frames.rows(guid, "words")
    arcs = []
    for w in words.itertuples():
        arcs.append({"dependent": int(w.index), "head": int(w.gold_head), "label": w.gold_deprel, "side": "gold", "status": "correct"})
        status = "correct" if w.correct else ("wrong_head" if not w.head_ok else "wrong_label")
        arcs.append({"dependent": int(w.index), "head": int(w.pred_head), "label": w.pred_deprel, "side": "pred", "status": status})
    legend = [{"text": "gold arcs above the words, predicted below", "status": ""}, {"text": "right", "status": "correct"},
              {"text": "wrong head", "status": "wrong"}, {"text": "wrong label", "status": "partial"}]
    notes = [{"side": "score", "text": f"UAS {ex['uas']:.2f} · LAS {ex['las']:.2f}"}]
    return {"kind": "arcs", "text": str(ex["sentence"]), "words": [{"form": w.word_form, "lemma": w.lemma, "pos": w.pos} for w in words.itertuples()],
            "arcs": arcs, "notes": notes, "legend": legend}


class _SlotRow(Protocol):
    """A row of the WoS slots frame (from `itertuples`), as `_chip` reads it."""

    status: str
    domain_slot: str
    gold_value: object
    pred_value: object


def _chip(slot: _SlotRow) -> dict:
    if slot.status == "missing":
        return {"text": f"{slot.domain_slot} = {slot.gold_value} (missed)", "status": "missing"}
    if slot.status == "extra":
        return {"text": f"{slot.domain_slot} = {slot.pred_value} (extra)", "status": "extra"}
    return {"text": f"{slot.domain_slot}: gold {slot.gold_value} / pred {slot.pred_value}", "status": "wrong_value"}


def _wos(task: Task, frames: Frames, guids: list[str]) -> dict:
    first = frames.example(guids[0])
    dialogue = frames.rows(first["dialogue"], by="dialogue").sort_values("turn")
    slots = frames.rows(first["dialogue"], "slots", by="dialogue")
    turns = []
    for turn in dialogue.itertuples():
        if turn.system:
            turns.append({"speaker": "sys", "text": turn.system})
        wrong = slots[(slots["guid"] == turn.guid) & (slots["status"] != "correct")]
        chips = [_chip(s) for s in wrong.itertuples()] or [{"text": f"prediction = gold ({len(turn.gold_state)} slots)", "status": "correct"}]
        turns.append({"speaker": f"user {turn.turn}", "text": turn.text, "chips": chips, "broken": not turn.correct})
    legend = [{"text": "state right", "status": "correct"}, {"text": "missed slot", "status": "missing"}, {"text": "extra slot", "status": "extra"},
              {"text": "wrong value", "status": "wrong_value"}, {"text": "red bar: joint goal wrong on this turn", "status": "wrong"}]
    return {"kind": "turns", "turns": turns, "legend": legend}


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
    if "entities" in frames.details:
        doc = _ner(task, frames, guid)
    elif "words" in frames.details:
        doc = _dp(task, frames, guid)
    elif "slots" in frames.details:
        doc = _wos(task, frames, guids)
        guid = str(frames.example(guid)["dialogue"])
    elif {"subject", "object"} <= set(frames.examples.columns):
        doc = _re(task, frames, guid)
    elif "context" in frames.examples:
        doc = _mrc(task, frames, guid)
    else:
        doc = _labels(task, frames, guid)
    doc["title"] = f"{task.facts.title} · {guid}"
    return doc


def example_svg(task: Task, frames: Frames, guids: list[str]) -> str:
    """The card of `guids` as one standalone SVG file (gold and prediction together, with a legend)."""
    return drawing(drawing_document(task, frames, guids))


def svg_name(task: Task, run: str, guid: str) -> str:
    """A file name for the drawing: task, run and guid, with anything but letters, digits, '-' and '_' as '_'."""
    safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in f"{task.facts.name}-{run}-{guid}")
    return safe[:150] + ".svg"

