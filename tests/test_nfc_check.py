"""`io.is_nfc` gives what `unicodedata.is_normalized("NFC", ...)` gives, checking only around the other characters.

The shortcut rests on three facts about each character of `io.ALWAYS_NFC`; each is read here from `unicodedata` for
every character of the set, and the function is compared with the standard check on random mixtures of those
characters with combining marks, conjoining jamo, singletons and compatibility ideographs.
"""

from __future__ import annotations

import random
import re
import sys
import unicodedata
from pathlib import Path

import pytest

from klue_viz.reading.records import ALWAYS_NFC, decode, is_nfc

SHARED = Path(__file__).resolve().parents[2] / "shared" / "klue"
NER_DEV = SHARED / "klue-ner-v1.1" / "klue-ner-v1.1_dev.tsv"


def _always_nfc_characters() -> list[str]:
    ranges = re.findall(r"(.)-(.)", ALWAYS_NFC, flags=re.S)
    assert ranges and "".join(a + "-" + b for a, b in ranges) == ALWAYS_NFC
    return [chr(c) for a, b in ranges for c in range(ord(a), ord(b) + 1)]


SAFE = _always_nfc_characters()


def _second_characters_of_compositions() -> set[str]:
    """Every character that can be the second of a canonical pair: from the decompositions, and Hangul's vowel and final jamo."""
    seconds = set()
    for code in range(sys.maxunicode + 1):
        parts = unicodedata.decomposition(chr(code)).split()
        if len(parts) == 2 and not parts[0].startswith("<"):
            seconds.add(chr(int(parts[1], 16)))
    seconds.update(chr(c) for c in range(0x1161, 0x1176))  # L + V -> LV
    seconds.update(chr(c) for c in range(0x11A8, 0x11C3))  # LV + T -> LVT
    return seconds


def test_every_always_nfc_character_is_nfc_alone_and_a_starter():
    not_nfc = [c for c in SAFE if not unicodedata.is_normalized("NFC", c)]
    combining = [c for c in SAFE if unicodedata.combining(c)]
    starts_with_a_mark = [c for c in SAFE if unicodedata.combining(unicodedata.normalize("NFD", c)[0])]
    assert (not_nfc, combining, starts_with_a_mark) == ([], [], [])


def test_no_always_nfc_character_combines_with_the_one_before():
    seconds = _second_characters_of_compositions()
    assert "\u0301" in seconds and "\u11a8" in seconds  # the reading above finds the pairs it should
    assert sorted(set(SAFE) & seconds) == []


#: Characters around which NFC is decided: combining marks, conjoining jamo, a singleton (U+2000 -> U+2002), a
#: compatibility ideograph (U+F900), Hangul syllables with and without a final, Latin letters that take accents.
OTHERS = ["\u0301", "\u0323", "\u0308", "\u0327", "\u1100", "\u1161", "\u1175", "\u11a8", "\u11c2", "\u2000", "\uf900",
          "\u302a", "\u302e", "\u0344", "\u0958", "\u093c", "\u0915", "\u1e0d"]
LETTERS = ["e", "a", "A", "\u00e9", "\uac00", "\uac01", "\ud55c", " ", "\n", "\u4e00", "\u2014", "\u3002", "\uff01"]


@pytest.mark.parametrize("seed", range(4))
def test_random_mixtures_agree_with_the_standard_check(seed):
    rng = random.Random(seed)
    alphabet = OTHERS + LETTERS
    disagree, normalized = [], 0
    for _ in range(5_000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 8)))
        expected = unicodedata.is_normalized("NFC", text)
        normalized += expected
        if is_nfc(text) != expected:
            disagree.append(text)
    assert disagree == []
    assert 500 < normalized < 4_500  # both answers are well represented


def test_hand_cases():
    assert is_nfc("") and is_nfc("plain ascii") and is_nfc("한국어 문장입니다.")
    assert not is_nfc("e\u0301")  # composes to é
    assert is_nfc("\u00e9\u0301")  # é then an acute: no composite exists, it stays
    assert not is_nfc("\u00e9\u0323")  # é then a dot below: reordered and composed to ệ-like forms
    assert not is_nfc("\uac00\u11a8")  # 가 + final ㄱ composes to 각
    assert not is_nfc("\u1100\u1161")  # conjoining jamo compose to 가
    assert not is_nfc("x\u2000y")  # a singleton: U+2000 is U+2002 in NFC
    assert is_nfc("\u1100")  # a lone initial jamo is NFC


@pytest.mark.skipif(not NER_DEV.exists(), reason="needs ../shared/klue")
def test_the_ner_dev_set_and_its_decomposed_form():
    text = NER_DEV.read_text(encoding="utf-8")
    assert is_nfc(text) == unicodedata.is_normalized("NFC", text) is True
    decomposed = unicodedata.normalize("NFD", text)
    assert is_nfc(decomposed) is False
    back, encoding = decode(decomposed.encode("utf-8"), "ner.tsv")
    assert back == text and encoding == "utf-8 (NFD → NFC)"
