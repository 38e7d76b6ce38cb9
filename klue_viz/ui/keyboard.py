"""Keyboard navigation of the example list: j/k next/previous example, n/p next/previous error, a annotate.

Each key is a button with Streamlit's own `shortcut` (1.67), so a key press is a click: no script
reads the keyboard. The focused example (the cursor) is a card of the list: moving it turns the
page to the card, outlines it, scrolls it into view (a fixed script with no file text in it) and
writes `cursor=` into the URL, so a link opens the list at that example. Keys pressed while the page reruns wait
for it and are replayed (klue_viz.ui.key_queue).
"""

from __future__ import annotations

from collections.abc import Sequence

import streamlit as st
import streamlit.components.v1 as components

from klue_viz.tasks.base import Task
from klue_viz.ui.discovery import REVIEW
from klue_viz.ui.key_queue import key_queue
from klue_viz.ui.links import CURSOR, CURSOR_JUMP, PAGE_KEY

KEYS = (("next", "J", "Next"), ("previous", "K", "Previous"), ("next error", "N", "Next error"), ("previous error", "P", "Prev. error"))
ANNOTATE_KEY = "A"
#: Scrolls the card of move number N (filled in) into view once the list has drawn it: the number makes each move's script new
#: (an unchanged component is not run again, so only the first move scrolled) and skips the card of the move before.
#: It names no example, so no file text ever reaches the script.
SCROLL = """<script>
let tries = 0;
const find = () => {
  const card = window.parent.document.querySelector('[data-cursor-move="%d"]');
  if (card) { card.scrollIntoView({block: "center"}); } else if (tries++ < 200) { setTimeout(find, 50); }
};
find();
</script>"""
#: Session key: how many times the cursor moved (the number the focused card and the scroll script carry).
MOVES = "kv_moves"
STYLE = "<style>.kv-head[data-cursor=true]{border-left:4px solid #0969da;background:#ddf4ff;padding-left:.4rem}</style>"


def card_keys(guids: list[str], correct: list[bool], cards: list[list[int]]) -> tuple[list[str], list[bool], dict[str, str]]:
    """Each card's anchor (first example guid), whether it holds an error, and anchor -> the example the annotate key
    opens (its first wrong example, else its first)."""
    anchors, wrong, open_rows = [], [], {}
    for card in cards:
        anchor = guids[card[0]]
        errors = [guids[k] for k in card if not correct[k]]
        anchors.append(anchor)
        wrong.append(bool(errors))
        open_rows[anchor] = errors[0] if errors else anchor
    return anchors, wrong, open_rows


def step(anchors: Sequence[str], wrong: Sequence[bool], current: str | None, move: str) -> int | None:
    """The card the cursor moves to: the next or previous card (or the next or previous card holding an error) after
    `current`; from no cursor, the first such card (or the last, going back). None when there is none."""
    n = len(anchors)
    if not n:
        return None
    at = anchors.index(current) if current in anchors else None
    forward = not move.startswith("previous")
    errors_only = move.endswith("error")
    if at is None:
        order = range(n) if forward else range(n - 1, -1, -1)
    else:
        order = range(at + 1, n) if forward else range(at - 1, -1, -1)
    for k in order:
        if not errors_only or wrong[k]:
            return k
    return None


def _move(anchors: list[str], wrong: list[bool], move: str, page_size: int) -> None:
    state = st.session_state
    k = step(anchors, wrong, state.get(CURSOR), move)
    if k is None:
        return
    state[CURSOR] = anchors[k]
    state[PAGE_KEY] = k // page_size + 1
    state["kv_scroll"] = True
    state[MOVES] = state.get(MOVES, 0) + 1


def _annotate(task: Task, run: str, rows: dict[str, str]) -> None:
    """The cursor's annotate box opens (or closes again): the toggle of its first wrong example, else its first one."""
    state = st.session_state
    cursor = state.get(CURSOR)
    if cursor in rows:
        key = f"annotate|{rows[cursor]}|{run}"
        state[key] = not state.get(key, False)


def keyboard_bar(task: Task, run: str, anchors: list[str], wrong: list[bool], open_rows: dict[str, str], page_size: int) -> None:
    """The keys, as buttons with shortcuts, and what they do; called before the page number is drawn so that a move can
    turn the page. `anchors`: each card's first example guid, in list order; `wrong`: whether the card holds an error;
    `open_rows`: card anchor -> the example whose annotate box the annotate key opens."""
    state = st.session_state
    if state.get(CURSOR_JUMP):  # a link named the cursor: turn to its page once
        state[CURSOR_JUMP] = False
        if state.get(CURSOR) in anchors:
            state[PAGE_KEY] = anchors.index(state[CURSOR]) // page_size + 1
            state["kv_scroll"] = True
            state[MOVES] = state.get(MOVES, 0) + 1
    st.markdown(STYLE, unsafe_allow_html=True)
    reviewing = state.get("discovery_view") == REVIEW  # the gold review above has its own keys (A, K...): ours step aside
    columns = st.columns(len(KEYS) + 1)
    for column, (move, key, label) in zip(columns, KEYS):
        column.button(label, key=f"kb|{move}", shortcut=None if reviewing else key, on_click=_move, args=(anchors, wrong, move, page_size),
                      width="stretch")
    columns[len(KEYS)].button("Annotate", key="kb|annotate", shortcut=None if reviewing else ANNOTATE_KEY, on_click=_annotate,
                              args=(task, run, open_rows), width="stretch", disabled=state.get(CURSOR) not in open_rows)
    cursor = state.get(CURSOR)
    where = (f"focused: {anchors.index(cursor) + 1} of {len(anchors)}" if cursor in anchors else "no example focused yet")
    if reviewing:
        st.caption(f"The keys are the gold review's while it is open; these buttons still move through the list ({where})")
    else:
        st.caption(f"Keys: J/K next/previous example · N/P next/previous error · A annotate the focused one ({where})")
    # the gold review (drawn above, while open) sets its own keys; otherwise they are the list's
    key_queue({"list": {}} if reviewing else {"list": {key: f"kb|{move}" for move, key, _ in KEYS} | {ANNOTATE_KEY: "kb|annotate"}, "review": {}})
    if state.pop("kv_scroll", False):
        moves = int(state.get(MOVES, 0))
        components.html(SCROLL % moves, height=0)
