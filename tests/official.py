"""Independent readings of the official KLUE v1.1 dev files, for reference tests.

A few lines of json / line parsing per format, written from the file layout (klue-tasks.md and the
baseline's readers), never through klue-viz's gold readers: a test that takes its expected values
from klue-viz's own gold rows would agree with a reader bug.
"""

from __future__ import annotations

import json
import re
from pathlib import Path


def ner_sentences(path: Path) -> list[dict]:
    """[{guid, chars, tags}] from the official NER TSV: `## guid<TAB>markup`, then `CHAR<TAB>TAG` lines, blank line between."""
    sentences = []
    for block in re.split(r"\n\t?\n", path.read_text(encoding="utf-8")):
        guid, chars, tags = None, [], []
        for line in block.split("\n"):
            if line.startswith("## klue-ner-v1"):
                guid = line[3:].split("\t")[0]
            elif line.startswith("##") or not line:
                continue
            else:
                char, tag = line.split("\t")
                chars.append(char)
                tags.append(tag)
        if guid is not None:
            sentences.append({"guid": guid, "chars": chars, "tags": tags})
    return sentences


def dp_sentences(path: Path) -> list[dict]:
    """[{guid, heads, deprels}] from the official DP TSV: `## guid<TAB>sentence`, then `INDEX WORD LEMMA POS HEAD DEPREL` lines."""
    sentences = []
    for line in path.read_text(encoding="utf-8").split("\n"):
        if line.startswith("## klue-dp-v1"):
            sentences.append({"guid": line[3:].split("\t")[0], "heads": [], "deprels": []})
        elif line and line[0].isdigit():
            fields = line.split("\t")
            sentences[-1]["heads"].append(int(fields[4]))
            sentences[-1]["deprels"].append(fields[5])
    return sentences


def json_list(path: Path) -> list[dict]:
    return json.loads(path.read_text(encoding="utf-8"))


def wos_turns(path: Path) -> list[dict]:
    """[{dialogue, turn, state}] one per user turn (0-based index among user turns), as the baseline's WoS reader makes them."""
    turns = []
    for dialogue in json_list(path):
        user_turns = [t for t in dialogue["dialogue"] if t["role"] == "user"]
        for k, turn in enumerate(user_turns):
            turns.append({"dialogue": dialogue["guid"], "turn": k, "state": list(turn["state"])})
    return turns
