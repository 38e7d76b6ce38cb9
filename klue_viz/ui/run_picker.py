"""Choosing among many runs of a task page: a search, a model filter and a step range instead of one long list.

Checkpoints are named with their step (`ckpt-2000`, `ckpt012`): runs are ordered by model and then by
their names read naturally (numbers as numbers, so `ckpt-2000` comes before `ckpt-10000`), and the
step is the number in the checkpoint's name (klue_viz.core.steps).
"""

from __future__ import annotations

import streamlit as st

from klue_viz.core.steps import natural_key, step_of

#: From this many runs on, a task page offers the search and filters and shows the metrics as one table.
MANY_RUNS = 8
ALL_MODELS = "(every model)"


def filter_runs(names: list[str], models: dict[str, str], query: str = "", model: str = ALL_MODELS,
                steps: tuple[int, int] | None = None) -> list[str]:
    """The runs whose name or model contains `query` (any case, as plain text), of `model`, with a step in `steps`;
    ordered by model, then naturally by name."""
    needle = query.strip().casefold()
    kept = []
    for name in names:
        owner = models.get(name, "")
        if needle and needle not in name.casefold() and needle not in owner.casefold():
            continue
        if model != ALL_MODELS and owner != model:
            continue
        step = step_of(name)
        if steps is not None and (step is None or not steps[0] <= step <= steps[1]):
            continue
        kept.append(name)
    return sorted(kept, key=lambda n: (natural_key(models.get(n, "")), natural_key(n)))


def latest_run(names: list[str]) -> str:
    """The run a page inspects first: the one with the latest step (the checkpoint a sweep ended on; the first of those
    in `names` order on a tie), else the first name. The first by name was a sweep's worst checkpoint (ckpt-1000)."""
    steps = [step_of(name) for name in names]
    if all(step is None for step in steps):
        return names[0]
    latest = max(step for step in steps if step is not None)
    return names[steps.index(latest)]


def pick_runs(names: list[str], models: dict[str, str]) -> list[str]:
    """The search, model and step widgets over a task page's runs; the runs they leave (all of them when there are few)."""
    if len(names) < MANY_RUNS:
        return names
    left, middle, right = st.columns([2, 2, 3])
    query = left.text_input("Search runs", key="run_search", placeholder="name or model", max_chars=200)
    choices = [ALL_MODELS] + sorted({models.get(n, "") for n in names}, key=natural_key)
    model = middle.selectbox("Model", choices, key="run_model")
    steps = sorted({s for n in names if (s := step_of(n)) is not None})
    chosen = None
    if len(steps) > 1:
        chosen = right.select_slider("Steps", options=steps, value=(steps[0], steps[-1]), key="run_steps",
                                     help="The step in a checkpoint's name (ckpt-2000 is step 2000); the whole range also keeps runs without one")
        if tuple(chosen) == (steps[0], steps[-1]):
            chosen = None
    shown = filter_runs(names, models, query, model, chosen)
    st.caption(f"{len(shown)} of {len(names)} runs match" + ("" if shown else ": showing them all"))
    return shown or names
