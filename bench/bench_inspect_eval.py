"""What reading a large Inspect AI `.eval` log costs `klue-viz evaluate`: CPU seconds and peak memory (issue 29 item 4).

    python bench/bench_inspect_eval.py [--samples 20000] [--pad-mb 0] [--tree PATH]

The log is made from a real one (tests/data/harness/inspect_nli.eval, written by Inspect AI's mockllm): its header
and members are kept, and its first sample is copied to `--samples` samples with new ids (the first four keep their
demo guids, so some match the demo gold), each member Zstandard-compressed as Inspect writes it. Then a whole
`klue-viz evaluate --pred big.eval` process runs from `--tree` (default: this checkout; give an unpacked older commit
to compare) and its CPU seconds (user + system) and peak resident memory are read by /usr/bin/time. The goal: 20,000
samples under 20 CPU s and 500 MB. `--pad-mb N` pads the first sample's metadata with N MB of white space instead
(the probe's bomb: a small `.eval` whose one member unpacks to hundreds of MB).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import zipfile_zstd  # noqa: F401  # patches zipfile to write Zstandard members, as inspect_ai does

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "tests" / "data" / "harness" / "inspect_nli.eval"


def big_log(out: Path, samples: int, pad_mb: float = 0) -> int:
    """A copy of the fixture log with `samples` samples, the first padded by `pad_mb` MB; the bytes written."""
    with zipfile.ZipFile(FIXTURE) as source:
        names = source.namelist()
        sample_names = [n for n in names if n.startswith("samples/")]
        first = json.loads(source.read(sample_names[0]))
        with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_ZSTANDARD) as target:  # type: ignore[attr-defined]
            for name in names:
                if not name.startswith("samples/"):
                    target.writestr(name, source.read(name))
            for k, name in enumerate(sample_names):
                if k == 0 and pad_mb:
                    target.writestr(name, json.dumps(dict(first, metadata={"padding": " " * int(pad_mb * 1024 * 1024)})))
                else:
                    target.writestr(name, source.read(name))
            for k in range(len(sample_names), samples):
                copy = dict(first, id=f"klue-nli-v1_dev_{90000 + k:06d}-copy", uuid=f"copy-{k}")
                target.writestr(f"samples/{copy['id']}_epoch_1.json", json.dumps(copy, ensure_ascii=False))
    return out.stat().st_size


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--samples", type=int, default=20000)
    parser.add_argument("--pad-mb", type=float, default=0, help="pad the first sample to this many MB")
    parser.add_argument("--tree", type=Path, default=ROOT, help="the klue-viz checkout to run (an unpacked older commit to compare)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        log = Path(folder) / "big.eval"
        size = big_log(log, args.samples, args.pad_mb)
        # /usr/bin/time measures the klue-viz process alone: getrusage's children maximum would count this process's
        # own memory (the padded log it built) in the forked child before its exec
        done = subprocess.run(["/usr/bin/time", "-f", "%U %S %M", sys.executable, "-m", "klue_viz.cli.main", "evaluate", "--task", "nli",
                               "--gold", str(args.tree / "klue_viz" / "demo" / "klue_benchmark"), "--pred", str(log)],
                              cwd=args.tree, env={**os.environ, "PYTHONPATH": str(args.tree)}, capture_output=True, text=True)
    *said, measured = [line for line in done.stderr.strip().splitlines() if not line.startswith("Command exited")]
    user, system, peak_kb = measured.split()
    print(f"{args.samples:,} samples{f' (the first padded by {args.pad_mb:g} MB)' if args.pad_mb else ''}, .eval of {size / 1e6:.1f} MB, "
          f"tree {args.tree}: rc {done.returncode}, {float(user) + float(system):.1f} CPU s, peak {int(peak_kb) / 1024:.0f} MB")
    shown = (done.stdout.strip().splitlines() + said)[-1:]
    print(shown[0][:300] if shown else "")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
