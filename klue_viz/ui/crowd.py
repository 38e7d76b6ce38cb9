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
from klue_viz.scoring.slicing import slice_table
from klue_viz.tasks.base import Task
from klue_viz.ui.common import metric_text
from klue_viz.ui.tables import show_table


@st.cache_resource(max_entries=32, show_spinner=False)
def _human(gold_key: str, result_keys: tuple[str, ...], held_out: bool, _task: Task, _gold: Gold,
           _results: list[RunResult]) -> HumanBaseline | None:
    return human_of(_task, _gold.rows, _results, held_out=held_out)


@st.cache_resource(max_entries=64, show_spinner=False)
def _crowd(result_key: str, _task: Task, _result: RunResult) -> dict:
    return run_crowd(_task, _result)


def vote_cross_entropy(task: Task, result: RunResult) -> dict | None:
    """A run's vote cross-entropy ({"value", "n"}: its probabilities against the annotators' votes), None without one."""
    return _crowd(result.key, task, result).get("vote_cross_entropy")


def _agreement_levels(task: Task, result: RunResult) -> None:
    """Where the gold keeps each pair's votes but not who cast them (NLI), annotators cannot be compared one to one: how
    many of them agree with the gold on each pair instead, and the inspected run's metrics on each level."""
    spec = next((s for s in task.facts.slices if s.key == "agreement"), None)
    if spec is None:
        return
    table = slice_table(task, result.frames, spec)
    table = table[table["value"] != "(no votes)"]
    if table.empty:
        return
    table = table.assign(order=table["value"].str.extract(r"^(\d+)", expand=False).astype(float)).sort_values("order", ascending=False)
    st.markdown(f"**How many annotators agree with the gold, and {md(result.run)} on each level** (the gold keeps each "
                f"{task.facts.unit}'s votes but not who cast them, so no annotator can be compared with another)")
    shown = table.drop(columns=["order", "error_rate"]).rename(columns={"value": "annotators agreeing with the gold", "n": f"{task.facts.unit}s"})
    show_table(st, shown, hide_index=True, width="stretch",
                 column_config={m.key: st.column_config.NumberColumn(format="%.2f") for m in task.facts.metrics})


@st.cache_resource(max_entries=8, show_spinner="Comparing the annotators with one another…")
def _annotators(gold_key: str, _gold: Gold) -> pd.DataFrame:
    return annotator_table(_gold.rows)


def crowd_panel(task: Task, gold: Gold, gold_key: str, result: RunResult, results: dict[str, RunResult]) -> None:
    """The human baseline beside the runs' metrics, and (in an expander) the annotators and the inspected run against them."""
    runs = list(results.values())
    keys = tuple(r.key for r in runs)
    human = _human(gold_key, keys, False, task, gold, runs)
    if human is None:
        return
    held_out = _human(gold_key, keys, True, task, gold, runs) or human
    left, right = st.columns([1, 3])
    if human.metric == "accuracy":
        left.metric(f"Human baseline ({human.metric}, held out)", metric_text(held_out.value),
                    help="Each annotator's vote against the majority of the other annotators' votes, a tie for most split: "
                         "judged as a run is, against a gold they had no part in")
        lines = [f"Held out: {held_out.text()}. Against the gold they helped elect (the documented figure): {human.text()}; "
                 f"over the {task.facts.unit}s the runs scored."]
    else:
        left.metric(f"Human baseline ({human.metric})", metric_text(human.value),
                    help="Pearson r of each annotator's score with the mean of the others' on the same pair")
        lines = [f"The gold's annotators: {human.text()}, over the {task.facts.unit}s the runs scored. One annotator is "
                 "correlated with the mean of the others, while a run is correlated with the mean of all of them (a less "
                 "noisy target): the two are not the same comparison."]
    with_votes = any(vote_cross_entropy(task, run) is not None for run in runs)
    if with_votes:
        lines.append("Each run's vote cross-entropy (its probabilities against the annotators' votes; lower is closer) is a "
                     "column of the official metrics above" + ("; its divergences from the votes:" if len(results) < 8 else
                                                              "; `klue-viz evaluate --out` writes each run's divergences from the votes"))
    for name, run in results.items() if len(results) < 8 else ():
        crowd = _crowd(run.key, task, run)
        found, divergence = crowd.get("vote_cross_entropy"), crowd.get("vote_divergence")
        if found is not None and divergence is not None:
            lines.append(f"{name} against the votes over {found['n']:,} {task.facts.unit}s: KL {divergence['kl']:.4f}, "
                         f"Jensen-Shannon distance {divergence['jsd']:.4f} (nats, lower is closer; the votes' own entropy "
                         f"{divergence['vote_entropy']:.4f}), cross-entropy {found['value']:.4f}")
    right.caption(md(" · ".join(lines)))
    with st.expander("The annotators: who agrees with whom, and where the run fails against them"):
        table = _annotators(gold_key, gold)
        if not table.empty:
            st.markdown("**Each annotator against the others** (annotator ids recur across pairs)")
            show_table(st, table, hide_index=True, width="stretch",
                         column_config={c: st.column_config.NumberColumn(format="%.2f") for c in table.columns if c not in ("annotator", "pairs")})
        else:
            _agreement_levels(task, result)
        spread = _crowd(result.key, task, result).get("error_vs_spread")
        if spread is not None:
            rho = spread["spearman"]
            st.markdown(f"**{md(result.run)}: error against the annotators' spread**"
                        + (f" — Spearman rho {rho['rho']:.3f} (p {rho['p']:.3g}, {rho['n']:,} {task.facts.unit}s)" if rho else ""))
            show_table(st, pd.DataFrame(spread["table"]), hide_index=True, width="stretch")
        st.caption(md("Slices and filters: 'Run confidence against the annotators' votes' (NLI) and 'Annotator spread' (STS) in "
                      "Metrics per slice and in the example filters."))
