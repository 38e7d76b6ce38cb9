"""The one setup call every page makes, and the guard that keeps tracebacks off the page."""

from __future__ import annotations

import functools
import logging
import traceback
from collections.abc import Callable

import pandas as pd
import streamlit as st

from klue_viz.core.problems import InputError, Problem
from klue_viz.drawing.markup import STYLE, md
from klue_viz.store.annotations import StoreError
from klue_viz.ui.links import ANNOTATOR
from klue_viz.ui.state import init_state
from klue_viz.ui.tables import show_table

#: Bootstrap resamples of the intervals drawn on a page (the CLI's --bootstrap sets its own): enough for a 95%
#: interval's ends to settle to a tenth of a point on a dev set, quick enough for a rerun.
UI_RESAMPLES = 200

log = logging.getLogger("klue_viz")
#: Streamlit's own control-flow exceptions (st.stop, st.rerun, st.switch_page) must pass through.
CONTROL_FLOW = ("StopException", "RerunException")
NOTICES = "database_notices"


#: The tab's icon. A Material icon, not an emoji: Streamlit checks an emoji icon against its emoji catalogue, a module
#: whose import took 0.07-0.2 CPU s of every server's first page.
PAGE_ICON = ":material/language_korean_latin:"
#: The icon of a warning that the numbers may mislead (the wrong gold), for the same reason a Material icon.
WARNING_ICON = ":material/warning:"


def setup_page(title: str) -> None:
    st.set_page_config(page_title=f"{title} · klue-viz", page_icon=PAGE_ICON, layout="wide")
    init_state()
    reset_notices()
    annotator_sidebar()
    st.markdown(STYLE, unsafe_allow_html=True)


def annotator_sidebar() -> None:
    """The annotator's name, set once in the sidebar and kept for the session and, through the URL, across reloads."""
    state = st.session_state
    if "annotator_name" not in state:  # a new session (a reload, a new tab): the name in the address bar, if any
        state["annotator_name"] = st.query_params.get(ANNOTATOR, "").strip()[:100]
    name = st.sidebar.text_input("Your name (for annotations)", value=state["annotator_name"], key="annotator_widget",
                                 help="Stored with every tag and note you save, e.g. 김지민")
    state["annotator_name"] = name.strip()


def database_notice(text: str, warning: bool = False) -> None:
    """Say why the database cannot be used, once per page run however many views ask (not once per example)."""
    said = st.session_state.setdefault(NOTICES, set())
    if text in said:
        return
    said.add(text)
    (st.warning if warning else st.error)(md(text[:1].upper() + text[1:]))


def reset_notices() -> None:
    """Called when a page run starts: each run says again what is still wrong."""
    st.session_state[NOTICES] = set()


def guarded(body: Callable[[], None]) -> None:
    """Run a page body; an error becomes a short message on the page and a traceback in the server log."""
    try:
        body()
    except InputError as err:
        st.error(md(err))
    except StoreError as err:  # the database went away or the disk filled up: said once, without internal addresses
        database_notice(str(err))
    except Exception as err:  # noqa: BLE001 - the page must never show a traceback
        if type(err).__name__ in CONTROL_FLOW:
            raise
        log.error("page failed:\n%s", traceback.format_exc())
        st.error(f"Something went wrong while drawing this page ({type(err).__name__}: {md(err)}). "
                 "The details are in the server log; the rest of the app still works.")


def guard(function: Callable) -> Callable:
    """The page's error guard for a function that Streamlit may rerun alone (a fragment): put it under @st.fragment."""
    @functools.wraps(function)
    def wrapper(*args: object, **kwargs: object) -> None:
        guarded(lambda: function(*args, **kwargs))
    return wrapper


def problem_table(problems: list[Problem]) -> None:
    """Problems found in a file, as a table (file text never reaches Markdown or HTML)."""
    show_table(st, pd.DataFrame([p.to_dict() for p in problems], columns=["file", "line", "guid", "message"]), hide_index=True, width="stretch")


#: Every metric (0..100) is shown with two decimals, in text and in tables alike.
METRIC_FORMAT = "%.2f"


def metric_text(value: float | None) -> str:
    return "n/a" if value is None else METRIC_FORMAT % value
