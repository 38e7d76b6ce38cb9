"""Reading a generated answer: the machinery every task's answer parser shares (docs/answer-parsers.md).

An LLM answers in text (`정답: 거짓입니다. 전제에 따르면...`), not with a label. A task's `parse_answer`
turns that text into the fields of an ordinary prediction record (`{"label": "contradiction"}`,
`{"score": 3.5}`, `{"entities": [...]}`), which then goes through the task's `parse_prediction` like
any other record. What is shared lives here: stripping the answer's wrapping (whitespace, quotes,
`정답:`/`답변:`/`Answer:` prefixes, a copula such as `입니다`), finding which label names a text
mentions, and the result type, `Answer`, which remembers the part of the raw text that was used so
the example card can mark it.

A text that names no label, or names two different ones, is unreadable: `Answer.fields` is None and
`reason` says why. The caller scores it as wrong (it is the model's answer); it is never dropped.

No library reads Korean answer conventions (`참`/`거짓`/`중립`, `3.5점`, KLUE's `<text:TYPE>` markup), so
this is written here; matching is plain string work on the casefolded text, linear in its length.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

#: Fields of an ordinary prediction record that hold generated text instead of a prediction, in the order looked at.
TEXT_FIELDS = ("generation", "output", "response", "text")

#: The error type, slice value and confusion column of an answer no label could be read from.
UNREADABLE = "unreadable answer"

#: Prefixes models put before the answer (casefolded, matched at the start after whitespace and quotes).
PREFIXES = re.compile(
    r"(?:(?:최종\s*)?(?:정답|답변|답|대답|결과|출력|응답|예측|레이블|라벨|관계|주제|분류|유사도|점수|개체명|상태)\s*(?:은|는|:|：|-|=)\s*"
    r"|(?:the\s+)?(?:final\s+)?(?:answer|output|label|prediction|response|relation|topic|score|state|entities)(?:\s+is\s*:?|\s*[:：=])\s*"
    r"|a\s*[:：]\s*)",
    re.IGNORECASE,
)
#: Quote marks peeled off either end of an answer, alone or in pairs; brackets only as a pair around the whole answer.
QUOTE_MARKS = "\"'`“”‘’*"
PAIRS = {"「": "」", "『": "』", "《": "》", "〈": "〉", "«": "»", "(": ")", "[": "]", "{": "}", "【": "】"}
ENDING = r"(?:입니다|이다|이에요|예요|에요|이야|야|임|이며|이고|이므로|이라고|라고|으로|로|요|다)?"
WORD_CHAR = re.compile(r"[\w가-힣ㄱ-ㅎㅏ-ㅣ]")


@dataclass(frozen=True)
class Answer:
    """What a parser read from one generated text.

    `fields`: the prediction record fields read (None when the text is unreadable); `span`: (start, end) of the
    part of `text` they came from, when there is one part; `reason`: why the text is unreadable.
    """

    text: str
    fields: dict[str, Any] | None
    span: tuple[int, int] | None = None
    reason: str = ""
    #: Several parts used (NER's entities): (start, end) each.
    spans: tuple[tuple[int, int], ...] = field(default_factory=tuple)
    #: What the parser had to leave out of a readable answer (an entity not in the sentence): listed as problems.
    notes: tuple[str, ...] = ()

    @property
    def readable(self) -> bool:
        return self.fields is not None

    def used_spans(self) -> tuple[tuple[int, int], ...]:
        """Every part of `text` the parser used, in order."""
        return self.spans or ((self.span,) if self.span is not None else ())


def unreadable(text: str, reason: str) -> Answer:
    """An answer that could not be read, with the reason shown to the user."""
    return Answer(text, None, None, reason)


def strip_answer(text: str, brackets: bool = True) -> tuple[int, int]:
    """The (start, end) of the answer proper inside `text`: whitespace, quote marks, a closing period and
    `정답:`-style prefixes peeled off, repeatedly (`답변: "정답: 참"` reads as `참`); with `brackets`, also a bracket
    pair around the whole answer (`[거짓]`), never one bracket alone (`서울(한국)` keeps its parenthesis)."""
    start, end = 0, len(text)
    while True:
        before = (start, end)
        while start < end and (text[start].isspace() or text[start] in QUOTE_MARKS):
            start += 1
        while end > start and (text[end - 1].isspace() or text[end - 1] in QUOTE_MARKS or text[end - 1] in ".!。"):
            end -= 1
        if brackets and end - start >= 2 and PAIRS.get(text[start]) == text[end - 1] and _closes_at_end(text, start, end):
            start, end = start + 1, end - 1
        found = PREFIXES.match(text, start, end)
        if found and found.end() > start:
            start = found.end()
        if (start, end) == before:
            return start, end


def _closes_at_end(text: str, start: int, end: int) -> bool:
    """Whether the bracket at `start` is closed by the one at `end - 1` (not `(가) 또는 (나)`)."""
    depth = 0
    for k in range(start, end):
        if text[k] == text[start]:
            depth += 1
        elif text[k] == text[end - 1]:
            depth -= 1
            if depth == 0:
                return k == end - 1
    return False


def first_line(text: str, start: int, end: int) -> int:
    """The end of the first line of text[start:end] (an explanation usually follows on the next lines)."""
    newline = text.find("\n", start, end)
    return end if newline < 0 else newline


SENTENCE_END = re.compile(r"[.!?。]\s|\n|[.!?。]$")


def first_sentence(text: str, start: int, end: int) -> int:
    """The end of the first sentence of text[start:end]: an explanation follows after a sentence end or a newline."""
    found = SENTENCE_END.search(text, start, end)
    return end if found is None else found.start()


def casefold_same_length(text: str) -> str:
    """`text` casefolded when that keeps every offset (it does for Hangul and ASCII); else lower-cased per character."""
    folded = text.casefold()
    return folded if len(folded) == len(text) else "".join(c.lower() if len(c.lower()) == 1 else c for c in text)


class Vocabulary:
    """The written forms of a task's labels: form (any case) -> label. Finds the labels a text names.

    A form is found where it stands as a word: not inside a longer word, optionally followed by a copula
    (`참입니다`) but not by another syllable (`참고`). Longer forms win over the shorter forms inside them.
    """

    def __init__(self, forms: Mapping[str, str], exact_only: Mapping[str, str] | None = None) -> None:
        self.forms = {casefold_same_length(form.strip()): label for form, label in forms.items() if form.strip()}
        #: Forms read only as the whole answer (YNAT's `IT`, which is also an English word inside explanations).
        self.whole = {**self.forms, **{casefold_same_length(f.strip()): label for f, label in (exact_only or {}).items()}}
        alternatives = "|".join(re.escape(f) for f in sorted(self.forms, key=len, reverse=True))
        self.pattern = re.compile(rf"(?<![\w가-힣])({alternatives}){ENDING}(?![\w가-힣])")

    def exact(self, text: str) -> str | None:
        """The label `text` is, as a whole (after its copula is stripped), or None."""
        folded = casefold_same_length(text.strip())
        if folded in self.whole:
            return self.whole[folded]
        found = self.pattern.fullmatch(folded)
        return self.forms[found.group(1)] if found else None

    def mentions(self, text: str, start: int = 0, end: int | None = None) -> list[tuple[str, int, int]]:
        """(label, start, end) of every form named in text[start:end], in order."""
        folded = casefold_same_length(text)
        return [(self.forms[m.group(1)], m.start(1), m.end(1)) for m in self.pattern.finditer(folded, start, len(text) if end is None else end)]


def read_label(text: str, vocabulary: Vocabulary, n_labels: int, field_name: str = "label") -> Answer:
    """A single label from a generated text: a label form or a Hugging Face id as the whole answer, else the one
    label the answer's first line starts with or names; no label, or two, is unreadable."""
    start, end = strip_answer(text)
    if start >= end:
        return unreadable(text, "the answer is empty")
    core = text[start:end]
    label = vocabulary.exact(core)
    if label is not None:
        return Answer(text, {field_name: label}, (start, end))
    if core.isdigit() and int(core) < n_labels:
        return Answer(text, {field_name: int(core)}, (start, end))
    sentence_end = first_sentence(text, start, end)
    found = vocabulary.mentions(text, start, sentence_end)
    if not found:  # the first sentence names none: the answer may come later (`설명: ... 따라서 거짓`)
        found = vocabulary.mentions(text, start, end)
    named = distinct(label for label, _, _ in found)
    if not named:
        return unreadable(text, "names no label")
    if len(named) > 1:
        return unreadable(text, f"names {len(named)} labels: {', '.join(named[:4])}")
    return Answer(text, {field_name: named[0]}, (found[0][1], found[0][2]))


def distinct(values: Iterable[str]) -> list[str]:
    """The values in first-seen order, each once."""
    return list(dict.fromkeys(values))


NUMBER = re.compile(r"(?<![\d.])(\d+(?:\.\d+)?)")
#: A scale named beside the score (`5점 만점에`, `/5`, `out of 5`, `(0-5)`): not a score itself.
SCALE = re.compile(r"(?:\d+(?:\.\d+)?\s*점\s*만점(?:에서|에|중|으로)?|/\s*5(?:\.0+)?(?!\d)|out\s+of\s+5(?:\.0+)?"
                   r"|\(?0\s*[-~]\s*5\s*\)?(?:점)?\s*(?:사이|척도|중)?)", re.IGNORECASE)


def first_sentence_of_numbers(text: str, start: int, end: int) -> int:
    """The end of the first sentence, where a period followed by a digit (`3.5`) is a decimal point."""
    found = re.compile(r"[.!?。](?!\d)\s*|\n").search(text, start, end)
    return end if found is None else found.start()


def read_number(text: str, field_name: str = "score") -> Answer:
    """A number from a generated text (`3.5`, `3.5점`, `유사도: 4점 (5점 만점)`): the number the answer starts with,
    else its only number; a scale (`5점 만점`, `/5`) is not a score. Several numbers are unreadable."""
    start, end = strip_answer(text)
    if start >= end:
        return unreadable(text, "the answer is empty")
    scales = [(m.start(), m.end()) for m in SCALE.finditer(text, start, end)]
    numbers = [m for m in NUMBER.finditer(text, start, end) if not any(a <= m.start() < b for a, b in scales)]
    if not numbers:
        return unreadable(text, "names no number")
    sentence_end = first_sentence_of_numbers(text, start, end)
    leading = [m for m in numbers if m.start() < sentence_end] or numbers
    values = distinct(m.group(1) for m in leading)
    if len({float(v) for v in values}) > 1:
        return unreadable(text, f"names {len(values)} numbers: {', '.join(values[:4])}")
    chosen = leading[0]
    return Answer(text, {field_name: float(chosen.group(1))}, (chosen.start(1), chosen.end(1)))


#: Answers that say "nothing" (no entities, an empty state), casefolded.
NOTHING_FORMS = frozenset(("없음", "없습니다", "none", "no entities", "no entity", "empty", "[]", "{}", "(없음)", "해당 없음", "해당없음", "n/a"))


def json_in(text: str, start: int = 0, end: int | None = None) -> tuple[Any, int, int] | None:
    """The first JSON list or object inside text[start:end] (a model often wraps it in prose or a ``` fence), with
    its (start, end); None when there is none."""
    end = len(text) if end is None else end
    decoder = json.JSONDecoder()
    k = start
    while k < end:
        k = min((p for p in (text.find("[", k, end), text.find("{", k, end)) if p >= 0), default=-1)
        if k < 0:
            return None
        try:
            value, stop = decoder.raw_decode(text[:end], k)
        except (ValueError, RecursionError):
            k += 1
            continue
        return value, k, stop
    return None


def align(sentence: str, pieces: list[str]) -> list[int | None]:
    """Where each piece of text occurs in `sentence`: the first occurrence at or after the previous piece's end, else
    the first one not already taken (lists are not always in sentence order); None when it does not occur."""
    out: list[int | None] = []
    taken: list[tuple[int, int]] = []
    cursor = 0
    for piece in pieces:
        at = sentence.find(piece, cursor) if piece else -1
        if at < 0 and piece:
            at = next((p for p in _occurrences(sentence, piece) if not any(a < p + len(piece) and p < b for a, b in taken)), -1)
        if at < 0:
            out.append(None)
            continue
        out.append(at)
        taken.append((at, at + len(piece)))
        cursor = at + len(piece)
    return out


def _occurrences(text: str, piece: str) -> Iterable[int]:
    at = text.find(piece)
    while at >= 0:
        yield at
        at = text.find(piece, at + 1)
