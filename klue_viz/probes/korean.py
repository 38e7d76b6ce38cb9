"""Korean edits that keep a sentence's meaning (or negate it), made with the kiwipiepy analyzer.

Each function takes a text (and the spans an edit must not cut) and returns the `Edit`s of one perturbation, or raises
`Unmade` saying why it cannot be made validly (no name of the right kind, an analysis the analyzer is unsure of, an
edit that would cut a span): the suite maker counts those and writes nothing half-right.

The analyzer decides every morphological question: which morphemes a word has (`Kiwi.tokenize`) and which allomorph a
particle or an ending takes after a new stem (`Kiwi.join`: 박지성+이 -> 박지성이, 서울+으로 -> 서울로, 먹+ᆸ니다 -> 먹습니다).
Every rewritten word is checked the same way first: joining its own morphemes must give back the word as written,
else the analysis is not trusted and the edit is not made. What is hand-written here is only what no analyzer holds:
the 두벌식 keyboard rows (the typo test's neighbouring keys), the syllable arithmetic of Unicode Hangul, the Korean
names of the 26 Latin letters (the name-script test's readings), and a few rules the analyzer's join gets wrong or
cannot know (the copula's 예요 after a vowel, a particle after a bracket, which negations read naturally); which names
are near in meaning is the analyzer's embedding, with the thresholds measured in docs/probes.md.
"""

from __future__ import annotations

import functools
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from klue_viz.core.lazy import lazy_module
from klue_viz.tasks.probing import Edit, Span, Unmade

if TYPE_CHECKING:
    import kiwipiepy
else:
    kiwipiepy = lazy_module("kiwipiepy")  # loaded by the suites only: `klue-viz evaluate` never pays for the model

HANGUL_FIRST, HANGUL_LAST = 0xAC00, 0xD7A3
#: Initial consonants and vowels of a Hangul syllable, in Unicode's order.
INITIALS = "ㄱㄲㄴㄷㄸㄹㅁㅂㅃㅅㅆㅇㅈㅉㅊㅋㅌㅍㅎ"
VOWELS = "ㅏㅐㅑㅒㅓㅔㅕㅖㅗㅘㅙㅚㅛㅜㅝㅞㅟㅠㅡㅢㅣ"
#: The letter keys of the 두벌식 layout, row by row: a typo is a key's left or right neighbour of the same kind.
KEY_ROWS = ("ㅂㅈㄷㄱㅅㅛㅕㅑㅐㅔ", "ㅁㄴㅇㄹㅎㅗㅓㅏㅣ", "ㅋㅌㅊㅍㅠㅜㅡ")
#: Sentence-final endings by speech level, as the analyzer writes them (ᆫ, ᆸ are final-consonant jamo).
PLAIN, FORMAL, POLITE = "한다체", "합니다체", "해요체"
LEVEL_OF_ENDING = {"다": PLAIN, "ᆫ다": PLAIN, "는다": PLAIN, "ᆸ니다": FORMAL, "습니다": FORMAL,
                   "어요": POLITE, "아요": POLITE, "에요": POLITE, "여요": POLITE, "예요": POLITE, "이에요": POLITE}
NEXT_LEVEL = {PLAIN: FORMAL, FORMAL: POLITE, POLITE: PLAIN}
#: Morphemes that already negate a predicate: a hypothesis holding one is not negated again.
NEGATORS = {("않", "VX"), ("못", "MAG"), ("안", "MAG"), ("아니", "VCN"), ("없", "VA"), ("못하", "VX")}
PREDICATE_TAGS = ("VV", "VA", "XSV", "XSA", "VX")


@functools.lru_cache(maxsize=1)
def analyzer() -> Any:
    """The one Kiwi of the process (loading its model costs about a second and a half of CPU)."""
    return kiwipiepy.Kiwi()


@dataclass(frozen=True)
class Morpheme:
    form: str
    tag: str
    start: int
    end: int
    #: The analyzer's morpheme id (what its embedding similarity is asked by).
    id: int = -1


@functools.lru_cache(maxsize=65536)
def morphemes(text: str) -> tuple[Morpheme, ...]:
    """The analyzer's morphemes of a text with their character offsets (cached: a sentence is analysed once per test run)."""
    return tuple(Morpheme(t.form, t.tag, t.start, t.start + t.len, int(t.id)) for t in analyzer().tokenize(text))


#: How close (cosine, the analyzer's CoNg embedding) a new name must be to the one it replaces: 스페인 -> 이탈리아 0.78,
#: 서초구 -> 송파구 0.87, 류현진 -> 박찬호 0.73, but 일본 -> 삼성 0.43, 미국 -> 서초구 0.25, 국회 -> 정부 0.43. At 0.70, 16 of
#: 50 NER swaps read were still of another kind or world (판문점 -> 연평도 0.70, 개신교 -> 교황청 0.71, 메콩강 ->
#: 캘리포니아주 0.74), 12 of those 16 under 0.73 (docs/probes-validity/).
SIMILAR_ENOUGH = 0.73
#: Among how many of the nearest fitting names the replacement is drawn.
DRAWN_FROM = 5
#: The analyzer's morpheme ids run in order of how often its training text holds them (것 109, 미국 263, 부산 1,499,
#: 서초구 8,297, 쿠팡 32,219, 송중기 68,638), and the embedding of a rare one is near everything: the median cosine of a
#: morpheme to its nearest other is 0.71 for ids under 2,500, 0.81 at 15,000, 0.90 at 30,000 and 0.97 at 70,000
#: (아이유's nearest are 미세먼지 and 지코 at 0.92). A name past this id has no neighbours worth the name, so it is
#: neither replaced by meaning nor drawn as a replacement. At 20,000 the readings still found such names drawn for
#: anything (효진 18,517 for 베네치아 and 파주시, 유승준 19,987 for a foreign minister; docs/probes-validity/).
KNOWN_WELL = 15000
#: How many of the old name's nearest morphemes, over the analyzer's whole vocabulary (`Kiwi.most_similar_morphemes`,
#: 3 ms a name), the new name must be among. A cosine says little in a crowded region: 카이로 is at 0.732 of 레바논 but
#: its 194th nearest (a city for a country's team), 서강대 past the 300th of 경향신문 (a university reporting the news),
#: while the natural swaps read at seeds 17 and 19 were all within the first 90 (류현진 -> 박찬호 45th, 요르단 ->
#: 쿠웨이트 90th) but for 철원 -> 여주 (201st), 삼성동 -> 서초구 and 잭슨 <-> 존스 (past the 300th); 여주, which the data
#: also writes for 여자 주인공 (the heroine), has neither 고양 nor 철원 in its first 300.
NEIGHBOURHOOD = 100
#: The tags a whole name may have to the analyzer to be compared by its embedding: a proper noun (미국, 손흥민, 서초구)
#: or a common noun that names an institution (국회, 검찰); old and new must have the same one.
NAME_TAGS = ("NNP", "NNG")


@functools.lru_cache(maxsize=65536)
def name_morpheme(name: str) -> Morpheme | None:
    """The analyzer's morpheme of a name it reads as one well-known noun of its dictionary (미국, 서초구, 국회), whose
    embedding says what is near it in meaning; None for a name it splits (제니퍼 틸리, 강릉 아산병원), does not know
    (갓하균, 굽네치킨: read as the unknown noun, whose one embedding every unknown word shares), or saw too rarely to
    place (id past KNOWN_WELL)."""
    found = morphemes(name)
    if len(found) != 1 or found[0].form != name or found[0].tag not in NAME_TAGS or not 0 <= found[0].id < KNOWN_WELL:
        return None
    if analyzer().morpheme(found[0].id).form != name:  # the unknown-word morphemes have an empty form
        return None
    return found[0]


def similarity(first: Morpheme, second: Morpheme) -> float:
    """The cosine of two morphemes in the analyzer's embedding."""
    return float(analyzer().morpheme_similarity(first.id, second.id))


def join(parts: Sequence[tuple[str, str]]) -> str:
    """Morphemes joined into text with the allomorphs the analyzer chooses."""
    return str(analyzer().join(list(parts)))


def final_consonant(char: str) -> int | None:
    """The final consonant (받침) index of a Hangul syllable: 0 none, 8 ㄹ, ...; None for any other character."""
    code = ord(char)
    return (code - HANGUL_FIRST) % 28 if HANGUL_FIRST <= code <= HANGUL_LAST else None


def is_hangul(text: str) -> bool:
    return bool(text) and all(final_consonant(c) is not None for c in text)


def is_name(text: str) -> bool:
    """Hangul words of two syllables or more, single spaces between them (한국 교통대, 명동 쇼핑 거리): a name to swap."""
    words = text.split(" ")
    return len(text) >= 2 and all(is_hangul(w) for w in words)


def eojeol_end(text: str, position: int) -> int:
    """Where the space-separated word that holds `position` ends."""
    found = text.find(" ", position)
    return len(text) if found < 0 else found


def eojeol_start(text: str, position: int) -> int:
    return text.rfind(" ", 0, position) + 1


def _joined_word(text: str, start: int, end: int, parts: list[tuple[str, str]]) -> None:
    """Raise Unmade unless the analyzer's morphemes join back into the word as written (else its analysis is unsure)."""
    if join(parts) != text[start:end]:
        raise Unmade("analysis unsure: the morphemes do not join back into the word")


def _outside(spans: Sequence[Span], field: str, start: int, end: int) -> bool:
    """Whether start..end touches no span of `field` (a span's edge counts as touching)."""
    return all(span.field != field or end < span.start or start > span.end for span in spans)


# ---- name-swap -------------------------------------------------------------------------------------

#: The brackets a name may be written in right before a particle: 아자르(첼시)가, where 가 goes with 아자르.
OPENING_OF = {")": "(", "]": "[", "}": "{", "）": "（"}
CLOSING_BRACKETS = tuple(OPENING_OF)


def name_edits(field: str, text: str, start: int, end: int, new_name: str, spans: Sequence[Span]) -> list[Edit]:
    """The edits that write `new_name` for the name at start..end, with every particle and copula attached to it
    re-chosen by the analyzer (the rest of the word re-joined after the new name): the name itself, then the rest of
    its word, as two edits so that the name's span becomes the new name and nothing else."""
    if text[end:end + 1] in CLOSING_BRACKETS and text.rfind(text[end], 0, start) < text.rfind(OPENING_OF[text[end]], 0, start):
        # 아자르(첼시)가: a particle after the bracket agrees with the word before it, not with the name inside
        return [Edit(field, start, end, text[start:end], new_name)]
    word_end = eojeol_end(text, end)
    found = morphemes(text)
    rest = [m for m in found if end <= m.start < word_end]
    if any(m.start < end < m.end or m.start < start < m.end for m in found):
        raise Unmade("analysis unsure: the analyzer does not split the word where the name starts or ends")
    if rest and rest[0].start != end:
        raise Unmade("analysis unsure: the morphemes after the name do not start where it ends")
    if any(span.field == field and end < span.start < word_end for span in spans):
        raise Unmade("another span in the name's word")
    parts = [(m.form, m.tag) for m in rest]
    _joined_word(text, start, word_end, [(text[start:end], "NNP"), *parts])
    if parts[:1] == [("이", "JKS")] and len(parts) > 1 and parts[1][1].startswith("J"):
        parts[0] = ("이", "XSN")  # no particle follows a subject particle: 초원이는 is the name's suffix -이, then 는
    if parts == [("이", "XSN")]:
        parts = [("이", "JKS")]  # 지영이 ending its word is the subject particle the analyzer took for the suffix: 희수가
    elif parts[:1] == [("이", "XSN")] and final_consonant(new_name[-1]) == 0:
        parts = parts[1:]  # the suffix -이 of a name ending in a consonant (승연이가) is not written after a vowel (승연이가 -> 차두리가)
    rewritten = join([(new_name, "NNP"), *parts])
    if not rewritten.startswith(new_name):
        raise Unmade("analysis unsure: the re-joined word does not start with the new name")
    again = [m.tag for m in morphemes(rewritten) if m.start >= len(new_name)]
    if again != [tag for _, tag in parts]:
        raise Unmade("analysis unsure: the re-chosen particles read as something else after the new name")
    return [Edit(field, start, end, text[start:end], new_name), Edit(field, end, word_end, text[end:word_end], rewritten[len(new_name):])]


def head_noun_after(text: str, end: int) -> str | None:
    """The noun that binds a name written without a particle to the word after it: a common noun that starts that word
    (케리 장관, 김정숙 여사, 구글 카드보드), or the bound or common noun after a number starting it (헨리 7세, 리처드 3세:
    the regnal number, returned as 세). It is the title or thing the name is said of, which a new name must also be
    said of in the data (유승준 장관 is no minister, 제인 7세 no king). None when a particle follows the name or the next
    word starts otherwise."""
    if text[end:end + 1] != " ":
        return None
    found = morphemes(text[end + 1:eojeol_end(text, end + 1)])
    if found and found[0].tag == "SN" and found[0].start == 0 and len(found) > 1 and found[1].start == found[0].end:
        found = found[1:]  # 7세: the noun after the number
        return found[0].form if found[0].tag in ("NNB", "NNG") else None
    return found[0].form if found and found[0].tag == "NNG" and found[0].start == 0 else None


def name_part_beside(text: str, start: int, end: int) -> tuple[int, int] | None:
    """Where the proper noun that stands right beside a bare name is (its start and end), or None: the word after the
    name (the name written without a particle) starting with a proper noun (제인 윌킨슨: a given name before its
    surname), or the word before it ending with one (에덴 아자르). Together they are one name, and a new name in one
    half of it belongs to neither (헨리 윌킨슨 for an actress; docs/probes-validity/nli-name-swap.tsv)."""
    found = morphemes(text)
    if text[end:end + 1] == " ":
        after = next((m for m in found if m.start == end + 1), None)
        if after is not None and after.tag == "NNP":
            return after.start, after.end
    if start > 1 and text[start - 1] == " ":
        before = next((m for m in found if m.end == start - 1), None)
        if before is not None and before.tag == "NNP":
            return before.start, before.end
    return None


#: How much less likely (natural log, summed over the texts a swap rewrites) the analyzer's language model may find the
#: sentences with the new name than with the old, beyond how much less likely it finds the new name on its own. Read on
#: the 97 name-swap cases of seed 17 (docs/probes-validity/ner-name-swap.tsv, nli-name-swap.tsv), a fit under -4 held 4
#: of the 9 swaps read as unnatural (제인 7세 -26, 이탈리아's defeat with 도이치은행 -8, 헨리와 해리 왕자 -4.4, 헨리
#: 윌킨슨 -4.2) and 11 of the 88 natural ones (스티븐 3세 -22, 케네디 -> 스티븐 -8): the model has seen which names
#: stand before 7세, 왕자, 은행, and the cost is a sixth of the swaps.
FITS_CONTEXT = -4.0


@functools.lru_cache(maxsize=65536)
def likelihood(text: str) -> float:
    """The log-probability of the analyzer's best analysis of a text (its language model's score)."""
    return float(analyzer().analyze(text)[0][1])


def context_fit(before: str, after: str, old: str, new: str) -> float:
    """How much more likely the analyzer's language model finds `after` (a text with `new` written for `old`) than
    `before`, less what the names alone explain (each occurrence of old replaced counts the names' own difference):
    negative where the rest of the sentence speaks for the old name (헨리 7세, a ferry's port), about 0 where either
    name fits."""
    return likelihood(after) - likelihood(before) - before.count(old) * (likelihood(new) - likelihood(old))


class NamePool:
    """Names split by whether their last syllable has a final consonant, so the opposite kind is found at once."""

    def __init__(self, names: Sequence[str]) -> None:
        self.with_final = [n for n in names if final_consonant(n[-1]) not in (None, 0)]
        self.without_final = [n for n in names if final_consonant(n[-1]) == 0]
        self._known: tuple[list[tuple[str, Morpheme]], list[tuple[str, Morpheme]]] | None = None
        self._nearest: dict[str, list[str]] = {}

    def nearest(self, name: str) -> list[str]:
        """The names of the pool with the opposite final consonant that the analyzer's embedding puts near `name`
        (cosine at least SIMILAR_ENOUGH, the same tag, both well known to it), nearest first: a
        country for a country (스페인 -> 이탈리아), a city for a city (부산 -> 대구), a pitcher for a pitcher (류현진 ->
        박찬호); never 미국 -> 쿠이아바 or 국회 -> 하나금융; and among the NEIGHBOURHOOD nearest morphemes of `name` in
        the analyzer's whole vocabulary (never 레바논 -> 카이로). The pool is compared pair by pair
        (`Kiwi.morpheme_similarity`, a microsecond each); the vocabulary's nearest (`most_similar_morphemes`, 3 ms) are
        asked only for a name with a candidate left."""
        if name in self._nearest:
            return self._nearest[name]
        own, final = name_morpheme(name), final_consonant(name[-1])
        found: list[str] = []
        if own is not None and final is not None:
            if self._known is None:
                self._known = (self.well_known(self.without_final), self.well_known(self.with_final))
            scored = [(score, other, m.id) for other, m in self._known[0 if final else 1]
                      if m.tag == own.tag and other != name and (score := similarity(own, m)) >= SIMILAR_ENOUGH]
            if scored:
                close = {near.id for near in analyzer().most_similar_morphemes(own.id, top_n=NEIGHBOURHOOD)}
                scored = [found for found in scored if found[2] in close]
            found = [other for _, other, _ in sorted(scored, key=lambda found: (-found[0], found[1]))]
        self._nearest[name] = found
        return found

    @staticmethod
    def well_known(names: Sequence[str]) -> list[tuple[str, Morpheme]]:
        """The names the analyzer reads as one well-known noun, with that morpheme."""
        return [(name, found) for name, found in ((n, name_morpheme(n)) for n in names) if found is not None]

    def opposite(self, name: str) -> list[str]:
        """The names whose last syllable has a final consonant where `name`'s has none, or the other way round."""
        own = final_consonant(name[-1])
        if own is None:
            return []
        return self.without_final if own else self.with_final


# ---- name-script -----------------------------------------------------------------------------------

#: The Korean names of the 26 Latin letters, as Koreans spell an initialism letter by letter (LG -> 엘지, KBS -> 케이비에스).
#: Hand-written because no analyzer holds them: kiwipiepy tags a Latin word SL and joins a particle after it without
#: reading it (`Kiwi.join([("Samsung", "SL"), ("는", "JX")])` gives `Samsung는`). The spellings are those of 국립국어원's
#: 외래어 표기 usage for the letters (표준국어대사전's entries 에이, 비, ..., 제트), with C written 씨 as nearly all text
#: writes it (the dictionary's 시 is read back too: 엠비시 -> MBC).
LETTER_NAMES = dict(zip("ABCDEFGHIJKLMNOPQRSTUVWXYZ",
                        ("에이", "비", "씨", "디", "이", "에프", "지", "에이치", "아이", "제이", "케이", "엘", "엠", "엔", "오", "피",
                         "큐", "알", "에스", "티", "유", "브이", "더블유", "엑스", "와이", "제트")))
#: Letter names read back into letters: every name of LETTER_NAMES, and the dictionary's 시 for C.
LETTER_OF_NAME = {**{name: letter for letter, name in LETTER_NAMES.items()}, "시": "C"}
#: An initialism the test rewrites: two to five capital Latin letters, nothing else.
INITIALISM = re.compile(r"[A-Z]{2,5}")
#: A consonant letter before a vowel letter makes a syllable a reader may say as a word (FIFA 피파, NATO 나토, KAIST
#: 카이스트) rather than letter by letter; such a name is skipped (a few initialisms are skipped with them: LA, FDA).
SAID_AS_A_WORD = re.compile(r"[B-DF-HJ-NP-TV-Z][AEIOU]")
#: Why a name is not rewritten into the other script, most telling first: an example's skip is counted under the first
#: of these that one of its names met (a name that was an initialism but could not be rewritten tells more than one
#: that never was).
UNSPLIT = "analysis unsure: the analyzer does not split the word where the name starts or ends"
MISREAD = "analysis unsure: the re-chosen particles read as something else after the Hangul reading"
LONGER_WORD = "the name is part of a longer word (LG전자)"
ALSO_IN_LONGER_WORD = ("the name is also written inside a longer word of the example (YG엔터테인먼트 beside YG), which would "
                       "leave it in both scripts")
SPAN_IN_WORD = "another span in the name's word"
BRACKET_GLOSS = "a Latin gloss in brackets after the name it shortens (유엔식량계획(WFP)): written in Hangul it glosses nothing"
SAID_AS_WORD = "an initialism that may be read as a word (FIFA, NATO): its Hangul reading is not letter by letter"
AMBIGUOUS = "Hangul letter names read as more than one initialism"
NOT_CAPITALS = "a Latin name not all in capitals (Samsung, tvN)"
WITH_DIGITS = "a Latin name with digits (2NE1)"
SINGLE_LETTER = "a single Latin letter (A 씨)"
TOO_LONG = "Latin capitals of more than five letters"
MIXED_SCRIPTS = "a name mixing Latin letters with Hangul or other characters (LG전자)"
NOT_LETTER_NAMES = "a Hangul name that is not the letter names of an initialism"
NO_ORGANISATION = "no organisation or place name"
SCRIPT_REASONS = (UNSPLIT, MISREAD, LONGER_WORD, ALSO_IN_LONGER_WORD, SPAN_IN_WORD, BRACKET_GLOSS,
                  SAID_AS_WORD, AMBIGUOUS, NOT_CAPITALS, WITH_DIGITS, SINGLE_LETTER,
                  TOO_LONG, MIXED_SCRIPTS, NOT_LETTER_NAMES, NO_ORGANISATION)


def letter_readings(text: str) -> list[str]:
    """The initialisms whose letter names spell `text` exactly (엘지 -> [LG]; 엠비시 -> [MBC]); several when the
    spelling can be cut into letter names more than one way."""
    if not text:
        return [""]
    return [letter + rest for name, letter in LETTER_OF_NAME.items() if text.startswith(name)
            for rest in letter_readings(text[len(name):])]


def script_counterpart(name: str) -> tuple[str, str]:
    """The name written in the other script and its Hangul reading: an initialism of 2-5 capitals spelled in Hangul
    letter names (LG -> 엘지, reading 엘지), or a Hangul spelling of one written as the initialism (엘지 -> LG, reading
    엘지). Anything else raises Unmade with the reason (one of SCRIPT_REASONS)."""
    if INITIALISM.fullmatch(name):
        if SAID_AS_A_WORD.search(name):
            raise Unmade(SAID_AS_WORD)
        reading = "".join(LETTER_NAMES[letter] for letter in name)
        return reading, reading
    if is_hangul(name):
        found = [r for r in letter_readings(name) if INITIALISM.fullmatch(r) and not SAID_AS_A_WORD.search(r)]
        if len(found) > 1:
            raise Unmade(AMBIGUOUS)
        if not found:
            raise Unmade(NOT_LETTER_NAMES)
        return found[0], name
    if re.fullmatch(r"[A-Za-z]+", name):
        raise Unmade(NOT_CAPITALS if not name.isupper() else SINGLE_LETTER if len(name) == 1 else TOO_LONG)
    if re.fullmatch(r"[A-Za-z0-9]+", name):
        raise Unmade(WITH_DIGITS)
    raise Unmade(MIXED_SCRIPTS if re.search(r"[A-Za-z]", name) else NOT_LETTER_NAMES)


#: Morpheme tags that may follow a name inside its word for the name to stand alone: particles (J), the copula, endings
#: and punctuation. Anything else (a noun: LG전자, a Latin or a number: ISIS, LG2) makes the name part of a longer word.
ATTACHED_TAGS = ("J", "E", "VCP", "SF", "SP", "SS", "SE", "SO", "SW")


def script_edits(field: str, text: str, start: int, end: int, new_name: str, reading: str, spans: Sequence[Span]) -> list[Edit]:
    """The edits that write `new_name` (the other script) for the name at start..end, the particles after it chosen by
    the analyzer for the Hangul `reading` both forms share (엘지+가 -> LG가, 케이비에스+는 -> KBS는, 유엔+는 -> UN은): the name,
    then the rest of its word. Both forms read alike, so the particle changes only where the source's did not fit its
    reading (a writer's UN는 becomes 유엔은); the re-joined particles must read back as the same morphemes."""
    word_end = eojeol_end(text, end)
    found = morphemes(text)
    if any(m.start < end < m.end or m.start < start < m.end for m in found):
        raise Unmade(UNSPLIT)
    rest = [m for m in found if end <= m.start < word_end]
    if rest and rest[0].start != end:
        raise Unmade(UNSPLIT)
    if any(not m.tag.startswith(ATTACHED_TAGS) for m in rest):
        raise Unmade(LONGER_WORD)
    if not new_name.isascii() and text[start - 1:start] == "(" and text[end:end + 1] == ")":
        raise Unmade(BRACKET_GLOSS)
    if any(span.field == field and end < span.start < word_end for span in spans):
        raise Unmade(SPAN_IN_WORD)
    if rest and rest[0].tag.startswith("S"):
        # 유럽연합(EU)이: a particle after a bracket or a quote follows the word before it, not the name: left as written
        return [Edit(field, start, end, text[start:end], new_name)]
    parts = [(m.form, m.tag) for m in rest]
    rewritten = join([(reading, "NNP"), *parts])
    again = [m.tag for m in morphemes(rewritten) if m.start >= len(reading)]
    if not rewritten.startswith(reading) or again != [tag for _, tag in parts]:
        raise Unmade(MISREAD)
    return [Edit(field, start, end, text[start:end], new_name), Edit(field, end, word_end, text[end:word_end], rewritten[len(reading):])]


# ---- spacing ---------------------------------------------------------------------------------------

#: Morphemes before which people most often leave the space out: bound nouns (수, 것, 때) and auxiliary verbs.
USUALLY_JOINED = ("NNB", "VX")


def spacing_edit(field: str, text: str, spans: Sequence[Span], rng: random.Random) -> Edit:
    """One 띄어쓰기 error: a space dropped before a bound noun or an auxiliary verb, else a space put between the two nouns
    of a compound; never at or inside a span."""
    found = morphemes(text)
    dropped = [m.start - 1 for m in found if m.tag in USUALLY_JOINED and m.start > 0 and text[m.start - 1] == " "
               and _outside(spans, field, m.start - 1, m.start)]
    if dropped:
        at = rng.choice(dropped)
        return Edit(field, at, at + 1, " ", "")
    inserted = [b.start for a, b in zip(found, found[1:]) if a.tag == b.tag == "NNG" and a.end == b.start
                and a.end - a.start >= 2 and b.end - b.start >= 2 and text[a.start:b.end] == a.form + b.form
                and _outside(spans, field, a.start, b.end)]
    if inserted:
        at = rng.choice(inserted)
        return Edit(field, at, at, "", " ")
    raise Unmade("no space a writer would drop or add")


# ---- typo ------------------------------------------------------------------------------------------

def _neighbours(jamo: str) -> list[str]:
    for row in KEY_ROWS:
        k = row.find(jamo)
        if k >= 0:
            return [row[j] for j in (k - 1, k + 1) if 0 <= j < len(row)]
    return []


def typo_syllables(syllable: str) -> list[str]:
    """The syllables one neighbouring key away: the initial consonant or the vowel typed with the key beside it."""
    code = ord(syllable) - HANGUL_FIRST
    initial, vowel, final = code // 588, (code % 588) // 28, code % 28
    out = []
    for other in _neighbours(INITIALS[initial]):
        if other in INITIALS:
            out.append(chr(HANGUL_FIRST + INITIALS.index(other) * 588 + vowel * 28 + final))
    for other in _neighbours(VOWELS[vowel]):
        if other in VOWELS:
            out.append(chr(HANGUL_FIRST + initial * 588 + VOWELS.index(other) * 28 + final))
    return out


def typo_edit(field: str, text: str, spans: Sequence[Span], rng: random.Random) -> Edit:
    """One syllable of a common noun (outside every span) typed with a neighbouring key (두벌식)."""
    nouns = [m for m in morphemes(text) if m.tag == "NNG" and m.end - m.start >= 2 and text[m.start:m.end] == m.form
             and is_hangul(m.form) and _outside(spans, field, m.start, m.end)]
    if not nouns:
        raise Unmade("no common noun outside the spans")
    noun = rng.choice(nouns)
    at = rng.randrange(noun.start, noun.end)
    return Edit(field, at, at + 1, text[at], rng.choice(typo_syllables(text[at])))


# ---- the final predicate: register and negation ----------------------------------------------------------

def _final_predicate(text: str) -> tuple[int, int, list[Morpheme]]:
    """The word holding the text's last sentence-final ending (only punctuation after it): its start, end and morphemes."""
    found = morphemes(text)
    last = max((k for k, m in enumerate(found) if m.tag == "EF"), default=None)
    if last is None or any(m.tag not in ("SF", "SE", "SS", "SSC") for m in found[last + 1:]):
        raise Unmade("no sentence-final ending at the end")
    start = eojeol_start(text, found[last].start)
    end = found[last].end
    while end < len(text) and text[end] not in " .!?\"'”’)":
        end += 1
    words = [m for m in found[:last + 1] if m.start >= start]
    if not words or words[0].start != start:
        raise Unmade("analysis unsure: the final word's morphemes do not start with it")
    _joined_word(text, start, end, [(m.form, m.tag) for m in words])
    return start, end, words


def register_edit(field: str, text: str, spans: Sequence[Span]) -> tuple[Edit, str, str]:
    """The final predicate moved to the next speech level (한다 -> 합니다 -> 해요 -> 한다); the edit and the two levels."""
    start, end, words = _final_predicate(text)
    level = LEVEL_OF_ENDING.get(words[-1].form)
    if level is None:
        raise Unmade(f"the final ending {words[-1].form!r} has no speech level of the three")
    if not _outside(spans, field, start, end):
        raise Unmade("the final predicate is in a span")
    target = NEXT_LEVEL[level]
    stem = words[:-1]
    before = stem[-1] if stem else None
    if target == FORMAL:
        ending = "ᆸ니다"
    elif target == POLITE:
        ending = "어요"
        if before is not None and before.tag == "VCP":
            # the copula's polite ending is 이에요 after a final consonant (집이에요) and 예요 after a vowel (숙소예요,
            # 위해서예요): the analyzer's join writes 숙소에요, a common misspelling, so the rule is applied here
            noun = join([(m.form, m.tag) for m in stem[:-1]])
            ending = "예요" if noun and final_consonant(noun[-1]) == 0 else "에요"
    else:
        ending = "ᆫ다" if before is not None and before.tag in ("VV", "XSV") else "다"
    rewritten = join([(m.form, m.tag) for m in stem] + [(ending, "EF")])
    check = [m for m in morphemes(rewritten) if m.tag == "EF"]
    if not check or LEVEL_OF_ENDING.get(check[-1].form) != target:
        raise Unmade("analysis unsure: the rewritten predicate does not read as the new speech level")
    return Edit(field, start, end, text[start:end], rewritten), level, target


def negation_edit(field: str, text: str, spans: Sequence[Span]) -> Edit:
    """The final predicate negated: 먹었다 -> 먹지 않았다, 학생이다 -> 학생이 아니다, 있다 -> 없다."""
    if any((m.form, m.tag) in NEGATORS for m in morphemes(text)):
        raise Unmade("the sentence already holds a negation")
    start, end, words = _final_predicate(text)
    if not _outside(spans, field, start, end):
        raise Unmade("the final predicate is in a span")
    last_content = max((k for k, m in enumerate(words) if m.tag in (*PREDICATE_TAGS, "VCP")), default=None)
    if last_content is None:
        raise Unmade("no verb, adjective or copula in the final word")
    head, tail = words[:last_content], words[last_content + 1:]
    if any(m.tag not in ("EP", "EF") for m in tail):
        raise Unmade("the final predicate has endings other than tense and the final one")
    core = words[last_content]
    before = [m for m in morphemes(text) if m.end <= core.start]
    previous = (before[-1].form, before[-1].tag) if before else None
    if (core.form, core.tag) == ("하", "VX") and previous in (("어야", "EC"), ("아야", "EC"), ("야", "EC")):
        raise Unmade("an obligation (-어야 하다) is negated as -지 않아도 되다, not with 않다")  # 내야 하지 않는다 reads wrong
    if core.tag == "VCP" and previous == ("것", "NNB"):
        raise Unmade("a conjecture (-ㄹ 것이다) does not read naturally as 것이 아니다")  # 찬성할 것이 아니다
    parts = [(m.form, m.tag) for m in head]
    if core.tag == "VCP":
        parts += [("이", "JKC"), ("아니", "VCN")]
    elif (core.form, core.tag) in (("있", "VA"), ("있", "VV")):
        parts += [("없", "VA")]
    else:
        parts += [(core.form, core.tag), ("지", "EC"), ("않", "VX")]
    rewritten = join(parts + [(m.form, m.tag) for m in tail])
    if not any((m.form, m.tag) in NEGATORS for m in morphemes(rewritten)):
        raise Unmade("analysis unsure: the rewritten predicate does not read as negated")
    return Edit(field, start, end, text[start:end], rewritten)


# ---- number-format ---------------------------------------------------------------------------------

NUMBER = re.compile(r"(?<![\d.,])(\d{1,3}(?:,\d{3})+|\d{4,}|\d+천)(?![\d.,])")
#: A number right after 만, 억 or 조 is the lower part of a Korean-unit number (8만 5600명): no comma goes there.
UNIT_BEFORE = re.compile(r"[만억조]\s?$")
#: What a quantity's number is followed by (원, 명, 개: bound nouns; 만: a numeral; 건, 편: nouns). A number followed by
#: anything else (입니다 after an address or a telephone number) is an identifier and is not rewritten.
COUNTERS = ("NNB", "NR", "NNG")
#: Spans whose numbers are dates or times (NER's DT/TI, RE's DAT): 2015 there is a year, never 2,015.
DATE_LABELS = ("DT", "TI", "DAT")


def number_rewrites(number: str, after: str) -> list[str]:
    """Other ways to write a number: 3,000 <-> 3000 <-> 3천. What reads as a date is left alone: a number before 년, a
    four-digit number from 1900 to 2099 (a year even without 년) and an eight-digit one (20140919)."""
    digits = number.replace(",", "")
    if after.startswith("년") or (digits.isdigit() and (len(digits) == 8 or (len(digits) == 4 and 1900 <= int(digits) <= 2099))):
        return []
    if number.endswith("천"):
        value = int(number[:-1]) * 1000
        return [f"{value:,}"]
    value = int(number.replace(",", ""))
    if number.startswith("0"):
        return []
    out = [str(value)] if "," in number else [f"{value:,}"]
    if value % 1000 == 0 and value < 10000:
        out.append(f"{value // 1000}천")
    return out


def number_edit(field: str, text: str, spans: Sequence[Span], rng: random.Random) -> Edit:
    """One number of a quantity written another way (spans around it stretch with it): only a number followed by a
    counter (3000원, 1,500명), never inside a date or time span, nor after 만/억/조."""
    dates = [s for s in spans if s.field == field and s.label in DATE_LABELS]
    counted = {m.start for m in morphemes(text) if m.tag in COUNTERS}
    found = [(m, rewrite) for m in NUMBER.finditer(text) for rewrite in number_rewrites(m.group(1), text[m.end():])
             if all(m.end() <= s.start or m.start() >= s.end for s in dates) and not UNIT_BEFORE.search(text, 0, m.start())
             and text[m.start() - 1:m.start()] != "-" and (m.end() in counted or m.group(1).endswith("천"))]
    if not found:
        raise Unmade("no number to rewrite")
    match, rewrite = rng.choice(found)
    return Edit(field, match.start(), match.end(), match.group(1), rewrite)
