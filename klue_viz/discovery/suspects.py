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
slot of a turn for WoS. Each task finds its own (`Task.find_suspects` in its module, the single-label
finder on `LabelTask`, from the entries of `klue_viz.tasks.kit`); this module ranks them and tables them for the
app. `proposed` is written in the form the patch export reads back (`klue_viz.discovery.patch`), so marking a
suspect (`klue_viz.store.gold_marks`) stores a correction that can be applied.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

import pandas as pd

from klue_viz.core.results import ScoredRun
from klue_viz.tasks.base import Task
from klue_viz.tasks.kit import Suspect


def suspects(task: Task, results: Sequence[ScoredRun], top: int | None = 100,
             gold_rows: list[dict] | None = None) -> list[Suspect]:
    """The review queue of several runs of one task (RunResults scored against the same gold), in `queue_order`;
    with `gold_rows`, each suspect carries the `text` of its unit (`Task.suspect_text`)."""
    if not results:
        return []
    found = task.find_suspects(results)
    found = [replace(item, confidence=confidence, label_quality=quality, queued=True)
             for item in found for confidence, quality in [tie_keys(item)]]
    found.sort(key=queue_order)
    found = found[:top] if top else found
    if gold_rows is not None:
        found = with_text(task, gold_rows, found)
    return found


def tie_keys(suspect: Suspect) -> tuple[float | None, float | None]:
    """The second and third keys of the queue: the runs' mean probability of the proposed answer (None where no run gave
    probabilities) and cleanlab's label quality of the gold (None without probabilities)."""
    runs = suspect.evidence.runs
    given = [e["p_proposed"] for e in runs.values() if isinstance(e, dict) and e.get("p_proposed") is not None] if isinstance(runs, Mapping) else []
    quality = suspect.evidence.extra.get("cleanlab", {}).get("label_quality")
    return (float(sum(given) / len(given)) if given else None), (None if quality is None else float(quality))


def queue_order(suspect: Suspect) -> tuple:
    """Most suspicious first: by score; ties by the runs' mean confidence in the proposal (higher first), then by cleanlab's
    label quality of the gold (lower first); a suspect without them after those with; then by guid, turn and unit."""
    confidence, quality = suspect.confidence, suspect.label_quality
    return (-suspect.score, -(confidence if confidence is not None else -1.0), quality if quality is not None else 2.0,
            suspect.guid, suspect.turn if suspect.turn is not None else -1, suspect.unit)


def with_text(task: Task, gold_rows: list[dict], found: list[Suspect]) -> list[Suspect]:
    """Each suspect with its `text`: its unit as plain text (the sentence with the span marked, the pair, the word and its head)."""
    rows = {row["guid"]: row for row in gold_rows}
    texts = [rows.get(task.example_guid(item.guid, item.turn)) for item in found]
    return [replace(item, text=task.suspect_text(row, item) if row is not None else "") for item, row in zip(found, texts)]


def queue_frame(found: list[Suspect]) -> pd.DataFrame:
    """The queue as a table for the app (evidence summarised as text)."""
    rows = [{"rank": k + 1, "guid": s.guid, "turn": s.turn, "unit": s.unit, "text": s.text or "", "gold": str(s.gold),
             "proposed": str(s.proposed), "score": s.score, "confidence": s.confidence, "label quality": s.label_quality,
             "runs agreeing": f"{s.evidence.agreeing}/{s.evidence.of}"}
            for k, s in enumerate(found)]
    frame = pd.DataFrame(rows, columns=["rank", "guid", "turn", "unit", "text", "gold", "proposed", "score", "confidence", "label quality",
                                        "runs agreeing"])
    # Only WoS units have a turn: elsewhere the column would read None on every row.
    return frame if any(s.turn is not None for s in found) else frame.drop(columns="turn")


def evidence_details(suspect: Suspect) -> pd.DataFrame:
    """The evidence besides each run's answer (which `evidence_frame` lists), one readable row per item, for the app and the
    report (not the raw JSON)."""
    evidence = suspect.evidence.to_dict()
    rows = []
    if "agreeing" in evidence:
        rows.append(("runs agreeing", f"{evidence['agreeing']} of {evidence.get('of', '?')}"))
    for key, value in evidence.items():
        if key in ("agreeing", "of", "runs"):
            continue
        rows.append((key.replace("_", " "), _readable(value)))
    return pd.DataFrame(rows, columns=["evidence", "value"])


def _readable(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.3f}"
    if isinstance(value, dict):
        return ", ".join(f"{k}: {_readable(v)}" for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return ", ".join(_readable(v) for v in value)
    return "" if value is None else str(value)


def evidence_frame(suspect: Suspect) -> pd.DataFrame:
    """One row per run: what it answered on the unit and, where it gave probabilities, how confident it was."""
    runs = suspect.evidence.runs
    rows = []
    for run, given in (runs.items() if isinstance(runs, Mapping) else ((run, suspect.proposed) for run in runs)):
        entry = given if isinstance(given, dict) else {"label": given}
        rows.append({"run": run, "answer": "" if entry.get("label") is None else str(entry["label"]),
                     "confidence": entry.get("confidence"), "p(gold)": entry.get("p_gold"), "p(proposed)": entry.get("p_proposed")})
    frame = pd.DataFrame(rows, columns=["run", "answer", "confidence", "p(gold)", "p(proposed)"])
    return frame.dropna(axis=1, how="all")
