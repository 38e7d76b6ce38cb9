"""The shape of an "errors by surface form" table, which a task module's `SurfaceForms` part fills
(klue_viz.scoring.surface_forms lists and compares the tables): one row per (unit, form, type, error) with how often
it happens, in how many examples, how often the form occurs (`total`) and the example guids."""

from __future__ import annotations

from typing import TYPE_CHECKING

from klue_viz.core.lazy import lazy_module

if TYPE_CHECKING:
    import pandas as pd
else:
    pd = lazy_module("pandas")

KEYS = ["unit", "form", "type", "error"]
COLUMNS = KEYS + ["count", "examples", "total", "guids"]


def surface_table(rows: pd.DataFrame, unit: str, totals: dict | None = None) -> pd.DataFrame:
    """Rows with form, type, error and guid grouped into the table: count, examples, guids (in first-seen order)."""
    if rows.empty:
        return pd.DataFrame(columns=COLUMNS)
    rows = rows.assign(unit=unit, guid=rows["guid"].astype(str))
    grouped = rows.groupby(KEYS, sort=False, dropna=False)
    table = grouped.size().rename("count").to_frame()
    # each group's distinct guids in first-seen order: one pass over the rows, not a Python function per group
    group = grouped.ngroup().to_numpy()
    first = ~pd.DataFrame({"group": group, "guid": rows["guid"].to_numpy()}).duplicated().to_numpy()
    guids: list[list[str]] = [[] for _ in range(len(table))]
    for k, guid in zip(group[first].tolist(), rows["guid"].to_numpy()[first].tolist()):
        guids[k].append(guid)
    table["guids"] = [tuple(g) for g in guids]
    table = table.reset_index()
    table["examples"] = table["guids"].map(len)
    table["total"] = [totals.get((f, t)) if totals else None for f, t in zip(table["form"], table["type"])]
    return table[COLUMNS]
