"""Weak-slice finder at its edges: minimum sizes, the score formula, ties, limits, records and names.

Written for the mutation run of `klue_viz/discovery/slices.py` (docs/mutation.md): each expected value
is counted by hand here, from the synthetic features or from the rows of the real NLI dev set, or
computed by scipy (the paired t statistic); none comes from the finder itself.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from klue_viz.discovery.slices import (
    FoundSlice,
    WeakSlice,
    default_min_size,
    error_tags,
    paired_slices,
    search,
    slice_guids,
    slice_name,
    slices_header,
    units,
    weak_slices,
)
from klue_viz.reading.demo import DEMO_BENCHMARK, demo_runs
from klue_viz.scoring.evaluate import evaluate_bytes, evaluate_file, load_gold
from klue_viz.tasks import get_task
from tests.conftest import jsonl

ALPHA = 0.95


def record(item: FoundSlice) -> dict:
    """A found slice as the JSON record the CLI writes: every field the finder sets, by the name users read."""
    return item.to_dict()


def by_hand(size: int, errors: int, n: int, total_errors: int, alpha: float = ALPHA) -> float:
    """SliceLine's score, written out: alpha * (rate / overall rate - 1) - (1 - alpha) * (n / size - 1)."""
    return alpha * ((errors / size) / (total_errors / n) - 1) - (1 - alpha) * (n / size - 1)


# ---- search: the ranking itself, on features made up here ---------------------------------------------------

def _planted(n: int = 200) -> tuple[pd.DataFrame, np.ndarray]:
    """`a` = 'x' on rows 0-19 (15 errors), `b` = 'y' on rows 10-29 (5 errors); elsewhere a0-a4 and b0-b4 by row number mod 5."""
    a = np.array([f"a{i % 5}" for i in range(n)], dtype=object)
    b = np.array([f"b{i % 5}" for i in range(n)], dtype=object)
    a[:20], b[10:30] = "x", "y"
    errors = np.zeros(n)
    errors[:15] = 1  # rows 0-14: 10 of them (0-9) only in a=x, 5 (10-14) in both
    return pd.DataFrame({"a": a, "b": b}), errors


def test_the_scores_sizes_and_errors_of_a_planted_slice_are_sliceline_s_by_hand():
    features, errors = _planted()
    found = search(features, errors, min_size=10, top=10)
    # a=x: 20 rows, 15 errors; a=x & b=y: rows 10-19, 5 errors; b=y: rows 10-29, 5 errors (15 errors in all, n = 200)
    expected = {(("a", "x"),): (20, 15), (("a", "x"), ("b", "y")): (10, 5), (("b", "y"),): (20, 5)}
    got = {tuple(sorted(c.conditions.items())): c for c in found}
    for key, (size, errs) in expected.items():
        assert (got[key].size, got[key].errors) == (size, float(errs))
        assert got[key].score == pytest.approx(by_hand(size, errs, 200, 15))
    # every other slice (a0..a4, b0..b4 without errors) scores below 0 and is left out
    assert set(got) == set(expected)
    assert [tuple(sorted(c.conditions.items())) for c in found] == sorted(expected, key=lambda k: -by_hand(*expected[k], 200, 15))


def test_min_size_keeps_a_slice_of_exactly_that_size_and_drops_a_smaller_one():
    features, errors = _planted()
    sizes = {tuple(sorted(c.conditions.items())): c.size for c in search(features, errors, min_size=20)}
    assert (("a", "x"),) in sizes and (("b", "y"),) in sizes  # 20 rows each: kept at min_size 20
    assert (("a", "x"), ("b", "y")) not in sizes  # 10 rows
    assert search(features, errors, min_size=21) == []


def test_the_default_min_size_is_one_percent_between_10_and_100():
    assert [default_min_size(n) for n in (0, 999, 1000, 1099, 1100, 1500, 9999, 10_000, 10_100, 50_000)] == \
        [10, 10, 10, 10, 11, 15, 99, 100, 100, 100]
    features, errors = _planted()
    # n = 200: the default is 10, so the 10-row conjunction is found without a min_size
    assert any(c.size == 10 for c in search(features, errors))


def test_top_and_max_conditions_limit_the_list():
    features, errors = _planted()
    assert len(search(features, errors, min_size=10, top=2)) == 2
    assert len(search(features, errors, min_size=10, top=1)) == 1
    assert all(len(c.conditions) == 1 for c in search(features, errors, min_size=10, max_conditions=1))
    assert len(search(features, errors, min_size=10, max_conditions=1)) == 2


def test_alpha_weighs_size_against_error_rate_and_a_score_of_0_is_not_listed():
    features, errors = _planted()
    # alpha 0.6: a=x scores 0.6 * (0.75 / 0.075 - 1) - 0.4 * (200 / 20 - 1) = 1.8; b=y and the pair score below 0
    found = search(features, errors, min_size=10, alpha=0.6)
    assert [(c.conditions, c.size) for c in found] == [({"a": "x"}, 20)]
    assert found[0].score == pytest.approx(1.8)
    # alpha 0.5: a=x scores 0.5 * 9 - 0.5 * 9 = 0 exactly, which is no weakness
    assert search(features, errors, min_size=10, alpha=0.5) == []


def test_no_errors_or_no_rows_find_nothing():
    features, _ = _planted()
    assert search(features, np.zeros(200)) == []
    assert search(features.iloc[:0], np.zeros(0)) == []


def test_ties_rank_fewer_conditions_first_then_by_feature_and_value():
    # c and d select the same rows as each other (rows 0-9); e selects rows 0-9 too; all errors there
    n = 100
    features = pd.DataFrame({"c": ["p"] * 10 + ["q"] * 90, "d": ["r"] * 10 + [f"s{i % 3}" for i in range(90)],
                             "e": ["t"] * 10 + ["u"] * 90}).astype(object)
    errors = np.r_[np.ones(10), np.zeros(90)]
    found = search(features, errors, min_size=10)
    # one condition each, same score: in the order of the columns; every pair or triple selects the same rows, left out
    assert [c.conditions for c in found] == [{"c": "p"}, {"d": "r"}, {"e": "t"}]
    assert [c.score for c in found] == pytest.approx([by_hand(10, 10, n, 10)] * 3)


def test_a_condition_true_on_all_rows_of_another_adds_nothing_and_is_left_out():
    # c=p on rows 0-9, d=r on rows 0-9 and 50-59: "c=p & d=r" is rows 0-9 again, the same group as c=p
    features = pd.DataFrame({"c": ["p"] * 10 + [f"q{i % 3}" for i in range(90)],
                             "d": ["r"] * 10 + [f"s{i % 4}" for i in range(40)] + ["r"] * 10 + [f"s{i % 4}" for i in range(40)]}).astype(object)
    errors = np.r_[np.ones(10), np.zeros(90)]
    found = [c.conditions for c in search(features, errors, min_size=10)]
    assert {"c": "p"} in found and {"d": "r"} in found and {"c": "p", "d": "r"} not in found


def test_a_conjunction_with_fewer_rows_than_its_parts_is_listed():
    features, errors = _planted()
    found = [c.conditions for c in search(features, errors, min_size=10)]
    assert {"a": "x", "b": "y"} in found  # rows 10-19 only: says more than either condition alone


def test_a_missing_value_is_no_condition():
    features = pd.DataFrame({"a": [None] * 20 + ["z"] * 80, "b": ["w"] * 20 + [f"v{i % 4}" for i in range(80)]}).astype(object)
    errors = np.r_[np.ones(20), np.zeros(80)]
    found = search(features, errors, min_size=10)
    assert [c.conditions for c in found] == [{"b": "w"}]
    features["a"] = [np.nan] * 20 + ["z"] * 80  # NaN (pandas 3's missing string) is missing too
    assert [c.conditions for c in search(features, errors, min_size=10)] == [{"b": "w"}]


def test_pairs_of_many_values_are_counted_exactly_too():
    """Over 4 million (value, value) bins: the pair is counted on the values present (np.unique), with the same result."""
    n = 5000
    a = np.array([f"a{i}" for i in range(n)], dtype=object)
    b = np.array([f"b{i}" for i in range(n)], dtype=object)
    a[:40], b[:20], b[40:60] = "x", "y", "y"  # a=x rows 0-39, b=y rows 0-19 and 40-59: both on rows 0-19
    errors = np.zeros(n)
    errors[:20] = 1
    found = search(pd.DataFrame({"a": a, "b": b}), errors, min_size=10, max_conditions=2)
    assert [(c.conditions, c.size, c.errors) for c in found] == [({"a": "x", "b": "y"}, 20, 20.0), ({"a": "x"}, 40, 20.0),
                                                                 ({"b": "y"}, 40, 20.0)]
    assert found[0].score == pytest.approx(by_hand(20, 20, n, 20))
    assert found[1].score == pytest.approx(by_hand(40, 20, n, 20))


# ---- one run of NLI: the record of a slice, counted from the dev file --------------------------------------

@pytest.fixture(scope="module")
def nli(shared):
    """The first 400 NLI dev pairs; the run is wrong on every 10th one and on pairs 0-14; 'half' tags pairs 0-29."""
    task = get_task("nli")
    gold = load_gold(task, shared)
    rows = gold.rows[:400]
    other = {"entailment": "neutral", "neutral": "contradiction", "contradiction": "entailment"}
    wrong = {r["guid"] for k, r in enumerate(rows) if k % 10 == 5 or k < 15}
    run = evaluate_bytes(task, gold, jsonl([{"guid": r["guid"], "label": other[r["gold"]] if r["guid"] in wrong else r["gold"]}
                                            for r in rows]), "spoilt.jsonl")
    tags = {r["guid"]: {"half"} for r in rows[:30]}
    return task, gold, rows, wrong, run, tags


def test_a_tagged_slice_has_its_size_errors_rate_metrics_labels_and_score(nli):
    task, gold, rows, wrong, run, tags = nli
    found = next(s for s in weak_slices(task, run.frames, tags=tags, top=50) if s.conditions == {"tag: half": "yes"})
    item = record(found)
    errors = sum(r["guid"] in wrong for r in rows[:30])  # 0-14, 15 and 25: 17
    assert errors == 17
    assert (item["unit"], item["size"], item["errors"], item["examples"]) == ("examples", 30, 17, 30)
    assert item["error_rate"] == pytest.approx(100 * 17 / 30)
    assert item["metrics"]["accuracy"] == pytest.approx(100 * 13 / 30)
    assert item["labels"] == {"tag: half": "Tagged 'half'"}
    assert item["score"] == pytest.approx(by_hand(30, 17, 400, len(wrong)))
    assert "ci95" not in item and "detail_metrics" not in item
    assert slice_name(found) == "Tagged 'half' = yes"
    assert slice_guids(task, run.frames, {"tag: half": "yes"}, tags=tags) == sorted(r["guid"] for r in rows[:30])


def test_the_slices_are_ranked_best_first_and_top_cuts_the_list(nli):
    task, _, _, _, run, tags = nli
    found = [record(s) for s in weak_slices(task, run.frames, tags=tags, top=50)]
    scores = [s["score"] for s in found]
    assert scores == sorted(scores, reverse=True) and all(s > 0 for s in scores)
    assert [record(s)["conditions"] for s in weak_slices(task, run.frames, tags=tags, top=3)] == [s["conditions"] for s in found[:3]]


def test_a_source_slice_reads_its_label_from_the_task_and_its_counts_from_the_file(nli):
    task, _, rows, wrong, run, _ = nli
    raw = weak_slices(task, run.frames, top=100, min_size=1, max_conditions=1)
    found = [record(s) for s in raw]
    for source in sorted({r["source"] for r in rows}):
        members = [r for r in rows if r["source"] == source]
        errors = sum(r["guid"] in wrong for r in members)
        if by_hand(len(members), errors, 400, len(wrong)) <= 0:
            assert {"source": source} not in [s["conditions"] for s in found]
            continue
        item = next(s for s in found if s["conditions"] == {"source": source})
        assert (item["size"], item["errors"], item["examples"]) == (len(members), errors, len(members))
        assert item["labels"] == {"source": "Source"}
        assert slice_name(raw[found.index(item)]) == f"Source = {source}"


def test_a_slice_of_one_unit_has_its_error_rate(nli):
    task, _, rows, wrong, run, _ = nli
    one = next(r["guid"] for r in rows if r["guid"] in wrong)
    # alpha 1 scores the error rate alone, so that a slice of one wrong pair ranks (score 400 / 54 - 1 > 0)
    found = [record(s) for s in weak_slices(task, run.frames, tags={one: {"one"}}, top=100, min_size=1, alpha=1.0, max_conditions=1)]
    item = next(s for s in found if s["conditions"] == {"tag: one": "yes"})
    assert (item["size"], item["errors"], item["error_rate"], item["examples"]) == (1, 1, 100.0, 1)
    assert item["score"] == pytest.approx(len(rows) / len(wrong) - 1)


def test_an_interval_is_given_when_asked(nli):
    task, _, rows, wrong, run, tags = nli
    item = next(record(s) for s in weak_slices(task, run.frames, tags=tags, top=50, ci_samples=30)
                if record(s)["conditions"] == {"tag: half": "yes"})
    low, high = item["ci95"]["accuracy"]
    assert low <= 100 * 13 / 30 <= high and low < high


def test_one_resample_gives_an_interval_of_one_point(nli):
    task, _, _, _, run, tags = nli
    item = next(record(s) for s in weak_slices(task, run.frames, tags=tags, top=50, ci_samples=1)
                if record(s)["conditions"] == {"tag: half": "yes"})
    low, high = item["ci95"]["accuracy"]
    assert low == high  # the percentiles of a single resample's accuracy


def test_ten_slices_by_default(nli):
    task, _, _, _, run, _ = nli
    assert len(weak_slices(task, run.frames, min_size=1, alpha=1.0)) == 10  # far more than ten slices score above 0 here


def test_an_interval_of_a_metric_undefined_on_every_resample_is_none():
    """RE's AUPRC needs probabilities: a run without them has no AUPRC, in the slice nor in its interval."""
    task = get_task("re")
    gold = load_gold(task, DEMO_BENCHMARK)
    run = evaluate_bytes(task, gold, jsonl([{"guid": r["guid"], "label": r["gold"] if k % 3 else "no_relation"}
                                            for k, r in enumerate(gold.rows)]), "run.jsonl")
    found = [record(s) for s in weak_slices(task, run.frames, top=3, ci_samples=5, min_size=1)]
    assert found and all(s["metrics"]["auprc"] is None and s["ci95"]["auprc"] is None for s in found)
    assert all(len(s["ci95"]["micro_f1"]) == 2 for s in found)


def test_a_perfect_run_has_no_weak_slice(nli):
    task, gold, rows, _, _, _ = nli
    perfect = evaluate_bytes(task, gold, jsonl([{"guid": r["guid"], "label": r["gold"]} for r in rows]), "perfect.jsonl")
    assert weak_slices(task, perfect.frames) == []


def test_the_gold_and_predicted_labels_are_conditions_of_a_label_task(nli):
    task, _, rows, wrong, run, _ = nli
    found = units(task, run.frames)
    assert list(found.features["gold_label"]) == [r["gold"] for r in rows]
    other = {"entailment": "neutral", "neutral": "contradiction", "contradiction": "entailment"}
    assert list(found.features["pred_label"]) == [other[r["gold"]] if r["guid"] in wrong else r["gold"] for r in rows]
    assert list(found.features["source"]) == [r["source"] for r in rows]
    assert found.labels["gold_label"] == "Gold label" and found.labels["pred_label"] == "Predicted label"
    assert "error_type" not in found.features and "correct" not in found.features  # they restate the error


def test_extra_columns_are_conditions_named_in_words(nli):
    task, _, rows, wrong, run, _ = nli
    extra = pd.DataFrame({"my_bucket": ["first"] * 50 + ["rest"] * 350})
    found = units(task, run.frames, extra=extra)
    assert list(found.features["my_bucket"]) == ["first"] * 50 + ["rest"] * 350
    assert found.labels["my_bucket"] == "my bucket"
    item = next(record(s) for s in weak_slices(task, run.frames, extra=extra, top=100, max_conditions=1)
                if record(s)["conditions"] == {"my_bucket": "first"})
    assert (item["size"], item["errors"]) == (50, sum(r["guid"] in wrong for r in rows[:50]))


def test_tags_are_yes_and_no_on_every_unit(nli):
    task, _, rows, _, run, _ = nli
    found = units(task, run.frames, tags={rows[0]["guid"]: {"b", "a"}, rows[1]["guid"]: {"a"}})
    assert list(found.features["tag: a"]) == ["yes", "yes"] + ["no"] * 398
    assert list(found.features["tag: b"]) == ["yes"] + ["no"] * 399
    assert found.labels["tag: a"] == "Tagged 'a'"


# ---- two runs -------------------------------------------------------------------------------------------

def test_paired_slices_rank_by_the_paired_t_statistic_and_name_the_worse_run(nli):
    task, gold, rows, wrong, run, tags = nli
    # the second run is wrong on pairs 20-24 (tagged) and on pairs 100-104 (not), right elsewhere
    other = {"entailment": "neutral", "neutral": "contradiction", "contradiction": "entailment"}
    second_wrong = {r["guid"] for r in rows[20:25] + rows[100:105]}
    second = evaluate_bytes(task, gold, jsonl([{"guid": r["guid"], "label": other[r["gold"]] if r["guid"] in second_wrong else r["gold"]}
                                               for r in rows]), "second.jsonl")
    found = [record(s) for s in paired_slices(task, run, second, tags=tags, top=50)]
    item = next(s for s in found if s["conditions"] == {"tag: half": "yes"} and s["worse"] == "spoilt")
    first_wrong = [r["guid"] in wrong for r in rows[:30]]
    second_wrong_list = [r["guid"] in second_wrong for r in rows[:30]]
    d = np.array(first_wrong, dtype=float) - np.array(second_wrong_list, dtype=float)
    assert item["score"] == pytest.approx(stats.ttest_1samp(d, 0).statistic)
    assert (item["better"], item["unit"], item["size"], item["examples"]) == ("second", "examples", 30, 30)
    assert (item["errors"], item["error_rate"]) == (17, pytest.approx(100 * 17 / 30))
    assert item["difference"] == pytest.approx(100 * 17 / 30 - 100 * 5 / 30)
    assert item["runs"]["spoilt"]["errors"] == 17 and item["runs"]["second"]["errors"] == 5
    assert item["runs"]["second"]["error_rate"] == pytest.approx(100 * 5 / 30)
    assert item["runs"]["second"]["metrics"]["accuracy"] == pytest.approx(100 * 25 / 30)
    assert item["metrics"]["accuracy"] == pytest.approx(100 * 13 / 30)
    assert item["labels"] == {"tag: half": "Tagged 'half'"}
    assert "ci95" not in item
    scores = [s["score"] for s in found]
    assert scores == sorted(scores, reverse=True)
    keys = [tuple(sorted(s["conditions"].items())) for s in found]
    assert len(keys) == len(set(keys))  # each conjunction once, in the direction where it ranks highest
    assert len(paired_slices(task, run, second, tags=tags, top=2)) == 2


def test_a_paired_slice_where_the_worse_run_is_wrong_everywhere_ranks_first(nli):
    task, gold, rows, wrong, run, tags = nli
    perfect = evaluate_bytes(task, gold, jsonl([{"guid": r["guid"], "label": r["gold"]} for r in rows]), "perfect.jsonl")
    only = {r["guid"]: {"bad"} for r in rows if r["guid"] in wrong}
    found = [record(s) for s in paired_slices(task, perfect, run, tags=only, top=5)]
    assert found[0]["conditions"] == {"tag: bad": "yes"} and found[0]["score"] == float("inf")
    assert (found[0]["worse"], found[0]["better"], found[0]["size"]) == ("spoilt", "perfect", len(wrong))
    assert found[0]["difference"] == 100.0
    both = [record(s) for s in paired_slices(task, perfect, run, tags=only, top=5, ci_samples=20)]
    assert both[0]["ci95"]["accuracy"] == [100.0, 100.0]  # better - worse on every resample of the slice
    assert paired_slices(task, perfect, perfect) == []


def test_paired_entity_slices_compare_the_gold_entities_both_runs_share():
    task = get_task("ner")
    gold = load_gold(task, DEMO_BENCHMARK)
    first, second = (evaluate_file(task, gold, path) for path in demo_runs("ner"))
    ents_a, ents_b = (r.frames.details["entities"] for r in (first, second))
    gold_a = ents_a[ents_a["side"] == "gold"].set_index(["guid", "start", "end", "label"])["correct"]
    gold_b = ents_b[ents_b["side"] == "gold"].set_index(["guid", "start", "end", "label"])["correct"]
    for item in map(record, paired_slices(task, first, second, top=20, min_size=1)):
        assert item["unit"] == "entities" and "side" not in item["conditions"]
        worse, better = (gold_a, gold_b) if item["worse"] == first.run else (gold_b, gold_a)
        if set(item["conditions"]) == {"label"}:
            shared_rows = [k for k in worse.index if k[3] == item["conditions"]["label"]]
            assert item["size"] == len(shared_rows)
            assert item["errors"] == sum(not worse[k] for k in shared_rows)
            assert item["runs"][item["better"]]["errors"] == sum(not better[k] for k in shared_rows)


# ---- the entity level of one run ----------------------------------------------------------------------

def test_entity_units_carry_their_side_and_their_sentence_s_features():
    task = get_task("ner")
    gold = load_gold(task, DEMO_BENCHMARK)
    run = evaluate_file(task, gold, next(iter(demo_runs("ner"))))
    ents = run.frames.details["entities"].reset_index(drop=True)
    found = units(task, run.frames)
    assert found.level == "entities" and len(found.frame) == len(ents)
    assert list(found.features["side"]) == list(ents["side"])
    source = {r["guid"]: r["source"] for r in gold.rows}
    assert list(found.features["source"]) == [source.get(g, g.rsplit("-", 1)[-1]) for g in ents["guid"]]
    assert found.labels["side"] == "Gold or predicted entity"
    for item in map(record, weak_slices(task, run.frames, top=5, min_size=1)):
        assert item["unit"] == "entities" and set(item["detail_metrics"]) == {"precision", "recall", "f1"}
        if item["conditions"] == {"side": "gold"}:
            gold_side = ents[ents["side"] == "gold"]
            assert item["detail_metrics"]["recall"] == pytest.approx(100 * gold_side["matched"].mean())


# ---- names, headers, tags from the store -------------------------------------------------------------------

def test_the_header_names_the_runs_the_rate_and_the_unit():
    nli, ner, dp = get_task("nli"), get_task("ner"), get_task("dp")
    assert slices_header(nli, ["a"], "examples") == \
        "Weak slices of a: error rate (%) of the pairs in the slice, ranked by SliceLine's score"
    assert slices_header(ner, ["a"], "entities") == \
        "Weak slices of a: error rate (%) of the entities (gold and predicted) in the slice, ranked by SliceLine's score"
    assert slices_header(dp, ["a", "b"], "words") == \
        ("Where one run is worse: a vs b, difference in error rate (percentage points) of the words both runs share, "
         "ranked by the paired t statistic")
    assert slices_header(dp, ["a"], "slots") == "Weak slices of a: error rate (%) of the slots in the slice, ranked by SliceLine's score"


def test_a_slice_name_reads_the_side_and_the_particle_in_words():
    def found(conditions: dict[str, str], labels: dict[str, str]) -> WeakSlice:
        return WeakSlice(conditions=conditions, labels=labels, unit="entities", size=1, examples=1, errors=1, error_rate=100.0,
                         metrics={}, score=1.0)

    item = found({"side": "pred", "particle": "+other", "label": "PS"}, {"particle": "Particle", "side": "x"})
    assert slice_name(item) == "Entity = predicted entity (precision) & Particle = another particle & label = PS"
    assert slice_name(found({"side": "gold", "particle": "whole eojeol"}, {})) == \
        "Entity = gold entity (recall) & particle = none (the whole eojeol)"


class _Remark:
    def __init__(self, task: str, guid: str, run: str, tags: list[str], turn: int | None = None) -> None:
        self.task, self.guid, self.run, self.tags, self.turn = task, guid, run, tags, turn


def test_error_tags_keep_this_task_this_run_and_the_gold():
    task = get_task("nli")
    items = [_Remark("nli", "g1", "run", ["a"]), _Remark("nli", "g1", "gold", ["b"]), _Remark("nli", "g2", "other", ["c"]),
             _Remark("ynat", "g3", "run", ["d"]), _Remark("nli", "g4", "run", [])]
    assert error_tags(task, "run", items) == {"g1": {"a", "b"}}


def test_error_tags_of_a_dialogue_turn_belong_to_that_turn_s_example():
    assert error_tags(get_task("wos"), "run", [_Remark("wos", "d1", "run", ["x"], turn=2)]) == {"d1-2": {"x"}}  # WoS examples: dialogue-turn


def test_the_guids_of_a_slice_on_an_extra_column_are_its_rows(nli):
    task, _, rows, _, run, _ = nli
    extra = pd.DataFrame({"my_bucket": ["first"] * 50 + ["rest"] * 350})
    assert slice_guids(task, run.frames, {"my_bucket": "first"}, extra=extra) == sorted(r["guid"] for r in rows[:50])
    assert slice_guids(task, run.frames, {"my_bucket": "rest"}, extra=extra) == sorted(r["guid"] for r in rows[50:])
