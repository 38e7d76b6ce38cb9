"""The LLM part of an example card: the generated text with the part the answer parser used marked, why an
answer could not be read, the prompt and the choices with their log-likelihoods, when the run's log has them.

Pure: the example frame's columns (klue_viz.scoring.llm_outputs.answer_columns) in, escaped markup out (klue_viz.drawing.markup).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from klue_viz.drawing import markup as mk
from klue_viz.scoring.llm_outputs import softmax

if TYPE_CHECKING:
    import pandas as pd

    from klue_viz.tasks.base import Frames, Task

#: Longest prompt drawn in full; a longer one is cut (the card stays readable, the log keeps it whole).
MAX_PROMPT = 4000
STYLE = ("<style>.kv-llm{font-size:.85rem;margin:-.6rem 0 1rem;padding:.3rem .6rem;border-left:3px solid #8250df}"
         ".kv-used{background:#fde2b3;border-radius:.2rem;padding:0 .1rem}"
         ".kv-gen{white-space:pre-wrap}.kv-prompt{white-space:pre-wrap;font-size:.78rem;color:#57606a;max-height:14rem;overflow:auto}"
         ".kv-choice[data-chosen=yes]{font-weight:700}</style>")


def marked(text: str, spans: Any) -> str:
    """`text` escaped, with the parts in `spans` ((start, end) pairs) wrapped in <mark class="kv-used">."""
    out, pos = [], 0
    for start, end in sorted((int(a), int(b)) for a, b in (spans or ())):
        if start < pos or end > len(text) or start >= end:
            continue
        out.append(mk.esc(text[pos:start]))
        out.append(f'<mark class="kv-used">{mk.esc(text[start:end])}</mark>')
        pos = end
    out.append(mk.esc(text[pos:]))
    return "".join(out)


def answer_html(ex: pd.Series) -> str:
    """The rows of one example's LLM output; "" when its record had none."""
    rows = []
    text = ex.get("answer_text")
    if isinstance(text, str):
        status = ex.get("answer_status")
        if status == "read":
            rows.append(mk.row("answer", f'<span class="kv-gen">{marked(text, ex.get("answer_spans"))}</span>'))
        else:
            reason = ex.get("answer_reason") or "unreadable"
            rows.append(mk.row("answer", mk.badge("unreadable answer", "wrong") + f'<span class="kv-kv">{mk.esc(reason)}</span>'))
            rows.append(mk.row("", f'<span class="kv-gen">{mk.esc(text) if text else "<i>(empty)</i>"}</span>'))
    raw = ex.get("raw_output")
    if isinstance(raw, str):
        rows.append(mk.row("model", f'<span class="kv-gen">{mk.esc(raw)}</span>'))
    choices = ex.get("choices")
    if isinstance(choices, (tuple, list)) and choices:
        probs = softmax([s for _, s in choices])
        best = max(range(len(choices)), key=lambda k: choices[k][1])
        items = [f'<span class="kv-choice" {mk.attrs(data_chosen="yes" if k == best else "no")}>{mk.esc(c.strip())} '
                 f'<span class="kv-kv">{_number(s)} (p {p:.2f})</span></span>' for k, ((c, s), p) in enumerate(zip(choices, probs))]
        rows.append(mk.row("choices", " · ".join(items)))
    prompt = ex.get("prompt")
    if isinstance(prompt, str) and prompt:
        shown = prompt if len(prompt) <= MAX_PROMPT else prompt[:MAX_PROMPT] + "…"
        rows.append(f'<details><summary class="kv-side">prompt</summary><div class="kv-prompt">{mk.esc(shown)}</div></details>')
    if not rows:
        return ""
    return f'<div class="kv-llm" {mk.attrs(data_guid=str(ex.get("guid", "")))}>{"".join(rows)}</div>'


def _number(value: float) -> str:
    return "n/a" if not math.isfinite(value) else f"{value:.3f}"


def answers_of(frames: Frames, guids: list[str]) -> str:
    """The LLM output of these examples (with its style), "" when the run has none."""
    if "answer_text" not in frames.examples.columns:
        return ""
    blocks = []
    for guid in guids:
        rows = frames.rows(guid)
        if len(rows):
            block = answer_html(rows.iloc[0])
            if block and len(guids) > 1:
                block = block.replace('<div class="kv-llm"', f'<div class="kv-llm" title="{mk.esc_attr(guid)}"', 1)
            blocks.append(block)
    return STYLE + "".join(blocks) if any(blocks) else ""


def card_with_answers(task: Task, frames: Frames, guids: list[str]) -> str:
    """A card of the example list (`task.render_card`) followed by the LLM output of its examples, when the run has any."""
    return task.render_card(frames, guids) + answers_of(frames, guids)
