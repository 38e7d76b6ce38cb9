"""Standalone SVG drawings of one example, for a paper or a slide: a pure function per drawing kind, dict in, SVG out.

The page draws most examples as HTML (spans over text), which does not leave the browser; these
write one self-contained SVG file each, gold and prediction together, with a legend of the colours.
Kinds:

* `spans_drawing`: rows of text with marked spans (NER entities per side, RE subject and object,
  MRC answers over the passage, plain text rows for sentence tasks), and notes (the labels);
* `arcs_drawing`: DP arcs (klue_viz.drawing.arcs' rows, stacked into one picture);
* `turns_drawing`: a WoS dialogue, each user turn with its slot differences as chips.

Text is placed by estimated width (klue_viz.drawing.arcs.text_width: a Hangul syllable one em, other
characters about half) and each piece is given that width (`textLength`), so a mark's box always
fits its text whatever font renders it. Fonts are named for Hangul: "Noto Sans CJK KR", then any
sans-serif. Every string from a file is escaped through klue_viz.drawing.markup.esc (numeric character
references, valid XML); characters XML 1.0 cannot hold at all are shown as `\\uXXXX`.
Hand-written: no kept library writes text-with-spans SVG (displaCy writes HTML for spans).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from klue_viz.drawing.arcs import Arc, Word, dependency_rows, text_width
from klue_viz.drawing.markup import esc, esc_attr

FONT_FAMILY = "'Noto Sans CJK KR', sans-serif"
SIZE = 15
TAG_SIZE = 9
SMALL = 12
MARGIN = 16
SIDE_WIDTH = 86
#: Widest line of text before it wraps.
TEXT_WIDTH = 760
LINE_HEIGHT = SIZE * 2.5
#: Characters XML 1.0 cannot hold even as references (markup.esc already shows C0/C1 controls as codes).
NOT_XML = re.compile("[\ufffe\uffff]")
STROKES = {
    "correct": ("#1a7f37", ""),
    "wrong": ("#cf222e", ""),
    "missed": ("#cf222e", "5 3"),
    "spurious": ("#cf222e", "5 3"),
    "missing": ("#cf222e", "5 3"),
    "extra": ("#8250df", "5 3"),
    "partial": ("#bf8700", ""),
    "wrong_type": ("#bf8700", ""),
    "wrong_boundary": ("#bf8700", ""),
    "wrong_type_and_boundary": ("#bf8700", ""),
    "wrong_value": ("#bf8700", ""),
    "": ("#8c959f", ""),
}


def xml_text(text: object) -> str:
    """File text as SVG character data or attribute text: markup.esc, and what XML cannot hold shown as a code."""
    return esc(NOT_XML.sub(lambda m: f"\\u{ord(m.group()):04x}", str(text)))


def _stroke(status: str) -> tuple[str, str]:
    return STROKES.get(status.replace(" ", "_"), STROKES[""])


@dataclass
class Canvas:
    """SVG pieces and the height used so far."""

    parts: list[str]
    y: float = MARGIN
    width: float = 2 * MARGIN + SIDE_WIDTH + TEXT_WIDTH


def _lines(text: str, widths: list[float], max_width: float) -> list[tuple[int, int]]:
    """Character ranges of each line: as many as fit, broken after the last space when there is one."""
    lines, start, used, space = [], 0, 0.0, -1
    for k, width in enumerate(widths):
        if k > start and used + width > max_width:
            cut = space + 1 if space >= start else k
            lines.append((start, cut))
            start, used, space = cut, sum(widths[cut:k]), -1
        if text[k] == " ":
            space = k
        used += width
    lines.append((start, len(text)))
    return lines


def _text(x: float, y: float, text: str, width: float | None = None, size: int = SIZE, fill: str = "#24292f", extra: str = "") -> str:
    """A <text> element; with `width`, stretched or squeezed to exactly that width (so the boxes drawn by estimate fit it)."""
    if not text:
        return ""
    fitted = f' textLength="{width:.1f}" lengthAdjust="spacingAndGlyphs"' if width is not None else ""
    return f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" fill="{fill}"{fitted}{" " + extra if extra else ""}>{xml_text(text)}</text>'


def _marked(canvas: Canvas, side: str, text: str, marks: list[dict]) -> None:
    """One row: its side name, then the text wrapped into lines, each mark a box behind its characters with a tag above."""
    widths = [text_width(c, SIZE) for c in text]
    marks = sorted((m for m in marks if 0 <= int(m["start"]) < int(m["end"]) <= len(text)), key=lambda m: (int(m["start"]), -int(m["end"])))
    owner: list[int | None] = [None] * len(text)
    for k, mark in enumerate(marks):
        for c in range(int(mark["start"]), int(mark["end"])):
            if owner[c] is None:
                owner[c] = k
    x0 = MARGIN + SIDE_WIDTH
    canvas.parts.append(f'<text x="{MARGIN}" y="{canvas.y + SIZE * 1.4:.1f}" font-size="{SMALL}" font-weight="600" fill="#57606a">{xml_text(side)}</text>')
    tagged: set[int] = set()
    for start, end in _lines(text, widths, TEXT_WIDTH) or [(0, 0)]:
        baseline = canvas.y + SIZE * 1.4
        x: float = x0
        k = start
        if all(owner[c] is None for c in range(start, end)):  # nothing marked on this line: the font lays it out alone
            canvas.parts.append(_text(x0, baseline, text[start:end], extra='class="kv-text"'))
            k = end
        while k < end:
            j = k
            while j < end and owner[j] == owner[k]:
                j += 1
            width = sum(widths[k:j])
            who = owner[k]
            if who is not None:
                mark = marks[who]
                stroke, dash = _stroke(str(mark.get("status", "")))
                canvas.parts.append(f'<rect class="kv-mark" x="{x - 1:.1f}" y="{baseline - SIZE - 1:.1f}" width="{width + 2:.1f}" height="{SIZE * 1.45:.1f}" '
                                    f'rx="3" fill="{esc_attr(mark.get("colour", "#d0d7de"))}" fill-opacity="0.35" stroke="{stroke}" stroke-width="1.5"'
                                    f'{f" stroke-dasharray={chr(34)}{dash}{chr(34)}" if dash else ""} data-status="{esc_attr(mark.get("status", ""))}"/>')
                if who not in tagged and mark.get("tag"):
                    tagged.add(who)
                    canvas.parts.append(f'<text x="{x:.1f}" y="{baseline - SIZE - 3:.1f}" font-size="{TAG_SIZE}" font-weight="700" fill="{stroke}">'
                                        f'{xml_text(mark["tag"])}</text>')
            canvas.parts.append(_text(x, baseline, text[k:j], width, extra='class="kv-text"'))
            x += width
            k = j
        canvas.y += LINE_HEIGHT


def _notes(canvas: Canvas, notes: list[dict]) -> None:
    """Lines such as 'gold: per:origin' / 'pred: no_relation', each coloured by its status."""
    canvas.y += 4 if notes else 0
    for note in notes:
        stroke, _ = _stroke(str(note.get("status", "")))
        name, text = str(note.get("side", "")), str(note.get("text", ""))
        canvas.parts.append(f'<text x="{MARGIN}" y="{canvas.y + SMALL:.1f}" font-size="{SMALL}" font-weight="600" fill="#57606a">{xml_text(name)}</text>')
        canvas.parts.append(_text(MARGIN + SIDE_WIDTH, canvas.y + SMALL, text, fill=stroke if note.get("status") else "#24292f"))
        canvas.y += SIZE * 1.7


def _legend(canvas: Canvas, legend: list[dict]) -> None:
    """Swatches with what they mean, wrapped over lines at the drawing's width."""
    if not legend:
        return
    canvas.y += 6
    x: float = MARGIN
    canvas.parts.append('<g class="kv-legend">')
    for item in legend:
        stroke, dash = _stroke(str(item.get("status", "")))
        label = str(item["text"])
        width = 22 + text_width(label, SMALL) + 14
        if x + width > canvas.width - MARGIN and x > MARGIN:
            x, canvas.y = MARGIN, canvas.y + SMALL * 1.8
        canvas.parts.append(f'<rect x="{x:.1f}" y="{canvas.y:.1f}" width="16" height="{SMALL}" rx="2" fill="{esc_attr(item.get("colour", "#ffffff"))}" '
                            f'fill-opacity="{0.35 if item.get("colour") else 0}" stroke="{stroke}" stroke-width="1.5"'
                            f'{f" stroke-dasharray={chr(34)}{dash}{chr(34)}" if dash else ""}/>')
        canvas.parts.append(f'<text x="{x + 22:.1f}" y="{canvas.y + SMALL - 1:.1f}" font-size="{SMALL}" fill="#24292f">{xml_text(label)}</text>')
        x += width
    canvas.parts.append("</g>")
    canvas.y += SMALL * 1.8


def _title(canvas: Canvas, title: str) -> None:
    canvas.parts.append(f'<text x="{MARGIN}" y="{canvas.y + SMALL:.1f}" font-size="{SMALL}" fill="#57606a" class="kv-title">{xml_text(title)}</text>')
    canvas.y += SMALL * 2


def document(canvas: Canvas, title: str) -> str:
    """The pieces as one standalone SVG file (XML declaration, white background, the fonts named, a <title>)."""
    height = canvas.y + MARGIN
    return ('<?xml version="1.0" encoding="UTF-8"?>\n'
            f'<svg xmlns="http://www.w3.org/2000/svg" version="1.1" width="{canvas.width:.0f}" height="{height:.0f}" '
            f'viewBox="0 0 {canvas.width:.0f} {height:.0f}" font-family="{FONT_FAMILY}" xml:space="preserve" style="white-space:pre">'
            f'<title>{xml_text(title)}</title><rect width="100%" height="100%" fill="#ffffff"/>{"".join(canvas.parts)}</svg>\n')


def spans_drawing(doc: dict) -> str:
    """Rows of text with marked spans, then notes and the legend.

    `doc`: {"title", "rows": [{"side", "text", "marks": [{"start", "end" (exclusive), "tag", "colour", "status"}]}],
    "notes": [{"side", "text", "status"}], "legend": [{"text", "colour", "status"}]}.
    """
    canvas = Canvas([])
    _title(canvas, doc.get("title", ""))
    for row in doc.get("rows", []):
        _marked(canvas, str(row.get("side", "")), str(row.get("text", "")), list(row.get("marks", [])))
    _notes(canvas, list(doc.get("notes", [])))
    _legend(canvas, list(doc.get("legend", [])))
    return document(canvas, doc.get("title", ""))


SVG_SIZE = re.compile(r'^<svg class="kv-arcs" xmlns="http://www.w3.org/2000/svg" width="(\d+)" height="(\d+)" ')


def arcs_drawing(doc: dict) -> str:
    """DP arcs: the rows klue_viz.drawing.arcs draws for the page, stacked into one picture, then notes and the legend.

    `doc`: {"title", "text", "tokens": [{"form", "lemma", "pos"}], "arcs": [{"dependent", "head", "label", "side", "status"}],
    "notes", "legend"} as for `spans_drawing`.
    """
    words = [Word(str(w["form"]), str(w.get("lemma", "")), str(w.get("pos", ""))) for w in doc.get("tokens", [])]
    arcs = [Arc(int(a["dependent"]), int(a["head"]), str(a["label"]), str(a["side"]), str(a.get("status", "correct"))) for a in doc.get("arcs", [])]
    canvas = Canvas([])
    _title(canvas, doc.get("title", ""))
    if doc.get("text"):
        _marked(canvas, "text", str(doc["text"]), [])
    for row in dependency_rows(words, arcs):
        size = SVG_SIZE.match(row)  # our own row markup: its size is in its opening tag
        width, height = (float(size.group(1)), float(size.group(2))) if size else (canvas.width, 200.0)
        nested = re.sub(r' style="[^"]*"', "", row.replace('<svg class="kv-arcs" ', f'<svg class="kv-arcs" x="{MARGIN}" y="{canvas.y:.1f}" ', 1), count=1)
        canvas.parts.append(nested)
        canvas.width = max(canvas.width, width + 2 * MARGIN)
        canvas.y += height + 6
    _notes(canvas, list(doc.get("notes", [])))
    _legend(canvas, list(doc.get("legend", [])))
    return document(canvas, doc.get("title", ""))


def turns_drawing(doc: dict) -> str:
    """A dialogue: each turn's speaker and text, the user turns' slot chips beneath, then notes and the legend.

    `doc`: {"title", "turns": [{"speaker", "text", "broken", "chips": [{"text", "status"}]}], "notes", "legend"}.
    """
    canvas = Canvas([])
    _title(canvas, doc.get("title", ""))
    for turn in doc.get("turns", []):
        top = canvas.y
        _marked(canvas, str(turn.get("speaker", "")), str(turn.get("text", "")), [])
        x: float = MARGIN + SIDE_WIDTH
        for chip in turn.get("chips", []):
            label = str(chip["text"])
            width = text_width(label, SMALL) + 10
            if x + width > canvas.width - MARGIN and x > MARGIN + SIDE_WIDTH:
                x, canvas.y = MARGIN + SIDE_WIDTH, canvas.y + SMALL * 2
            stroke, dash = _stroke(str(chip.get("status", "")))
            canvas.parts.append(f'<rect x="{x:.1f}" y="{canvas.y:.1f}" width="{width:.1f}" height="{SMALL * 1.5:.1f}" rx="3" fill="{stroke}" '
                                f'fill-opacity="0.12" stroke="{stroke}"{f" stroke-dasharray={chr(34)}{dash}{chr(34)}" if dash else ""} '
                                f'data-status="{esc_attr(chip.get("status", ""))}"/>')
            canvas.parts.append(_text(x + 5, canvas.y + SMALL * 1.1, label, width - 10, size=SMALL))  # fitted to its chip
            x += width + 6
        if turn.get("chips"):
            canvas.y += SMALL * 2.2
        if turn.get("broken"):
            canvas.parts.append(f'<line x1="{MARGIN - 6}" y1="{top + 4:.1f}" x2="{MARGIN - 6}" y2="{canvas.y - 4:.1f}" stroke="#cf222e" stroke-width="3"/>')
    _notes(canvas, list(doc.get("notes", [])))
    _legend(canvas, list(doc.get("legend", [])))
    return document(canvas, doc.get("title", ""))


DRAWINGS = {"spans": spans_drawing, "arcs": arcs_drawing, "turns": turns_drawing}


def drawing(doc: dict) -> str:
    """The SVG of a drawing document, by its `kind` (spans, arcs, turns)."""
    return DRAWINGS[doc["kind"]](doc)
