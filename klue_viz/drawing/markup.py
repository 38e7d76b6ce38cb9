"""HTML/SVG building blocks shared by the task drawings.

Pure string functions: data in, escaped markup out (spaCy displacy's design). Every piece of text
that came from a file goes through `esc` before it enters a template. Hand-written because no
library draws gold-versus-predicted overlays over Korean text.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass

#: Characters Streamlit's Markdown would read as syntax (links, autolinks, images, emphasis, LaTeX, colours, HTML, entities).
MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:@&=\"'])")
#: Control characters, bidirectional overrides and zero-width characters (U+200B..., soft hyphen): shown as
#: visible codes, never passed on raw
#: (they reorder or hide text around them, and break terminals and spreadsheets).
INVISIBLE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u00ad\u061c\u180e\u200b-\u200f\u2060-\u2064\u202a-\u202e\u2066-\u2069\ufeff\ud800-\udfff]")


#: Where Streamlit's autolinker would start a link: after a scheme's ':' before '//', after 'www' before '.', before '@'.
#: It runs on the text after Markdown escapes and entities are resolved, so escaping cannot stop it; an
#: invisible word joiner (U+2060) at these points does.
AUTOLINK_POINT = re.compile(r"(?<=:)(?=/)|(?i:(?<=www))(?=\.)|(?=@)")
WORD_JOINER = "\u2060"


def unlinked(text: str) -> str:
    """Text in which no URL, www address or e-mail address can be autolinked."""
    return AUTOLINK_POINT.sub(WORD_JOINER, text)


def visible(text: object) -> str:
    """`text` as a string with control, bidi-override, zero-width and lone-surrogate characters written as `\\u` and four hex digits."""
    return INVISIBLE.sub(lambda m: f"\\u{ord(m.group()):04x}", str(text))


#: HTML's own characters, Markdown's syntax characters and newlines as numeric character references.
#: An entity is text to both readers: the browser shows the character, Markdown never reads it as syntax.
HTML_TEXT = {ord(c): f"&#{ord(c)};" for c in "&<>\"'*_[]()!$:~`@\\#|{}+.=^\n"}
#: Inside a quoted attribute of a raw HTML tag Markdown reads nothing: only HTML's own characters and newlines need references.
HTML_ATTRIBUTE = {ord(c): f"&#{ord(c)};" for c in "&<>\"'\n"}


def esc(text: object) -> str:
    """File text made literal for HTML and SVG passed to st.markdown(unsafe_allow_html=True).

    Escaping HTML is not enough there: a blank line inside a field ends the HTML block, and an inline
    tag (`<b>`) leaves the line to Markdown; both would let `**`, `[link](...)`, `![image](...)`,
    `$maths$`, `:red[...]` or a bare URL become live. Every such character is written as an entity.
    """
    return unlinked(visible(text)).translate(HTML_TEXT)


def md(text: object) -> str:
    """File or user text made literal for st.markdown / st.error / st.caption / expander and radio labels
    (all of which read Markdown): every syntax character is backslash-escaped, so nothing becomes a link,
    an autolinked URL or e-mail address, an image, maths, a colour or HTML; a newline becomes a space."""
    return MARKDOWN_SPECIAL.sub(r"\\\1", unlinked(visible(text).replace("\n", " ")))


#: What Markdown (CommonMark with GitHub's extensions) reads inside a line of text or a table cell: code, emphasis,
#: links and images, raw HTML, strikethrough, maths and the table's own bar; and the backslash that escapes them.
INLINE_SPECIAL = re.compile(r"([\\`*\[\]<>|~$])")
#: An underscore opens or closes emphasis only at a word's edge (`uas_macro_f1` stays as it is).
EDGE_UNDERSCORE = re.compile(r"(?<![^\W_])_|_(?![^\W_])")
#: An ampersand that would start a character reference (`&amp;`, `&#60;`).
ENTITY_START = re.compile(r"&(?=#?\w+;)")


def md_inline(text: object) -> str:
    """File or user text made literal inside one line of Markdown written to a file (a pull-request comment, a table
    cell): only what Markdown reads there is escaped, so `label=TI`, `+께` or `3-5 entities` read in a terminal as
    they are, where `md` (for Streamlit, which also reads colours and maths) escapes every punctuation mark. Line-start
    syntax (#, -, +, 1.) cannot occur mid-line; newlines become spaces; URLs, e-mail addresses and @mentions are
    broken by a word joiner (`unlinked`) so nothing links or pings anyone."""
    escaped = INLINE_SPECIAL.sub(r"\\\1", unlinked(visible(text).replace("\n", " ").replace("\r", " ")))
    return ENTITY_START.sub("&amp;", EDGE_UNDERSCORE.sub(r"\\_", escaped))


def chart_text(text: object) -> str:
    """File text made literal for a plotly label, tick or legend (plotly reads <a href>, <b>, <br>... and entities)."""
    return html.escape(visible(text).replace("\n", " "), quote=False)


def esc_attr(text: object) -> str:
    """File text made literal for a quoted HTML attribute value (Markdown does not read inside a tag)."""
    return visible(text).translate(HTML_ATTRIBUTE)


def attrs(**values: object) -> str:
    """Escaped HTML attributes; keys use '_' for '-' (data_label -> data-label)."""
    return " ".join(f'{k.replace("_", "-")}="{esc_attr(v)}"' for k, v in values.items() if v is not None)


@dataclass(frozen=True)
class Span:
    start: int
    end: int
    label: str
    css: str = "kv-ent"
    status: str = ""
    extra: tuple[tuple[str, str], ...] = ()
    tag: str = ""  # the small text after the span; the label when empty


# Distinct, colour-blind-friendly colours (Okabe-Ito) per NER type; other labels fall back to grey.
LABEL_COLOURS = {
    "PS": "#E69F00", "LC": "#56B4E9", "OG": "#009E73", "DT": "#F0E442", "TI": "#CC79A7", "QT": "#D55E00",
    "PER": "#E69F00", "ORG": "#009E73", "LOC": "#56B4E9", "DAT": "#F0E442", "POH": "#CC79A7", "NOH": "#D55E00",
}

STATUS_COLOURS = {"correct": "#1a7f37", "wrong": "#cf222e", "partial": "#bf8700", "missing": "#cf222e", "extra": "#8250df"}

STYLE = """
<style>
.kv-example{font-family:'Noto Sans CJK KR','Noto Sans KR','Malgun Gothic',sans-serif;line-height:2.1;margin:.2rem 0 1rem}
.kv-row{margin:.15rem 0}
.kv-side{display:inline-block;min-width:3.6rem;margin-right:.5rem;font-size:.75rem;color:#57606a;font-weight:600}
details>summary.kv-side{display:list-item;cursor:pointer}
.kv-ent,.kv-subj,.kv-obj,.kv-answer{padding:.1rem .25rem;border-radius:.3rem;border:2px solid transparent}
.kv-ent .kv-tag,.kv-subj .kv-tag,.kv-obj .kv-tag{font-size:.65rem;font-weight:700;margin-left:.2rem;vertical-align:super}
.kv-ent[data-status=correct]{border-color:#1a7f37}
.kv-ent[data-status=missed],.kv-ent[data-status=spurious]{border-color:#cf222e;border-style:dashed}
.kv-ent[data-status=wrong_type],.kv-ent[data-status=wrong_boundary],.kv-ent[data-status=wrong_type_and_boundary]{border-color:#bf8700}
.kv-badge{display:inline-block;font-size:.72rem;padding:0 .4rem;border-radius:.6rem;color:#fff;margin-right:.3rem}
.kv-kv{font-size:.85rem;color:#24292f}
.kv-legend{padding:0 .3rem;border-radius:.3rem}
.kv-answer[data-side=gold],.kv-legend[data-side=gold]{background:#d1f0d9}
.kv-answer[data-side=pred],.kv-legend[data-side=pred]{background:#fde2b3}
.kv-answer[data-side=both],.kv-legend[data-side=both]{background:#b7e4f7}
.kv-slot{display:inline-block;font-size:.8rem;padding:.05rem .4rem;margin:.1rem;border-radius:.3rem;border:1px solid #d0d7de}
.kv-slot[data-status=correct]{background:#dafbe1}
.kv-slot[data-status=missing]{background:#ffebe9;border-style:dashed}
.kv-slot[data-status=extra]{background:#fbefff}
.kv-slot[data-status=wrong_value]{background:#fff8c5}
.kv-slot[data-error=carried]{opacity:.7}
.kv-new{font-size:.68rem;font-weight:700;color:#fff;background:#cf222e;border-radius:.5rem;padding:0 .3rem}
.kv-turn{padding:.2rem .5rem;border-left:3px solid #d0d7de;margin:.3rem 0}
.kv-turn[data-role=user]{border-color:#0969da}
.kv-turn[data-joint=broken]{border-color:#cf222e}
.kv-arcs text{font-family:'Noto Sans CJK KR','Noto Sans KR',sans-serif}
</style>
"""


def badge(text: str, status: str) -> str:
    colour = STATUS_COLOURS.get(status, "#57606a")
    return f'<span class="kv-badge" style="background:{colour}">{esc(text)}</span>'


def highlight(text: str, spans: list[Span]) -> str:
    """Text with non-overlapping spans wrapped in marked elements; overlapping spans are nested as far as they nest."""
    spans = sorted(spans, key=lambda s: (s.start, -s.end))
    out: list[str] = []
    pos = 0
    open_until = -1
    for span in spans:
        if span.start < open_until or span.start < pos:
            continue  # overlaps an earlier span on the same side; drawn elsewhere (the entity list)
        out.append(esc(text[pos:span.start]))
        colour = LABEL_COLOURS.get(span.label, "#d0d7de")
        data = attrs(data_label=span.label, data_status=span.status or None, **{k: v for k, v in span.extra})
        out.append(
            f'<span class="{span.css}" {data} style="background:{colour}33">'
            f'{esc(text[span.start:span.end])}<span class="kv-tag">{esc(span.tag or span.label)}</span></span>'
        )
        pos = open_until = span.end
    out.append(esc(text[pos:]))
    return "".join(out)


def row(side: str, body: str) -> str:
    return f'<div class="kv-row"><span class="kv-side">{esc(side)}</span>{body}</div>'


def example(body: str, guid: str) -> str:
    return f'<div class="kv-example" {attrs(data_guid=guid)}>{body}</div>'


#: A spreadsheet reads a cell starting with one of these as a formula (OWASP "CSV injection"); leading quotes are
#: included so that a cell that already starts with a quote survives the round trip through `csv_text`, and a
#: newline because reading a file turns a CR into one.
FORMULA_START = re.compile(r"^'*[=+\-@\t\r\n]")
NUMBER = re.compile(r"^-?[0-9][0-9,.]*(?:[eE][+-]?[0-9]+)?$")


def csv_cell(value: object) -> object:
    """A CSV cell a spreadsheet shows as text: formula-like text gets a leading `'` (OWASP); numbers stay numbers.

    A lone CR becomes a newline: csv writers with a "\\n" line end leave it unquoted, and it would split the row.
    """
    if not isinstance(value, str):
        return value
    value = value.replace("\r\n", "\n").replace("\r", "\n")
    return "'" + value if FORMULA_START.match(value) and not NUMBER.match(value) else value


def csv_text(value: str) -> str:
    """The inverse of `csv_cell` for a cell read back from a klue-viz CSV."""
    return value[1:] if value.startswith("'") and FORMULA_START.match(value) else value
