"""The natural share of the name-swap readings (docs/probes-validity/*-name-swap*.tsv) by kind of the swapped name:
people, places, organisations (docs/probes.md, "Validity": the table by kind).

    python scripts/probe_validity_kinds.py --gold /work/shared/klue [--cases]

The swapped name is the first `old -> new` of each line's note. Its kind is read from the data, not from the code under
test: an NER case's from the gold span of the source sentence that holds the name (PS person, LC place, OG
organisation); an RE case's from the RE demo gold's entity type; an NLI name, which has no gold type, from the type the
NER dev gold gives it most often, and for the names that gold does not hold, from HAND below (read by hand). A case
counts as valid when it was read natural and label-preserving.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter, defaultdict
from collections.abc import Sequence
from pathlib import Path

from klue_viz.probes.make import KIND_OF_LABEL
from klue_viz.scoring.evaluate import gold_file
from klue_viz.tasks import get_task
from klue_viz.tasks.probing import ProbeExample

REPO = Path(__file__).resolve().parents[1]
READINGS = REPO / "docs" / "probes-validity"
RE_DEMO = REPO / "klue_viz" / "demo" / "klue_benchmark"
#: The readings on the final code before the people-only default (the code the issue's figures were read on).
FINAL = ("ner-name-swap-seed23.tsv", "nli-name-swap-seed23.tsv", "re-name-swap-seed19.tsv")
#: The readings on the people-only default.
PEOPLE_ONLY = ("ner-name-swap-seed29.tsv", "nli-name-swap-seed29.tsv")
#: The kinds of the NLI names read that the NER dev gold does not hold, read by hand (모로코 is the NER case whose
#: sentence labels it both LC and OG; the reading says it is the country).
HAND = {"존스": "person", "잭슨": "person", "케네디": "person", "지영": "person", "김정숙": "person", "민호": "person",
        "나경원": "person", "리처드": "person", "마이클": "person", "오웬": "person", "파우스트": "person", "효진": "person",
        "여주": "place", "파주시": "place", "남한산성": "place", "베네치아": "place", "하남": "place", "시애틀": "place",
        "철원": "place", "모로코": "place", "알파고": "other"}
KINDS = ("person", "place", "organisation")


def gold(task: str, folder: Path) -> tuple[dict[str, ProbeExample], dict[str, Counter[str]]]:
    """The gold examples by guid and, per gold name, how often each kind labels it."""
    found = get_task(task)
    path = gold_file(found, folder)
    probe = found.probe
    assert probe is not None
    examples, _ = probe.read(path.read_text(encoding="utf-8"), path.name)
    labelled: dict[str, Counter[str]] = defaultdict(Counter)
    for example in examples:
        for span in example.spans:
            if span.label in KIND_OF_LABEL:
                labelled[example.texts[span.field][span.start:span.end]][KIND_OF_LABEL[span.label]] += 1
    return {e.guid: e for e in examples}, labelled


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gold", type=Path, required=True, help="the data folder of the real NER dev set")
    parser.add_argument("--cases", action="store_true", help="also print each case with its kind")
    args = parser.parse_args(argv)
    ner, ner_labels = gold("ner", args.gold)
    _, re_labels = gold("re", RE_DEMO)
    table: dict[tuple[str, str, str], list[int]] = defaultdict(lambda: [0, 0])
    for path in sorted(READINGS.glob("*-name-swap*.tsv")):
        task = path.name.split("-")[0]
        if task == "wos":
            continue  # its slot values are a pool of their own (docs/probes.md)
        group = "final" if path.name in FINAL else "people-only" if path.name in PEOPLE_ONLY else "older"
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.startswith("#") or not line.strip():
                continue
            guid, natural, label, note = line.split("\t")[:4]
            old = note.split(" -> ")[0].strip().strip("'\"")
            if old in HAND:
                kind = HAND[old]
            elif task == "ner":
                example = ner[guid]
                kinds = {KIND_OF_LABEL.get(s.label) for s in example.spans if example.texts[s.field][s.start:s.end] == old}
                kind = kinds.pop() if len(kinds) == 1 and None not in kinds else "?"
            else:
                labels = re_labels if task == "re" else ner_labels
                kind = labels[old].most_common(1)[0][0] if old in labels else "?"
            valid = natural == "y" and label == "y"
            table[(group, task, kind)][0] += valid
            table[(group, task, kind)][1] += 1
            if args.cases:
                print(path.name, guid, old, kind, valid, sep="\t")
    for group in ("final", "people-only", "older"):
        for task in ("ner", "nli", "re", "all"):
            cells = []
            for kind in KINDS:
                ok = sum(v[0] for (g, t, k), v in table.items() if g == group and k == kind and task in (t, "all"))
                n = sum(v[1] for (g, t, k), v in table.items() if g == group and k == kind and task in (t, "all"))
                cells.append(f"{ok}/{n} ({ok / n:.0%})" if n else "-")
            print(f"| {group} | {task} | " + " | ".join(cells) + " |")
    unknown = sorted({k for (_, _, k) in table if k not in KINDS})
    if unknown:
        print("kinds outside the three:", {k: v for k, v in table.items() if k[2] in unknown}, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
