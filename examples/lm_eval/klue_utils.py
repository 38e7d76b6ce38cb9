"""Documents for lm-evaluation-harness task YAMLs over the official KLUE dev files (`custom_dataset: !function
klue_utils.<name>`): each document keeps its KLUE `guid` (WoS: the dialogue's guid and the user turn's `turn`), so
klue-viz matches the harness's `--log_samples` rows to the gold by guid."""

from __future__ import annotations

import json
import re

import datasets

MARKUP = re.compile(r"<([^<>]+):(PS|LC|OG|DT|TI|QT)>")


def _split(docs: list[dict]) -> datasets.DatasetDict:
    return datasets.DatasetDict({"validation": datasets.Dataset.from_list(docs)})


def _sentences(path: str):
    """(guid, sentence text, the lines under it) of an official KLUE TSV (NER, DP)."""
    guid, text, lines = None, "", []
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            line = line.rstrip("\n")
            if line.startswith("## klue-"):
                if guid is not None:
                    yield guid, text, lines
                guid, text = line[3:].split("\t", 1)
                lines = []
            elif guid is not None and line.strip() and not line.startswith("## "):
                lines.append(line)
    if guid is not None:
        yield guid, text, lines


def ner_docs(path: str, **_: object) -> datasets.DatasetDict:
    """KLUE-NER: the plain sentence (markup removed) and its gold markup, one document per sentence."""
    return _split([{"guid": guid, "sentence": MARKUP.sub(r"\1", markup), "markup": markup} for guid, markup, _ in _sentences(path)])


def dp_docs(path: str, **_: object) -> datasets.DatasetDict:
    """KLUE-DP: the sentence and its numbered words (`1 'K팝스타3’`...), one document per sentence."""
    docs = []
    for guid, sentence, lines in _sentences(path):
        cells = [line.split("\t") for line in lines]
        docs.append({"guid": guid, "sentence": sentence, "words": "\n".join(f"{c[0]} {c[1]}" for c in cells),
                     "answer": "\n".join(f"{c[0]} {c[1]} {c[4]} {c[5]}" for c in cells)})
    return _split(docs)


def wos_docs(path: str, **_: object) -> datasets.DatasetDict:
    """WoS: one document per user turn, with the dialogue so far and the belief state after it."""
    docs = []
    with open(path, encoding="utf-8") as handle:
        dialogues = json.load(handle)
    for dialogue in dialogues:
        history, turn = [], 0
        for utterance in dialogue["dialogue"]:
            history.append(("사용자" if utterance["role"] == "user" else "시스템") + ": " + utterance["text"])
            if utterance["role"] == "user":
                docs.append({"guid": dialogue["guid"], "turn": turn, "dialogue": "\n".join(history),
                             "state": json.dumps(utterance.get("state", []), ensure_ascii=False)})
                turn += 1
    return _split(docs)
