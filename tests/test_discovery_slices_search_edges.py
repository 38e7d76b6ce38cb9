"""The paired-slice finder and the search at the edges the second mutation run of discovery/slices.py showed untested
(docs/mutation.md): the default `top`, `extra` columns and the search options passed through. Expected values are
counted in the test from the first 400 NLI dev pairs and the run's planted errors, never taken from the finder."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from klue_viz.discovery.slices import paired_slices, search
from klue_viz.scoring.evaluate import evaluate_bytes
from tests.conftest import jsonl
from tests.test_discovery_slices_edges import nli  # noqa: F401  (the shared fixture: 400 NLI dev pairs, a spoilt run)


@pytest.fixture(scope="module")
def perfect(nli):  # noqa: F811
    task, gold, rows, wrong, run, tags = nli
    return evaluate_bytes(task, gold, jsonl([{"guid": r["guid"], "label": r["gold"]} for r in rows]), "perfect.jsonl")


def test_ten_paired_slices_by_default(nli, perfect):  # noqa: F811
    task, gold, rows, wrong, run, tags = nli
    many = paired_slices(task, perfect, run, top=50)
    assert len(many) > 10
    default = paired_slices(task, perfect, run)
    assert [s.conditions for s in default] == [s.conditions for s in many[:10]]


def test_extra_columns_are_paired_conditions(nli, perfect):  # noqa: F811
    task, gold, rows, wrong, run, tags = nli
    extra = pd.DataFrame({"my_bucket": ["spoilt" if r["guid"] in wrong else "fine" for r in rows]})
    found = paired_slices(task, perfect, run, extra=extra, top=5)
    # the bucket holds exactly the pairs the spoilt run gets wrong: the perfect run is better on all of them
    assert found[0].conditions == {"my_bucket": "spoilt"} and found[0].score == float("inf")
    assert (found[0].size, found[0].worse, found[0].labels) == (len(wrong), "spoilt", {"my_bucket": "my bucket"})


def test_search_options_reach_the_paired_search(nli, perfect):  # noqa: F811
    task, gold, rows, wrong, run, tags = nli
    only = {r["guid"]: {"bad"} for r in rows if r["guid"] in wrong}
    assert paired_slices(task, perfect, run, tags=only, top=5)[0].conditions == {"tag: bad": "yes"}
    # a minimum size above the tagged slice's leaves it out; one condition at most leaves out every conjunction
    bigger = paired_slices(task, perfect, run, tags=only, top=50, min_size=len(wrong) + 1)
    assert bigger and all(s.size > len(wrong) for s in bigger)
    assert {"tag: bad": "yes"} not in [s.conditions for s in bigger]
    single = paired_slices(task, perfect, run, tags=only, top=50, max_conditions=1)
    assert single and all(len(s.conditions) == 1 for s in single)
    assert any(len(s.conditions) > 1 for s in paired_slices(task, perfect, run, tags=only, top=50))


def test_a_slice_where_both_runs_err_equally_is_not_listed_and_does_not_stop_the_list(nli):  # noqa: F811
    task, gold, rows, wrong, run, tags = nli
    other = {"entailment": "neutral", "neutral": "contradiction", "contradiction": "entailment"}

    def spoilt(positions: set[int], name: str):
        return evaluate_bytes(task, gold, jsonl([{"guid": r["guid"], "label": other[r["gold"]] if k in positions else r["gold"]}
                                                 for k, r in enumerate(rows)]), name)

    first = spoilt(set(range(5)) | set(range(100, 106)), "first.jsonl")  # wrong alone on pairs 0-4 and 100-105
    second = spoilt(set(range(5, 10)), "second.jsonl")  # wrong alone on pairs 5-9
    marks = {r["guid"]: {"even"} for r in rows[:20]} | {r["guid"]: {"worse"} for r in rows[100:140]}
    found = paired_slices(task, first, second, tags=marks, top=1000, max_conditions=1)  # every slice found, none cut
    # pairs 0-19: each run is wrong alone on five, a paired difference of exactly 0 in either direction
    assert {"tag: even": "yes"} not in [s.conditions for s in found]
    assert all(s.score > 0 for s in found)
    item = next(s for s in found if s.conditions == {"tag: worse": "yes"})
    d = [1.0] * 6 + [0.0] * 34
    assert (item.worse, item.better, item.size) == ("first", "second", 40)
    assert item.score == pytest.approx(stats.ttest_1samp(d, 0).statistic)


def test_the_t_statistic_of_slices_of_one_and_two_units_and_a_one_resample_interval(nli):  # noqa: F811
    task, gold, rows, wrong, run, tags = nli
    other = {"entailment": "neutral", "neutral": "contradiction", "contradiction": "entailment"}
    first = evaluate_bytes(task, gold, jsonl([{"guid": r["guid"], "label": other[r["gold"]] if k in (0, 200) else r["gold"]}
                                              for k, r in enumerate(rows)]), "first.jsonl")  # wrong alone on pairs 0 and 200
    second = evaluate_bytes(task, gold, jsonl([{"guid": r["guid"], "label": r["gold"]} for r in rows]), "second.jsonl")
    marks = {rows[0]["guid"]: {"pair"}, rows[1]["guid"]: {"pair"}, rows[200]["guid"]: {"one"}}
    found = {tuple(s.conditions.items()): s for s in paired_slices(task, first, second, tags=marks, top=50, min_size=1, max_conditions=1)}
    one = found[(("tag: one", "yes"),)]
    assert (one.size, one.score) == (1, float("inf"))  # one unit: no spread, the worse run is worse everywhere
    pair = found[(("tag: pair", "yes"),)]
    assert pair.size == 2 and pair.score == pytest.approx(stats.ttest_1samp([1.0, 0.0], 0).statistic)  # 1.0
    with_ci = paired_slices(task, first, second, tags=marks, top=50, min_size=1, max_conditions=1, ci_samples=1)
    interval = next(s for s in with_ci if s.conditions == {"tag: pair": "yes"}).ci95
    assert interval is not None and all(low == high for low, high in interval.values())  # one resample: one point


def test_search_lists_ten_conjunctions_of_three_conditions_at_most_by_default():
    n = 320
    rows = np.arange(n)
    # four yes/no features: row r has bit j of r % 16; errors on every row with all four bits set (r % 16 == 15)
    features = pd.DataFrame({f"f{j}": np.where((rows % 16) >> j & 1, "yes", "no").astype(object) for j in range(4)})
    errors = (rows % 16 == 15).astype(float)
    found = search(features, errors, min_size=10)
    assert len(found) == 10 and len(search(features, errors, min_size=10, top=50)) > 10
    assert max(len(c.conditions) for c in search(features, errors, min_size=10, top=100)) == 3
    four = search(features, errors, min_size=10, top=100, max_conditions=4)
    assert four[0].conditions == {"f0": "yes", "f1": "yes", "f2": "yes", "f3": "yes"} and (four[0].size, four[0].errors) == (20, 20.0)
