"""Labels of dependency arcs that leave a row of a long sentence are at least a label's height apart (issue 19, 25c)."""

from __future__ import annotations

import html
import random
import re

from klue_viz.drawing.arcs import Arc, Word, dependency_svg

SIZE = 11  # the labels' font size, read off the SVG below
#: A label's box: Hangul glyphs of Noto Sans CJK fill one em (0.88 above the baseline, 0.12 below) and the white halo
#: drawn under the letters (stroke-width 5) adds 2.5 px on every side.
HALO = 2.5
ASCENT, DESCENT = 0.88 * SIZE + HALO, 0.12 * SIZE + HALO
LABEL = re.compile(r'<text x="([\d.]+)" y="([\d.]+)" (text-anchor="middle" )?font-size="(\d+)"[^>]*class="kv-arc-label"[^>]*>([^<]*)</text>')


def width(text: str) -> float:
    """Hangul and the arrow take a full em, the rest about 0.6 em (measured on Noto Sans CJK at 11 px)."""
    return sum(SIZE if ("\uac00" <= c <= "\ud7a3" or c == "→") else SIZE * 0.6 for c in text)


def boxes(svg_row: str) -> list[tuple[float, float, float, float, str]]:
    out = []
    for x, y, middle, size, text in LABEL.findall(svg_row):
        assert int(size) == SIZE
        x, y, text = float(x), float(y), html.unescape(text)
        left = x - width(text) / 2 if middle else x
        out.append((left - HALO, left + width(text) + HALO, y - ASCENT, y + DESCENT, text))
    return out


def planted() -> str:
    """40 words of four syllables, each depending on a word drawn at random (seed 0, the last word the root), so that
    many arcs leave their row and cross shorter ones; the prediction is the same parse."""
    pick = random.Random(0)
    words = [Word(f"단어{k:02d}", f"단어{k:02d}", "NNG") for k in range(1, 41)]
    arcs = []
    for k in range(1, 41):
        head = 0 if k == 40 else pick.choice([h for h in range(1, 41) if h != k])
        arcs += [Arc(k, head, "NP_OBJ", "gold"), Arc(k, head, "NP_OBJ", "pred")]
    return dependency_svg(words, arcs)


def test_labels_of_arcs_leaving_a_row_never_overlap():
    svg = planted()
    rows = re.findall(r"<svg.*?</svg>", svg)
    assert len(rows) >= 2
    away = 0
    for row in rows:
        found = boxes(row)
        away += sum("→" in text for *_, text in found)
        for i, (l1, r1, t1, b1, s1) in enumerate(found):
            for l2, r2, t2, b2, s2 in found[i + 1:]:
                overlap = l1 < r2 and l2 < r1 and t1 < b2 and t2 < b1
                assert not overlap, f"labels {s1!r} ({l1:.0f}-{r1:.0f}, {t1:.0f}-{b1:.0f}) and {s2!r} ({l2:.0f}-{r2:.0f}, {t2:.0f}-{b2:.0f}) overlap"
    assert away >= 20, "the planted sentence has arcs that leave their row"
