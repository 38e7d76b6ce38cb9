"""The tests of the suites: their fixed ids, CheckList type and capability, and what each changes (the README's table)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ProbeTest:
    id: str
    type: str  # MFT | INV | DIR
    capability: str
    description: str


TESTS = {test.id: test for test in (
    ProbeTest("name-swap", "INV", "names", "a name (a person's unless --name-kinds asks for places or organisations too) replaced by another of the same kind "
              "from the same data, near it in meaning to the analyzer, whose "
              "last syllable has the opposite final consonant, every particle attached to it re-chosen by the analyzer "
              "(이/가, 은/는, 을/를, 과/와, 으로/로 ...); spans moved"),
    ProbeTest("name-script", "INV", "scripts", "an organisation or place written as an initialism in the other script, letter by letter "
              "(LG -> 엘지, KBS -> 케이비에스, 엠비씨 -> MBC), its particles re-chosen for the Hangul reading (LG가, KBS는); "
              "names of other shapes skipped; spans moved"),
    ProbeTest("spacing", "INV", "spacing", "one 띄어쓰기 error: a space dropped before a bound noun or an auxiliary verb (할 수 -> 할수), "
              "else a space put inside a compound noun; never at or inside an entity or answer span; spans moved"),
    ProbeTest("typo", "INV", "typos", "one syllable of a common noun typed with the neighbouring key (두벌식 layout), outside every span"),
    ProbeTest("register", "INV", "speech level", "the final predicate moved to the next speech level (한다 -> 합니다 -> 해요 -> 한다), "
              "conjugated by the analyzer"),
    ProbeTest("number-format", "INV", "numbers", "a number written another way (3000 <-> 3,000 <-> 3천); years are left alone; spans stretch"),
    ProbeTest("distractor", "INV", "distractors", "a sentence of another passage appended to the passage: it shares at least two nouns "
              "with the question and holds none of its answers"),
    ProbeTest("negation", "DIR", "negation", "an entailed hypothesis's final predicate negated (않다 / 아니다 / 없다, conjugated by the analyzer): "
              "the answer must no longer be entailment (written with gold contradiction)"),
)}

#: The kinds of name `--name-kinds` opts into, by the word the flag takes.
NAME_KINDS = {"people": "person", "places": "place", "organisations": "organisation"}
#: The kinds name-swap swaps unless told otherwise: people only. Of the swaps read on the final code, people's read
#: natural and label-preserving in 19 of 19 (NER, NLI and RE samples), places' in 40 of 45 and organisations' in 20 of
#: 24: a place or organisation is tied to the rest of its sentence (마이크로소프트 announcing iOS, a ferry from inland
#: 대구, 도이치은행 beside 프랑스) in ways no rule tried here tells apart (docs/probes.md, "Validity").
DEFAULT_NAME_KINDS = ("people",)
