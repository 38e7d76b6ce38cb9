"""CPU seconds of the answer parsers (NLI, YNAT, MRC) on hostile generated answers, at two lengths.

    python bench/bench_answers.py [--length 100000]

Each hostile text is read at `length` and at twice `length` characters; the ratio of the two CPU times
(time.process_time) shows whether reading grows linearly (about 2) or worse (about 4 for quadratic). Nothing a
user sends may hang the parser (issue 27): the texts aim at each scan of klue_viz/reading/answers.py and the MRC
reader of klue_viz/tasks/mrc.py — near-forms, negations, questions, option lists, nested brackets, repeated
prefixes, copulas, long whitespace and lines.
"""

from __future__ import annotations

import argparse
import time

from klue_viz.tasks import TASKS

HOSTILE = {
    "near forms and negations": lambda n: ("참이 아니 모순도 " * n)[:n],
    "english negations": lambda n: ("not neither nor entailment " * n)[:n],
    "questions and replies": lambda n: ("중립? 아니요. " * n)[:n],
    "option lists": lambda n: ("참/거짓/" * n)[:n] + " 중",
    "nested brackets": lambda n: "[" * (n // 2) + "참" + "]" * (n // 2),
    "repeated prefixes": lambda n: ("정답: " * n)[:n] + "참",
    "copulas and dashes": lambda n: ("서울입니다 - 이며, as " * n)[:n],
    "whitespace then a parenthesis": lambda n: "서울" + " " * (n // 2) + "(" + "가" * (n // 2),
    "many lines": lambda n: ("정답\n" * n)[:n],
    "many answer lines": lambda n: ("정답: 참이\n" * n)[:n],
    "labels and replies in one sentence": lambda n: ("정치 네 중립 아니요 " * n)[:n],
    "one long word": lambda n: "가" * n,
}


def cpu_seconds(task: str, text: str) -> float:
    started = time.process_time()
    TASKS[task].parse_answer(text, {})
    return time.process_time() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--length", type=int, default=100_000)
    args = parser.parse_args()
    print(f"{'text':32} {'task':5} {'CPU s at n':>11} {'at 2n':>8} {'ratio':>6}")
    for name, make in HOSTILE.items():
        for task in ("nli", "ynat", "mrc"):
            short, long = cpu_seconds(task, make(args.length)), cpu_seconds(task, make(2 * args.length))
            ratio = long / short if short > 1e-4 else float("nan")
            print(f"{name:32} {task:5} {short:11.3f} {long:8.3f} {ratio:6.1f}")


if __name__ == "__main__":
    main()
