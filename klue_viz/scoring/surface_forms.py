"""Errors by surface form: which entity strings, words, slot values or answer types a run gets wrong, and how.

Pure pandas on a run's tidy frames (no Streamlit). One table per run, one row per (unit, form, type,
error) with how often that happens, in how many examples, and the example guids (what the app filters
to). What a unit is, each task module says in its `surface` part (klue_viz.tasks.base.SurfaceForms):

* entities (NER): each gold entity that is missed, mistyped (`wrong type`: same span), mis-bounded
  (`wrong boundary`: an overlapping prediction of the same type) or both, by its text and gold type
  (with what it was predicted as); each spurious prediction by its text and predicted type. `total`
  is how often the text occurs with that type in the gold.
* words (DP): each word form and each POS tag with a wrong head, or the right head and a wrong label.
* slots (WoS): each gold slot value that is missing or wrongly valued, each extra (spurious) one (by the
  predicted value), per domain-slot.
* entity pairs (RE): each subject/object pair whose relation is wrong (gold -> predicted).
* answer types (MRC): the script of the gold answer (digits, Hangul, Latin...) and the question type,
  per error.
* words of the text (a task without a `surface` part: YNAT, NLI, STS): each word (space-separated, punctuation trimmed) by how many
  wrong examples hold it, against the examples holding it (`total`) and the run's error rate
  (`excess`: wrong examples beyond what the error rate predicts), so a word that comes with errors
  shows above one that is merely frequent.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import numpy as np
import pandas as pd

from klue_viz.core.results import Frames
from klue_viz.tasks.base import Task
from klue_viz.tasks.surface import COLUMNS, KEYS

#: Fewest examples a text word must occur in to be listed (a word seen twice says nothing).
MIN_WORD_EXAMPLES = 3
PUNCTUATION = re.compile(r"^[\W_]+|[\W_]+$")


def text_words(text: str) -> set[str]:
    """The distinct words of a text: split on spaces, punctuation trimmed from both ends, empty ones dropped."""
    return {w for w in (PUNCTUATION.sub("", part) for part in str(text).split()) if w}


def _text_words(task: Task, frames: Frames, min_examples: int = MIN_WORD_EXAMPLES) -> pd.DataFrame:
    ex = frames.examples
    columns = [c for c in task.facts.text_columns if c in ex]
    if not columns or ex.empty:
        return pd.DataFrame(columns=COLUMNS + ["error_rate", "excess"])
    words_of = [set().union(*(text_words(ex[c].iloc[k]) for c in columns)) for k in range(len(ex))]
    exploded = pd.DataFrame({"guid": ex["guid"].to_numpy(), "wrong": ~ex["correct"].astype(bool).to_numpy(), "word": [sorted(w) for w in words_of]})
    exploded = exploded.explode("word").dropna(subset=["word"])
    base = float((~ex["correct"].astype(bool)).mean())
    grouped = exploded.groupby("word", sort=False)
    table = pd.DataFrame({"count": grouped["wrong"].sum().astype(int), "total": grouped.size()})
    table = table[table["total"] >= min_examples]
    wrong_guids = exploded[exploded["wrong"]].groupby("word", sort=False)["guid"].agg(lambda g: tuple(dict.fromkeys(g.astype(str))))
    table["guids"] = [wrong_guids.get(w, ()) for w in table.index]
    table["examples"] = table["count"]
    table["error_rate"] = 100.0 * table["count"] / table["total"]
    table["excess"] = table["count"] - base * table["total"]
    table = table.rename_axis("form").reset_index().assign(unit="word", type="", error="in wrong examples")
    table = table[table["count"] > 0]
    return table.sort_values(["excess", "count", "form"], ascending=[False, False, True], ignore_index=True)[COLUMNS + ["error_rate", "excess"]]


def surface_errors(task: Task, frames: Frames) -> pd.DataFrame:
    """The errors of one run by surface form (see the module docstring), most frequent first."""
    if task.surface is None:
        return _text_words(task, frames)
    table = task.surface.errors(frames)
    return table.sort_values(["count", "examples", "unit", "form", "error"], ascending=[False, False, True, True, True], ignore_index=True)


def compare_surface(tables: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """The tables of several runs side by side: one `count: <run>` column per run (0 where it makes no such error),
    the guids of all of them, ordered by the largest count."""
    merged: pd.DataFrame | None = None
    for run, table in tables.items():
        part = table[KEYS + ["count", "total", "guids"]].rename(columns={"count": f"count: {run}", "guids": f"guids: {run}"})
        merged = part if merged is None else merged.merge(part, on=KEYS, how="outer", suffixes=("", " (other)"))
        if "total (other)" in merged:
            merged["total"] = merged["total"].astype(float).fillna(merged.pop("total (other)").astype(float))
    if merged is None:
        return pd.DataFrame(columns=KEYS)
    counts = [f"count: {run}" for run in tables]
    merged[counts] = merged[counts].fillna(0).astype(int)
    columns = [merged[f"guids: {run}"].tolist() for run in tables]
    merged["guids"] = [tuple(dict.fromkeys(g for cell in cells if isinstance(cell, (tuple, list)) for g in cell)) for cells in zip(*columns)]
    merged["total"] = merged["total"].astype("Int64")
    merged = merged.drop(columns=[f"guids: {run}" for run in tables])
    merged["examples"] = merged["guids"].map(len)
    order = merged[counts].max(axis=1)
    return merged.assign(_order=order).sort_values(["_order", "unit", "form"], ascending=[False, True, True]).drop(columns="_order").reset_index(drop=True)


def as_records(table: pd.DataFrame, top: int | None = None) -> list[dict]:
    """The table as JSON-ready records (guids as lists, missing totals as null)."""
    rows = table if top is None else table.head(top)
    out = []
    for record in rows.to_dict("records"):
        clean = {}
        for key, value in record.items():
            if isinstance(value, tuple):
                value = list(value)
            elif isinstance(value, float) and np.isnan(value):
                value = None
            elif isinstance(value, np.integer):
                value = int(value)
            clean[key] = value
        out.append(clean)
    return out


def flat_table(table: pd.DataFrame, guid_limit: int = 20) -> pd.DataFrame:
    """The table for a CSV or a page: guids joined with spaces (the first `guid_limit`), the rest counted."""
    out = table.copy()
    out["guids"] = [" ".join(g[:guid_limit]) + (f" (+{len(g) - guid_limit})" if len(g) > guid_limit else "") for g in table["guids"]]
    return out


def filter_rows(table: pd.DataFrame, units: Iterable[str] = (), errors: Iterable[str] = ()) -> pd.DataFrame:
    """Rows of some units (entity, word, POS...) and error kinds (prefix match: 'wrong type' also takes 'wrong type as LC')."""
    units, errors = list(units), list(errors)
    mask = np.ones(len(table), dtype=bool)
    if units:
        mask &= table["unit"].isin(units).to_numpy()
    if errors:
        mask &= table["error"].astype(str).map(lambda e: any(e.startswith(x) for x in errors)).to_numpy(dtype=bool)
    return table[mask].reset_index(drop=True)
