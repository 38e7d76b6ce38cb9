"""A run's headline numbers come from gold rows and parsed predictions (`row_statistics`), everything else
from its frames (`statistics`): the two must agree on every task, on the real dev sets, and under --strict.
And `klue-viz evaluate` must score without importing pandas, which costs more than the scoring."""

from __future__ import annotations

import json
import random
import subprocess
import sys

import pytest

from klue_viz.cli.evaluate import run_record
from klue_viz.metrics.official import DP_RELATIONS, NER_TAGS, NLI_LABELS
from klue_viz.reading.demo import DEMO_BENCHMARK, demo_runs
from klue_viz.scoring.evaluate import evaluate_bytes, evaluate_file, load_gold
from klue_viz.tasks import TASKS, get_task
from klue_viz.tasks.ner import tag_list
from tests.conftest import jsonl

REAL = {
    "ner": "klue-ner-v1.1/klue-ner-v1.1_dev.tsv", "dp": "klue-dp-v1.1/klue-dp-v1.1_dev.tsv", "nli": "klue-nli-v1.1/klue-nli-v1.1_dev.json",
    "sts": "klue-sts-v1.1/klue-sts-v1.1_dev.json", "wos": "wos-v1.1/wos-v1.1_dev_sample_10.json",
}


def assert_same(result) -> None:
    from_frames = result.task.score(result.frames)
    assert from_frames.values.keys() == result.scores.values.keys()
    for key, value in result.scores.values.items():
        other = from_frames.values[key]
        assert (value is None) == (other is None), (result.task.facts.name, key, value, other)
        if value is not None:
            assert value == pytest.approx(other, abs=1e-9), (result.task.facts.name, key)
    assert from_frames.reasons == result.scores.reasons


@pytest.mark.parametrize("name", list(TASKS))
def test_demo_runs_score_the_same_from_rows_and_from_frames(name):
    task = TASKS[name]
    gold = load_gold(task, DEMO_BENCHMARK)
    for run in demo_runs(name):
        assert_same(evaluate_file(task, gold, run))
        assert_same(evaluate_file(task, gold, run, strict=True))


def corrupted(name: str, row: dict, rng: random.Random) -> dict:
    """A plausible prediction for a gold row, wrong in places."""
    if name == "ner":
        return {"guid": row["guid"], "tags": [t if rng.random() > 0.05 else rng.choice(NER_TAGS) for t in tag_list(row["tags"])]}
    if name == "dp":
        n = row["n_words"]
        return {"guid": row["guid"], "head": [h if rng.random() > 0.1 else rng.randint(0, n) for h in row["heads"]],
                "deprel": [d if rng.random() > 0.1 else rng.choice(DP_RELATIONS) for d in row["deprels"]]}
    if name == "nli":
        return {"guid": row["guid"], "label": row["gold"] if rng.random() > 0.3 else rng.choice(NLI_LABELS)}
    if name == "sts":
        return {"guid": row["guid"], "score": min(5.0, max(0.0, row["gold"] + rng.gauss(0, 1)))}
    state = [s for s in row["gold_state"] if rng.random() > 0.1]
    return {"guid": row["guid"].rsplit("-", 1)[0], "turn": int(row["guid"].rsplit("-", 1)[1]), "state": state}


@pytest.mark.slow
@pytest.mark.parametrize("name", list(REAL))
def test_real_dev_sets_score_the_same_from_rows_and_from_frames(name, shared):
    task = get_task(name)
    gold = load_gold(task, shared / REAL[name])
    rng = random.Random(7)
    records = [corrupted(name, row, rng) for row in gold.rows]
    assert_same(evaluate_bytes(task, gold, jsonl(records), "all.jsonl"))
    some = evaluate_bytes(task, gold, jsonl(records[::3]), "a-third.jsonl", strict=True)
    assert some.coverage.n_missing > 0
    assert_same(some)


def out_records(task, gold, data: bytes, name: str, strict: bool = False) -> tuple[dict, dict]:
    """What `--out` writes of one run (calibration and crowd figures included) from the matched rows, and the same
    from the run's frames."""
    light = evaluate_bytes(task, gold, data, name, strict=strict)
    framed = evaluate_bytes(task, gold, data, name, strict=strict)
    assert framed.frames is not None and "frames" not in light.__dict__
    crowd = task.human_baseline(gold.rows) is not None
    return run_record(light, crowd=crowd), run_record(framed, crowd=crowd)


@pytest.mark.parametrize("name", list(TASKS))
def test_demo_runs_write_the_same_out_record_without_frames(name):
    task = TASKS[name]
    gold = load_gold(task, DEMO_BENCHMARK)
    for run in demo_runs(name):
        for strict in (False, True):
            light, framed = out_records(task, gold, run.read_bytes(), run.name, strict)
            assert light == framed, (name, run.name)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["nli", "sts"])
def test_real_dev_sets_write_the_same_crowd_and_calibration_without_frames(name, shared):
    """NLI with probabilities (some missing, some all on one label) and STS with its annotators' spread: the figures
    `--out` writes from the matched rows are the frames' own, key by key."""
    task = get_task(name)
    gold = load_gold(task, shared / REAL[name])
    rng = random.Random(11)
    records = []
    for k, row in enumerate(gold.rows):
        record = corrupted(name, row, rng)
        if name == "nli" and k % 7:
            weights = [rng.random() ** 2 for _ in NLI_LABELS]
            record["probs"] = [w / sum(weights) for w in weights] if k % 13 else [1.0, 0.0, 0.0]
        if k % 5 or name == "sts":
            records.append(record)
    light, framed = out_records(task, gold, jsonl(records), "run.jsonl", strict=True)
    assert light == framed
    expected = {"nli": {"calibration", "vote_cross_entropy"}, "sts": {"error_vs_spread"}}[name]
    assert expected <= light.keys()


@pytest.mark.slow
@pytest.mark.parametrize("task_name", ["ner", "nli", "sts"])
def test_evaluate_scores_without_pandas(shared, tmp_path, task_name):
    """The whole CLI run imports neither pandas nor the app's libraries, also with --out (calibration and the crowd
    figures come from the matched rows); its numbers are the in-process ones. NLI and STS keep their annotators: the
    human baseline is printed without them too."""
    task = get_task(task_name)
    gold = load_gold(task, shared / REAL[task_name])
    rng = random.Random(3)
    pred = tmp_path / f"{task_name}.jsonl"
    pred.write_bytes(jsonl([corrupted(task_name, row, rng) for row in gold.rows[:500]]))
    code = ("import sys; from klue_viz.cli.main import main; status = main(sys.argv[1:]); "
            "print([m for m in ('pandas', 'pyarrow', 'sklearn', 'scipy', 'streamlit', 'plotly', 'datasets', 'sqlalchemy') "
            "if m in sys.modules and not type(sys.modules[m]).__name__.startswith('_Lazy')]); sys.exit(status)")
    out = tmp_path / "metrics.json"
    command = ["evaluate", "--task", task_name, "--gold", str(shared / REAL[task_name]), "--pred", str(pred)]
    done = subprocess.run([sys.executable, "-c", code, *command, "--out", str(out)], capture_output=True, text=True, check=True)
    assert done.stdout.strip().splitlines()[-1] == "[]", done.stdout
    assert ("== human baseline" in done.stdout) == (task_name != "ner")
    expected = evaluate_file(task, gold, pred).scores.values
    run_lines = done.stdout.split("== human baseline")[0].splitlines()  # the baseline's own line reads like a metric's
    shown = {line.split()[0]: float(line.split()[1]) for line in run_lines if line.strip().startswith(tuple(expected))}
    assert shown == {key: round(value, 2) for key, value in expected.items()}
    assert json.loads(out.read_text(encoding="utf-8"))["metrics"] == expected
