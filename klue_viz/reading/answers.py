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

from klue_viz.core.lazy import lazy_pattern

#: Fields of an ordinary prediction record that hold generated text instead of a prediction, in the order looked at.
TEXT_FIELDS = ("generation", "output", "response", "text")

#: The error type, slice value and confusion column of an answer no label could be read from.
UNREADABLE = "unreadable answer"

#: Prefixes models put before the answer (casefolded, matched at the start after whitespace and quotes).
PREFIXES = lazy_pattern(
    r"(?:(?:최종\s*)?(?:정답|답변|답|대답|결과|출력|응답|예측|레이블|라벨|관계|주제|분류|유사도|점수|개체명|상태)\s*(?:\*\*)?\s*(?:은|는|:|：|-|=|\|)\s*"
    r"|(?:the\s+)?(?:final\s+)?(?:answer|output|label|prediction|response|relation|topic|score|state|entities)(?:\*\*)?"
    r"(?:\s+is\s*:?|\s*[:：=|])\s*"
    r"|a\s*[:：]\s*)",
    re.IGNORECASE,
)
#: Quote marks peeled off either end of an answer, alone or in pairs; brackets only as a pair around the whole answer.
QUOTE_MARKS = "\"'`“”‘’*"
#: At most this many bracket pairs are peeled off one answer: each peel checks the whole answer (`_closes_at_end`), so a
#: text of nested brackets costs at most this many passes, never one per bracket.
MAX_BRACKET_PAIRS = 8
PAIRS = {"「": "」", "『": "』", "《": "》", "〈": "〉", "«": "»", "(": ")", "[": "]", "{": "}", "【": "】"}
#: What may follow a label form and leave it the word named (docs/answer-parsers.md, rule 2): copulas and endings
#: (`거짓입니다`, `중립인 것 같다`, `중립일 것`), the verbs made of it (`모순됩니다`, `함의합니다`, `모순됨`), its adjective
#: (`모순적`, `정치적인`) and the particles that let a reader see it negated (`모순이 아닙니다`, `참은 아니다`) or
#: coordinated (`함의도 모순도 아닌`, `정치와 경제`, `경제나 사회`).
ENDINGS = ("입니다", "이다", "이에요", "예요", "에요", "이야", "야", "임", "이며", "이고", "이므로", "이라고", "라고", "이라는", "라는",
           "이라", "라", "으로", "로", "으로는", "로는", "요", "다", "인", "일", "이죠", "죠",
           "됩니다", "된다", "됨", "돼요", "되며", "되고", "되므로", "되는", "합니다", "한다", "함", "해요", "하며", "하고", "하므로", "하는",
           "적", "적이다", "적입니다", "적임", "적인", "적이며", "적이고",
           "이", "가", "은", "는", "도", "을", "를", "과", "와", "이나", "나", "에", "면")
#: Endings that ask (`참인가요?`): a form asked about is not the answer (`함의? 아니요, 모순입니다.`).
QUESTION_ENDINGS = ("인가요", "인가", "일까요", "일까", "입니까", "이니")
ENDING = "(?:" + "|".join(sorted(ENDINGS + QUESTION_ENDINGS, key=len, reverse=True)) + ")?"


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
    peeled = 0
    while True:
        before = (start, end)
        while start < end and (text[start].isspace() or text[start] in QUOTE_MARKS):
            start += 1
        while end > start and (text[end - 1].isspace() or text[end - 1] in QUOTE_MARKS or text[end - 1] in ".!。"):
            end -= 1
        if (brackets and peeled < MAX_BRACKET_PAIRS and end - start >= 2 and PAIRS.get(text[start]) == text[end - 1]
                and _closes_at_end(text, start, end)):
            start, end = start + 1, end - 1
            peeled += 1
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


def casefold_same_length(text: str) -> str:
    """`text` casefolded when that keeps every offset (it does for Hangul and ASCII); else lower-cased per character."""
    folded = text.casefold()
    return folded if len(folded) == len(text) else "".join(c.lower() if len(c.lower()) == 1 else c for c in text)


#: Words that answer a question with yes or no (`참인가요? 네.`, `Is it entailment? No.`): casefolded -> yes.
REPLIES = {"예": True, "네": True, "yes": True, "아니요": False, "아니오": False, "아뇨": False, "no": False, "아닙니다": False,
           "아니다": False, "아니에요": False}
REPLY = lazy_pattern(r"(?<![\w가-힣])(" + "|".join(sorted(map(re.escape, REPLIES), key=len, reverse=True)) + r")(?![\w가-힣])")
#: After a form (and its particle): it is negated (`모순 아님`, `모순이 아닙니다`, `경제 기사는 아닙니다`, `참이라고 할 수 없다`).
#: A few nouns may stand between the form and the negation (`세계 뉴스가 아니라`).
NEGATED_AFTER = lazy_pattern(r"\s*(?:(?:뉴스|기사|분야|관계|주제|카테고리|관련|쪽|내용|것|문제|면)\s*(?:이라고|라고|이|가|은|는|도|로|으로)?\s*)?"
                           r"(?:아니(?!면)|아님|아닌|아닙|않|(?:할|볼|말할|하기|보기)\s*(?:는\s*)?(?:수\s*)?(?:는\s*)?(?:없|어렵))")
#: After a list of forms: they are the options offered, not the answer (`참/거짓/중립 중 거짓입니다`).
OPTIONS_AFTER = lazy_pattern(r"\s*(?:중에서|중에|중|가운데)(?![\w가-힣])")
#: What may stand between two options of a list (`참/거짓`, `참, 거짓`, `참 또는 거짓`).
OPTION_SEPARATOR = lazy_pattern(r"\s*(?:[/,·|]|또는|혹은|or)\s*")
#: Before a form, in English: it is negated (`not entailment`, `isn't entailed`, `neither ... nor`, `no contradiction`).
NEGATED_BEFORE = lazy_pattern(r"(?:\bnot|n't|\bno|\bneither|\bnor|\bnever|\bnon-?)\s*"
                            r"(?:(?:a|an|the|be|been|being|really|necessarily|quite|exactly|entirely|considered|classified\s+as|"
                            r"labell?ed(?:\s+as)?|about|in|of|case\s+of)\s+)*$")
#: How far before a form NEGATED_BEFORE looks (characters): a negation further away is another clause's.
NEGATION_REACH = 48
#: Where a sentence ends: `.`, `!`, `?` or `。` before a space or the end, `;` is no end (`not neutral; it is ...`).
SENTENCES = lazy_pattern(r"[.!?。](?=\s|$)|\n")
#: Markdown at the start of a line: headings, quotes, bullets, numbered items, a table's cells.
MARKDOWN_LEAD = lazy_pattern(r"(?:#{1,6}\s*|>\s*|[-*+•]\s+|\d{1,3}[.)]\s+|\|\s*)+")


@dataclass(frozen=True)
class Mention:
    """A label form found in a text: where, and how it is used (`positive`, `negated`, `question`, or a `yes`/`no` reply;
    a reply's label is the form's own when the vocabulary has one, as NLI's `예`/`아니요`)."""

    label: str | None
    start: int
    end: int
    kind: str


class Vocabulary:
    """The written forms of a task's labels: form (any case) -> label. Finds the labels a text names, and how.

    A form is found where it stands as a word: not inside a longer word, optionally followed by an ending or a
    particle (`참입니다`, `모순이`) but not by another syllable (`참고`). Longer forms win over the shorter forms inside
    them. `not_words`: words that hold a form with an ending but name no label (NLI's `반대로`, "on the contrary").
    """

    def __init__(self, forms: Mapping[str, str], exact_only: Mapping[str, str] | None = None, not_words: Iterable[str] = ()) -> None:
        self.forms = {casefold_same_length(form.strip()): label for form, label in forms.items() if form.strip()}
        #: Forms read only as the whole answer (YNAT's `IT`, which is also an English word inside explanations).
        self.whole = {**self.forms, **{casefold_same_length(f.strip()): label for f, label in (exact_only or {}).items()}}
        self.not_words = frozenset(casefold_same_length(w) for w in not_words)
        alternatives = "|".join(re.escape(f) for f in sorted(self.forms, key=len, reverse=True))
        self.pattern = lazy_pattern(rf"(?<![\w가-힣])({alternatives})({ENDING})(?![\w가-힣])")

    def exact(self, text: str) -> str | None:
        """The label `text` is, as a whole (after its ending is stripped; not asked about), or None."""
        folded = casefold_same_length(text.strip())
        if folded in self.whole:
            return self.whole[folded]
        found = self.pattern.fullmatch(folded)
        if found is None or found.group(2) in QUESTION_ENDINGS or folded in self.not_words:
            return None
        return self.forms[found.group(1)]

    def uses(self, text: str, start: int = 0, end: int | None = None, folded: str | None = None) -> list[Mention]:
        """Every form and reply word in text[start:end], in order, each with how it is used; `folded`: the text already
        casefolded (`casefold_same_length`), so that reading a text sentence by sentence folds it once."""
        end = len(text) if end is None else end
        folded = casefold_same_length(text) if folded is None else folded
        found: list[Mention] = []
        for match in self.pattern.finditer(folded, start, end):
            if match.group(0) in self.not_words:
                continue
            form, a, b = match.group(1), match.start(1), match.end(1)
            reply = REPLIES.get(form)
            after = match.end()
            if reply is not None and match.group(2):  # `예를 들어` (for example), `네가` (you): no reply
                continue
            if reply is not None:
                kind = "yes" if reply else "no"
            elif match.group(2) in QUESTION_ENDINGS or folded.startswith(("?", "？"), _skip_spaces(folded, after, end)):
                kind = "question"
            elif NEGATED_AFTER.match(folded, after, end) or NEGATED_BEFORE.search(folded, max(start, a - NEGATION_REACH), a):
                kind = "negated"
            else:
                kind = "positive"
            found.append(Mention(self.forms[form], a, b, kind))
        covered = {at for m in found for at in range(m.start, m.end)}
        for match in REPLY.finditer(folded, start, end):  # reply words that are no label form of this vocabulary
            if match.start(1) not in covered:
                found.append(Mention(None, match.start(1), match.end(1), "yes" if REPLIES[match.group(1)] else "no"))
        found.sort(key=lambda m: m.start)
        return _offered_options(folded, _coordinated_negations(folded, found), end)


def _skip_spaces(text: str, at: int, end: int) -> int:
    while at < end and text[at].isspace():
        at += 1
    return at


def _coordinated_negations(folded: str, found: list[Mention]) -> list[Mention]:
    """`함의도 모순도 아닌`: a form with `도` followed (after spaces or a comma) by a negated form with `도` is negated too."""
    out = list(found)
    for k in range(len(out) - 2, -1, -1):
        this, following = out[k], out[k + 1]
        between = folded[this.end:following.start]
        if (this.kind == "positive" and following.kind == "negated" and between.startswith("도")
                and folded.startswith("도", following.end) and not between[1:].strip(" ,")):
            out[k] = Mention(this.label, this.start, this.end, "negated")
    return out


def _offered_options(folded: str, found: list[Mention], end: int) -> list[Mention]:
    """`참/거짓/중립 중 거짓입니다`: forms listed (joined by `/`, `,`, `또는`...) and followed by `중` (among) are the options
    the prompt offered, not the answer: they are dropped."""
    out: list[Mention] = []
    k = 0
    while k < len(found):
        run = k
        while run + 1 < len(found) and OPTION_SEPARATOR.fullmatch(folded, _ending_end(folded, found[run]), found[run + 1].start):
            run += 1
        if run > k and OPTIONS_AFTER.match(folded, _ending_end(folded, found[run]), end):
            k = run + 1
            continue
        out.extend(found[k:run + 1])
        k = run + 1
    return out


def _ending_end(folded: str, mention: Mention) -> int:
    """Where a form's word ends (after its ending): the next space or separator."""
    at = mention.end
    while at < len(folded) and (folded[at].isalnum() or "가" <= folded[at] <= "힣"):
        at += 1
    return at


def read_label(text: str, vocabulary: Vocabulary, n_labels: int, field_name: str = "label", labels: Iterable[str] = ()) -> Answer:
    """A single label from a generated text (docs/answer-parsers.md, rule 4): a label form or a Hugging Face id as the
    whole answer; else the answer lines (`정답: ...`, or a line that is a label form) when the text has several lines,
    which must agree; else the first sentence that names a label, read with its negations, questions and replies.
    No label, two, or only what the answer is not (when that leaves more than one of `labels`) is unreadable."""
    start, end = strip_answer(text)
    if start >= end:
        return unreadable(text, "the answer is empty")
    core = text[start:end]
    label = vocabulary.exact(core)
    if label is not None:
        return Answer(text, {field_name: label}, (start, end))
    if core.isascii() and core.isdigit() and int(core) < n_labels:  # `①` is a digit to str.isdigit, not to int
        return Answer(text, {field_name: int(core)}, (start, end))
    every = tuple(labels) or tuple(dict.fromkeys(vocabulary.forms.values()))
    folded = casefold_same_length(text)
    if "\n" in core:
        answers = [_read_span(text, folded, a, b, vocabulary, every) for a, b in _answer_lines(text, start, end, vocabulary)]
        read = [found for found in answers if isinstance(found, tuple)]
        named = distinct(found[0] for found in read)
        if len(named) > 1:
            return unreadable(text, f"its answer lines name {len(named)} labels: {', '.join(named[:4])}")
        if named:
            return Answer(text, {field_name: named[0]}, read[0][1])
    found = _read_span(text, folded, start, end, vocabulary, every)
    if isinstance(found, str):
        return unreadable(text, found)
    return Answer(text, {field_name: found[0]}, found[1])


def _answer_lines(text: str, start: int, end: int, vocabulary: Vocabulary) -> list[tuple[int, int]]:
    """The lines of text[start:end] that give an answer: one starting with an answer prefix (`정답:`, `Answer:`), or one
    that is a label form as a whole (`중립`, `**Neutral**`); each as the (start, end) of what follows the prefix."""
    out = []
    at = start
    while at < end:
        stop = text.find("\n", at, end)
        stop = end if stop < 0 else stop
        lead = MARKDOWN_LEAD.match(text, at, stop)
        line_start = lead.end() if lead else at
        line_end = stop
        while line_end > line_start and text[line_end - 1] in "| \t":
            line_end -= 1
        a, b = strip_answer(text[line_start:line_end])
        inner = text[line_start:line_end]
        prefixed = PREFIXES.match(inner.lstrip(QUOTE_MARKS + " \t"))
        if a < b and (prefixed or vocabulary.exact(inner[a:b]) is not None):
            out.append((line_start + a, line_start + b))
        at = stop + 1
    return out


def _read_span(text: str, folded: str, start: int, end: int, vocabulary: Vocabulary,
               every: tuple[str, ...]) -> tuple[str, tuple[int, int]] | str:
    """(label, span used) read from text[start:end] (`folded`: the text casefolded) sentence by sentence, or why it
    cannot be read.

    The first sentence that names a label decides: its positive forms (one label: read; two: unreadable), else its
    negated forms (the one label they leave, if one). A sentence that only asks (`함의?`) or only replies (`아닙니다.`)
    carries over: a yes affirms the label asked about, a no negates it; a reply that is itself a label form of the task
    (NLI's `예`, `아니요`) is read as that label when nothing was asked and no other form is named."""
    asked: Mention | None = None
    negated: dict[str, Mention] = {}
    cursor = start
    while cursor < end:
        found = SENTENCES.search(text, cursor, end)
        stop = end if found is None else found.end()
        uses = vocabulary.uses(text, cursor, stop, folded)
        cursor = stop
        positive = [m for m in uses if m.kind == "positive"]
        denied = [m for m in uses if m.kind == "negated"]
        replies = [m for m in uses if m.kind in ("yes", "no")]
        for m in uses:
            if m.kind == "question":
                asked = m
        if positive:
            named = distinct(m.label for m in positive if m.label is not None)
            if len(named) > 1:
                return f"names {len(named)} labels: {', '.join(named[:4])}"
            return named[0], (positive[0].start, positive[0].end)
        if denied:
            for m in denied:
                negated.setdefault(m.label or "", m)
            break
        if replies:
            reply = replies[0]
            if asked is not None and asked.label is not None:
                if reply.kind == "yes":
                    return asked.label, (asked.start, asked.end)
                negated.setdefault(asked.label, asked)
                asked = None
                continue
            if reply.label is not None:
                return reply.label, (reply.start, reply.end)
    if negated:
        left = [label for label in every if label not in negated]
        if len(left) == 1:
            first = next(iter(negated.values()))
            return left[0], (first.start, first.end)
        return f"names no label (only what it is not: {', '.join(list(negated)[:4])})"
    return "names no label"


def distinct(values: Iterable[str]) -> list[str]:
    """The values in first-seen order, each once."""
    return list(dict.fromkeys(values))


NUMBER = lazy_pattern(r"(?<![\d.])(\d+(?:\.\d+)?)")
#: A scale named beside the score (`5점 만점에`, `/5`, `out of 5`, `(0-5)`): not a score itself.
SCALE = lazy_pattern(r"(?:\d+(?:\.\d+)?\s*점\s*만점(?:에서|에|중|으로)?|/\s*5(?:\.0+)?(?!\d)|out\s+of\s+5(?:\.0+)?"
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
