"""`klue-viz evaluate --out` as a whole process against a plain numpy scorer of the same task, on the real dev sets.

    python bench/bench_evaluate.py [--shared ../shared/klue] [--repeat 5] [--before PATH] [--tasks ner,dp,nli,sts,wos]

For each task with a real dev set, one plausible run (the gold with seeded errors, bench_core.predictions; NLI with
class probabilities, so `--out` writes calibration and the vote cross-entropy; STS against its annotators' spread) is
written as a JSONL. Timed, in CPU seconds (user + system, getrusage of the children, median of --repeat after one
warm-up run that writes the bytecode): `klue-viz evaluate --task X --gold G --pred P --out O`, the CI path, and the
plain scorer of bench/plain/X.py (json + numpy, nothing of klue-viz) on the same files. The ratio is the first over
the second; issue 28's goal is at most 1.0 on every task. The first row, `floor`, is what both sides pay before any
work: Python importing json and numpy (the plain column), and klue-viz's `evaluate` command imported with its parser
built (`build_parser("evaluate")`), nothing read. The machine's load average is printed at the start and the
end: on a shared machine both sides slow down, and the ratio with them (the sides of a task take turns in every round,
so that a change of load falls on all of them alike).
`--before PATH` times a second checkout of klue-viz (e.g. `git archive 278c29d | tar -x -C /tmp/before`) in the same
run, for before/after figures side by side. Each run's metrics are checked against the plain scorer's (1e-9).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_core import CHILD_ENV, GOLD_FILES, predictions

from klue_viz.metrics.official import DP_RELATIONS, NLI_LABELS
from klue_viz.scoring.evaluate import load_gold
from klue_viz.tasks import get_task

PLAIN = Path(__file__).resolve().parent / "plain"
#: The `evaluate` command imported and its parser built, nothing read (d663be4's build_parser builds every command's).
FLOOR = ("import inspect, klue_viz.cli.evaluate, klue_viz.cli.main as m\n"
         "m.build_parser(*(['evaluate'] if inspect.signature(m.build_parser).parameters else []))")
REPO = Path(__file__).resolve().parents[1]


def run_of(name: str, gold) -> list[dict]:
    """bench_core's plausible run, with NLI probabilities (argmax = the label) and DP relations wrong in places."""
    rng = random.Random(5)
    records = predictions(name, gold, rng)
    for record in records:
        if name == "nli":
            weights = [rng.random() ** 2 for _ in NLI_LABELS]
            weights[NLI_LABELS.index(record["label"])] = max(weights) + 0.5
            record["probs"] = [w / sum(weights) for w in weights]
        if name == "dp":
            record["deprel"] = [d if rng.random() > 0.05 else rng.choice(DP_RELATIONS) for d in record["deprel"]]
    return records


def cpu_of(commands: list[tuple[list[str], str | None]], repeat: int) -> list[tuple[float, str]]:
    """Median CPU seconds and last stdout of each (command, root) child process, after one warm-up run of each that writes
    its bytecode; the commands take turns in every round, so a change of the machine's load falls on all of them alike.
    `root`: the klue-viz checkout it runs (its PYTHONPATH and working folder: `python -m` puts the working folder first)."""
    envs = [{**CHILD_ENV, **({"PYTHONPATH": root} if root else {})} for _, root in commands]
    for (command, root), env in zip(commands, envs):
        subprocess.run(command, check=True, capture_output=True, env=env, cwd=root)
    times: list[list[float]] = [[] for _ in commands]
    outs = [""] * len(commands)
    for _ in range(repeat):
        for k, ((command, root), env) in enumerate(zip(commands, envs)):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            outs[k] = subprocess.run(command, check=True, capture_output=True, env=env, text=True, cwd=root).stdout
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            times[k].append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return [(statistics.median(t), out) for t, out in zip(times, outs)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--shared", default=str(REPO.parent.parent / "shared" / "klue") if not (REPO.parent / "shared").is_dir()
                        else str(REPO.parent / "shared" / "klue"))
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--before", default="", help="another klue-viz checkout to time the same way (its root folder)")
    parser.add_argument("--tasks", default="ner,dp,nli,sts,wos")
    args = parser.parse_args()
    shared = Path(args.shared)
    checkouts = [("after", str(REPO))] + ([("before", str(Path(args.before).resolve()))] if args.before else [])
    header = f"{'task':5} {'plain':>7}" + "".join(f" {label:>8} {'ratio':>6}" for label, _ in checkouts)
    print(f"CPU s of a whole process, median of {args.repeat}; plain = bench/plain/<task>.py on the same files; "
          f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}\n{header}")
    failed = False
    (floor, _), *floors = cpu_of([([sys.executable, "-c", "import json, numpy"], None)]
                                 + [([sys.executable, "-c", FLOOR], root) for _, root in checkouts], args.repeat)
    line = f"{'floor':5} {floor:7.3f}" + "".join(f" {ours:8.3f} {ours / floor:6.2f}" for ours, _ in floors)
    print(line + "  (python importing json and numpy; klue-viz's evaluate command imported and its parser built, nothing read)",
          flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.tasks.split(","):
            task = get_task(name)
            gold_path = shared / GOLD_FILES[name]
            gold = load_gold(task, gold_path)
            pred = Path(tmp) / f"{name}.jsonl"
            pred.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in run_of(name, gold)), encoding="utf-8")
            commands = [([sys.executable, str(PLAIN / f"{name}.py"), str(gold_path), str(pred)], None)]
            for label, root in checkouts:
                commands.append(([sys.executable, "-m", "klue_viz.cli.main", "evaluate", "--task", name, "--gold", str(gold_path),
                                  "--pred", str(pred), "--out", str(Path(tmp) / f"{name}-{label}.json")], root))
            (plain, printed), *ours_each = cpu_of(commands, args.repeat)
            expected = json.loads(printed)
            line = f"{name:5} {plain:7.3f}"
            for (label, _), (ours, _) in zip(checkouts, ours_each):
                out = Path(tmp) / f"{name}-{label}.json"
                line += f" {ours:8.3f} {ours / plain:6.2f}"
                metrics = json.loads(out.read_text(encoding="utf-8"))["metrics"]
                wrong = {k: (v, metrics.get(k)) for k, v in expected.items() if metrics.get(k) is None or abs(metrics[k] - v) > 1e-9}
                if wrong:
                    failed = True
                    line += f" (metrics differ from the plain scorer's: {wrong})"
            print(line, flush=True)
    print(f"load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
