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
slot of a turn for WoS. `proposed` is written in the form the patch export reads back (see
`klue_viz.discovery.patch`), so marking a suspect stores a correction that can be applied.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

import numpy as np
import pandas as pd

from klue_viz.discovery.patch import NO_ANSWER
from klue_viz.tasks.base import Task

#: STS: how far (on 0..5) every run must be from the gold, on the same side, to suggest another score.
STS_MARGIN = 1.0


def suspects(task: Task, results: list, top: int | None = 100) -> list[dict]:
    """The review queue of several runs of one task (RunResults scored against the same gold)."""
    if not results:
        return []
    finder = {"ner": _ner, "dp": _dp, "wos": _wos, "sts": _sts, "mrc": _mrc}.get(task.name, _labels)
    found = finder(task, results)
    found.sort(key=lambda s: (-s["score"], s["guid"], s["turn"] if s["turn"] is not None else -1, s["unit"]))
    return found[:top] if top else found


def _item(guid, unit, gold, proposed, score, evidence, turn=None) -> dict:
    return {"guid": str(guid), "turn": turn, "unit": unit, "gold": gold, "proposed": proposed, "score": float(score), "evidence": evidence}


# ---- single-label tasks ----------------------------------------------------------------------------

def _labels(task, results) -> list[dict]:
    labels = list(task.labels)
    index = {label: k for k, label in enumerate(labels)}
    frames = [r.frames.examples.set_index("guid") for r in results]
    shared = frames[0].index
    for frame in frames[1:]:
        shared = shared.intersection(frame.index)
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
        out.append(_item(guid, "label", gold[k], proposed, score, evidence))
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
        flagged = find_label_issues(labels, probs)
    except (ValueError, TypeError):  # too few examples per class for cleanlab's noise estimate
        flagged = np.zeros(len(labels), dtype=bool)
    return quality, flagged


# ---- STS, MRC ---------------------------------------------------------------------------------------

def _sts(task, results) -> list[dict]:
    frames = [r.frames.examples.set_index("guid") for r in results]
    shared = frames[0].index
    for frame in frames[1:]:
        shared = shared.intersection(frame.index)
    gold = frames[0].loc[shared, "gold"].to_numpy(float)
    preds = np.column_stack([f.loc[shared, "pred"].to_numpy(float) for f in frames])
    diff = preds - gold[:, None]
    same_side = (np.sign(diff) == np.sign(diff[:, :1])).all(axis=1)
    least = np.abs(diff).min(axis=1)
    out = []
    for k in np.flatnonzero(same_side & (least >= STS_MARGIN)):
        proposed = round(float(preds[k].mean()), 1)
        evidence = {"runs": {r.run: float(preds[k, j]) for j, r in enumerate(results)}, "agreeing": len(results), "of": len(results)}
        out.append(_item(shared[k], "score", float(gold[k]), proposed, len(results) * float(least[k]) / 5, evidence))
    return out


def _mrc(task, results) -> list[dict]:
    frames = [r.frames.examples.set_index("guid") for r in results]
    shared = frames[0].index
    for frame in frames[1:]:
        shared = shared.intersection(frame.index)
    out = []
    for guid in shared:
        answers = [f.at[guid, "pred"] for f in frames]
        norms = {f.at[guid, "pred_norm"] for f in frames}
        if len(norms) != 1 or any(f.at[guid, "correct"] for f in frames):
            continue
        evidence = {"runs": {r.run: a for r, a in zip(results, answers)}, "agreeing": len(results), "of": len(results)}
        out.append(_item(guid, "answer", frames[0].at[guid, "gold"], answers[0] or NO_ANSWER, len(results), evidence))
    return out


# ---- NER, DP, WoS: finer units -----------------------------------------------------------------------

def _ner(task, results) -> list[dict]:
    n = len(results)
    spans: dict[tuple, list[str]] = defaultdict(list)
    missed: dict[tuple, list[str]] = defaultdict(list)
    for r in results:
        ents = r.frames.details["entities"]
        wrong_pred = ents[(ents["side"] == "pred") & ~ents["matched"]]
        for key in wrong_pred[["guid", "start", "end", "label", "text"]].itertuples(index=False, name=None):
            spans[key].append(r.run)
        lost = ents[(ents["side"] == "gold") & (ents["error_type"] == "missed")]
        for key in lost[["guid", "start", "end", "label", "text"]].itertuples(index=False, name=None):
            missed[key].append(r.run)
    gold_ents = results[0].frames.details["entities"]
    gold_ents = gold_ents[gold_ents["side"] == "gold"]
    by_guid: dict[str, list] = defaultdict(list)
    for guid, start, end, label, text in gold_ents[["guid", "start", "end", "label", "text"]].itertuples(index=False, name=None):
        by_guid[guid].append((start, end, label, text))
    out = []
    for (guid, start, end, label, text), runs in spans.items():
        if len(runs) < n:
            continue
        overlapping = [f"{a}-{b}:{lab}" for a, b, lab, _ in by_guid.get(guid, []) if a < end and start < b]
        evidence = {"text": text, "runs": runs, "agreeing": n, "of": n,
                    "gold_entities": [f"{t} ({lab})" for a, b, lab, t in by_guid.get(guid, []) if a < end and start < b]}
        out.append(_item(guid, "entity", "; ".join(overlapping) or f"{start}-{end}:O", f"{start}-{end}:{label}", n, evidence))
    for (guid, start, end, label, text), runs in missed.items():
        if len(runs) < n:
            continue
        evidence = {"text": text, "runs": runs, "agreeing": n, "of": n, "gold_entities": [f"{text} ({label})"]}
        out.append(_item(guid, "entity", f"{start}-{end}:{label}", f"{start}-{end}:O", n, evidence))
    return out


def _dp(task, results) -> list[dict]:
    n = len(results)
    words = [r.frames.details["words"].set_index(["guid", "index"]) for r in results]
    shared = words[0].index
    for w in words[1:]:
        shared = shared.intersection(w.index)
    base = words[0].loc[shared]
    heads = np.column_stack([w.loc[shared, "pred_head"].to_numpy() for w in words])
    deprels = np.column_stack([w.loc[shared, "pred_deprel"].astype(str).to_numpy() for w in words])
    gold_head, gold_rel = base["gold_head"].to_numpy(), base["gold_deprel"].astype(str).to_numpy()
    same_head = (heads == heads[:, :1]).all(axis=1)
    same_rel = (deprels == deprels[:, :1]).all(axis=1)
    against = same_head & ((heads[:, 0] != gold_head) | (same_rel & (deprels[:, 0] != gold_rel)))
    out = []
    for k in np.flatnonzero(against):
        guid, index = shared[k]
        rel = deprels[k, 0] if same_rel[k] else gold_rel[k]
        evidence = {"word": str(base["word_form"].iloc[k]), "runs": [r.run for r in results], "agreeing": n, "of": n,
                    "pred_deprels": sorted(set(deprels[k]))}
        unit = "head" if heads[k, 0] != gold_head[k] else "relation"
        out.append(_item(guid, unit, f"{index}:{gold_head[k]}:{gold_rel[k]}", f"{index}:{heads[k, 0]}:{rel}", n, evidence))
    return out


def _wos(task, results) -> list[dict]:
    n = len(results)
    answers: dict[tuple, list] = defaultdict(list)
    for r in results:
        slots = r.frames.details["slots"]
        wrong = slots[~slots["correct"]]
        for dialogue, turn, slot, gold, pred in wrong[["dialogue", "turn", "domain_slot", "gold_value", "pred_value"]].itertuples(index=False, name=None):
            answers[(dialogue, int(turn), slot, _value(gold))].append((r.run, _value(pred)))
    out = []
    for (dialogue, turn, slot, gold), given in answers.items():
        values = {v for _, v in given}
        if len(given) < n or len(values) != 1:
            continue
        value = next(iter(values))
        evidence = {"runs": [run for run, _ in given], "agreeing": n, "of": n}
        out.append(_item(dialogue, "slot", f"{slot}-{gold if gold is not None else 'none'}",
                         f"{slot}-{value if value is not None else 'none'}", n, evidence, turn=turn))
    return out


def _value(value) -> str | None:
    """A slot value, None where the side has no value (pandas gives a missing string as NaN, not None)."""
    return None if value is None or pd.isna(value) else str(value)


def queue_frame(found: list[dict]) -> pd.DataFrame:
    """The queue as a table for the app (evidence summarised as text)."""
    rows = [{"rank": k + 1, "guid": s["guid"], "turn": s["turn"], "unit": s["unit"], "gold": str(s["gold"]), "proposed": str(s["proposed"]),
             "score": s["score"], "runs agreeing": f"{s['evidence'].get('agreeing', '?')}/{s['evidence'].get('of', '?')}"}
            for k, s in enumerate(found)]
    return pd.DataFrame(rows, columns=["rank", "guid", "turn", "unit", "gold", "proposed", "score", "runs agreeing"])


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
