"""`klue-viz probe make` on each real dev set: CPU seconds per task (issue 30's goal: at most 20 per task).

    python bench/bench_probes.py [--shared ../shared/klue]

Each task runs in its own process (`klue-viz probe make --task T --gold DEV --out TMP`), so the analyzer's model
load (about 1.5 CPU s) is counted for every task, as a user running one command pays it; the CPU seconds are the
child's user + system time (resource.getrusage), so other work on a shared machine does not count. Also reported:
the CPU a bare `Kiwi()` costs, and whether `klue-viz evaluate` loads kiwipiepy (it must not).
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEV_SETS = {"ner": "klue-ner-v1.1/klue-ner-v1.1_dev.tsv", "nli": "klue-nli-v1.1/klue-nli-v1.1_dev.json",
            "sts": "klue-sts-v1.1/klue-sts-v1.1_dev.json", "dp": "klue-dp-v1.1/klue-dp-v1.1_dev.tsv",
            "wos": "wos-v1.1/wos-v1.1_dev_sample_10.json"}
DEMO = {"ynat": "ynat-v1.1/ynat-v1.1_dev.json", "re": "klue-re-v1.1/klue-re-v1.1_dev.json", "mrc": "klue-mrc-v1.1/klue-mrc-v1.1_dev.json"}


def child_cpu(command: list[str]) -> tuple[float, str]:
    """CPU seconds (user + system) of one child process, and its output."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(command, capture_output=True, text=True, cwd=REPO, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime, done.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", default=str(REPO.parent / "shared" / "klue"))
    args = parser.parse_args()
    files = {task: Path(args.shared) / rel for task, rel in DEV_SETS.items()}
    files.update({f"{task} (demo)": REPO / "klue_viz" / "demo" / "klue_benchmark" / rel for task, rel in DEMO.items()})
    load, _ = child_cpu([sys.executable, "-c", "import kiwipiepy; kiwipiepy.Kiwi()"])
    print(f"Kiwi() alone: {load:.1f} CPU s")
    with tempfile.TemporaryDirectory() as folder:
        for label, path in files.items():
            task = label.split()[0]
            cpu, out = child_cpu([sys.executable, "-m", "klue_viz.cli.main", "probe", "make", "--task", task, "--gold", str(path),
                                  "--out", str(Path(folder) / task)])
            cases = sum(int(line.split(":")[1].split()[0]) for line in out.splitlines() if "cases" in line)
            print(f"{label:>12}: {cpu:5.1f} CPU s, {cases:,} cases")
    probe = ("import sys; from klue_viz.cli.main import main; "
             f"main(['evaluate', '--task', 'nli', '--gold', {str(files['nli'])!r}, '--pred', {str(files['nli'])!r}]); "
             "print('kiwipiepy loaded by evaluate:', 'kiwipiepy' in sys.modules, file=sys.stderr)")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=REPO)
    print(done.stderr.strip().splitlines()[-1])


if __name__ == "__main__":
    main()
