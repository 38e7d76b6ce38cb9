"""Helpers that a task module and klue_viz.discovery both need, below both, so the task modules never import discovery.

* Suspect records (`Suspect`, `Evidence`, made by `suspect_item`) and the guids several runs share (`shared_examples`): what each task's
  `find_suspects` builds its part of the review queue (klue_viz.discovery.suspects) from.
* Reading and writing the official files of a gold patch (`read_json`, `dump_json`, `tsv_blocks`) and the
  items of a stored correction (`correction_items`): what each task's `write_patch` uses (klue_viz.discovery.patch).
* Slice features that know Korean (script mix, attached particle, eojeol count) and the confidence bins of
  calibration (klue_viz.discovery.calibration), which the task modules add to their frames in build_frames.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from klue_viz.core.lazy import lazy_module
from klue_viz.core.problems import InputError
from klue_viz.core.results import ScoredRun

if TYPE_CHECKING:
    import pandas as pd
else:
    pd = lazy_module("pandas")  # the CLI scores without it


# ---- the review queue and gold patches ---------------------------------------------------------------

#: A review's decision "the gold is right" (klue_viz.discovery.review), and the tag of the record that keeps it
#: (written by klue_viz.store.gold_marks.record_review).
KEEP = "(gold kept)"
REVIEWED = "reviewed: gold kept"


@dataclass(frozen=True)
class Evidence:
    """Why a unit is a suspect: `agreeing` of the `of` runs give the proposal.

    `runs`: run -> what it answered (label tasks: its label and probabilities; STS: its score; MRC: its answer), or
    the names of the agreeing runs (NER, DP, WoS). `about`: what the unit is, first in the JSON (NER's `text`, DP's
    `word`); `extra`: task-specific evidence, last (NER's `gold_entities`, DP's `pred_deprels`, the `cleanlab` scores).
    """

    agreeing: int
    of: int
    runs: Mapping[str, Any] | Sequence[str]
    about: Mapping[str, str] = field(default_factory=dict)
    extra: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The evidence as the suspects JSON writes it."""
        return {**self.about, "runs": self.runs, "agreeing": self.agreeing, "of": self.of, **self.extra}


@dataclass(frozen=True)
class Suspect:
    """One entry of the review queue: a unit (`label`, `entity`, `head`, `slot`...) of example `guid` (WoS: of turn
    `turn`) whose gold the runs contradict; `proposed` in the form the task's patch writer reads back."""

    guid: str
    turn: int | None
    unit: str
    gold: str | float | None
    #: None for a review item without a proposal (klue_viz.discovery.review.example_items).
    proposed: str | float | None
    score: float
    evidence: Evidence
    #: Set by the queue (klue_viz.discovery.suspects): the runs' mean probability of the proposal and cleanlab's label
    #: quality of the gold, its tie keys (None where no run gave probabilities).
    confidence: float | None = None
    label_quality: float | None = None
    #: Set by the queue when it has the gold rows: the unit as plain text (`Task.suspect_text`).
    text: str | None = None
    #: Whether the queue set the tie keys (then the JSON has them, None or not).
    queued: bool = False

    def to_dict(self) -> dict[str, Any]:
        """The entry as the suspects JSON writes it (`confidence`, `label_quality` and `text` once the queue set them)."""
        item = {"guid": self.guid, "turn": self.turn, "unit": self.unit, "gold": self.gold, "proposed": self.proposed,
                "score": self.score, "evidence": self.evidence.to_dict()}
        if self.queued:
            item["confidence"], item["label_quality"] = self.confidence, self.label_quality
        if self.text is not None:
            item["text"] = self.text
        return item


def suspect_item(guid: object, unit: str, gold: str | float, proposed: str | float, score: float, evidence: Evidence,
                 turn: int | None = None) -> Suspect:
    """A queue entry from a task's finder (the guid as text, the score as a float)."""
    return Suspect(str(guid), turn, unit, gold, proposed, float(score), evidence)


def shared_examples(results: Sequence[ScoredRun]) -> tuple[list[pd.DataFrame], pd.Index]:
    """Each run's example frame indexed by guid, and the guids every run has (in the first run's order)."""
    frames = [r.frames.examples.set_index("guid") for r in results]
    shared = frames[0].index
    for frame in frames[1:]:
        shared = shared.intersection(frame.index)
    return frames, shared


def read_json(text: str, name: str) -> Any:
    """The official JSON file's data; InputError naming the file and line when it is not JSON."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        raise InputError(f"{name}: invalid JSON at line {err.lineno}: {err.msg}") from None


def dump_json(records: object) -> str:
    """Records as the patch file's text (indented UTF-8 JSON, as the official files are written)."""
    return json.dumps(records, ensure_ascii=False, indent=2) + "\n"


def correction_items(corrections: Mapping[tuple[str, int | None], list[str]], guid: str, turn: int | None = None) -> list[str]:
    """The `;`-separated items of every correction of an example (of a WoS turn), in the order they were stored."""
    return [part for text in corrections.get((guid, turn), []) for part in str(text).split(";") if part.strip()]


def tsv_blocks(text: str) -> Iterator[tuple[str, str, list[str]]]:
    """(guid, header line, body lines) of each sentence of an official NER/DP TSV."""
    guid: str | None = None
    header = ""
    body: list[str] = []
    for line in text.split("\n"):
        if line.startswith("## "):
            name, tab, _ = line[3:].partition("\t")
            if tab and " " not in name.strip():
                if guid is not None:
                    yield guid, header, body
                guid, header, body = name.strip(), line, []
            continue
        if guid is not None and line.strip():
            body.append(line)
    if guid is not None:
        yield guid, header, body


# ---- slice features that know Korean ----------------------------------------------------------------

SCRIPTS = ("Hangul", "Hanja", "Latin", "digits")
#: Common case particles and auxiliaries that attach to a noun, longest first so 에서 wins over 에.
PARTICLES = ("에서는", "에게서", "으로는", "에서", "에게", "으로", "까지", "부터", "처럼", "보다", "이나", "이다",
             "은", "는", "이", "가", "을", "를", "의", "에", "와", "과", "로", "도", "만", "나", "께")
WHOLE = "whole eojeol"


def script_of(char: str) -> str | None:
    code = ord(char)
    if 0xAC00 <= code <= 0xD7A3 or 0x1100 <= code <= 0x11FF or 0x3130 <= code <= 0x318F:
        return "Hangul"
    if 0x4E00 <= code <= 0x9FFF or 0x3400 <= code <= 0x4DBF or 0xF900 <= code <= 0xFAFF:
        return "Hanja"
    if char.isascii() and char.isalpha():
        return "Latin"
    if char.isdigit():
        return "digits"
    return None


def script_mix(text: str) -> str:
    """'Hangul', 'Hangul+Latin', 'digits'...: the scripts a text uses, in a fixed order; 'other' for none of them."""
    found = {script_of(c) for c in str(text)}
    return "+".join(s for s in SCRIPTS if s in found) or "other"


def attached_particle(sentence: str, end: int) -> str:
    """What follows an entity up to the end of its eojeol: WHOLE when nothing, '+은' for a known particle, else '+other'."""
    rest = sentence[end:].split(" ", 1)[0] if end < len(sentence) else ""
    rest = rest.rstrip(".,!?\"')]}”’…")
    if not rest:
        return WHOLE
    for particle in PARTICLES:
        if rest == particle:
            return f"+{particle}"
    return "+other"


def eojeol_bucket(sentences: pd.Series) -> pd.Series:
    """Eojeol (space-separated word) count of each sentence, as ordered buckets."""
    counts = sentences.astype(str).str.split().str.len().fillna(0).astype(int)
    labels = np.select([counts <= 5, counts <= 10, counts <= 20], ["1-5 eojeols", "6-10 eojeols", "11-20 eojeols"], "21+ eojeols")
    return pd.Series(labels, index=sentences.index, dtype="string")


def entity_features(sentences: list[str], sent: np.ndarray, starts: np.ndarray, ends: np.ndarray, texts: list[str]) -> dict[str, list[str]]:
    """Script mix and attached particle of each entity row (NER build_frames)."""
    scripts = {t: script_mix(t) for t in set(texts)}  # entity texts repeat a lot
    return {
        "script": [scripts[t] for t in texts],
        "particle": [attached_particle(sentences[s], e) for s, e in zip(sent.tolist(), ends.tolist())],
    }


# ---- calibration bins (klue_viz.discovery.calibration) ----------------------------------------------

N_BINS = 10


def bin_of(confidence: np.ndarray) -> np.ndarray:
    """The bin of each confidence: min(floor(10c), 9), so c = 1.0 falls in the last bin."""
    return np.minimum(np.floor(confidence * N_BINS), N_BINS - 1).clip(0).astype(int)


def confidence_bucket(confidence: pd.Series) -> pd.Series:
    """Confidence as a slice: the ten calibration bins as readable labels; no probabilities is its own value."""
    values = confidence.to_numpy(dtype=float, na_value=np.nan)
    known = ~np.isnan(values)
    labels = np.full(len(values), "(no probabilities)", dtype=object)
    bins = bin_of(values[known])
    labels[known] = [f"{b / N_BINS:.1f}-{(b + 1) / N_BINS:.1f}" for b in bins]
    return pd.Series(labels, index=confidence.index, dtype="string")
