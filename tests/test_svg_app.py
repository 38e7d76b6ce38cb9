"""Every drawn card of a task page offers its SVG download (AppTest, demo)."""

from __future__ import annotations

import pytest

from klue_viz.ui.home import PAGE_FILES
from tests.test_app import open_page


@pytest.mark.slow
def test_each_card_has_an_svg_download():
    at = open_page(PAGE_FILES["ner"])
    assert not at.exception
    cards = [m for m in at.markdown if 'class="kv-example"' in m.value]
    buttons = [b for b in at.get("download_button") if str(b.key).startswith("svg|")]
    labels = {b.proto.label for b in at.get("download_button")}
    assert cards and len(buttons) == len(cards) and "Download as SVG" in labels
