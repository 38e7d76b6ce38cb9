"""The researcher's own columns: read by guid, binned as documented, bad rows by line, and found as weak slices."""

from __future__ import annotations

import json

import numpy as np
import pytest

from klue_viz.cli.main import main
from klue_viz.discovery.slices import paired_slices, weak_slices
from klue_viz.discovery.sorting import sort_examples
from klue_viz.drawing.charts import slice_figure
from klue_viz.drawing.markup import esc
from klue_viz.scoring.evaluate import evaluate_bytes, load_gold
from klue_viz.scoring.filtering import ExampleFilter, apply_filter
from klue_viz.scoring.slicing import slice_table
from klue_viz.scoring.user_features import apply_features, read_features, user_slices, with_features
from klue_viz.tasks import get_task
from klue_viz.tasks.ner import tag_list
from tests.conftest import jsonl

NLI_LABELS = ("entailment", "neutral", "contradiction")


@pytest.fixture(scope="module")
def nli(shared):
    task = get_task("nli")
    return task, load_gold(task, shared)


def planted_nli(gold, seed: int = 7):
    """A random 0/1 flag per example, and a run wrong on every flagged example and on ~8% of the others."""
    rng = np.random.default_rng(seed)
    flags = {row["guid"]: int(rng.random() < 0.2) for row in gold.rows}
    records = []
    for row in gold.rows:
        wrong = flags[row["guid"]] == 1 or rng.random() < 0.08
        label = row["gold"] if not wrong else next(lbl for lbl in NLI_LABELS if lbl != row["gold"])
        records.append({"guid": row["guid"], "label": label})
    return flags, jsonl(records)


def test_planted_column_is_the_top_weak_slice(nli):
    task, gold = nli
    flags, run = planted_nli(gold)
    csv = "guid,flag,noise\n" + "".join(f"{g},{f},{'abc'[i % 3]}\n" for i, (g, f) in enumerate(flags.items()))
    features, problems = read_features(csv.encode(), "mine.csv", task, gold.rows)
    assert problems == []
    result = with_features(evaluate_bytes(task, gold, run, "planted.jsonl"), features)
    found = weak_slices(task, result.frames, top=5)
    assert found[0].conditions == {"user:flag": "1"}
    assert found[0].size == sum(flags.values())
    assert found[0].error_rate == 100.0
    assert found[0].labels == {"user:flag": "flag (your column)"}
    # the same column is a slice table, a filter and (numeric) a sort key
    spec = next(s for s in user_slices(result.frames) if s.key == "user:flag")
    table = slice_table(task, result.frames, spec).set_index("value")
    assert table.loc["1", "n"] == sum(flags.values()) and table.loc["1", "errors"] == sum(flags.values())
    shown = apply_filter(task, result.frames, None, ExampleFilter(slice=spec, slice_values=["1"]))
    assert set(shown["guid"]) == {g for g, f in flags.items() if f}


def test_planted_column_in_a_paired_comparison(nli):
    """With two runs, the flag is where the planted run is worse than a run right everywhere."""
    task, gold = nli
    flags, run = planted_nli(gold, seed=11)
    perfect = jsonl([{"guid": r["guid"], "label": r["gold"]} for r in gold.rows])
    features, _ = read_features(("guid,flag\n" + "".join(f"{g},{f}\n" for g, f in flags.items())).encode(), "f.csv", task, gold.rows)
    first = with_features(evaluate_bytes(task, gold, run, "planted.jsonl"), features)
    second = with_features(evaluate_bytes(task, gold, perfect, "perfect.jsonl"), features)
    found = paired_slices(task, first, second, top=3)
    assert found[0].conditions == {"user:flag": "1"} and found[0].worse == "planted"


def test_numeric_column_bins_into_quartiles_and_sorts(nli):
    task, gold = nli
    guids = [r["guid"] for r in gold.rows][:100]
    lines = ["guid,tokens,domain"] + [f"{g},{k + 1},{'news' if k < 30 else ('wiki' if k < 50 else 'd' + str(k))}" for k, g in enumerate(guids)]
    features, problems = read_features("\n".join(lines).encode(), "f.csv", task, gold.rows, top=2)
    assert problems == []
    kinds = {c.name: c.kind for c in features.columns}
    assert kinds == {"tokens": "numeric", "domain": "text"}
    result = with_features(evaluate_bytes(task, gold, jsonl([{"guid": r["guid"], "label": r["gold"]} for r in gold.rows]), "p.jsonl"), features)
    ex = result.frames.examples.set_index("guid")
    # 1..100: numpy's quartile edges are 1, 25.75, 50.5, 75.25, 100; 1-25 in the first bin (closed), 26-50 next...
    expected = {g: ("[1, 25.75]" if k < 25 else "(25.75, 50.5]" if k < 50 else "(50.5, 75.25]" if k < 75 else "(75.25, 100]")
                for k, g in enumerate(guids)}
    assert {g: ex.loc[g, "user:tokens"] for g in guids} == expected
    assert ex["user:tokens"].isna().sum() == len(gold.rows) - 100  # examples the file does not name have no value
    # text: the two most frequent values, the rest 'other'
    assert ex.loc[guids, "user:domain"].value_counts().to_dict() == {"other": 50, "news": 30, "wiki": 20}
    ordered = sort_examples(task, result.frames, result.frames.examples, "tokens (your column), high first")
    assert list(ordered["guid"][:3]) == [guids[99], guids[98], guids[97]]


def test_few_distinct_numbers_stay_values(nli):
    task, gold = nli
    guids = [r["guid"] for r in gold.rows][:9]
    csv = "guid,stars\n" + "".join(f"{g},{k % 3}\n" for k, g in enumerate(guids))
    features, _ = read_features(csv.encode(), "f.csv", task, gold.rows)
    assert features.columns[0].bins == ("0", "1", "2")


def test_bad_rows_are_reported_by_line(nli):
    task, gold = nli
    a, b, c = (r["guid"] for r in gold.rows[:3])
    text = "\n".join(["guid,length,tag", f"{a},3,x", "nope-guid,4,y", f"{a},5,z", f"{b},many,w", ",6,v", f"{c},7,u",
                      f"{gold.rows[3]['guid']},8,t", f"{gold.rows[4]['guid']},9,s", f"{gold.rows[5]['guid']},10,r",
                      f"{gold.rows[6]['guid']},11,q", f"{gold.rows[7]['guid']},12,p", f"{gold.rows[8]['guid']},13,o",
                      f"{gold.rows[9]['guid']},14,n"])  # 9 of 10 kept length cells are numbers: the column is numeric
    features, problems = read_features(text.encode(), "mine.csv", task, gold.rows)
    by_line = {p.line: p.message for p in problems}
    assert set(by_line) == {3, 4, 5, 6}
    assert "not in the gold" in by_line[3] and "given twice (first on line 2)" in by_line[4]
    assert "holds numbers, found 'many'" in by_line[5] and "no guid" in by_line[6]
    assert all(p.file == "mine.csv" for p in problems)
    values = features.values.set_index("guid")
    assert np.isnan(values.loc[b, "user_value:length"]) and values.loc[b, "user:tag"] == "w"  # the row is kept, the cell left empty
    assert values.loc[a, "user_value:length"] == 3.0  # the first of a repeated guid is kept


def test_jsonl_and_wos_turns(shared):
    task = get_task("wos")
    gold = load_gold(task, shared)
    dialogue = gold.rows[0]["dialogue"]
    turns = [r for r in gold.rows if r["dialogue"] == dialogue]
    records = [{"guid": dialogue, "turn": 0, "hard": True}, {"guid": dialogue, "turn": 999, "hard": False},
               {"guid": gold.rows[-1]["dialogue"], "hard": False}, {"guid": dialogue, "turn": 1, "hard": [1]}]
    features, problems = read_features(jsonl(records), "w.jsonl", task, gold.rows)
    assert [p.line for p in problems] == [2, 4]
    values = features.values.set_index("guid")["user:hard"].to_dict()
    last = [r["guid"] for r in gold.rows if r["dialogue"] == gold.rows[-1]["dialogue"]]
    assert values[turns[0]["guid"]] == "true" and all(values[g] == "false" for g in last)  # a dialogue without turn: every turn


def test_ner_entity_level_columns(shared):
    task = get_task("ner")
    gold = load_gold(task, shared)
    rows = gold.rows[:50]
    run = jsonl([{"guid": r["guid"], "tags": tag_list(r["tags"])} for r in rows])
    result = evaluate_bytes(task, gold, run, "gold-copy.jsonl")
    entities = result.frames.details["entities"]
    spans = entities[entities["side"] == "gold"][["guid", "start", "end", "text"]].head(20)
    csv = "guid,start,end,hard\n" + "".join(f"{g},{s},{e},{k % 2}\n" for k, (g, s, e, _) in enumerate(spans.itertuples(index=False)))
    csv += f"{rows[0]['guid']},0,99999,1\n"
    features, problems = read_features(csv.encode(), "e.csv", task, gold.rows)
    assert features.level == "entities" and [p.line for p in problems] == [22]
    framed = apply_features(result.frames, features).details["entities"]
    tagged = framed[framed["user:hard"].notna()]
    assert len(tagged) == 2 * len(spans)  # both the gold and the (identical) predicted entity of each span


@pytest.mark.slow
def test_cli_features_on_evaluate_slices_and_report(nli, shared, tmp_path, capsys):
    task, gold = nli
    flags, run = planted_nli(gold)
    pred = tmp_path / "planted.jsonl"
    pred.write_bytes(run)
    table = tmp_path / "mine.csv"
    table.write_text("guid,flag\n" + "".join(f"{g},{f}\n" for g, f in flags.items()) + "unknown,1\n", encoding="utf-8")
    gold_path = str(shared)
    out = tmp_path / "m.json"
    assert main(["evaluate", "--task", "nli", "--gold", gold_path, "--pred", str(pred), "--features", str(table), "--out", str(out)]) == 0
    written = json.loads(out.read_text())
    rows = {r["value"]: r for r in written["runs"][0]["features"]["flag"]}
    assert rows["1"]["n"] == sum(flags.values()) and rows["1"]["errors"] == sum(flags.values())
    assert written["feature_problems"][0]["line"] == len(flags) + 2
    assert "line" in capsys.readouterr().err
    sliced = tmp_path / "s.json"
    assert main(["slices", "--task", "nli", "--gold", gold_path, "--pred", str(pred), "--features", str(table), "--out", str(sliced),
                 "--bootstrap", "0"]) == 0
    assert json.loads(sliced.read_text())["slices"][0]["conditions"] == {"user:flag": "1"}
    report = tmp_path / "r.html"
    assert main(["report", "--task", "nli", "--gold", gold_path, "--pred", str(pred), "--features", str(table), "--out", str(report),
                 "--bootstrap", "10", "--errors", "2"]) == 0
    assert f"<h4>{esc('flag (your column)')}</h4>" in report.read_text()  # its slice table


def test_a_hostile_column_name_stays_text_in_the_slice_chart(nli):
    """Column names come from the user's file: a plotly axis title would read <a href> and <b> in them."""
    task, gold = nli
    name = '<a href="http://evil.example">x</a><b>y</b>'
    text = f'guid,"{name.replace(chr(34), chr(34) * 2)}"\n' + "".join(f"{r['guid']},{k % 2}\n" for k, r in enumerate(gold.rows[:20]))
    features, problems = read_features(text.encode(), "f.csv", task, gold.rows)
    assert problems == [] and features.columns[0].name == name
    result = with_features(evaluate_bytes(task, gold, jsonl([{"guid": r["guid"], "label": r["gold"]} for r in gold.rows]), "p.jsonl"), features)
    spec = user_slices(result.frames)[0]
    figure = slice_figure(slice_table(task, result.frames, spec), "accuracy", spec.label)
    assert "<a" not in figure.layout.yaxis.title.text and "&lt;a href" in figure.layout.yaxis.title.text


def test_gate_tests_each_value_of_a_column_of_yours(nli, shared, tmp_path):
    """`klue-viz gate --features`: the planted flag, where the candidate is always wrong, is a regressed slice."""
    task, gold = nli
    flags, run = planted_nli(gold)
    base, cand, table, out = tmp_path / "base.jsonl", tmp_path / "cand.jsonl", tmp_path / "mine.csv", tmp_path / "gate.json"
    base.write_bytes(jsonl([{"guid": r["guid"], "label": r["gold"]} for r in gold.rows]))
    cand.write_bytes(run)
    table.write_text("guid,flag\n" + "".join(f"{g},{f}\n" for g, f in flags.items()), encoding="utf-8")
    assert main(["gate", "--task", "nli", "--gold", str(shared), "--baseline", str(base), "--candidate", str(cand),
                 "--features", str(table), "--out", str(out), "--bootstrap", "200"]) == 1
    regressions = json.loads(out.read_text(encoding="utf-8"))["regressions"]
    assert {"user:flag": "1"} in [r["slice"] for r in regressions]
