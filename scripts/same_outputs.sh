#!/usr/bin/env bash
# Whether two commits produce the same CLI outputs (a refactoring's "no behaviour change", issue 14).
#
#   scripts/same_outputs.sh BEFORE AFTER [SHARED]     # e.g. scripts/same_outputs.sh f8f018e 20248e5 ../shared/klue
#
# Each commit is unpacked with `git archive` and runs `evaluate`, `slices`, `suspects`, `errors` and `report` (each
# with --out) on every embedded demo run (against the demo gold of BEFORE) and on one noisy run of each real dev set
# in SHARED (made once, by bench/bench_runs.py's noisy_run). Then every output file and every printed line is
# compared, less the two things that differ by design: the output folder's name and the report's time stamp.
# Prints each file that differs and exits 1 if any does.
set -euo pipefail
before=$1 after=$2
shared=$(realpath "${3:-../shared/klue}")
repo=$(git rev-parse --show-toplevel)
py=${PYTHON:-$repo/.venv/bin/python}
work=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT

for side in before after; do
  mkdir -p "$work/$side/tree" "$work/$side/out"
  git -C "$repo" archive "${!side}" | tar -x -C "$work/$side/tree"
done
demo=$work/before/tree/klue_viz/demo

mkdir -p "$work/preds"
(cd "$repo/bench" && PYTHONPATH="$repo" "$py" - "$shared" "$work/preds" <<'EOF'
import sys
from pathlib import Path
import bench_runs
from klue_viz.scoring.evaluate import load_gold
from klue_viz.tasks import get_task
shared, out = Path(sys.argv[1]), Path(sys.argv[2])
for name in bench_runs.REAL:
    gold = load_gold(get_task(name), shared)
    (out / f"{name}-noisy.jsonl").write_text(bench_runs.noisy_run(name, gold, 7), encoding="utf-8")
EOF
)

run() {  # side task gold pred label
  local tree=$work/$1/tree out=$work/$1/out/$5 command cli=klue_viz.cli
  [ -f "$tree/klue_viz/cli/main.py" ] && cli=klue_viz.cli.main  # the command line moved into its folder
  for command in evaluate slices suspects errors; do
    (cd "$tree" && PYTHONPATH="$tree" "$py" -m "$cli" "$command" --task "$2" --gold "$3" --pred "$4" --out "$out.$command.json" \
      >"$out.$command.txt" 2>&1) || true
  done
  (cd "$tree" && PYTHONPATH="$tree" "$py" -m "$cli" report --task "$2" --gold "$3" --pred "$4" --out "$out.report.html" \
    >"$out.report.txt" 2>&1) || true
}

for side in before after; do
  for folder in "$demo"/runs/*/; do
    task=$(basename "$folder")
    for pred in "$folder"*; do run "$side" "$task" "$demo/klue_benchmark" "$pred" "demo-$task-$(basename "$pred")"; done
  done
  for pred in "$work"/preds/*; do
    name=$(basename "$pred")
    run "$side" "${name%%-*}" "$shared" "$pred" "real-$name"
  done
done

normal() { sed -E "s#$work/(before|after)#WORK#g; s#report · [0-9-]+ [0-9:]+ UTC#report · TIME#" "$1"; }
compared=0 differ=0
for file in "$work"/before/out/* "$work"/after/out/*; do
  name=$(basename "$file")
  [ "$file" = "$work/after/out/$name" ] && [ -e "$work/before/out/$name" ] && continue  # a pair is counted once
  compared=$((compared + 1))
  if [ ! -e "$work/before/out/$name" ] || [ ! -e "$work/after/out/$name" ] \
     || ! cmp -s <(normal "$work/before/out/$name") <(normal "$work/after/out/$name"); then
    differ=$((differ + 1))
    echo "differs: $name"
  fi
done
echo "$compared outputs compared, $differ differ ($before -> $after)"
[ "$differ" -eq 0 ]
