"""Choosing among many runs of a task page: a search, a model filter and a step range instead of one long list.

Checkpoints are named with their step (`ckpt-2000`, `ckpt012`): runs are ordered by model and then by
their names read naturally (numbers as numbers, so `ckpt-2000` comes before `ckpt-10000`), and the
last number in a run's name is its step.
"""

from __future__ import annotations

import re

import streamlit as st

#: From this many runs on, a task page offers the search and filters and shows the metrics as one table.
MANY_RUNS = 8
NUMBER = re.compile(r"(\d+)")
ALL_MODELS = "(every model)"


def natural_key(name: str) -> tuple:
    """A sort key reading the numbers in a name as numbers."""
    return tuple((0, int(part), "") if part.isdigit() else (1, 0, part.lower()) for part in NUMBER.split(name) if part)


def step_of(name: str) -> int | None:
    """The last number in a run's name (its checkpoint step), or None."""
    numbers = NUMBER.findall(name)
    return int(numbers[-1]) if numbers else None


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
                                     help="The last number in a run's name; the whole range also keeps runs without one")
        if tuple(chosen) == (steps[0], steps[-1]):
            chosen = None
    shown = filter_runs(names, models, query, model, chosen)
    st.caption(f"{len(shown)} of {len(names)} runs match" + ("" if shown else ": showing them all"))
    return shown or names
