"""LLM runs of one model side by side (issue 28, item 8): every run has its own row (model · prompt form), and every
unreadable answer of a run is listed, however many there are; the other problems of a file are cut with a note."""

from __future__ import annotations

import json

from klue_viz.cli.main import main
from klue_viz.reading.demo import DEMO_BENCHMARK, demo_runs
from klue_viz.reading.harness.formats import HarnessLog
from klue_viz.scoring.benchmark import ModelRun, html_table, model_table, row_labels
from klue_viz.scoring.evaluate import MAX_LISTED, evaluate_file, load_gold
from klue_viz.tasks import TASKS

KOREAN = {"entailment": "참", "neutral": "중립", "contradiction": "거짓"}


def test_every_unreadable_answer_is_in_out_and_other_problems_are_cut_with_a_note(shared, tmp_path, capsys):
    """2,900 real NLI pairs answered in text, 259 of them naming no label (the count the issue met), plus 250 lines
    that cannot be read: all 259 unreadable answers are listed in --out, the 250 bad lines are cut at MAX_LISTED and
    a note gives their number."""
    gold = load_gold(TASKS["nli"], shared / "klue-nli-v1.1" / "klue-nli-v1.1_dev.json")
    rows = gold.rows[:2900]
    lines = [json.dumps({"guid": row["guid"], "generation": "잘 모르겠습니다" if k < 259 else f"정답: {KOREAN[row['gold']]}"}, ensure_ascii=False)
             for k, row in enumerate(rows)]
    lines += ["{not json"] * 250
    path = tmp_path / "answers.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp_path / "out.json"
    assert main(["evaluate", "--task", "nli", "--gold", str(shared), "--pred", str(path), "--out", str(out)]) == 0
    run = json.loads(out.read_text(encoding="utf-8"))["runs"][0]
    unread = [p for p in run["problems"] if "unreadable answer" in p["message"]]
    assert len(unread) == run["coverage"]["unreadable_answers"] == 259
    assert sorted(p["guid"] for p in unread) == sorted(row["guid"] for row in rows[:259])
    assert len(run["problems"]) == MAX_LISTED + 259 and run["coverage"]["n_invalid"] == 250
    assert f"250 problems were found in answers.jsonl; the first {MAX_LISTED} are listed" in run["notes"]
    printed = capsys.readouterr().out
    assert "250 records left out; 259 unreadable answers (scored as wrong)" in printed  # two counts, named apart


def test_each_run_of_one_model_and_task_has_its_own_row_named_by_its_prompt_form():
    """A multiple-choice log and the two filters of a generation log of one model (their `log` as klue_viz.reading.prediction_files
    reads it), beside a plain YNAT file of the same model: three NLI rows, the YNAT run on the model's own row."""
    task = TASKS["nli"]
    gold = load_gold(task, DEMO_BENCHMARK)
    path = next(demo_runs("nli"))
    forms = [("klue_nli_mc", "none"), ("klue_nli_gen", "strict-match"), ("klue_nli_gen", "flexible")]
    runs = []
    for harness_task, harness_filter in forms:
        result = evaluate_file(task, gold, path)
        result.run = f"samples_{harness_task}-{harness_filter}"
        result.log = HarnessLog("lm-evaluation-harness", path.name, task=harness_task, filter=harness_filter)
        runs.append(ModelRun("my-model", result))
    runs.append(ModelRun("my-model", evaluate_file(TASKS["ynat"], load_gold(TASKS["ynat"], DEMO_BENCHMARK), next(demo_runs("ynat")))))
    assert row_labels(runs) == ["my-model · klue_nli_mc", "my-model · klue_nli_gen · strict-match", "my-model · klue_nli_gen · flexible",
                                "my-model"]
    table = model_table(runs)
    assert sorted(table["model"].tolist()) == sorted(set(row_labels(runs)))  # rows in natural order, one per label
    nli_column = next(c for c in table.columns if c.startswith("NLI"))
    assert table[nli_column].astype(bool).sum() == 3
    page = html_table(runs)
    assert all(f"?run=samples_{t}-{f}" in page for t, f in forms)  # each run links to its page


def test_two_plain_files_of_one_task_share_the_models_row_and_the_cell_says_which_it_shows():
    """Plain prediction files of one model and task (a model's checkpoints) are one row: the cell shows the run with
    the latest step, or the last added where no name has a step, says so, and folds the other (issue 28, item 3)."""
    task = TASKS["nli"]
    gold = load_gold(task, DEMO_BENCHMARK)
    first, second = list(demo_runs("nli"))[:2]
    runs = [ModelRun("m", evaluate_file(task, gold, first)), ModelRun("m", evaluate_file(task, gold, second))]
    assert row_labels(runs) == ["m", "m"]
    table = model_table(runs)
    nli_column = next(c for c in table.columns if c.startswith("NLI"))
    assert table["model"].tolist() == ["m"]
    assert table[nli_column].iloc[0].endswith(f"; {second.stem}, last added of 2 runs)")
    page = html_table(runs)
    assert "1 other run(s)" in page and f"?run={first.stem}" in page and f"?run={second.stem}" in page
