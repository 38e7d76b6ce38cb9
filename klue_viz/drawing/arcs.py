"""Dependency arcs as inline SVG: gold arcs above the words, predicted arcs below.

Written by hand because no library draws two parses of one sentence against each other; the
layout follows displaCy (arcs as cubic curves whose height grows with the arcs they enclose).
Every string from a file is escaped before it enters the SVG.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass

from klue_viz.drawing.markup import esc, esc_attr

FONT = 14
SMALL = 11
LEVEL_HEIGHT = 22
GAP = 18
#: Widest row of a drawing before the sentence wraps: with the margins (`ROW_MARGIN`) a full row is as wide as the
#: page's main column in a 1280 px window (820 px in Chromium), so it is drawn at its natural size there.
MAX_ROW_WIDTH = 700
#: Room left of the first word (10) and right of the last (110: a "(root)" label or an arc leaving the row).
ROW_MARGIN = 120
#: A white outline under each label's letters, so the lines it is drawn over do not run through them.
HALO = 'paint-order="stroke" stroke="#fff" stroke-width="5" stroke-linejoin="round"'
#: A label's box height: one em of CJK glyphs (0.88 above the baseline, 0.12 below) and the halo's 2.5 px above and below;
#: labels that share columns are stacked at least this far apart (plus 1 px of air).
LABEL_HEIGHT = SMALL + 5 + 1
COLOURS = {"correct": "#57606a", "wrong_head": "#cf222e", "wrong_label": "#bf8700"}


@dataclass(frozen=True)
class Word:
    form: str
    lemma: str
    pos: str


@dataclass(frozen=True)
class Arc:
    dependent: int  # 1-based word index
    head: int  # 0 = root
    label: str
    side: str  # "gold" (drawn above) or "pred" (drawn below)
    status: str = "correct"


def text_width(text: str, size: int, ambiguous_wide: bool = False) -> float:
    """Approximate rendered width: wide (Hangul, CJK) characters take a full em, others about half; with
    `ambiguous_wide`, so do characters of ambiguous width (such as →), as a CJK font draws them."""
    wide = "WFA" if ambiguous_wide else "WF"
    return sum(size if unicodedata.east_asian_width(c) in wide else size * 0.6 for c in text)


def label_width(text: str) -> float:
    """A label's width at the labels' size, its arrow (→) as wide as a CJK font draws it."""
    return text_width(text, SMALL, ambiguous_wide=True)


@dataclass
class Label:
    """An arc label's text and box (centre x, baseline y); moved outwards until it overlaps no other label."""

    text: str
    x: float
    y: float
    width: float

    def overlaps(self, other: Label) -> bool:
        """Whether the boxes, halo included (2.5 px a side, 1 px of air), touch."""
        return abs(self.x - other.x) * 2 < self.width + other.width + 6 and abs(self.y - other.y) < LABEL_HEIGHT


def row_ranges(widths: list[float], max_width: float) -> list[tuple[int, int]]:
    """Words (0-based, end exclusive) of each row: as many as fit in `max_width`, at least one per row."""
    rows, start, used = [], 0, 0.0
    for k, width in enumerate(widths):
        if k > start and used + width > max_width:
            rows.append((start, k))
            start, used = k, 0.0
        used += width
    rows.append((start, len(widths)))
    return rows


def dependency_svg(words: list[Word], arcs: list[Arc], max_width: float = MAX_ROW_WIDTH) -> str:
    """Gold arcs above the words, predicted below; a long sentence wraps into rows of at most `max_width` pixels.

    An arc whose head is on another row runs to the edge of its row and says where it goes ("→ 12 word");
    every word shows its index. In a column narrower than a full row, every row of the sentence scales down by the
    same factor (each row's width is its share of a full row), so the words keep one size across rows.
    """
    return f'<div class="kv-arcs-wrap">{"".join(dependency_rows(words, arcs, max_width))}</div>'


def dependency_rows(words: list[Word], arcs: list[Arc], max_width: float = MAX_ROW_WIDTH) -> list[str]:
    """The rows of `dependency_svg`, each one <svg> element (klue_viz.drawing.svg stacks them into one standalone picture)."""
    widths = [max(text_width(w.form, FONT), text_width(w.lemma, SMALL), text_width(w.pos, SMALL)) + GAP for w in words]
    return [_row(words, widths, arcs, start, end, max_width + ROW_MARGIN) for start, end in row_ranges(widths, max_width)]


def _row(words: list[Word], widths: list[float], arcs: list[Arc], start: int, end: int, full_width: float) -> str:
    centres, x = {}, 10.0
    for k in range(start, end):
        centres[k + 1] = x + widths[k] / 2
        x += widths[k]
    total_width = x + ROW_MARGIN - 10
    left_edge, right_edge = 4.0, total_width - 4
    drawn = []  # (side, arc, x_head or edge, x_dep, kind)
    for arc in arcs:
        if arc.dependent not in centres:
            continue
        if arc.head <= 0 or arc.head > len(words):
            drawn.append((arc.side, arc, centres[arc.dependent], centres[arc.dependent], "root"))
        elif arc.head in centres:
            drawn.append((arc.side, arc, centres[arc.head], centres[arc.dependent], "arc"))
        else:
            drawn.append((arc.side, arc, left_edge if arc.head < start + 1 else right_edge, centres[arc.dependent], "away"))
    heights, labels = {}, {}
    for side in ("gold", "pred"):
        spans = sorted((d for d in drawn if d[0] == side and d[4] != "root"), key=lambda d: abs(d[2] - d[3]))
        level: dict[int, int] = {}
        for k, (_, _, a, b, _) in enumerate(spans):
            low, high = min(a, b), max(a, b)
            inner = [level[j] for j in level if low <= min(spans[j][2], spans[j][3]) and max(spans[j][2], spans[j][3]) <= high]
            level[k] = 1 + max(inner, default=0)
        placed: list[Label] = []
        for k in sorted(level, key=level.__getitem__):
            _, arc, a, b, kind = spans[k]
            text = arc.label if kind == "arc" else f"{arc.label} → {arc.head} {words[arc.head - 1].form}"
            width = label_width(text)
            x_label = (a + b) / 2 if kind == "arc" else (a + width / 2 + 2 if a < b else a - width / 2 - 2)
            label = Label(text, x_label, level[k] * LEVEL_HEIGHT * 0.75 + 4, width)
            while any(label.overlaps(other) for other in placed):
                label.y += LABEL_HEIGHT
            placed.append(label)
            labels[id(spans[k])] = label
            heights[id(spans[k])] = level[k] * LEVEL_HEIGHT
        for d in drawn:
            if d[0] == side and d[4] == "root":
                labels[id(d)] = Label(f"{d[1].label} (root)", d[3] + 4 + text_width(f"{d[1].label} (root)", SMALL) / 2, 0, 0)
    reach = {side: max([labels[id(d)].y + SMALL for d in drawn if d[0] == side and d[4] != "root"]
                       + [heights[id(d)] for d in drawn if d[0] == side and d[4] != "root"] + [LEVEL_HEIGHT]) + 12 for side in ("gold", "pred")}
    top = reach["gold"] + 4
    word_y = top + FONT
    bottom_words = word_y + 3 * SMALL + 14  # word, lemma, POS, index
    height = bottom_words + reach["pred"] + 4
    parts = [
        f'<svg class="kv-arcs" xmlns="http://www.w3.org/2000/svg" width="{total_width:.0f}" height="{height:.0f}" '
        f'viewBox="0 0 {total_width:.0f} {height:.0f}" style="width:{min(100.0, 100 * total_width / full_width):.2f}%;'
        f'max-width:{total_width:.0f}px;height:auto" role="img">'
    ]
    for k in range(start, end):
        word, cx = words[k], centres[k + 1]
        parts.append(f'<text x="{cx:.1f}" y="{word_y:.1f}" text-anchor="middle" font-size="{FONT}" data-index="{k + 1}">{esc(word.form)}</text>')
        parts.append(f'<text x="{cx:.1f}" y="{word_y + SMALL + 3:.1f}" text-anchor="middle" font-size="{SMALL}" fill="#57606a">{esc(word.lemma)}</text>')
        parts.append(f'<text x="{cx:.1f}" y="{word_y + 2 * SMALL + 5:.1f}" text-anchor="middle" font-size="{SMALL}" fill="#8c959f">{esc(word.pos)}</text>')
        parts.append(f'<text x="{cx:.1f}" y="{word_y + 3 * SMALL + 7:.1f}" text-anchor="middle" font-size="{SMALL - 1}" fill="#8c959f">{k + 1}</text>')
    texts = []  # the labels, drawn after every line so that no line runs across a label
    for d in drawn:
        side, arc, a, b, kind = d
        base = top - 4 if side == "gold" else bottom_words + 4
        sign = -1 if side == "gold" else 1
        colour = COLOURS.get(arc.status, COLOURS["correct"])
        dash = ' stroke-dasharray="4 3"' if arc.status == "wrong_label" else ""
        meta = (f'class="kv-arc" data-side="{side}" data-status="{esc_attr(arc.status)}" data-dep="{arc.dependent}" data-head="{arc.head}" '
                f'data-label="{esc_attr(arc.label)}"')
        label_of = f'class="kv-arc-label" data-side="{side}" data-dep="{arc.dependent}"'
        label = labels[id(d)]
        if kind == "root":
            # Root (or an unusable head): a straight stroke to the edge of the drawing.
            end_y = 4 if side == "gold" else height - 4
            parts.append(f'<g {meta}><line x1="{b:.1f}" y1="{base:.1f}" x2="{b:.1f}" y2="{end_y:.1f}" stroke="{colour}" stroke-width="1.5"{dash}/></g>')
            texts.append(f'<text x="{b + 4:.1f}" y="{(base + end_y) / 2:.1f}" font-size="{SMALL}" fill="{colour}" {HALO} {label_of}>{esc(label.text)}</text>')
            continue
        peak = base + sign * heights[id(d)]
        if kind == "arc":
            stroke = f'M{a:.1f},{base:.1f} C{a:.1f},{peak:.1f} {b:.1f},{peak:.1f} {b:.1f},{base:.1f}'
        else:
            stroke = f'M{a:.1f},{peak:.1f} L{b:.1f},{peak:.1f} L{b:.1f},{base:.1f}'
        label_y = base + sign * label.y + (4 if side == "gold" else 0)
        parts.append(
            f'<g {meta}><path d="{stroke}" fill="none" stroke="{colour}" stroke-width="1.5"{dash}/>'
            f'<path d="M{b - 3:.1f},{base + sign * 6:.1f} L{b:.1f},{base:.1f} L{b + 3:.1f},{base + sign * 6:.1f}" '
            f'fill="none" stroke="{colour}" stroke-width="1.5"/></g>'
        )
        texts.append(f'<text x="{label.x:.1f}" y="{label_y:.1f}" text-anchor="middle" font-size="{SMALL}" fill="{colour}" '
                     f'{HALO} {label_of}>{esc(label.text)}</text>')
    parts.extend(texts)
    parts.append("</svg>")
    return "".join(parts)
