"""The annotators beside the models on a task page: the human baseline, each run's distance to the votes, the annotators.

Thin: the numbers come from `klue_viz.core.crowd` and `klue_viz.discovery.annotators`, cached per gold and run.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from klue_viz.core.crowd import HumanBaseline
from klue_viz.discovery.annotators import annotator_table, human_of, run_crowd
from klue_viz.drawing.markup import md
from klue_viz.scoring.evaluate import Gold, RunResult
from klue_viz.tasks.base import Task
from klue_viz.ui.common import metric_text
from klue_viz.ui.tables import show_table


@st.cache_resource(max_entries=32, show_spinner=False)
def _human(gold_key: str, result_keys: tuple[str, ...], _task: Task, _gold: Gold, _results: list[RunResult]) -> HumanBaseline | None:
    return human_of(_task, _gold.rows, _results)


@st.cache_resource(max_entries=64, show_spinner=False)
def _crowd(result_key: str, _task: Task, _result: RunResult) -> dict:
    return run_crowd(_task, _result)


@st.cache_resource(max_entries=8, show_spinner="Comparing the annotators with one another…")
def _annotators(gold_key: str, _gold: Gold) -> pd.DataFrame:
    return annotator_table(_gold.rows)


def crowd_panel(task: Task, gold: Gold, gold_key: str, result: RunResult, results: dict[str, RunResult]) -> None:
    """The human baseline beside the runs' metrics, and (in an expander) the annotators and the inspected run against them."""
    runs = list(results.values())
    human = _human(gold_key, tuple(r.key for r in runs), task, gold, runs)
    if human is None:
        return
    left, right = st.columns([1, 3])
    left.metric(f"Human baseline ({human.metric})", metric_text(human.value),
                help="The gold's own annotators: " + ("the share of their individual votes equal to the gold label"
                                                      if human.metric == "accuracy" else
                                                      "Pearson r of each annotator's score with the mean of the others' on the same pair"))
    lines = [f"The gold's annotators against the gold: {human.text()}, over the {task.facts.unit}s the runs scored."]
    for name, run in results.items():
        found = _crowd(run.key, task, run).get("vote_cross_entropy")
        if found is not None:
            lines.append(f"{name}: vote cross-entropy {found['value']:.4f} over {found['n']:,} {task.facts.unit}s (lower is closer to the votes)")
    right.caption(md(" · ".join(lines)))
    with st.expander("The annotators: who agrees with whom, and where the run fails against them"):
        table = _annotators(gold_key, gold)
        if not table.empty:
            st.markdown("**Each annotator against the others** (annotator ids recur across pairs)")
            show_table(st, table, hide_index=True, width="stretch",
                         column_config={c: st.column_config.NumberColumn(format="%.2f") for c in table.columns if c not in ("annotator", "pairs")})
        spread = _crowd(result.key, task, result).get("error_vs_spread")
        if spread is not None:
            rho = spread["spearman"]
            st.markdown(f"**{md(result.run)}: error against the annotators' spread**"
                        + (f" — Spearman rho {rho['rho']:.3f} (p {rho['p']:.3g}, {rho['n']:,} {task.facts.unit}s)" if rho else ""))
            show_table(st, pd.DataFrame(spread["table"]), hide_index=True, width="stretch")
        st.caption(md("Slices and filters: 'Run confidence against the annotators' votes' (NLI) and 'Annotator spread' (STS) in "
                      "Metrics per slice and in the example filters."))
