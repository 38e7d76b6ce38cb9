"""The paired-slice finder and the search at the edges the second mutation run of discovery/slices.py showed untested
(docs/mutation.md): the default `top`, `extra` columns and the search options passed through. Expected values are
counted in the test from the first 400 NLI dev pairs and the run's planted errors, never taken from the finder."""

from __future__ import annotations

import pandas as pd
import pytest
from scipy import stats

from klue_viz.discovery.slices import paired_slices
from klue_viz.evaluate import evaluate_bytes
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
    found = paired_slices(task, first, second, tags=marks, top=50)
    # pairs 0-19: each run is wrong alone on five, a paired difference of exactly 0 in either direction
    assert {"tag: even": "yes"} not in [s.conditions for s in found]
    assert all(s.score > 0 for s in found)
    item = next(s for s in found if s.conditions == {"tag: worse": "yes"})
    d = [1.0] * 6 + [0.0] * 34
    assert (item.worse, item.better, item.size) == ("first", "second", 40)
    assert item.score == pytest.approx(stats.ttest_1samp(d, 0).statistic)
