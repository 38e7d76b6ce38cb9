"""`klue-viz probe make`: perturbed copies of a dev set, written in the task's official format with a manifest.

A suite folder holds
* `<official dev file name>`: the perturbed examples, read as gold by every pipeline (`klue-viz evaluate`, `runs add`);
* `sources/<official dev file name>`: the source examples they were made from (a model run on the suite runs on
  these too, or its dev-set run gives their predictions);
* `manifest.jsonl`: one line per perturbed example (guid, source_guid, test, capability, type, expect, edits);
* `README.md`: what each test does, how many cases were made and skipped (and why), the seed and the version.

A perturbed guid is the source guid with the test's id after the task's prefix: `klue-ner-v1_dev_00000-wikitree`
becomes `klue-ner-v1_name-swap~dev_00000-wikitree` (a guid without the prefix becomes `name-swap~<guid>`). No KLUE guid
holds a `~`, so a perturbed guid never collides with a real one, and the source guid is read back by removing the test.
"""

from __future__ import annotations

import json
import random
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

from klue_viz.probes import korean
from klue_viz.probes.catalogue import DEFAULT_NAME_KINDS, NAME_KINDS, TESTS
from klue_viz.reading import suite_files
from klue_viz.tasks.base import Task
from klue_viz.tasks.probing import Edit, ProbeExample, ProbeIO, Unmade, apply_edits

MANIFEST = suite_files.MANIFEST
SOURCES = "sources"
MARK = "~"


def probe_guid(prefix: str, guid: str, test: str) -> str:
    """The guid of the perturbed copy of `guid` made by `test` (see the module docstring)."""
    head = prefix + "_"
    return f"{head}{test}{MARK}{guid[len(head):]}" if guid.startswith(head) else f"{test}{MARK}{guid}"


@dataclass
class Case:
    """One perturbed example and where it came from."""

    example: ProbeExample
    source: ProbeExample
    test: str
    edits: list[dict[str, Any]]
    expect: str | None = None

    def manifest_line(self) -> dict[str, Any]:
        test = TESTS[self.test]
        return {"guid": self.example.guid, "source_guid": self.source.guid, "test": self.test, "capability": test.capability,
                "type": test.type, "expect": self.expect, "edits": self.edits}


@dataclass
class Suite:
    """What `make_suite` made: the cases, in test order, and per test the reasons of the skipped examples."""

    task: str
    cases: list[Case]
    tried: dict[str, int]
    skipped: dict[str, Counter[str]]
    seed: int
    tests: list[str]
    #: The name of the dev file the suite was made from.
    source: str = ""
    problems: list[str] = field(default_factory=list)
    #: The kinds of name name-swap swapped (`--name-kinds`).
    name_kinds: list[str] = field(default_factory=lambda: list(DEFAULT_NAME_KINDS))

    def made(self, test: str) -> int:
        return sum(case.test == test for case in self.cases)


#: The kind of name a gold span's label says, alike in NER's codes and RE's: a name of one task's gold may be swapped
#: into another's (`more` gold sets of NamePools). Any other label (WoS's domain-slot) is its own kind.
KIND_OF_LABEL = {"PS": "person", "PER": "person", "LC": "place", "LOC": "place", "OG": "organisation", "ORG": "organisation"}

#: Why a swap of a name of a kind not opted into is not made (the skipped count says how many), with its measured validity.
KIND_NOT_CHOSEN = {
    "place": "a place name: place swaps read natural in 40 of 45 readings (89%, goal 95%); opt in with --name-kinds",
    "organisation": "an organisation name: organisation swaps read natural in 20 of 24 readings (83%, goal 95%); "
                    "opt in with --name-kinds",
}
#: Why a WoS slot value (a place) is not swapped unless places are asked for, with its own measured validity.
SLOT_NOT_CHOSEN = ("a hotel, restaurant or attraction name (a place): WoS swaps read natural in 3 of 5 readings (a 에어비엔비 "
                   "offered for a motel); opt in with --name-kinds places")
#: Why an NLI/MRC proper noun is not swapped when its kind cannot be told and not every kind is opted into.
KIND_UNKNOWN = "a proper noun of no known kind (no gold name of the data is it or near it in meaning)"


def name_kind(label: str) -> str:
    """The kind of name a swappable gold span holds: NER's and RE's person, place or organisation; any other swappable
    label is WoS's name slot (a hotel, restaurant or attraction), a place."""
    return KIND_OF_LABEL.get(label, "place")


class NamePools:
    """What the suites draw from the data itself: names to swap in (gold spans by kind for tasks with spans, from the
    example's own gold set and from the `more` gold sets given, e.g. the NER and RE gold of the same data folder; else
    the proper nouns (NNP) the analyzer finds in the texts; only Hangul names of two syllables or more) and the
    sentences a distractor is taken from."""

    def __init__(self, examples: Sequence[ProbeExample], probe: ProbeIO,
                 more: Sequence[tuple[ProbeIO, Sequence[ProbeExample]]] = (), kinds: Sequence[str] = DEFAULT_NAME_KINDS) -> None:
        typed: dict[str, set[str]] = defaultdict(set)
        #: Per name, the common nouns the data writes right after it (케리 -> {장관}): what it is said of.
        self.heads: dict[str, set[str]] = defaultdict(set)
        #: The kinds of name (person, place, organisation) a name-swap may swap (`--name-kinds`).
        self.kinds = {NAME_KINDS[kind] for kind in kinds}
        #: Per gold name of a person, place or organisation of any gold set given, how often each kind labels it.
        self.labelled: dict[str, Counter[str]] = defaultdict(Counter)
        for _, found in ((probe, examples), *more):
            for example in found:
                for span in example.spans:
                    if span.label in KIND_OF_LABEL:
                        self.labelled[example.texts[span.field][span.start:span.end]][KIND_OF_LABEL[span.label]] += 1
        self._labelled_known: list[tuple[str, korean.Morpheme]] | None = None
        for own, found in ((probe, examples), *(more if probe.names_from_spans else ())):
            for example in found:
                for span in example.spans:
                    text = example.texts[span.field][span.start:span.end]
                    if own.swappable(span.label) and korean.is_name(text):
                        typed[KIND_OF_LABEL.get(span.label, span.label)].add(text)
                        head = korean.head_noun_after(example.texts[span.field], span.end)
                        if head is not None:
                            self.heads[text].add(head)
        self.typed = {kind: korean.NamePool(sorted(names)) for kind, names in typed.items()}
        self._examples, self._probe = examples, probe
        self._proper: korean.NamePool | None = None
        self._sentences: tuple[list[str], dict[str, set[int]]] | None = None

    @property
    def proper(self) -> korean.NamePool:
        """The proper nouns of the texts (analysed on first use: only a name-swap without gold entities needs them)."""
        if self._proper is None:
            found: set[str] = set()
            for example in self._examples:
                for f in fields_of(self._probe, example):
                    text = example.texts[f]
                    for m in korean.morphemes(text):
                        if m.tag == "NNP" and len(m.form) >= 2 and korean.is_hangul(m.form):
                            found.add(m.form)
                            head = korean.head_noun_after(text, m.end) if text[m.start:m.end] == m.form else None
                            if head is not None:
                                self.heads[m.form].add(head)
            self._proper = korean.NamePool(sorted(found))
        return self._proper

    def allows(self, kind: str | None) -> bool:
        """Whether a name of this kind may be swapped: a kind opted into, or a kind unknown when every kind is."""
        return kind in self.kinds if kind is not None else len(self.kinds) == len(NAME_KINDS)

    def kind_of_proper(self, name: str) -> str | None:
        """The kind of a proper noun the analyzer finds (NLI, MRC), told by the data: the kind its gold spans give it
        most often in the gold sets given (the NER and RE dev sets beside it), else the kind of the labelled gold name
        the analyzer's embedding puts nearest it (cosine at least SIMILAR_ENOUGH: 마이클 is near 존, a person); None
        when neither tells."""
        if name in self.labelled:
            return max(sorted(self.labelled[name]), key=self.labelled[name].__getitem__)
        own = korean.name_morpheme(name)
        if own is None:
            return None
        if self._labelled_known is None:
            self._labelled_known = korean.NamePool.well_known(sorted(self.labelled))
        scored = [(korean.similarity(own, m), other) for other, m in self._labelled_known if m.tag == own.tag]
        best = max((found for found in scored if found[0] >= korean.SIMILAR_ENOUGH), default=None)
        return None if best is None else self.kind_of_proper(best[1])

    @property
    def sentences(self) -> tuple[list[str], dict[str, set[int]]]:
        """The sentences of the first text field of every example (each once) and, per noun, the sentences holding it."""
        if self._sentences is None:
            first = self._probe.edit_fields[0]
            found = list(dict.fromkeys(s.strip() for e in self._examples for s in SENTENCE_END.split(e.texts[first]) if len(s.strip()) > 10))
            index: dict[str, set[int]] = defaultdict(set)
            for k, sentence in enumerate(found):
                for noun in nouns(sentence):
                    index[noun].add(k)
            self._sentences = (found, index)
        return self._sentences


#: Where a sentence of a passage ends (a full stop, question or exclamation mark, then space).
SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def nouns(text: str) -> set[str]:
    """The common and proper nouns of two syllables or more in a text (what a question and a distractor share)."""
    return {m.form for m in korean.morphemes(text) if m.tag in ("NNG", "NNP") and len(m.form) >= 2}


def fields_of(probe: ProbeIO, example: ProbeExample) -> tuple[str, ...]:
    """The text fields an edit may change: the task's, or every text of the example (WoS: its turns)."""
    return probe.edit_fields or tuple(example.texts)


def _name_swap(example: ProbeExample, probe: ProbeIO, pools: NamePools, rng: random.Random) -> list[Edit]:
    if probe.names_from_spans:
        return _swap_entity(example, probe, pools, rng, [s for s in example.spans if probe.swappable(s.label)])
    return _swap_proper_noun(example, probe.edit_fields, pools, rng)


def _swap_entity(example: ProbeExample, probe: ProbeIO, pools: NamePools, rng: random.Random, named: list) -> list[Edit]:
    """A gold name span replaced by another of its type, wherever the example writes it (every text field)."""
    reason = "no name span of two syllables or more in Hangul"
    for span in rng.sample(named, len(named)):
        name = example.texts[span.field][span.start:span.end]
        if not korean.is_name(name):
            continue
        if not pools.allows(name_kind(span.label)):
            reason = KIND_NOT_CHOSEN[name_kind(span.label)] if span.label in KIND_OF_LABEL else SLOT_NOT_CHOSEN
            continue
        pool = pools.typed.get(KIND_OF_LABEL.get(span.label, span.label))
        if pool is None:
            others = []
        elif probe.names_near_in_meaning:
            others = _said_of_alike(example, fields_of(probe, example), name, pool.nearest(name), pools)
        else:
            others = pool.opposite(name)
        if not others:
            near = "near it in meaning and said of the same things " if probe.names_near_in_meaning else ""
            reason = f"no {span.label} name {near}with the opposite final consonant"
            continue
        try:
            return _fitting_swap(example, fields_of(probe, example), name, others, rng, probe.names_near_in_meaning)
        except Unmade as err:
            reason = str(err)
    raise Unmade(reason)


#: Why a swap is not made when every near name reads worse in the sentence than the old one.
UNFIT = "every near name fits the sentence much less well than the old one (the analyzer's language model)"
NAME_PART = "the name is one part of a longer name (a proper noun right beside it)"


def _fitting_swap(example: ProbeExample, fields: Sequence[str], name: str, others: Sequence[str], rng: random.Random,
                  by_meaning: bool = True) -> list[Edit]:
    """The edits of a swap of `name` for one of `others`, drawn at random among those whose sentences the analyzer's
    language model finds about as likely as the source's (korean.context_fit at least FITS_CONTEXT); Unmade when none
    does, or when `name` is written as one half of a longer name (korean.name_part_beside) that no gold span tells
    apart. WoS's slot values, which are not compared by meaning (`by_meaning` False), skip both checks."""
    if by_meaning:
        for f in fields:
            text, at = example.texts[f], example.texts[f].find(name)
            while at >= 0:
                beside = korean.name_part_beside(text, at, at + len(name))
                if beside is not None and not any(s.field == f and s.start <= beside[0] and beside[1] <= s.end
                                                  and not (s.start <= at < s.end) for s in example.spans):
                    raise Unmade(NAME_PART)  # 제인 윌킨슨; a proper noun that is a gold entity of its own (민주통합당 문희상) is not
                at = text.find(name, at + len(name))
    reason = UNFIT
    for new in rng.sample(list(others), len(others)):
        try:
            edits = _swap_everywhere(example, fields, name, new)
        except Unmade as err:
            reason = str(err)
            continue
        if not by_meaning:
            return edits
        texts = apply_edits(example, edits)[0]
        fit = sum(korean.context_fit(example.texts[f], texts[f], name, new) for f in fields if texts[f] != example.texts[f])
        if fit >= korean.FITS_CONTEXT:
            return edits
        reason = UNFIT
    raise Unmade(reason)


def _said_of_alike(example: ProbeExample, fields: Sequence[str], name: str, nearest: list[str], pools: NamePools) -> list[str]:
    """The nearest names (at most DRAWN_FROM) that the data also writes before every title or thing the example writes
    right after `name` (케리 장관 -> only a name seen before 장관; 김정숙 여사 -> only one seen before 여사): a name near in
    meaning is still of the wrong kind when nothing in the data says it of that (유승준 장관, 파주시 여사)."""
    needed = set()
    for f in fields:
        text, at = example.texts[f], example.texts[f].find(name)
        while at >= 0:
            head = korean.head_noun_after(text, at + len(name))
            if head is not None:
                needed.add(head)
            at = text.find(name, at + len(name))
    return [other for other in nearest if needed <= pools.heads.get(other, set())][:korean.DRAWN_FROM]


def _swap_everywhere(example: ProbeExample, fields: Sequence[str], name: str, new: str) -> list[Edit]:
    """Every occurrence of `name` in the fields rewritten as `new`, particles re-chosen; an occurrence inside a longer
    word (the name as part of another name) makes the swap unmade."""
    if any(new in example.texts[f] for f in fields):
        raise Unmade("the new name is already written in the example")
    edits: list[Edit] = []
    for f in fields:
        text, at = example.texts[f], example.texts[f].find(name)
        while at >= 0:
            if at > 0 and korean.is_hangul(text[at - 1]):
                raise Unmade("the name is written inside a longer word")
            edits.extend(korean.name_edits(f, text, at, at + len(name), new, example.spans))
            at = text.find(name, at + len(name))
    return edits


def _swap_proper_noun(example: ProbeExample, fields: Sequence[str], pools: NamePools, rng: random.Random) -> list[Edit]:
    """A proper noun found in every text field (NLI: premise and hypothesis alike) replaced everywhere by a proper noun
    of the data that the analyzer's embedding puts near it (the data gives no type: a country for a country, a player
    for a player), drawn from the nearest few."""
    forms: set[str] | None = None
    for f in fields:
        here = {m.form for m in korean.morphemes(example.texts[f]) if m.tag == "NNP" and len(m.form) >= 2 and korean.is_hangul(m.form)}
        forms = here if forms is None else forms & here
    if not forms:
        raise Unmade("no proper noun in every text")
    kinds = {form: pools.kind_of_proper(form) for form in sorted(forms)}
    allowed = [form for form, kind in kinds.items() if pools.allows(kind)]
    if not allowed:
        kind = next(iter(kinds.values()))
        raise Unmade(KIND_UNKNOWN if kind is None else KIND_NOT_CHOSEN[kind])
    name = rng.choice(allowed)
    others = _said_of_alike(example, fields, name, pools.proper.nearest(name), pools)
    if not others:
        raise Unmade("no proper noun of the data near it in meaning and said of the same things with the opposite final consonant")
    return _fitting_swap(example, fields, name, others, rng)


def _name_script(example: ProbeExample, probe: ProbeIO, rng: random.Random) -> list[Edit]:
    """A gold organisation or place name written in the other script (LG -> 엘지, 엠비씨 -> MBC), wherever the example
    writes it as a word of its own; its particles re-chosen for the Hangul reading. When no name of the example can be
    rewritten, the most telling reason (korean.SCRIPT_REASONS' order) is the one counted."""
    named = [s for s in example.spans if probe.scriptable(s.label)]
    reasons = [korean.NO_ORGANISATION]
    for span in rng.sample(named, len(named)):
        text = example.texts[span.field]
        name = text[span.start:span.end]
        try:
            new, reading = korean.script_counterpart(name)
            if span.start > 0 and text[span.start - 1].isalnum():
                raise Unmade(korean.LONGER_WORD)
            return _script_everywhere(example, fields_of(probe, example), name, new, reading)
        except Unmade as err:
            reasons.append(str(err))
    raise Unmade(min(reasons, key=korean.SCRIPT_REASONS.index))


def _script_everywhere(example: ProbeExample, fields: Sequence[str], name: str, new: str, reading: str) -> list[Edit]:
    """Every occurrence of `name` rewritten as `new`, each standing as a word of its own (followed only by particles or
    punctuation). An example that also writes the name inside a longer word (YG엔터테인먼트 beside YG, ISIS beside IS)
    is skipped: the longer word keeps its script, and one name written both ways in one sentence is not what a writer
    does (two of the 50 cases read in docs/probes-validity/ner-name-script.tsv did so before this rule)."""
    edits: list[Edit] = []
    for f in fields:
        text, at = example.texts[f], example.texts[f].find(name)
        while at >= 0:
            gold = any(s.field == f and s.start == at and s.end == at + len(name) for s in example.spans)
            try:
                if at > 0 and text[at - 1].isalnum():
                    raise Unmade(korean.LONGER_WORD)
                edits.extend(korean.script_edits(f, text, at, at + len(name), new, reading, example.spans))
            except Unmade as err:
                if gold or str(err) != korean.LONGER_WORD:
                    raise  # the gold name itself, or any occurrence, cannot be rewritten validly
                raise Unmade(korean.ALSO_IN_LONGER_WORD) from None
            at = text.find(name, at + len(name))
    if not edits:  # the name is in none of the fields the test edits
        raise Unmade(korean.LONGER_WORD)
    return edits


def _distractor(example: ProbeExample, probe: ProbeIO, pools: NamePools, rng: random.Random) -> Edit:
    """A sentence of another passage that shares the most nouns with the question (two at least) and holds none of the
    answers, appended to the passage (Jia & Liang's AddSent, with a real sentence rather than a made-up one)."""
    passage_field, question_field = probe.edit_fields[0], probe.edit_fields[-1]
    passage, wanted = example.texts[passage_field], nouns(example.texts[question_field])
    answers = [passage[s.start:s.end] for s in example.spans]
    sentences, index = pools.sentences
    shared: Counter[int] = Counter(k for noun in wanted for k in index.get(noun, ()))
    best = [(count, k) for k, count in shared.items() if count >= 2 and sentences[k] not in passage
            and not any(a and a in sentences[k] for a in answers)]
    if not best:
        raise Unmade("no sentence of another passage shares two nouns with the question without its answer")
    top = max(count for count, _ in best)
    chosen = sentences[rng.choice(sorted(k for count, k in best if count == top))]
    return Edit(passage_field, len(passage), len(passage), "", " " + chosen)


def _each_field(fields: Sequence[str], rng: random.Random, edit: Callable[[str], Edit]) -> list[Edit]:
    """The edit of the first field (in random order) where it can be made."""
    reason = "no text field"
    for f in rng.sample(list(fields), len(fields)):
        try:
            return [edit(f)]
        except Unmade as err:
            reason = str(err)
    raise Unmade(reason)


def perturb(test: str, example: ProbeExample, probe: ProbeIO, pools: NamePools, rng: random.Random) -> tuple[list[Edit], str | None, Any]:
    """The edits of one test on one example, what a DIR test expects, and the perturbed example's gold label."""
    fields, texts, spans = fields_of(probe, example), example.texts, example.spans
    if test == "name-swap":
        return _name_swap(example, probe, pools, rng), None, example.label
    if test == "name-script":
        return _name_script(example, probe, rng), None, example.label
    if test == "spacing":
        return _each_field(fields, rng, lambda f: korean.spacing_edit(f, texts[f], spans, rng)), None, example.label
    if test == "typo":
        return _each_field(fields, rng, lambda f: korean.typo_edit(f, texts[f], spans, rng)), None, example.label
    if test == "register":
        return _each_field(fields, rng, lambda f: korean.register_edit(f, texts[f], spans)[0]), None, example.label
    if test == "number-format":
        return _each_field(fields, rng, lambda f: korean.number_edit(f, texts[f], spans, rng)), None, example.label
    if test == "distractor":
        return [_distractor(example, probe, pools, rng)], None, example.label
    if test == "negation":
        if example.label != "entailment":
            raise Unmade("gold is not entailment")
        last = fields[-1]  # the hypothesis
        return [korean.negation_edit(last, texts[last], spans)], "not:entailment", "contradiction"
    raise KeyError(f"unknown test {test!r}")


def make_suite(task: Task, text: str, name: str, tests: Sequence[str] | None = None, per_test: int | None = None, seed: int = 0,
               names_from: Sequence[tuple[Task, str, str]] = (), name_kinds: Sequence[str] = DEFAULT_NAME_KINDS) -> Suite:
    """The perturbed cases of the official file's text: up to `per_test` per test (None: every example that allows it),
    examples tried in an order drawn from `seed`. `names_from`: other gold files (task, text, name) whose gold names of
    people, places and organisations join the name-swap pools of a task with name spans (NER, RE) and tell the kind of
    a proper noun (NLI, MRC). `name_kinds`: the kinds of name name-swap swaps (of NAME_KINDS; people by default)."""
    unknown_kinds = [kind for kind in name_kinds if kind not in NAME_KINDS]
    if unknown_kinds or not name_kinds:
        raise KeyError(f"name kind(s) {', '.join(unknown_kinds) or '(none)'}: give one or more of {', '.join(NAME_KINDS)}")
    probe = task.probe
    if probe is None:
        raise KeyError(f"{task.facts.name} has no behavioural tests")
    chosen = list(probe.tests if tests is None else tests)
    unknown = [t for t in chosen if t not in probe.tests]
    if unknown:
        raise KeyError(f"test(s) {', '.join(unknown)} do not apply to {task.facts.name}; its tests are {', '.join(probe.tests)}")
    examples, problems = probe.read(text, name)
    more = []
    for other, other_text, other_name in names_from:
        if other.probe is not None and other.probe.names_from_spans:
            found, other_problems = other.probe.read(other_text, other_name)
            more.append((other.probe, found))
            problems += other_problems  # a record of a names file that cannot be read is said, not silently dropped
    pools = NamePools(examples, probe, more, name_kinds)
    suite = Suite(task.facts.name, [], {}, {}, seed, chosen, name, [str(p) for p in problems], list(name_kinds))
    for test in chosen:
        order = random.Random(f"{seed}:{test}").sample(examples, len(examples))
        skipped: Counter[str] = Counter()
        made = tried = 0
        for example in order:
            if per_test is not None and made >= per_test:
                break
            tried += 1
            rng = random.Random(f"{seed}:{test}:{example.guid}")
            try:
                edits, expect, label = perturb(test, example, probe, pools, rng)
                edits = [e for e in edits if e.before != e.after]
                if not edits:
                    raise Unmade("the edit changes nothing")
                new_texts, spans, starts = apply_edits(example, edits)
                guid = probe_guid(task.facts.guid_prefix, example.guid, test)
                rebuilt = probe.rebuilt(example, guid, new_texts, spans, label)
            except Unmade as err:
                skipped[str(err)] += 1
                continue
            case = Case(rebuilt, example, test, [e.to_dict(s) for e, s in zip(edits, starts)], expect)
            suite.cases.append(case)
            made += 1
        suite.tried[test], suite.skipped[test] = tried, skipped
    return suite


def version() -> str:
    try:
        return metadata.version("klue-viz")
    except metadata.PackageNotFoundError:
        return "(not installed)"


def readme(suite: Suite) -> str:
    """The suite's README.md: the tests, the counts, the seed and the version."""
    lines = [f"# Behavioural test suite: {suite.task}", "",
             f"Made by `klue-viz probe make` (klue-viz {version()}, kiwipiepy {metadata.version('kiwipiepy')}) from `{suite.source}`, "
             f"seed {suite.seed}; name-swap swaps the names of {', '.join(suite.name_kinds)}.", "",
             "| test | type | cases | skipped | what changes |", "| --- | --- | ---: | ---: | --- |"]
    for test in suite.tests:
        t = TESTS[test]
        lines.append(f"| `{test}` | {t.type} | {suite.made(test)} | {sum(suite.skipped[test].values())} | {t.description} |")
    lines += ["", "## Why examples were skipped", ""]
    for test in suite.tests:
        for reason, count in suite.skipped[test].most_common():
            lines.append(f"- `{test}`: {count} × {reason}")
    lines += ["", "## Files", "",
              "- the gold of the perturbed examples, in the task's official format (score it as any dev file);",
              f"- `{SOURCES}/`: the source examples they were made from, in the same format;",
              f"- `{MANIFEST}`: one line per perturbed example: guid, source_guid, test, capability, type, expect, edits.",
              "", f"A perturbed guid is its source guid with `<test>{MARK}` after the task's prefix.", ""]
    return "\n".join(lines)


def source_examples(suite: Suite) -> list[ProbeExample]:
    """The examples the cases were made from, each once, in the order they were first used."""
    return list({case.source.guid: case.source for case in suite.cases}.values())


def write_suite(task: Task, suite: Suite, out: Path) -> list[Path]:
    """The suite's files under `out` (made if missing); the paths written."""
    probe = task.probe
    assert probe is not None
    out.mkdir(parents=True, exist_ok=True)
    (out / SOURCES).mkdir(exist_ok=True)
    written = [out / probe.file_name, out / SOURCES / probe.file_name, out / MANIFEST, out / "README.md"]
    written[0].write_text(probe.write([case.example for case in suite.cases]), encoding="utf-8")
    written[1].write_text(probe.write(source_examples(suite)), encoding="utf-8")
    written[2].write_text("".join(json.dumps(c.manifest_line(), ensure_ascii=False) + "\n" for c in suite.cases), encoding="utf-8")
    written[3].write_text(readme(suite), encoding="utf-8")
    return written
