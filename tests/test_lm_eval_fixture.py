"""The lm-eval reader on logs lm-evaluation-harness itself wrote, kept in tests/data/harness/lm_eval/ (its dummy model on
the first three demo NLI pairs; scripts/make_harness_fixtures.py), so it is tested without the harness extra.

Expected values are read off the log by hand (the log-likelihoods below are the file's), or from the harness's own
results file beside it, never from klue_viz.scoring.harness."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from scipy.special import softmax

from klue_viz.core.problems import InputError
from klue_viz.reading.answers import UNREADABLE
from klue_viz.reading.demo import DEMO_BENCHMARK
from klue_viz.reading.prediction_files import expand_path
from klue_viz.scoring.benchmark import evaluate_folder
from klue_viz.scoring.evaluate import evaluate_bytes, evaluate_file, load_gold
from klue_viz.tasks import TASKS

LOGS = Path(__file__).parent / "data" / "harness" / "lm_eval"
GUIDS = [f"klue-nli-v1_dev_0000{k}-demo" for k in range(3)]
#: The dummy model's log-likelihoods of the choices 참 / 중립 / 거짓 (entailment, neutral, contradiction) per document.
LOGLIKELIHOODS = [(-0.15457051471078964, -0.9547186557023949, -0.154551400089043),
                  (-0.8338892941512318, -0.04106280627180747, -0.38618352833582825),
                  (-0.3495923019636925, -0.3417077927504538, -0.8164630567142304)]


def log(task: str) -> Path:
    return next(LOGS.glob(f"samples_{task}_2*.jsonl"))


@pytest.fixture(scope="module")
def demo_gold():
    return load_gold(TASKS["nli"], DEMO_BENCHMARK)


def test_the_kept_log_is_the_one_the_numbers_below_were_read_from():
    rows = [json.loads(line) for line in log("klue_nli_mc").read_text(encoding="utf-8").splitlines()]
    assert [r["doc"]["guid"] for r in rows] == GUIDS
    assert [tuple(float(pair[0]) for pair in r["filtered_resps"]) for r in rows] == LOGLIKELIHOODS
    assert [[r["arguments"][f"gen_args_{k}"]["arg_1"] for k in range(3)] for r in rows] == [[" 참", " 중립", " 거짓"]] * 3


def test_multiple_choice_log_labels_probabilities_and_the_harness_acc(demo_gold):
    """By hand: the most likely choice is 거짓 (by 2e-5 over 참), 중립, 중립; gold entailment, neutral, contradiction: 1 of 3."""
    result = evaluate_file(TASKS["nli"], demo_gold, log("klue_nli_mc"))
    examples = result.frames.examples.set_index("guid").loc[GUIDS]
    assert list(examples["pred"]) == ["contradiction", "neutral", "neutral"]
    assert list(examples["gold"]) == ["entailment", "neutral", "contradiction"]
    assert result.scores.values["accuracy"] == pytest.approx(100 / 3)
    harness = json.loads(next(LOGS.glob("results_*.json")).read_text(encoding="utf-8"))["results"]["klue_nli_mc"]
    assert result.scores.values["accuracy"] == pytest.approx(100 * harness["acc,none"])
    for guid, scores in zip(GUIDS, LOGLIKELIHOODS):
        assert examples.loc[guid, "probs"] == pytest.approx(list(softmax(scores)))
    assert result.log.model == "dummy" and result.log.harness_metrics["acc"] == harness["acc,none"]
    assert result.coverage.n_scored == 3 and result.coverage.unreadable_answers == 0
    assert any("by their text" in note for note in result.notes)


def test_generation_log_is_one_run_per_filter_all_unreadable(demo_gold):
    """The dummy model generates "lol": the flexible filter keeps it, strict-match's regex finds nothing ("[invalid]")."""
    runs = expand_path(log("klue_nli_gen"))
    assert sorted(Path(r.name).stem for r in runs) == [f"{log('klue_nli_gen').stem}-{name}" for name in ("flexible", "strict-match")]
    for run in runs:
        result = evaluate_bytes(TASKS["nli"], demo_gold, run.data, run.name)
        assert result.coverage.n_scored == 3 and result.coverage.unreadable_answers == 3
        assert result.scores.values["accuracy"] == 0.0 and set(result.frames.examples["error_type"]) == {UNREADABLE}
        assert result.log.harness_metrics == {"exact_match": 0.0}
    texts = {result.log.filter: set(result.frames.examples["answer_text"])
             for result in (evaluate_bytes(TASKS["nli"], demo_gold, r.data, r.name) for r in runs)}
    assert texts == {"flexible": {"lol"}, "strict-match": {"[invalid]"}}
    with pytest.raises(InputError, match="holds 2 runs"):
        evaluate_file(TASKS["nli"], demo_gold, log("klue_nli_gen"))


def test_the_folder_the_harness_wrote_is_routed_to_nli():
    done = evaluate_folder(DEMO_BENCHMARK, LOGS)
    assert done.failures == []
    assert sorted((run.task, run.result.coverage.n_scored, run.result.coverage.unreadable_answers) for run in done.runs) == [
        ("nli", 3, 0), ("nli", 3, 3), ("nli", 3, 3)]
