"""Evaluation-harness logs as prediction files, made by the real tools: lm-evaluation-harness (`lm_eval --model dummy
--log_samples`) and Inspect AI (`mockllm/model`) run offline over the real KLUE-NLI dev file in the test, and small
fixtures the real tools made over the embedded demo (tests/data/harness/, scripts/make_harness_fixtures.py).
Expected values come from reading the logs here, independently of klue_viz.reading.harness."""

from __future__ import annotations

import gzip
import importlib.util
import io
import json
import math
import shutil
import zipfile
from pathlib import Path

import pytest
from harness_runs import HF_ORDER, KOREAN, lm_eval_binary, run_inspect, run_lm_eval, write_tasks
from scipy.special import softmax

from klue_viz.cli.main import main
from klue_viz.core.problems import InputError
from klue_viz.outputs.answer_card import card_with_answers
from klue_viz.reading.answers import UNREADABLE
from klue_viz.reading.demo import DEMO_BENCHMARK
from klue_viz.reading.prediction_files import expand, expand_path
from klue_viz.scoring.benchmark import detect_file_task, evaluate_folder, prediction_files
from klue_viz.scoring.evaluate import evaluate_bytes, evaluate_file, load_gold
from klue_viz.scoring.llm_outputs import softmax as ours
from klue_viz.tasks import TASKS
from tests.conftest import SHARED

NLI_DEV = SHARED / "klue-nli-v1.1" / "klue-nli-v1.1_dev.json"
FIXTURES = Path(__file__).parent / "data" / "harness"
LIMIT = 40
BY_KOREAN = {v: k for k, v in KOREAN.items()}

needs_lm_eval = pytest.mark.skipif(lm_eval_binary() is None, reason="lm-evaluation-harness is not installed (pip install -e '.[harness]')")
needs_inspect = pytest.mark.skipif(importlib.util.find_spec("inspect_ai") is None, reason="Inspect AI is not installed (pip install -e '.[harness]')")
needs_klue = pytest.mark.skipif(not NLI_DEV.exists(), reason="the real KLUE-NLI dev file is not in ../shared/klue")


@pytest.fixture(scope="module")
def nli_gold():
    return load_gold(TASKS["nli"], SHARED)


@pytest.fixture(scope="module")
def klue_rows():
    return {row["guid"]: row for row in json.loads(NLI_DEV.read_text(encoding="utf-8"))}


@pytest.fixture(scope="module")
def lm_eval_logs(tmp_path_factory):
    """One lm_eval run of the five task YAMLs over the first LIMIT real dev pairs: the folder it wrote."""
    if lm_eval_binary() is None or not NLI_DEV.exists():
        pytest.skip("needs lm-evaluation-harness and ../shared/klue")
    work = tmp_path_factory.mktemp("lm_eval")
    write_tasks(work / "tasks", NLI_DEV)
    return run_lm_eval(work / "tasks", work / "out", limit=LIMIT)


def samples(folder: Path, task: str) -> Path:
    return next(folder.glob(f"samples_{task}_2*.jsonl"))


def harness_results(folder: Path) -> dict:
    return json.loads(next(folder.glob("results_*.json")).read_text(encoding="utf-8"))["results"]


def rows_of(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.mark.slow
@needs_lm_eval
@needs_klue
def test_multiple_choice_accuracy_equals_the_harness_acc(lm_eval_logs, nli_gold, klue_rows):
    result = evaluate_file(TASKS["nli"], nli_gold, samples(lm_eval_logs, "klue_nli_mc"))
    assert result.coverage.n_scored == LIMIT and result.coverage.unreadable_answers == 0
    assert result.scores.values["accuracy"] == pytest.approx(100 * harness_results(lm_eval_logs)["klue_nli_mc"]["acc,none"], abs=1e-9)
    assert result.log.model == "dummy" and result.log.harness_metrics["acc"] == harness_results(lm_eval_logs)["klue_nli_mc"]["acc,none"]
    assert any("by their text" in note for note in result.notes)
    # the same log read here: argmax of the log-likelihoods, softmax for the probabilities, labels from the choice text
    ex = result.frames.examples.set_index("guid")
    for row in rows_of(samples(lm_eval_logs, "klue_nli_mc")):
        scores = [float(pair[0]) for pair in row["filtered_resps"]]
        choices = [row["arguments"][f"gen_args_{k}"]["arg_1"].strip() for k in range(len(scores))]
        guid = row["doc"]["guid"]
        assert ex.loc[guid, "pred"] == BY_KOREAN[choices[scores.index(max(scores))]]
        expected = dict(zip((BY_KOREAN[c] for c in choices), softmax(scores)))
        assert ex.loc[guid, "probs"] == pytest.approx([expected[label] for label in HF_ORDER])
        assert ex.loc[guid, "gold"] == klue_rows[guid]["gold_label"]
    assert ex["confidence"].notna().all()  # calibration and confidence sorting have their probabilities


@pytest.mark.slow
@needs_lm_eval
@needs_klue
def test_a_gzipped_log_reads_the_same(lm_eval_logs, nli_gold, tmp_path):
    path = samples(lm_eval_logs, "klue_nli_mc")
    packed = tmp_path / (path.name + ".gz")
    packed.write_bytes(gzip.compress(path.read_bytes()))
    plain, zipped = evaluate_file(TASKS["nli"], nli_gold, path), evaluate_file(TASKS["nli"], nli_gold, packed)
    assert zipped.scores.values == plain.scores.values and zipped.run == plain.run


@pytest.mark.slow
@needs_lm_eval
@needs_klue
def test_choices_that_name_no_label_are_mapped_by_index_only_when_it_agrees_with_the_gold(lm_eval_logs, nli_gold):
    result = evaluate_file(TASKS["nli"], nli_gold, samples(lm_eval_logs, "klue_nli_mc_index"))
    assert any("by index" in note for note in result.notes)
    assert result.scores.values["accuracy"] == pytest.approx(100 * harness_results(lm_eval_logs)["klue_nli_mc_index"]["acc,none"], abs=1e-9)
    # the baseline's label order as target: index k is not the k-th Hugging Face label, so nothing is guessed
    with pytest.raises(InputError, match=r"cannot be mapped to NLI labels.*'A'.*by index, line \d+: target choice"):
        evaluate_file(TASKS["nli"], nli_gold, samples(lm_eval_logs, "klue_nli_mc_baseline_order"))


@pytest.mark.slow
@needs_lm_eval
@needs_klue
def test_documents_without_guid_are_matched_by_position_and_said_so(lm_eval_logs, nli_gold):
    log = samples(lm_eval_logs, "klue_nli_mc_noguid")
    assert all("guid" not in row["doc"] for row in rows_of(log))
    result = evaluate_file(TASKS["nli"], nli_gold, log)
    assert result.coverage.n_scored == LIMIT
    assert set(result.frames.examples["guid"]) == {nli_gold.rows[k]["guid"] for k in range(LIMIT)}
    assert any("no guid" in p.message and "position" in p.message for p in result.problems)
    assert result.scores.values["accuracy"] == pytest.approx(100 * harness_results(lm_eval_logs)["klue_nli_mc_noguid"]["acc,none"], abs=1e-9)
    assert detect_file_task(prediction_files(log.name, log.read_bytes())[0]) == "nli"  # named by its harness task


@pytest.mark.slow
@needs_lm_eval
@needs_klue
def test_each_filter_of_a_generation_log_is_a_run_of_unreadable_answers(lm_eval_logs, nli_gold):
    log = samples(lm_eval_logs, "klue_nli_gen")
    by_filter: dict[str, list[str]] = {}
    for row in rows_of(log):
        by_filter.setdefault(row["filter"], []).append(row["filtered_resps"][0])
    assert set(by_filter) == {"strict-match", "flexible"}
    assert set(by_filter["flexible"]) == {"lol"} and set(by_filter["strict-match"]) == {"[invalid]"}  # the dummy model's text
    runs = expand_path(log)
    assert sorted(Path(r.name).stem for r in runs) == sorted(f"{log.stem}-{name}" for name in by_filter)
    for run in runs:
        result = evaluate_bytes(TASKS["nli"], nli_gold, run.data, run.name)
        assert result.coverage.unreadable_answers == LIMIT and result.scores.values["accuracy"] == 0.0
        assert set(result.frames.examples["error_type"]) == {UNREADABLE}
        assert result.log.filter in by_filter and result.log.harness_metrics == {"exact_match": 0.0}
    with pytest.raises(InputError, match="holds 2 runs"):
        evaluate_file(TASKS["nli"], nli_gold, log)


@pytest.mark.slow
@needs_lm_eval
@needs_klue
def test_cli_and_zip_read_the_logs_with_their_results_file(lm_eval_logs, tmp_path, capsys):
    out = tmp_path / "metrics.json"
    logs = [str(samples(lm_eval_logs, t)) for t in ("klue_nli_mc", "klue_nli_gen")]
    assert main(["evaluate", "--task", "nli", "--gold", str(SHARED), *sum((["--pred", p] for p in logs), []), "--out", str(out)]) == 0
    runs = json.loads(out.read_text(encoding="utf-8"))["runs"]
    assert len(runs) == 3 and {r["harness"]["filter"] for r in runs} == {"none", "strict-match", "flexible"}
    assert [r["coverage"]["unreadable_answers"] for r in runs] == [0, LIMIT, LIMIT]
    assert "the harness's own metrics: acc" in capsys.readouterr().out
    packed = io.BytesIO()
    with zipfile.ZipFile(packed, "w") as archive:
        for path in lm_eval_logs.iterdir():
            archive.write(path, f"my-model/{path.name}")
    files = prediction_files("logs.zip", packed.getvalue())
    assert len(files) == 6 and {f.model for f in files} == {"my-model"}  # five samples files, the generation one split in two
    mc = next(f for f in files if f.name.startswith("samples_klue_nli_mc_2"))
    assert json.loads(mc.data.split(b"\n", 1)[0])["klue_viz_log"]["harness_metrics"]["acc"] == harness_results(lm_eval_logs)["klue_nli_mc"]["acc,none"]


@pytest.mark.slow
@needs_inspect
@needs_klue
def test_inspect_ai_json_log(tmp_path, nli_gold, klue_rows):
    """Inspect's mock model answers four real pairs: right, wrong, two labels, none (by hand: 1 of 4 right, 2 unreadable)."""
    rows = list(klue_rows.values())[:4]
    wrong = {"entailment": "거짓", "neutral": "참", "contradiction": "중립"}
    outputs = [f"{KOREAN[rows[0]['gold_label']]}입니다.", f"정답: {wrong[rows[1]['gold_label']]}", "참 또는 거짓", "잘 모르겠습니다"]
    log = run_inspect(rows, outputs, tmp_path / "logs", log_format="json")
    result = evaluate_file(TASKS["nli"], nli_gold, log)
    assert result.scores.values["accuracy"] == 25.0 and result.coverage.unreadable_answers == 2
    assert result.log.format == "Inspect AI" and result.log.model == "mockllm/model"
    ex = result.frames.examples.set_index("guid")
    assert ex.loc[rows[0]["guid"], "answer_text"] == outputs[0] and rows[0]["premise"] in ex.loc[rows[0]["guid"], "prompt"]


@pytest.mark.slow
def test_inspect_eval_log_fixture():
    """tests/data/harness/inspect_nli.eval: mockllm's answers 참입니다. / 정답: 거짓 / 참 또는 거짓 / 잘 모르겠습니다 on the
    first four demo pairs (scripts/make_harness_fixtures.py), read member by member (its members are Zstandard)."""
    pytest.importorskip("zipfile_zstd")
    gold = load_gold(TASKS["nli"], DEMO_BENCHMARK)
    with zipfile.ZipFile(FIXTURES / "inspect_nli.eval") as archive:
        samples_read = [json.loads(archive.read(n)) for n in sorted(archive.namelist()) if n.startswith("samples/")]
    answers = {s["id"]: s["output"]["completion"] for s in samples_read}
    readable = {guid: BY_KOREAN[text.removeprefix("정답: ").removesuffix("입니다.")] for guid, text in answers.items()
                if text.removeprefix("정답: ").removesuffix("입니다.") in BY_KOREAN}
    golds = {row["guid"]: row["gold"] for row in gold.rows}
    expected = 100 * sum(readable[g] == golds[g] for g in readable) / len(answers)
    result = evaluate_file(TASKS["nli"], gold, FIXTURES / "inspect_nli.eval")
    assert result.scores.values["accuracy"] == pytest.approx(expected)
    assert result.coverage.unreadable_answers == len(answers) - len(readable) == 2


def test_every_eval_ever_fixture():
    """tests/data/harness/eee_nli_mc.jsonl: every_eval_ever's lm-eval adapter over a dummy run on the demo: `sample_id`
    is the document's position, `output.raw` the chosen choice's text."""
    gold = load_gold(TASKS["nli"], DEMO_BENCHMARK)
    instances = rows_of(FIXTURES / "eee_nli_mc.jsonl")
    hits = [BY_KOREAN[i["output"]["raw"][0]] == gold.rows[int(i["sample_id"])]["gold"] for i in instances]
    result = evaluate_file(TASKS["nli"], gold, FIXTURES / "eee_nli_mc.jsonl")
    assert result.scores.values["accuracy"] == pytest.approx(100 * sum(hits) / len(hits))
    assert result.coverage.n_scored == len(instances) and result.log.model == "dummy"
    assert result.log.harness_metrics["mean score"] == pytest.approx(sum(i["evaluation"]["score"] for i in instances) / len(instances))


def test_free_text_prediction_file_and_hostile_text_on_the_card():
    gold = load_gold(TASKS["nli"], DEMO_BENCHMARK)
    guid = gold.rows[0]["guid"]
    text = '<script>alert(1)</script> 정답: [참](http://x.example) **'
    record = {"guid": guid, "generation": text, "prompt": "<b>전제</b>"}
    result = evaluate_bytes(TASKS["nli"], gold, json.dumps(record, ensure_ascii=False).encode(), "free.jsonl")
    card = card_with_answers(TASKS["nli"], result.frames, [guid])
    assert "<script>" not in card and "<b>전제" not in card and "&#60;script&#62;" in card
    assert '<mark class="kv-used">' in card and "http://x" not in card


def test_an_ordinary_file_passes_through_expand_unchanged():
    data = b'{"guid": "klue-nli-v1_dev_00000", "label": "neutral"}\n'
    assert [(f.name, f.data) for f in expand("run.jsonl", data)] == [("run.jsonl", data)]


def test_softmax_matches_scipy():
    scores = [-1000.5, -1001.0, -1003.25]
    assert ours(scores) == pytest.approx(list(softmax(scores))) and math.isclose(sum(ours(scores)), 1.0)


@pytest.mark.slow
@needs_lm_eval
@needs_klue
def test_the_readme_task_yamls_run_and_their_logs_match_the_gold(tmp_path):
    """examples/lm_eval (the README's YAMLs) run with the dummy model, 3 documents each: every log is routed to its task
    and matched to the real dev gold (RE over the demo's RE file, the only RE dev file here)."""
    folder = tmp_path / "tasks"
    shutil.copytree(Path(__file__).resolve().parents[1] / "examples" / "lm_eval", folder)
    for path in folder.glob("*.yaml"):
        text = path.read_text(encoding="utf-8").replace("../shared/klue/klue-re-v1.1", str(DEMO_BENCHMARK / "klue-re-v1.1"))
        path.write_text(text.replace("../shared/klue", str(SHARED)), encoding="utf-8")
    names = tuple(sorted(p.stem for p in folder.glob("*.yaml")))
    assert names == ("klue_dp_gen", "klue_ner_gen", "klue_nli_gen", "klue_nli_mc", "klue_re_gen", "klue_wos_gen")
    logs = run_lm_eval(folder, tmp_path / "out", tasks=names, limit=3)
    done = evaluate_folder(SHARED, logs)
    assert len(done.failures) == 1 and "a RE file, but its gold cannot be read" in done.failures[0]  # no RE dev in ../shared
    scored = {run.task: run.result.coverage for run in done.runs}
    assert {"nli", "ner", "dp", "wos"} <= set(scored) and all(c.n_scored == 3 for c in scored.values())
    re_log = next(logs.glob("samples_klue_re_gen_*.jsonl"))
    re_result = evaluate_file(TASKS["re"], load_gold(TASKS["re"], DEMO_BENCHMARK), re_log)
    assert re_result.coverage.n_scored == 3 and re_result.coverage.unreadable_answers == 3  # the dummy model says "lol"


def test_lighteval_details_parquet(tmp_path):
    """lighteval's details: written here with the call lighteval makes (`datasets.Dataset.from_list([asdict(detail)])
    .to_parquet`), from rows with the fields of its Detail / Doc / ModelResponse dataclasses (lighteval 0.13 itself
    needs torch, which this environment does not have, so no file of the real tool could be made here): one
    generation task answering in text, one multiple-choice task with a log-probability per choice."""
    datasets = pytest.importorskip("datasets")
    gold = load_gold(TASKS["nli"], DEMO_BENCHMARK)
    rows = gold.rows[:3]
    answers = [KOREAN[rows[0]["gold"]], "lol", f"정답: {KOREAN[rows[2]['gold']]}"]
    generation = [{"doc": {"query": "전제 ...", "choices": [], "gold_index": 0, "specific": {"guid": r["guid"]}, "id": str(k), "task_name": "klue_nli"},
                   "model_response": {"input": "전제 ...", "text": [a], "logprobs": [], "output_tokens": []}, "metric": {"em": 0.0}}
                  for k, (r, a) in enumerate(zip(rows, answers))]
    choices = ["참", "중립", "거짓"]
    logprobs = [[-0.1, -2.0, -3.0], [-3.0, -0.2, -1.0], [-1.0, -2.0, -0.5]]
    multiple = [{"doc": {"query": "전제 ...", "choices": choices, "gold_index": HF_ORDER.index(r["gold"]), "specific": None, "id": str(k),
                         "task_name": "klue_nli_mc"},
                 "model_response": {"input": "전제 ...", "text": [], "logprobs": lp, "output_tokens": []}, "metric": {"acc": 0.0}}
                for k, (r, lp) in enumerate(zip(rows, logprobs))]
    for name, details in (("details_klue_nli_2026-12-01T12-00-00.parquet", generation), ("details_klue_nli_mc_2026-12-01T12-00-00.parquet", multiple)):
        datasets.Dataset.from_list(details).to_parquet(str(tmp_path / name))
    text_run = evaluate_file(TASKS["nli"], gold, tmp_path / "details_klue_nli_2026-12-01T12-00-00.parquet")
    assert text_run.scores.values["accuracy"] == pytest.approx(200 / 3) and text_run.coverage.unreadable_answers == 1
    assert text_run.log.format == "lighteval" and text_run.log.task == "klue_nli"
    mc_run = evaluate_file(TASKS["nli"], gold, tmp_path / "details_klue_nli_mc_2026-12-01T12-00-00.parquet")
    predicted = [BY_KOREAN[choices[lp.index(max(lp))]] for lp in logprobs]
    assert list(mc_run.frames.examples["pred"]) == predicted  # by position: doc.id 0, 1, 2
    assert mc_run.scores.values["accuracy"] == pytest.approx(100 * sum(p == r["gold"] for p, r in zip(predicted, rows)) / 3)


def test_the_report_shows_the_generated_answers_of_its_errors(tmp_path):
    pytest.importorskip("zipfile_zstd")
    out = tmp_path / "report.html"
    assert main(["report", "--task", "nli", "--gold", str(DEMO_BENCHMARK), "--pred", str(FIXTURES / "inspect_nli.eval"),
                 "--out", str(out), "--bootstrap", "20"]) == 0
    html = out.read_text(encoding="utf-8")
    assert html.count('class="kv-llm"') == 3  # the three wrong answers of four (one right, one wrong, two unreadable)
    assert "unreadable answer" in html and "참 또는 거짓" in html


@pytest.mark.slow
@needs_lm_eval
@needs_klue
def test_a_folder_with_the_mc_and_the_generation_log_of_one_model(lm_eval_logs, klue_rows, tmp_path, capsys):
    """Issue 28, item 8: `evaluate --pred <folder>` shows every run of one model (the multiple-choice run and both filters
    of the generation log: a row each, named by prompt form), and its --out holds what `--task` writes: calibration, the
    vote cross-entropy and the human baseline, here counted by hand from the logs and the dev file."""
    folder = tmp_path / "logs" / "my-model"
    folder.mkdir(parents=True)
    mc_log = samples(lm_eval_logs, "klue_nli_mc")
    for path in (mc_log, samples(lm_eval_logs, "klue_nli_gen"), *lm_eval_logs.glob("results_*.json")):
        shutil.copy(path, folder / path.name)
    out = tmp_path / "folder.json"
    assert main(["evaluate", "--gold", str(SHARED), "--pred", str(tmp_path / "logs"), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert sorted(line.split("  ")[0] for line in printed.splitlines() if line.startswith("my-model")) == [
        "my-model · klue_nli_gen · flexible", "my-model · klue_nli_gen · strict-match", "my-model · klue_nli_mc"]
    written = json.loads(out.read_text(encoding="utf-8"))
    runs = {(r["harness"]["task"], r["harness"]["filter"]): r for r in written["runs"]}
    assert set(runs) == {("klue_nli_mc", "none"), ("klue_nli_gen", "strict-match"), ("klue_nli_gen", "flexible")}
    assert {r["model"] for r in written["runs"]} == {"my-model"} and {r["task"] for r in written["runs"]} == {"nli"}

    voters = ("author", "label2", "label3", "label4", "label5")
    confidence, correct, entropies, guids = [], [], [], set()
    for row in rows_of(mc_log):
        scores = [float(pair[0]) for pair in row["filtered_resps"]]
        choices = [BY_KOREAN[row["arguments"][f"gen_args_{k}"]["arg_1"].strip()] for k in range(len(scores))]
        probs = dict(zip(choices, softmax(scores)))
        record = klue_rows[row["doc"]["guid"]]
        guids.add(record["guid"])
        confidence.append(max(probs.values()))
        correct.append(choices[scores.index(max(scores))] == record["gold_label"])
        entropies.append(-sum(sum(record[v] == label for v in voters) / 5 * math.log(max(probs[label], 1e-12)) for label in HF_ORDER))
    ece = 0.0
    for b in range(10):
        inside = [k for k, c in enumerate(confidence) if min(int(c * 10), 9) == b]
        if inside:
            ece += len(inside) / len(confidence) * abs(sum(correct[k] for k in inside) / len(inside) - sum(confidence[k] for k in inside) / len(inside))
    mc = runs[("klue_nli_mc", "none")]
    assert mc["calibration"]["ece"] == pytest.approx(100 * ece, abs=1e-9) and mc["calibration"]["n"] == LIMIT
    assert mc["vote_cross_entropy"] == {"value": pytest.approx(sum(entropies) / LIMIT, rel=1e-12), "n": LIMIT}
    agree = sum(klue_rows[g][v] == klue_rows[g]["gold_label"] for g in guids for v in voters)
    assert written["human"] == {"nli": {"metric": "accuracy", "value": pytest.approx(100 * agree / (5 * LIMIT), abs=1e-9), "n": 5 * LIMIT}}
    assert all("calibration" not in runs[key] and "vote_cross_entropy" not in runs[key] for key in runs if key[0] == "klue_nli_gen")

    single = tmp_path / "single.json"  # what --task writes of the same log: the same record
    assert main(["evaluate", "--task", "nli", "--gold", str(SHARED), "--pred", str(mc_log), "--out", str(single)]) == 0
    alone = json.loads(single.read_text(encoding="utf-8"))
    assert {k: v for k, v in mc.items() if k not in ("task", "model")} == alone["runs"][0] and alone["human"] == written["human"]["nli"]
