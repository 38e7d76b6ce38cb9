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
finder on `LabelTask`, from the entries of `klue_viz.kit`); this module ranks them and tables them for the
app. `proposed` is written in the form the patch export reads back (`klue_viz.discovery.patch`), so marking a
suspect (`klue_viz.annotations.gold_marks`) stores a correction that can be applied.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from klue_viz.kit import Suspect
from klue_viz.results import ScoredRun
from klue_viz.tasks.base import Task


def suspects(task: Task, results: Sequence[ScoredRun], top: int | None = 100) -> list[Suspect]:
    """The review queue of several runs of one task (RunResults scored against the same gold)."""
    if not results:
        return []
    found = task.find_suspects(results)
    found.sort(key=lambda s: (-s.score, s.guid, s.turn if s.turn is not None else -1, s.unit))
    return found[:top] if top else found


def queue_frame(found: list[Suspect]) -> pd.DataFrame:
    """The queue as a table for the app (evidence summarised as text)."""
    rows = [{"rank": k + 1, "guid": s.guid, "turn": s.turn, "unit": s.unit, "gold": str(s.gold), "proposed": str(s.proposed),
             "score": s.score, "runs agreeing": f"{s.evidence.agreeing}/{s.evidence.of}"}
            for k, s in enumerate(found)]
    return pd.DataFrame(rows, columns=["rank", "guid", "turn", "unit", "gold", "proposed", "score", "runs agreeing"])


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
