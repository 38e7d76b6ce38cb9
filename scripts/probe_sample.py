"""Draw the seeded sample of a behavioural test that a reader judges (docs/probes.md, "Validity"), and print each case's
source and perturbed text side by side with the edit marked, so that the reading can be repeated exactly.

    python scripts/probe_sample.py --task ner --gold ../shared/klue --test name-swap [--n 50] [--seed 7]

The sample is what `klue-viz probe make --tests TEST --per-test N --seed S` writes: the suite maker tries the examples
in an order drawn from the seed and stops at N cases, so the first N cases made are a seeded random draw of the cases
the test can make (all of them when it makes fewer). Each case is printed as

    [k] guid   gold: ...   (what the label-preserving judgement needs: entities, label, question and answers, state)
      - the source text, the changed stretch in ⟦ ⟧
      + the perturbed text, the new stretch in ⟦ ⟧

with long texts (MRC passages, WoS dialogues) cut to the sentence around each edit. `--judged FILE` prints, after each
case, the line already written for it in a judgement file (guid, natural y/n, label y/n, note), to check one against
the other.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from klue_viz.cli.probes import kind_list, name_sources
from klue_viz.probes.catalogue import DEFAULT_NAME_KINDS
from klue_viz.probes.make import Case, make_suite
from klue_viz.scoring.evaluate import gold_file
from klue_viz.tasks import TASKS, get_task
from klue_viz.tasks.probing import ProbeExample

#: How many characters of a long text are shown either side of an edit.
WINDOW = 70
OPEN, CLOSE = "⟦", "⟧"


def marked(text: str, stretches: Sequence[tuple[int, int]]) -> str:
    """The text with each start..end stretch put in ⟦ ⟧ (an empty stretch, an insertion point, shows as ⟦⟧), cut to
    WINDOW characters around the stretches when it is longer than that."""
    out, pos = [], 0
    for start, end in sorted(stretches):
        out += [text[pos:start], OPEN, text[start:end], CLOSE]
        pos = end
    out.append(text[pos:])
    joined = "".join(out)
    first, last = joined.find(OPEN), joined.rfind(CLOSE)
    if len(joined) <= 3 * WINDOW or first < 0:
        return joined
    head = max(0, first - WINDOW)
    tail = min(len(joined), last + WINDOW)
    return ("…" if head else "") + joined[head:tail] + ("…" if tail < len(joined) else "")


def gold_of(example: ProbeExample) -> str:
    """What the reader needs to judge whether the gold still holds: the label, and each span with its text."""
    parts = []
    if example.label is not None:
        parts.append(f"label={example.label}")
    for span in example.spans:
        parts.append(f"{example.texts[span.field][span.start:span.end]}:{span.label}")
    record = example.record if isinstance(example.record, dict) else {}
    if "qa" in record:
        parts.append(f"question field shown below; answers={[a['text'] for a in record['qa'].get('answers', [])]}")
    return "  ".join(parts)


def case_lines(k: int, case: Case) -> list[str]:
    """The printed block of one case: its guid and gold, then per edited field the source and perturbed text marked."""
    lines = [f"[{k}] {case.source.guid}   gold: {gold_of(case.example)}"]
    fields = list(dict.fromkeys(edit["field"] for edit in case.edits))
    for name in fields:
        own = [edit for edit in case.edits if edit["field"] == name]
        before = marked(case.source.texts[name], [(e["start"], e["end"]) for e in own])
        after = marked(case.example.texts[name], [(e["new_start"], e["new_end"]) for e in own])
        lines += [f"  {name}:", f"    - {before}", f"    + {after}"]
    for name, text in case.example.texts.items():
        if name not in fields and name in ("hypothesis", "premise", "question", "sentence1", "sentence2"):
            lines.append(f"  {name} (unchanged): {text}")
    if case.expect:
        lines.append(f"  expect: {case.expect}")
    return lines


def judged_lines(path: Path | None) -> dict[str, str]:
    """guid -> the judgement line already written for it (the first field of each line is the guid)."""
    if path is None or not path.exists():
        return {}
    return {line.split("\t")[0].split(" ")[0]: line for line in path.read_text(encoding="utf-8").splitlines() if line and not line.startswith("#")}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", required=True, choices=list(TASKS))
    parser.add_argument("--gold", required=True, help="the official dev file or its klue_benchmark/ folder")
    parser.add_argument("--test", required=True, help="one test id of the task")
    parser.add_argument("--n", type=int, default=50, help="how many cases to draw (default 50)")
    parser.add_argument("--seed", type=int, default=7, help="the suite's seed (default 7)")
    parser.add_argument("--judged", type=Path, help="a judgement file to print beside each case")
    parser.add_argument("--names", action="append", help="as `probe make --names`: more gold names for NER and RE name-swap")
    parser.add_argument("--name-kinds", type=kind_list, default=list(DEFAULT_NAME_KINDS),
                        help="as `probe make --name-kinds`: the kinds of name name-swap swaps (default: people)")
    args = parser.parse_args(argv)
    task = get_task(args.task)
    path = gold_file(task, Path(args.gold))
    suite = make_suite(task, path.read_text(encoding="utf-8"), path.name, tests=[args.test], per_test=args.n, seed=args.seed,
                       names_from=name_sources(task, path, args.names or ()), name_kinds=args.name_kinds)
    judged = judged_lines(args.judged)
    print(f"# {args.task} {args.test}: {len(suite.cases)} cases drawn (seed {args.seed}, at most {args.n}) of "
          f"{suite.tried[args.test]} examples tried; skipped: {dict(suite.skipped[args.test])}")
    for k, case in enumerate(suite.cases, 1):
        print("\n".join(case_lines(k, case)))
        if case.source.guid in judged:
            print(f"  judged: {judged[case.source.guid]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
