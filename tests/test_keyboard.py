"""Keyboard navigation: where each key moves the cursor (pure), and the buttons on a task page (AppTest, demo)."""

from __future__ import annotations

import pytest

from klue_viz.ui.home import PAGE_FILES
from klue_viz.ui.keyboard import card_keys, step
from tests.test_app import open_page


def test_step_moves_over_examples_and_errors():
    anchors = ["a", "b", "c", "d", "e"]
    wrong = [False, True, False, True, True]
    assert step(anchors, wrong, None, "next") == 0 and step(anchors, wrong, None, "previous") == 4
    assert step(anchors, wrong, None, "next error") == 1 and step(anchors, wrong, "b", "next error") == 3
    assert step(anchors, wrong, "d", "previous error") == 1 and step(anchors, wrong, "b", "previous error") is None
    assert step(anchors, wrong, "e", "next") is None and step(anchors, wrong, "c", "previous") == 1
    assert step([], [], None, "next") is None
    assert step(anchors, wrong, "gone", "next error") == 1  # a cursor no longer listed starts again from the top


def test_card_keys_of_a_dialogue_card():
    guids = ["d1-0", "d1-1", "d2-0"]
    assert card_keys(guids, [True, False, True], [[0, 1], [2]]) == (["d1-0", "d2-0"], [True, False], {"d1-0": "d1-1", "d2-0": "d2-0"})


@pytest.mark.slow
def test_keys_move_the_cursor_turn_the_page_and_open_the_annotate_box():
    at = open_page(PAGE_FILES["ner"])
    at.selectbox(key="page_size").set_value(10).run()
    for _ in range(11):
        at.button(key="kb|next").click().run()
    assert not at.exception
    cursor = at.session_state["kb_cursor"]
    assert at.session_state["page_no"] == 2 and at.query_params["cursor"] == cursor
    focused = [m.value for m in at.markdown if 'data-cursor="true"' in m.value]
    assert len(focused) == 1 and cursor in focused[0]
    at.session_state["annotator_name"] = "tester"
    at.button(key="kb|annotate").click().run()
    run = at.selectbox(key="run").value
    assert at.session_state[f"annotate|{cursor}|{run}"] is True
    assert any(r.key == f"about|{cursor}|{run}" for r in at.radio)  # the box is open: its first question is drawn


@pytest.mark.slow
def test_the_keys_step_aside_while_the_gold_review_is_open():
    """The gold review (klue_viz.ui.review) takes A and K: with it open, the list's buttons carry no shortcut."""
    at = open_page(PAGE_FILES["ner"])
    assert at.button(key="kb|previous").proto.shortcut.lower() == "k"
    at.segmented_control(key="discovery_view").set_value("Review the gold").run()
    assert not at.exception
    assert not at.button(key="kb|previous").proto.shortcut and not at.button(key="kb|annotate").proto.shortcut
