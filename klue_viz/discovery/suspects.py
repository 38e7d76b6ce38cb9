"""Likely gold errors: a review queue of units whose gold looks wrong, most suspicious first.

Two kinds of evidence, combined into one score:

* Agreement of runs against the gold. A unit is a suspect when every run (for label tasks: at least
  two runs, or one when it is the only run) gives the same answer and that answer is not the gold.
  Each agreeing run adds its probability of the proposed label when it gave probabilities, and 1
  when it did not: more runs, and more confident runs, rank higher.
* cleanlab, where runs give class probabilities (YNAT, NLI, RE): the mean of the runs' probabilities
  is the out-of-sample `pred_probs` cleanlab needs (dev-set predictions are out-of-sample); an example
  adds 1 - its label quality (`cleanlab.rank.get_label_quality_scores`, self-confidence), and
  `cleanlab.filter.find_label_issues` says whether it is flagged.

The unit is the example for YNAT, NLI, RE, STS and MRC; an entity span for NER, a word for DP, a
slot of a turn for WoS. Each task finds its own (`Task.find_suspects` in its module; the default is the
single-label finder here); this module ranks them and holds what the finders share. `proposed` is
written in the form the patch export reads back (`klue_viz.discovery.patch`), so marking a suspect stores a
correction that can be applied.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np
import pandas as pd

from klue_viz.tasks.base import Task


def suspects(task: Task, results: list, top: int | None = 100) -> list[dict]:
    """The review queue of several runs of one task (RunResults scored against the same gold)."""
    if not results:
        return []
    found = task.find_suspects(results)
    found.sort(key=lambda s: (-s["score"], s["guid"], s["turn"] if s["turn"] is not None else -1, s["unit"]))
    return found[:top] if top else found


def suspect_item(guid, unit, gold, proposed, score, evidence, turn=None) -> dict:
    """One entry of the queue: `proposed` in the form the task's patch writer reads back."""
    return {"guid": str(guid), "turn": turn, "unit": unit, "gold": gold, "proposed": proposed, "score": float(score), "evidence": evidence}


def shared_examples(results) -> tuple[list[pd.DataFrame], pd.Index]:
    """Each run's example frame indexed by guid, and the guids every run has (in the first run's order)."""
    frames = [r.frames.examples.set_index("guid") for r in results]
    shared = frames[0].index
    for frame in frames[1:]:
        shared = shared.intersection(frame.index)
    return frames, shared


# ---- single-label tasks (the default of Task.find_suspects) -------------------------------------------

def label_suspects(task, results) -> list[dict]:
    """Examples whose label the runs agree on against the gold, with cleanlab's label quality where runs gave probabilities."""
    labels = list(task.labels)
    index = {label: k for k, label in enumerate(labels)}
    frames, shared = shared_examples(results)
    gold = frames[0].loc[shared, "gold"].astype(str).to_numpy()
    quality, flagged = _cleanlab(task, results, frames, shared)
    needed = 1 if len(results) == 1 else 2
    out = []
    for k, guid in enumerate(shared):
        preds = [(r.run, f.at[guid, "pred"], f.at[guid, "probs"]) for r, f in zip(results, frames)]
        wrong = Counter(p for _, p, _ in preds if isinstance(p, str) and p != gold[k])
        if not wrong:
            continue
        proposed, count = wrong.most_common(1)[0]
        if count < needed or count < len(results) / 2:
            continue
        evidence: dict[str, Any] = {"runs": {}, "agreeing": count, "of": len(results)}
        votes = 0.0
        for run, pred, probs in preds:
            entry: dict[str, str | float | None] = {"label": pred if isinstance(pred, str) else None}
            if probs is not None:
                entry.update(confidence=float(probs[index[pred]]) if pred in index else None, p_gold=float(probs[index[gold[k]]]),
                             p_proposed=float(probs[index[proposed]]))
            if pred == proposed:
                votes += float(probs[index[proposed]]) if probs is not None else 1.0
            evidence["runs"][run] = entry
        score = votes
        if quality is not None:
            evidence["cleanlab"] = {"label_quality": float(quality[k]), "flagged": bool(flagged[k])}
            score += 1.0 - float(quality[k])
        out.append(suspect_item(guid, "label", gold[k], proposed, score, evidence))
    return out


def _cleanlab(task, results, frames, shared):
    """Label quality and issue flags from the mean probabilities of the runs that gave them (None without)."""
    with_probs = [f.loc[shared, "probs"] for f in frames if f.loc[shared, "probs"].notna().all()]
    if not with_probs or len(shared) < 2:
        return None, None
    from cleanlab.filter import find_label_issues
    from cleanlab.rank import get_label_quality_scores

    probs = np.mean([np.asarray(p.tolist(), dtype=float) for p in with_probs], axis=0)
    probs = np.clip(probs, 1e-6, None)
    probs /= probs.sum(axis=1, keepdims=True)
    index = {label: k for k, label in enumerate(task.labels)}
    labels = np.array([index[g] for g in frames[0].loc[shared, "gold"].astype(str)])
    quality = get_label_quality_scores(labels, probs, method="self_confidence")
    try:
        # n_jobs=1: by default cleanlab forks a process pool, and a fork of the threaded Streamlit server can deadlock.
        flagged = find_label_issues(labels, probs, n_jobs=1)
    except (ValueError, TypeError):  # too few examples per class for cleanlab's noise estimate
        flagged = np.zeros(len(labels), dtype=bool)
    return quality, flagged


def queue_frame(found: list[dict]) -> pd.DataFrame:
    """The queue as a table for the app (evidence summarised as text)."""
    rows = [{"rank": k + 1, "guid": s["guid"], "turn": s["turn"], "unit": s["unit"], "gold": str(s["gold"]), "proposed": str(s["proposed"]),
             "score": s["score"], "runs agreeing": f"{s['evidence'].get('agreeing', '?')}/{s['evidence'].get('of', '?')}"}
            for k, s in enumerate(found)]
    frame = pd.DataFrame(rows, columns=["rank", "guid", "turn", "unit", "gold", "proposed", "score", "runs agreeing"])
    # Only WoS units have a turn: elsewhere the column would read None on every row.
    return frame if any(s["turn"] is not None for s in found) else frame.drop(columns="turn")


def evidence_details(suspect: dict) -> pd.DataFrame:
    """The evidence besides each run's answer (which `evidence_frame` lists), one readable row per item, for the app and the
    report (not the raw JSON)."""
    evidence = suspect["evidence"]
    rows = []
    if "agreeing" in evidence:
        rows.append(("runs agreeing", f"{evidence['agreeing']} of {evidence.get('of', '?')}"))
    for key, value in evidence.items():
        if key in ("agreeing", "of", "runs"):
            continue
        rows.append((key.replace("_", " "), _readable(value)))
    return pd.DataFrame(rows, columns=["evidence", "value"])


def _readable(value) -> str:
    if isinstance(value, float):
        return f"{value:.3f}"
    if isinstance(value, dict):
        return ", ".join(f"{k}: {_readable(v)}" for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return ", ".join(_readable(v) for v in value)
    return "" if value is None else str(value)


def evidence_frame(suspect: dict) -> pd.DataFrame:
    """One row per run: what it answered on the unit and, where it gave probabilities, how confident it was."""
    runs = suspect["evidence"].get("runs", {})
    rows = []
    for run, given in (runs.items() if isinstance(runs, dict) else ((run, suspect["proposed"]) for run in runs)):
        entry = given if isinstance(given, dict) else {"label": given}
        rows.append({"run": run, "answer": "" if entry.get("label") is None else str(entry["label"]),
                     "confidence": entry.get("confidence"), "p(gold)": entry.get("p_gold"), "p(proposed)": entry.get("p_proposed")})
    frame = pd.DataFrame(rows, columns=["run", "answer", "confidence", "p(gold)", "p(proposed)"])
    return frame.dropna(axis=1, how="all")


FINE_UNITS = frozenset({"entity", "head", "relation", "slot"})


def mark_gold_wrong(db, task: Task, suspect: dict, annotator: str):
    """Store 'gold looks wrong' with the proposed correction on the gold of the suspect's example.

    One record per (example, annotator): for entities, words and slots the proposals of one example
    are kept together, `;`-separated, as the patch export reads them; notes are added, never replaced.
    """
    from klue_viz.annotations.store import Annotation

    guid, turn = suspect["guid"], suspect["turn"]
    item = db.get(task.name, guid, "gold", annotator, turn=turn) or Annotation(task.name, guid, "gold", annotator, turn=turn)
    proposed = str(suspect["proposed"])
    if suspect["unit"] in FINE_UNITS and item.corrected_label:
        parts = [p.strip() for p in item.corrected_label.split(";") if p.strip()]
        item.corrected_label = "; ".join(parts + ([proposed] if proposed not in parts else []))
    else:
        item.corrected_label = proposed
    item.gold_wrong = True
    remark = f"suspect queue: {suspect['unit']} gold {suspect['gold']} -> {proposed}"
    if remark not in item.note:
        item.note = "; ".join(n for n in (item.note, remark) if n)
    return db.save(item)
