"""Every table the app shows goes through `show_table`: its text cells neutralised for spreadsheets, as every CSV klue-viz
writes is (klue_viz.drawing.markup.csv_cell), because the table toolbar's "Download as CSV" (and a copy of its cells)
writes what the table holds: a user's own column, guid, run or annotator note starting with `=`, `+`, `-` or `@`
would run as a formula in the spreadsheet that opens it (OWASP CSV injection). Such a cell is shown, and
downloaded, with a leading `'`; numbers and other text are left as they are."""

from __future__ import annotations

from typing import Any

import pandas as pd

from klue_viz.drawing.markup import FORMULA_START, NUMBER, csv_cell


def formula_like(value: object) -> bool:
    """Whether a cell is text a spreadsheet would read as a formula (what `csv_cell` prefixes)."""
    return isinstance(value, str) and FORMULA_START.match(value) is not None and NUMBER.match(value) is None


def neutralised(data: Any) -> Any:
    """A DataFrame with its formula-like text cells and column names as `csv_cell` writes them; the same object when none
    is (the common case: no copy). Anything else than a DataFrame is returned as it is."""
    if not isinstance(data, pd.DataFrame):
        return data
    out = data
    for position in range(data.shape[1]):
        column = data.iloc[:, position]
        if column.dtype != object and not pd.api.types.is_string_dtype(column):
            continue
        flagged = column.map(formula_like).astype(bool)
        if flagged.any():
            if out is data:
                out = data.copy()
            out.iloc[:, position] = column.where(~flagged, column[flagged].map(csv_cell))
    if any(formula_like(name) for name in data.columns):
        out = out.rename(columns={name: csv_cell(name) for name in data.columns if formula_like(name)})
    return out


def show_table(where: Any, data: Any, **options: Any) -> Any:
    """`where.dataframe(data, **options)` (where: `st`, a column or a container) with `data` neutralised; returns what
    Streamlit returns (the selection event of a selectable table)."""
    return where.dataframe(neutralised(data), **options)
