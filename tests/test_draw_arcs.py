"""Dependency drawings of long sentences: wrapped into rows that fit the page, labels never on top of each other."""

from __future__ import annotations

import html
import re

import pytest

from klue_viz.drawing.arcs import SMALL, Arc, Word, dependency_svg
from klue_viz.scoring.evaluate import load_gold
from klue_viz.tasks import TASKS

#: The main column of the page in a 1280 px window (measured in Chromium), where a row must fit at its natural size.
PAGE_WIDTH = 820
LABEL = re.compile(r'<text x="([\d.]+)" y="([\d.]+)" text-anchor="middle" font-size="11" fill="[^"]+" paint-order="stroke"[^>]*>([^<]*)</text>')


def label_width(text: str) -> float:
    """Hangul takes a full em, the rest about half (measured on Noto Sans CJK at 11 px)."""
    return sum(SMALL if "\uac00" <= c <= "\ud7a3" else SMALL * 0.6 for c in text)


@pytest.fixture(scope="module")
def longest(shared):
    gold = load_gold(TASKS["dp"], shared)
    return max(gold.rows, key=lambda r: r["n_words"])


def drawing(row) -> str:
    words = [Word(w, l, p) for w, l, p in zip(row["words"], row["lemmas"], row["pos"])]
    n = len(words)
    arcs = []
    for k, (head, rel) in enumerate(zip(row["heads"], row["deprels"]), 1):
        arcs.append(Arc(k, head, rel, "gold"))
        wrong = k % 4 == 0 and head > 0
        arcs.append(Arc(k, (head % n) + 1 if wrong else head, rel, "pred", "wrong_head" if wrong else "correct"))
    return dependency_svg(words, arcs)


def test_a_long_sentence_wraps_into_rows_no_wider_than_the_page(longest):
    svg = drawing(longest)
    widths = [float(w) for w in re.findall(r'<svg class="kv-arcs"[^>]* width="([\d.]+)"', svg)]
    assert longest["n_words"] > 30 and len(widths) >= 2
    assert max(widths) <= PAGE_WIDTH
    indices = [int(i) for i in re.findall(r'data-index="(\d+)"', svg)]
    assert indices == list(range(1, longest["n_words"] + 1)), "every word once, in order"
    assert svg.count('class="kv-arc"') == 2 * longest["n_words"], "every gold and predicted arc is drawn"


def test_arc_labels_do_not_overlap(longest):
    for row in re.findall(r"<svg.*?</svg>", drawing(longest)):
        boxes = [(float(x), float(y), label_width(text)) for x, y, text in LABEL.findall(row)]
        for i, (x1, y1, w1) in enumerate(boxes):
            for x2, y2, w2 in boxes[i + 1:]:
                assert not (abs(x1 - x2) * 2 < w1 + w2 and abs(y1 - y2) < SMALL), f"labels at ({x1}, {y1}) and ({x2}, {y2}) overlap"


def test_an_arc_to_a_word_on_another_row_says_where_it_goes(longest):
    svg = drawing(longest)
    away = re.findall(r"→ (\d+) ([^<]+)</text>", svg)
    assert away
    for index, form in away:
        assert longest["words"][int(index) - 1] == html.unescape(form)  # file text is escaped in the SVG


def test_labels_of_crossing_arcs_over_short_words_are_moved_apart():
    words = [Word(form, form, "X") for form in ("그", "는", "안", "가")]
    arcs = [Arc(1, 3, "VNP_MOD", "gold"), Arc(2, 4, "VNP_CMP", "gold"), Arc(3, 0, "VP", "gold"), Arc(4, 0, "VP", "gold")]
    arcs += [Arc(a.dependent, a.head, a.label, "pred") for a in arcs]
    boxes = [(float(x), float(y), label_width(text)) for x, y, text in LABEL.findall(dependency_svg(words, arcs))]
    assert len(boxes) == 4
    for i, (x1, y1, w1) in enumerate(boxes):
        for x2, y2, w2 in boxes[i + 1:]:
            assert not (abs(x1 - x2) * 2 < w1 + w2 and abs(y1 - y2) < SMALL), f"labels at ({x1}, {y1}) and ({x2}, {y2}) overlap"


def test_labels_are_drawn_over_every_line(longest):
    """A line drawn after a label runs through its letters (on real sentences the 'away' lines crossed earlier labels)."""
    svg = drawing(longest)
    for row in re.findall(r"<svg.*?</svg>", svg):
        last_line = max(row.rfind("<path"), row.rfind("<line"))
        first_label = row.find('class="kv-arc-label"')
        assert 0 < last_line < first_label
        assert row.count('class="kv-arc-label"') == row.count('class="kv-arc"'), "every arc has its label"


def test_the_rows_of_one_sentence_share_one_scale(longest):
    """In a column narrower than a full row every row shrinks alike (each row's width is its share of a full row), so
    the words of a sentence keep one size; in the page's column at 1280 px every row is drawn at its natural size."""
    svg = drawing(longest)
    rows = re.findall(r'<svg class="kv-arcs"[^>]* width="([\d.]+)"[^>]* style="width:([\d.]+)%;max-width:([\d.]+)px', svg)
    assert len(rows) >= 3
    scales = [float(share) / float(width) for width, share, _ in rows]  # percent of the column per pixel of the row
    assert max(scales) / min(scales) < 1.005, scales  # the same, but for the widths rounded to whole pixels
    assert all(float(limit) == float(width) for width, _, limit in rows)
    assert max(float(width) for width, _, _ in rows) <= PAGE_WIDTH and 100 / max(scales) <= PAGE_WIDTH + 1
