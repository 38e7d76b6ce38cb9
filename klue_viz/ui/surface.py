"""'Errors by surface form' on a task page: the table of klue_viz.scoring.surface_forms, whose selected row lists its examples below."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from klue_viz.drawing.markup import csv_cell, md
from klue_viz.scoring.evaluate import RunResult
from klue_viz.scoring.surface_forms import compare_surface, filter_rows, flat_table, surface_errors
from klue_viz.tasks.base import Task
from klue_viz.ui.discovery import ERROR_RATE_COLUMN
from klue_viz.ui.links import SELECTED_GUIDS, clear_filters
from klue_viz.ui.tables import show_table

ALONE = "(this run only)"
#: Rows drawn in the table (the download has them all).
SHOWN_ROWS = 500


@st.cache_resource(max_entries=64, show_spinner="Counting errors by surface form…")
def _table(result_key: str, _task: Task, _result: RunResult) -> pd.DataFrame:
    return surface_errors(_task, _result.frames)


@st.cache_resource(max_entries=32, show_spinner=False)
def _compared(first_key: str, second_key: str, _task: Task, _first: RunResult, _second: RunResult) -> pd.DataFrame:
    return compare_surface({_first.run: _table(first_key, _task, _first), _second.run: _table(second_key, _task, _second)})


def _show(guids: list[str]) -> None:
    """A row's examples become the example list (a guid restriction), in place of the filters set before."""
    clear_filters()
    st.session_state[SELECTED_GUIDS] = guids


def surface_panel(task: Task, result: RunResult, results: dict[str, RunResult]) -> None:
    """The inspected run's errors by surface form (beside another run's when chosen); a selected row opens its examples."""
    st.subheader("Errors by surface form")
    others = [r for r in results if r != result.run]
    left, right = st.columns([2, 3])
    against = left.selectbox("Side by side with", [ALONE] + others, key="surface_against") if others else ALONE
    second = results.get(against)
    table = _compared(result.key, second.key, task, result, second) if second is not None else _table(result.key, task, result)
    if table.empty:
        st.caption(f"No errors to count: every {task.facts.unit} of {md(result.run)} is right.")
        return
    units = list(dict.fromkeys(table["unit"]))
    chosen_units = right.segmented_control("Unit", units, default=units[0], key="surface_unit") if len(units) > 1 else units[0]
    shown = filter_rows(table, [chosen_units] if chosen_units else [])
    st.caption(md(_explained(shown)))
    view = flat_table(shown.head(SHOWN_ROWS)).drop(columns=["guids"]).rename(columns={"error_rate": "error rate"})
    config = {"error rate": ERROR_RATE_COLUMN, "excess": st.column_config.NumberColumn(format="%.1f")}  # a share as everywhere else
    event = show_table(st, view, hide_index=True, width="stretch", on_select="rerun", selection_mode="single-row", key="surface_table",
                         column_config={c: v for c, v in config.items() if c in view})
    st.download_button("Download this table (CSV)", lambda: flat_table(shown, guid_limit=10**9).map(csv_cell).to_csv(index=False).encode("utf-8-sig"),
                       file_name=f"{task.facts.name}-{result.run}-errors-by-form.csv", mime="text/csv", key="surface_download", on_click="ignore")
    rows = event.selection.rows if event is not None else []
    if rows and rows[0] < len(shown):
        guids = list(shown.iloc[rows[0]]["guids"])
        st.button(f"Show these {len(guids)} {task.facts.unit}s below", key="surface_show", on_click=_show, args=(guids,))


def _explained(table: pd.DataFrame) -> str:
    unit = str(table["unit"].iloc[0]) if len(table) else ""
    if unit == "word" and "excess" in table:
        return ("Words of the text by how many wrong examples hold them; 'total': examples holding the word, 'excess': wrong examples "
                "beyond what the run's error rate predicts for that many. Select a row, then show its examples below.")
    return (f"Each {unit}: how often it is wrong in each way ('count'), in how many examples, and how often it occurs in the gold "
            f"('total'). Select a row, then show its examples below.")
