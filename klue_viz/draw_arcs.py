"""Dependency arcs as inline SVG: gold arcs above the words, predicted arcs below.

Written by hand because no library draws two parses of one sentence against each other; the
layout follows displaCy (arcs as cubic curves whose height grows with the arcs they enclose).
Every string from a file is escaped before it enters the SVG.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass

from klue_viz.markup import esc

FONT = 14
SMALL = 11
LEVEL_HEIGHT = 22
GAP = 18
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


def text_width(text: str, size: int) -> float:
    """Approximate rendered width: wide (Hangul, CJK) characters take a full em, others about half."""
    return sum(size if unicodedata.east_asian_width(c) in "WF" else size * 0.6 for c in text)


def levels(arcs: list[Arc]) -> dict[Arc, int]:
    """Height level of each arc: one more than the highest arc it encloses, so nested arcs never cross."""
    spans = sorted((a for a in arcs if a.head > 0), key=lambda a: abs(a.head - a.dependent))
    out: dict[Arc, int] = {}
    for arc in spans:
        low, high = sorted((arc.head, arc.dependent))
        inner = [out[o] for o in out if low <= min(o.head, o.dependent) and max(o.head, o.dependent) <= high]
        out[arc] = 1 + max(inner, default=0)
    return out


def dependency_svg(words: list[Word], arcs: list[Arc]) -> str:
    widths = [max(text_width(w.form, FONT), text_width(w.lemma, SMALL), text_width(w.pos, SMALL)) + GAP for w in words]
    centres, x = [], 10.0
    for width in widths:
        centres.append(x + width / 2)
        x += width
    total_width = x + 90  # room for the last word's "(root)" label
    gold = [a for a in arcs if a.side == "gold"]
    pred = [a for a in arcs if a.side == "pred"]
    gold_levels, pred_levels = levels(gold), levels(pred)
    top = (max(gold_levels.values(), default=0) + 1) * LEVEL_HEIGHT + 16
    word_y = top + FONT
    bottom_words = word_y + 2 * SMALL + 10  # word, lemma, POS
    below = (max(pred_levels.values(), default=0) + 1) * LEVEL_HEIGHT + 16
    height = bottom_words + below
    parts = [
        f'<svg class="kv-arcs" xmlns="http://www.w3.org/2000/svg" width="{total_width:.0f}" height="{height:.0f}" '
        f'viewBox="0 0 {total_width:.0f} {height:.0f}" role="img">'
    ]
    for k, (word, cx) in enumerate(zip(words, centres), 1):
        parts.append(f'<text x="{cx:.1f}" y="{word_y:.1f}" text-anchor="middle" font-size="{FONT}" data-index="{k}">{esc(word.form)}</text>')
        parts.append(f'<text x="{cx:.1f}" y="{word_y + SMALL + 3:.1f}" text-anchor="middle" font-size="{SMALL}" fill="#57606a">{esc(word.lemma)}</text>')
        parts.append(f'<text x="{cx:.1f}" y="{word_y + 2 * SMALL + 5:.1f}" text-anchor="middle" font-size="{SMALL}" fill="#8c959f">{esc(word.pos)}</text>')
    for side, side_arcs, side_levels in (("gold", gold, gold_levels), ("pred", pred, pred_levels)):
        base = top - 4 if side == "gold" else bottom_words + 4
        sign = -1 if side == "gold" else 1
        for arc in side_arcs:
            colour = COLOURS.get(arc.status, COLOURS["correct"])
            dash = ' stroke-dasharray="4 3"' if arc.status == "wrong_label" else ""
            meta = f'class="kv-arc" data-side="{side}" data-status="{esc(arc.status)}" data-dep="{arc.dependent}" data-head="{arc.head}" data-label="{esc(arc.label)}"'
            x_dep = centres[arc.dependent - 1]
            if arc.head <= 0 or arc.head > len(centres):
                # Root (or an unusable head): a straight stroke to the edge of the drawing.
                end = 4 if side == "gold" else height - 4
                parts.append(f'<g {meta}><line x1="{x_dep:.1f}" y1="{base:.1f}" x2="{x_dep:.1f}" y2="{end:.1f}" stroke="{colour}" stroke-width="1.5"{dash}/>'
                             f'<text x="{x_dep + 4:.1f}" y="{(base + end) / 2:.1f}" font-size="{SMALL}" fill="{colour}">{esc(arc.label)} (root)</text></g>')
                continue
            x_head = centres[arc.head - 1]
            peak = base + sign * side_levels[arc] * LEVEL_HEIGHT
            parts.append(
                f'<g {meta}><path d="M{x_head:.1f},{base:.1f} C{x_head:.1f},{peak:.1f} {x_dep:.1f},{peak:.1f} {x_dep:.1f},{base:.1f}" '
                f'fill="none" stroke="{colour}" stroke-width="1.5"{dash}/>'
                f'<path d="M{x_dep - 3:.1f},{base + sign * 6:.1f} L{x_dep:.1f},{base:.1f} L{x_dep + 3:.1f},{base + sign * 6:.1f}" fill="none" stroke="{colour}" stroke-width="1.5"/>'
                f'<text x="{(x_head + x_dep) / 2:.1f}" y="{base + sign * (side_levels[arc] * LEVEL_HEIGHT * 0.75) + (4 if side == "gold" else 10):.1f}" '
                f'text-anchor="middle" font-size="{SMALL}" fill="{colour}" paint-order="stroke" stroke="#fff" stroke-width="3">{esc(arc.label)}</text></g>'
            )
    parts.append("</svg>")
    return f'<div style="overflow-x:auto">{"".join(parts)}</div>'
