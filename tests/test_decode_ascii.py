"""`io.is_nfc` on ASCII text (issue 15: a prediction file of guids and tags is ASCII, and `runs add` decodes every file):
the answer `unicodedata` gives, for ASCII texts and for texts one character away from ASCII."""

from __future__ import annotations

import unicodedata

import pytest

from klue_viz.reading.records import decode, is_nfc

TEXTS = [
    "", "a", '{"guid": "klue-ner-v1_dev_00000-wikitree", "tags": ["B-OG", "I-OG", "O"]}\n' * 50, "".join(map(chr, range(128))),
    "e\u0301", "cafe\u0301", "caf\u00e9", "\u1100\u1161", "한국", "\u1100", "abc\u0327", "A\u030a", "\u212b",
]


@pytest.mark.parametrize("text", TEXTS, ids=range(len(TEXTS)))
def test_is_nfc_gives_unicodedatas_answer(text: str) -> None:
    assert is_nfc(text) is unicodedata.is_normalized("NFC", text)


def test_an_ascii_file_decodes_as_it_is_and_a_decomposed_one_is_composed() -> None:
    ascii_text = '{"guid": "klue-nli-v1_dev_00001", "label": "neutral"}\n' * 1000
    assert decode(ascii_text.encode(), "run.jsonl") == (ascii_text, "utf-8")
    text, encoding = decode('{"guid": "g", "answer": "cafe\u0301"}\n'.encode(), "run.jsonl")
    assert text == '{"guid": "g", "answer": "caf\u00e9"}\n' and encoding.endswith("(NFD → NFC)")
