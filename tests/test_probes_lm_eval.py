"""`probe make --format lm-eval` for every task whose LLM answers klue-viz parses: the written task YAMLs run for real
by lm-evaluation-harness (offline, its `dummy` model, `--log_samples`) over a suite of the demo set, and the sample logs
read back by `klue-viz probe score` and `klue-viz evaluate`. Skipped when the harness extra is not installed.

What is checked comes from outside the code under test: the documents the harness logged are read from its sample
log, the targets it rendered from the suite's gold file read here, and the dummy model's answer ("lol" for every
generation) from the log itself."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import pytest
from harness_runs import lm_eval_binary, run_lm_eval

from klue_viz.cli.main import main
from klue_viz.tasks import TASKS

REPO = Path(__file__).resolve().parents[1]
DEMO = REPO / "klue_viz" / "demo" / "klue_benchmark"
#: Every task with a probe part whose LLM answers klue-viz reads (each has `parse_answer`: all eight).
PROBED = sorted(name for name, task in TASKS.items() if task.probe is not None)
#: The NLI prompt asks for 참 / 중립 / 거짓 (examples/lm_eval/klue_nli_gen.yaml).
NLI_KOREAN = {"entailment": "참", "neutral": "중립", "contradiction": "거짓"}

needs_lm_eval = pytest.mark.skipif(lm_eval_binary() is None, reason="lm-evaluation-harness is not installed (pip install -e '.[harness]')")
pytestmark = [pytest.mark.slow, needs_lm_eval]


@pytest.fixture(scope="module")
def harness_run(tmp_path_factory) -> tuple[Path, Path]:
    """Every task's suite made from its demo file with the CLI (`--format lm-eval`), then all their harness tasks run
    in one lm_eval call (their YAMLs gathered in one include folder: their data paths are absolute)."""
    root = tmp_path_factory.mktemp("lm-eval-suites")
    include = root / "include"
    include.mkdir()
    for name in PROBED:
        out = root / name
        assert main(["probe", "make", "--task", name, "--gold", str(DEMO), "--out", str(out), "--per-test", "4", "--seed", "2",
                     "--format", "lm-eval"]) == 0
        for yaml in (out / "lm_eval").glob("*.yaml"):
            shutil.copy(yaml, include / yaml.name)
    tasks = tuple(f"klue_{name}_{kind}" for name in PROBED for kind in ("probes", "probe_sources"))
    return root, run_lm_eval(include, root / "logs", tasks=tasks, limit=None)


def samples(results: Path, task: str) -> Path:
    found = sorted(results.glob(f"samples_{task}_2*.jsonl"))
    assert len(found) == 1, found
    return found[0]


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def gold_targets(name: str, suite: Path) -> dict[tuple[str, int | None], str]:
    """(guid, turn) -> the target the task's YAML should render, read from the suite's gold file here."""
    gold = suite / TASKS[name].probe.file_name
    if name in ("nli", "ynat", "re"):
        field = {"nli": "gold_label", "ynat": "label", "re": "label"}[name]
        records = json.loads(gold.read_text(encoding="utf-8"))
        return {(r["guid"], None): NLI_KOREAN[r[field]] if name == "nli" else r[field] for r in records}
    if name == "sts":
        return {(r["guid"], None): str(r["labels"]["label"]) for r in json.loads(gold.read_text(encoding="utf-8"))}
    if name == "mrc":
        data = json.loads(gold.read_text(encoding="utf-8"))["data"]
        return {(qa["guid"], None): (qa["answers"][0]["text"] if qa["answers"] else "") for d in data for p in d["paragraphs"] for qa in p["qas"]}
    if name == "wos":
        out = {}
        for dialogue in json.loads(gold.read_text(encoding="utf-8")):
            user = [turn for turn in dialogue["dialogue"] if turn["role"] == "user"]
            out.update({(dialogue["guid"], k): ", ".join(turn.get("state", [])) or "없음" for k, turn in enumerate(user)})
        return out
    # NER and DP: TSV blocks; NER's target is the markup on the guid line, DP's the arcs "index word head relation"
    out, blocks = {}, gold.read_text(encoding="utf-8").split("\n\n")
    for block in blocks:
        rows = block.split("\n")
        if not rows[0].startswith("## klue-"):
            continue
        guid, text = rows[0][3:].split("\t", 1)
        if name == "ner":
            out[(guid, None)] = text
        else:
            cells = [row.split("\t") for row in rows[1:] if row]
            out[(guid, None)] = "\n".join(f"{c[0]} {c[1]} {c[4]} {c[5]}" for c in cells)
    return out


@pytest.mark.parametrize("name", PROBED)
def test_the_harness_runs_every_case_and_probe_score_reads_its_logs_back(name, harness_run, tmp_path):
    root, results = harness_run
    suite = root / name
    manifest = lines(suite / "manifest.jsonl")
    assert manifest, "no case made"
    probes_log, sources_log = samples(results, f"klue_{name}_probes"), samples(results, f"klue_{name}_probe_sources")
    logged = lines(probes_log)
    # the harness ran one document per case (WoS: per user turn), kept its guid, and rendered the gold as its target
    expected = gold_targets(name, suite)
    assert {(r["doc"]["guid"], r["doc"].get("turn")) for r in logged} == set(expected)
    assert {r["doc"]["guid"] for r in logged} == {line["guid"] for line in manifest}
    assert [r["target"] for r in logged] == [expected[(r["doc"]["guid"], r["doc"].get("turn"))] for r in logged]
    assert {r["resps"][0][0] for r in logged} == {"lol"}  # the dummy model's one answer
    assert {r["doc"]["guid"] for r in lines(sources_log)} == {line["source_guid"] for line in manifest}

    out = tmp_path / "probe.json"
    assert main(["probe", "score", "--task", name, "--probes", str(suite), "--pred", str(probes_log), "--source-pred", str(sources_log),
                 "--out", str(out)]) == 0
    tests = {t["test"]: t for t in json.loads(out.read_text(encoding="utf-8"))["runs"][0]["tests"]}
    made = Counter(line["test"] for line in manifest)
    assert {test: t["n"] for test, t in tests.items() if t["n"]} == dict(made)
    assert all(t["unpredicted"] == 0 for t in tests.values())
    # "lol" is unreadable on both sides of every pair: the same (unreadable) answer, so no INV case fails, and a DIR
    # negation case (answer: no label) is not entailment, so it passes too
    assert all(t["failures"] == 0 for t in tests.values())

    report = tmp_path / "evaluate.json"
    assert main(["evaluate", "--task", name, "--gold", str(suite / TASKS[name].probe.file_name), "--pred", str(probes_log),
                 "--out", str(report)]) == 0
    coverage = json.loads(report.read_text(encoding="utf-8"))["runs"][0]["coverage"]
    assert coverage["n_scored"] == len(expected)
    # "lol" names no label, number, entity markup, arcs or state; for MRC any text is an answer (scored wrong, not unreadable)
    assert coverage["unreadable_answers"] == (0 if name == "mrc" else len(expected))
