"""What is on screen, as a URL: runs, settings, filters, page and one example, through `st.query_params`.

A task page reads its URL once, when it is entered (a pasted link, a new tab, a reload, a page
change), and from then on writes what the user sees back to the URL after every run. Settings
chosen on the home page (gold source and folder, strict) live in session-state keys that no widget owns, so
they hold on every page; a URL only changes them when it names them.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from urllib.parse import urlencode

import streamlit as st

from klue_viz.drawing.markup import md
from klue_viz.reading.gold_folders import DATA_DIR_ENV
from klue_viz.store.gold_choice import SOURCES
from klue_viz.tasks import TASKS


@dataclass(frozen=True)
class Param:
    """A filter widget's session key, its URL name, its shape ("one", "many", "flag") and its cleared value."""

    key: str
    name: str
    shape: str
    default: object

    def fresh(self) -> object:
        return list(self.default) if isinstance(self.default, list) else self.default


FILTERS = (
    Param("f_status", "show", "one", "all"),
    Param("f_gold", "gold_label", "many", []),
    Param("f_pred", "pred_label", "many", []),
    Param("f_errors", "error", "many", []),
    Param("f_slice", "slice", "one", "(any)"),
    Param("f_slice_values", "value", "many", []),
    Param("f_text", "q", "one", ""),
    Param("f_regex", "regex", "flag", False),
    Param("f_tags", "tag", "many", []),
)
PAGE_KEY = "page_no"
#: The task page's switch for 95% intervals, in the URL as ci=1.
CI_KEY = "show_ci"
#: Not widgets: a chart selection, and the one example a link points at.
SELECTED_GUIDS = "f_guids"
#: The applied weak slice as (conditions, guids); `wslice=feature=value` in the URL while its guids are the selection.
WEAK_SLICE = "weak_slice_applied"
#: A link's weak slice, {feature: value}, waiting for the page's slice features to be re-applied (klue_viz.ui.discovery).
WEAK_SLICE_WANTED = "weak_slice_wanted"
FOCUS = "f_focus"
RUNS_WANTED = "url_runs"
#: The user's columns file in use (klue_viz.ui.features), by the start of its address: `features=` in the URL.
FEATURES = "features_file"
#: The example the keyboard focused (klue_viz.ui.keyboard), `cursor=` in the URL; a link naming it turns to its page once.
CURSOR = "kb_cursor"
CURSOR_JUMP = "kb_cursor_jump"
ENTERED = "url_page"
#: The URL parameter that keeps the annotator's name across reloads.
ANNOTATOR = "annotator"


def _url() -> dict[str, list[str]]:
    return {name: st.query_params.get_all(name) for name in st.query_params}


def enter_page(page: str) -> dict[str, list[str]] | None:
    """The URL's parameters when this page has just been entered, else None; settings named in it are applied."""
    state = st.session_state
    if state.get(ENTERED) == page:
        return None
    state[ENTERED] = page
    url = _url()
    source = url["source"][0] if url.get("source") else None
    if source in SOURCES:
        state["gold_source"] = source
    if url.get("folder"):
        state["data_dir"] = url["folder"][0]  # read only under the folders the operator allowed (allowed_gold_folder)
    if "strict" in url:
        state["strict"] = url["strict"][0] == "1"
    for value in url.get("gold", []):  # gold=<task>:<sha256> of an uploaded gold file stored on the server
        task, _, key = value.partition(":")
        if task in state.get("gold_uploads", {}) and state["gold_uploads"][task][1] == key:
            continue
        if task in TASKS and re.fullmatch(r"[0-9a-f]{64}", key):
            state.setdefault("gold_uploads", {})[task] = ("", key)
    return url


def apply_task_url(url: dict[str, list[str]]) -> None:
    """A task page's URL becomes its filters, page, runs and linked example (missing filters are cleared)."""
    state = st.session_state
    for param in FILTERS:
        values = url.get(param.name, [])
        if param.shape == "many":
            state[param.key] = list(values)
        elif param.shape == "flag":
            state[param.key] = bool(values) and values[0] == "1"
        else:
            state[param.key] = values[0] if values else param.fresh()
    page = url_number("page", (url.get("page") or [""])[0], minimum=1)
    state[PAGE_KEY] = page if page is not None else 1
    state[CI_KEY] = (url.get("ci") or [""])[0] == "1"
    state[RUNS_WANTED] = list(url.get("run", []))[:2]
    state[FEATURES] = url["features"][0] if url.get("features") else None
    state[CURSOR] = url["cursor"][0] if url.get("cursor") else None
    state[CURSOR_JUMP] = bool(url.get("cursor"))
    state.pop(SELECTED_GUIDS, None)
    state.pop(WEAK_SLICE, None)
    state[WEAK_SLICE_WANTED] = slice_conditions(url.get("wslice", []))
    guid = url["guid"][0] if url.get("guid") else None
    turn = url_number("turn", url["turn"][0], minimum=0) if url.get("turn") else None
    state[FOCUS] = (guid, turn) if guid else None


def url_number(name: str, text: str, minimum: int) -> int | None:
    """A whole number from the URL (ASCII digits, at most 9 of them), or None with a warning saying what was ignored.

    `str.isdigit` accepts '²' and int() refuses numbers of more than 4,300 digits: both blanked the page."""
    if text == "":
        return None
    if re.fullmatch(r"[0-9]{1,9}", text) and int(text) >= minimum:
        return int(text)
    shown = text if len(text) <= 20 else text[:20] + f"… ({len(text):,} characters)"
    st.warning(md(f"The link's {name}={shown} is not a whole number from {minimum} to 999,999,999: it is ignored"
                  f"{' (page 1 is shown)' if name == 'page' else ''}."))
    return None


def slice_conditions(items: list[str]) -> dict[str, str] | None:
    """A link's `wslice=feature=value` items as slice conditions, or None (with a warning) when one is malformed."""
    if not items:
        return None
    conditions: dict[str, str] = {}
    for item in items[:3]:  # a found slice has at most 3 conditions
        name, sep, value = item.partition("=")
        if not sep or not re.fullmatch(r"[\w.]{1,100}", name) or len(value) > 500 or name in conditions:
            shown = item if len(item) <= 40 else item[:40] + "…"
            st.warning(md(f"The link's wslice={shown} is not a slice condition (feature=value): the slice is ignored."))
            return None
        conditions[name] = value
    if len(items) > 3:
        st.warning(md(f"The link's wslice has {len(items)} conditions, more than a found slice has (3): the slice is ignored."))
        return None
    return conditions


def clear_filters() -> None:
    """Every filter back to its cleared value (a widget callback: runs before the widgets are drawn again)."""
    state = st.session_state
    for param in FILTERS:
        state[param.key] = param.fresh()
    state[PAGE_KEY] = 1
    state.pop(SELECTED_GUIDS, None)
    state.pop(WEAK_SLICE, None)
    state[FOCUS] = None
    state["chart_epoch"] = state.get("chart_epoch", 0) + 1  # fresh chart keys drop a confusion-cell or scatter selection


def settings_params() -> dict[str, list[str]]:
    """The session's gold source (and folder) and strict setting, as URL parameters (only what differs from the defaults)."""
    state = st.session_state
    params = {}
    if state.get("gold_source", "demo") != "demo":
        params["source"] = [state["gold_source"]]
    if state.get("gold_source") == "folder" and state.get("data_dir", "").strip() and state["data_dir"] != os.environ.get(DATA_DIR_ENV, ""):
        params["folder"] = [state["data_dir"]]  # a folder other than the server's default is part of the view
    if state.get("gold_source") == "upload" and state.get("gold_uploads"):
        params["gold"] = [f"{task}:{key}" for task, (_, key) in sorted(state["gold_uploads"].items())]
    if state.get("strict"):
        params["strict"] = ["1"]
    return params


def view_params(runs: list[str], page: int) -> dict[str, list[str]]:
    """The current view: settings, runs, every filter that is set, and the page."""
    state = st.session_state
    params = settings_params()
    params["run"] = list(runs)
    if state.get(FEATURES):
        params["features"] = [str(state[FEATURES])]
    for param in FILTERS:
        value = state.get(param.key, param.default)
        if param.shape == "many" and value:
            params[param.name] = [str(v) for v in value]
        elif param.shape == "flag" and value:
            params[param.name] = ["1"]
        elif param.shape == "one" and value != param.default and value:
            params[param.name] = [str(value)]
    if state.get(CI_KEY):
        params["ci"] = ["1"]
    applied = state.get(WEAK_SLICE)
    if applied and list(applied[1]) == list(state.get(SELECTED_GUIDS) or []):  # still the slice, not a chart selection since
        params["wslice"] = [f"{name}={value}" for name, value in applied[0].items()]
    if page > 1:
        params["page"] = [str(page)]
    if state.get(CURSOR):
        params["cursor"] = [str(state[CURSOR])]
    return params


def example_params(view: dict[str, list[str]], guid: str, turn: int | None) -> dict[str, list[str]]:
    params = {k: v for k, v in view.items() if k != "page"}
    params["guid"] = [guid]
    if turn is not None:
        params["turn"] = [str(turn)]
    return params


def write_url(params: dict[str, list[str]]) -> None:
    """Put the view in the address bar, with the annotator's name (annotator=) so that a reload keeps it.

    The name is added here only, not to the view's parameters: a link the app makes (an example's
    link, a home-table cell) never carries one person's name to another."""
    name = st.session_state.get("annotator_name", "")
    if name:
        params = {**params, ANNOTATOR: [name]}
    if _url() != params:
        st.query_params.from_dict(params)


def query_string(params: dict[str, list[str]]) -> str:
    return "?" + urlencode([(k, v) for k, values in params.items() for v in values])
