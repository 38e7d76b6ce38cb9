"""The metrics along a sequence of runs (issue 28, items 2 and 4): the same numbers as each run's slice tables, read
from kept runs' columns only, in `klue-viz compare --out`, and drawn one line per model with steps on the x axis."""

from __future__ import annotations

import json
from collections import defaultdict

import pytest

from klue_viz.cli.main import main
from klue_viz.compare.ranking import PREDICTION_FEATURES, run_sequence, sequence_columns
from klue_viz.drawing.compare_charts import sequence_figure
from klue_viz.reading.demo import DEMO_BENCHMARK, demo_runs
from klue_viz.scoring.slicing import slice_table
from klue_viz.store import kept_scoring
from klue_viz.tasks import TASKS, get_task
from tests.test_compare_columns import kept_demo_runs, make_store


@pytest.mark.parametrize("task_name", list(TASKS))
def test_the_sequence_read_from_kept_columns_is_each_runs_slice_tables(tmp_path, task_name):
    store = make_store("sqlite", tmp_path)
    task = get_task(task_name)
    columns = sequence_columns(task)
    assert columns is not None
    runs = kept_demo_runs(store, task_name)
    found = run_sequence(task, runs, kept_scoring.column_frames(store, runs, columns))
    assert all("frames" not in r.__dict__ for r in runs), "the whole frames were read"
    for k, run in enumerate(runs):  # the slice tables of the whole frames, the page's own tables
        for metric in task.facts.metrics:
            assert found.overall[metric.key][k] == run.scores.values.get(metric.key)
        for spec in task.facts.slices:
            if spec.key in PREDICTION_FEATURES:
                assert spec.key not in found.slices
                continue
            table = slice_table(task, run.frames, spec)
            for row in table.to_dict("records"):
                assert found.counts[spec.key][row["value"]][k] == row["n"]
                for metric, values in found.slices[spec.key][row["value"]].items():
                    undefined = row[metric] is None or row[metric] != row[metric]  # None, or NaN in a float column
                    assert values[k] == (None if undefined else pytest.approx(row[metric])), (spec.key, row["value"], metric)


def test_compare_out_holds_the_sequence_overall_and_per_slice(tmp_path, capsys):
    """NLI demo runs: accuracy per source recounted here from the gold file and the prediction files."""
    gold = {row["guid"]: row for row in json.loads((DEMO_BENCHMARK / "klue-nli-v1.1" / "klue-nli-v1.1_dev.json").read_text(encoding="utf-8"))}
    paths = sorted(demo_runs("nli"))
    out = tmp_path / "cmp.json"
    assert main(["compare", "--task", "nli", "--gold", str(DEMO_BENCHMARK), *[a for p in paths for a in ("--pred", str(p))],
                 "--bootstrap", "200", "--out", str(out)]) == 0  # the fewest resamples compare takes
    sequence = json.loads(out.read_text(encoding="utf-8"))["sequence"]
    assert set(sequence) == {"overall", "slices"}
    for k, path in enumerate(paths):
        predicted = {r["guid"]: r["label"] for r in map(json.loads, filter(str.strip, path.read_text(encoding="utf-8").splitlines()))}
        right, seen = defaultdict(int), defaultdict(int)
        for guid, row in gold.items():
            seen[row["source"]] += 1
            right[row["source"]] += predicted.get(guid) == row["gold_label"]
        assert sequence["overall"]["accuracy"][k] == pytest.approx(100 * sum(right.values()) / len(gold))
        for source in seen:
            assert sequence["slices"]["source"][source]["accuracy"][k] == pytest.approx(100 * right[source] / seen[source])


def test_two_models_are_two_lines_along_their_steps():
    runs = ["a-ckpt-500", "a-ckpt-1000", "a-ckpt-1500", "b-epoch-1", "b-epoch-2"]
    models = ["A", "A", "A", "B", "B"]
    figure = sequence_figure(runs, models, {"overall": [70.0, 80.0, 90.0, 60.0, 65.0]}, {"overall": [10] * 5}, "f1", "overall")
    lines = {trace.name: (list(trace.x), list(trace.y)) for trace in figure.data}
    assert lines == {"overall · A": ([500, 1000, 1500], [70.0, 80.0, 90.0]), "overall · B": ([1, 2], [60.0, 65.0])}
    assert figure.layout.xaxis.type == "linear" and figure.layout.xaxis.title.text == "step"


def test_runs_without_a_step_keep_their_order_on_a_category_axis():
    runs = ["ckpt-2000", "final", "ckpt-1000"]
    figure = sequence_figure(runs, ["A", "A", "A"], {"PS": [1.0, None, 3.0], "LC": [4.0, 5.0, 6.0]}, {"PS": [1, 0, 1], "LC": [2, 2, 2]},
                             "f1", "Entity type")
    assert [(t.name, list(t.x), list(t.y)) for t in figure.data] == [("PS", ["ckpt-2000", "ckpt-1000"], [1.0, 3.0]),
                                                                    ("LC", ["ckpt-2000", "final", "ckpt-1000"], [4.0, 5.0, 6.0])]
    assert figure.layout.xaxis.type == "category" and list(figure.layout.xaxis.categoryarray) == runs
