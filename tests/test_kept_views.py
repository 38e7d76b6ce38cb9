"""Heavy views of kept runs (weak slices, the suspect queue): computed once, kept beside the kept result, read back by
another process without computing them again, and never used for other runs, gold, strict, inputs or code."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from dataclasses import dataclass

import numpy as np
import pytest

from klue_viz.discovery.slices import WeakSlice, weak_slices
from klue_viz.discovery.suspects import suspects
from klue_viz.reading.demo import DEMO_BENCHMARK, demo_runs
from klue_viz.scoring.evaluate import evaluate_with_frames, gold_from_bytes, load_gold, official_file
from klue_viz.store import kept_format, kept_results, kept_scoring
from klue_viz.store.annotations import Store
from klue_viz.tasks import get_task
from tests.conftest import REPO


def plain(value) -> str:
    """A value as standard JSON (records as their to_dict, numpy scalars as their numbers), to compare a read-back view
    with a fresh computation."""
    return json.dumps(value, ensure_ascii=False, default=lambda v: v.to_dict() if hasattr(v, "to_dict") else v.item())


DEMO_NER = sorted(demo_runs("ner"))


def inputs(task_name: str) -> list[kept_scoring.RunInput]:
    return [kept_scoring.RunInput(p.stem, kept_format.sha256(p.read_bytes()), p.name, p.read_bytes) for p in sorted(demo_runs(task_name))]


@pytest.fixture
def store(tmp_path) -> kept_results.KeptResults:
    return kept_results.KeptResults(Store(str(tmp_path / "db.sqlite3")))


class Counted:
    """A view's computation that counts its calls."""

    def __init__(self, compute) -> None:
        self.compute, self.calls = compute, 0

    def __call__(self):
        self.calls += 1
        return self.compute()


def read_ner(store: kept_results.KeptResults, strict: bool = False, gold=None):
    task = get_task("ner")
    gold = gold or load_gold(task, DEMO_BENCHMARK)
    results, failures = kept_scoring.results_for(store, task, gold, inputs("ner"), strict)
    assert not failures
    return task, gold, [results[r.name] for r in inputs("ner")]


# ---- the JSON a view is kept as ------------------------------------------------------------------

@dataclass(frozen=True)
class Inner:
    runs: list[str]
    about: dict[str, str]


@dataclass(frozen=True)
class Outer:
    guid: str
    score: float
    pair: tuple[int, int]
    inner: Inner


def test_view_json_gives_back_types_exactly():
    value = [{"a": (1, 2), "b": [1.5, None, float("inf")], "n": np.int64(7), "f": np.float64(0.25), "ok": np.bool_(True)},
             Outer("ner-1", 0.5, (3, 4), Inner(["x", "y"], {"text": "서울"}))]
    back = kept_format.view_from_json(kept_format.view_json(value, [Outer, Inner]), [Outer, Inner])
    assert back[0]["a"] == (1, 2) and type(back[0]["a"]) is tuple
    assert back[0]["b"] == [1.5, None, float("inf")]
    assert back[0]["n"] == 7 and type(back[0]["n"]) is int
    assert type(back[0]["f"]) is float and back[0]["ok"] is True
    assert back[1] == Outer("ner-1", 0.5, (3, 4), Inner(["x", "y"], {"text": "서울"}))
    assert type(back[1].pair) is tuple and type(back[1].inner) is Inner


@pytest.mark.parametrize("value", [{1: "int key"}, {"s": {1, 2}}, Outer("g", 0.0, (0, 0), Inner([], {}))])
def test_view_json_refuses_what_it_cannot_give_back(value):
    with pytest.raises(TypeError):
        kept_format.view_json(value, [Inner])  # Outer is not one of the view's types


# ---- computed once, and only reused for the same runs, gold, strict, inputs and code ------------

def test_weak_slices_are_computed_once_and_read_back_by_a_new_store(store, tmp_path):
    task, gold, results = read_ner(store)
    fresh = weak_slices(task, evaluate_with_frames(task, gold, DEMO_NER[0].read_bytes(), "x.jsonl").frames, top=10)
    assert fresh, "the demo run has weak slices"
    compute = Counted(lambda: weak_slices(task, results[0].frames, top=10))
    first = kept_scoring.kept_view(store, results[:1], "weak_slices", "no tags", compute, types=[WeakSlice])
    assert all(type(item) is WeakSlice for item in first)
    assert compute.calls == 1 and plain(first) == plain(fresh)
    again = kept_results.KeptResults(Store(str(tmp_path / "db.sqlite3")))  # another store on the same database: a new server
    _, _, read = read_ner(again)
    back = kept_scoring.kept_view(again, read[:1], "weak_slices", "no tags", compute, types=[WeakSlice])
    assert compute.calls == 1 and plain(back) == plain(fresh) and back == fresh
    assert kept_scoring.kept_view(again, read[:1], "weak_slices", "tags changed", compute, types=[WeakSlice]) is not None
    assert compute.calls == 2  # other inputs: computed again
    kept_scoring.kept_view(again, read[:1], "weak_slices", "tags changed", compute, types=[WeakSlice])
    assert compute.calls == 2
    kept_scoring.kept_view(again, read[:1], "weak_slices", "again", compute)  # records of a type not named: shown, not kept
    kept_scoring.kept_view(again, read[:1], "weak_slices", "again", compute)
    assert compute.calls == 4


def test_a_view_is_not_reused_for_strict_other_gold_other_runs_or_other_code(store, monkeypatch):
    task, gold, results = read_ner(store)
    compute = Counted(lambda: [{"n": 1}])
    kept_scoring.kept_view(store, results, "suspects", "g", compute)
    kept_scoring.kept_view(store, results, "suspects", "g", compute)
    assert compute.calls == 1
    _, _, strict = read_ner(store, strict=True)
    kept_scoring.kept_view(store, strict, "suspects", "g", compute)
    assert compute.calls == 2
    text = official_file(task, DEMO_BENCHMARK).read_text(encoding="utf-8")
    other = gold_from_bytes(task, (text + "\n").encode("utf-8"), "other.tsv")  # other bytes: another gold
    assert other.sha256 != gold.sha256
    _, _, on_other = read_ner(store, gold=other)
    kept_scoring.kept_view(store, on_other, "suspects", "g", compute)
    assert compute.calls == 3
    kept_scoring.kept_view(store, results[:1], "suspects", "g", compute)  # one run of the two: another queue
    assert compute.calls == 4
    kept_scoring.kept_view(store, results[::-1], "suspects", "g", compute)
    assert compute.calls == 5
    monkeypatch.setattr(kept_format, "_VIEW_LAYOUT", "another layout")
    kept_scoring.kept_view(store, results[::-1], "suspects", "g", compute)
    assert compute.calls == 6


def test_a_view_goes_with_its_result(store):
    task, gold, results = read_ner(store)
    compute = Counted(lambda: [1, 2])
    kept_scoring.kept_view(store, results[:1], "weak_slices", "", compute)
    key = kept_scoring.kept_key(results[0])
    assert store.view(key, "weak_slices") is not None
    run = inputs("ner")[0]
    kept_scoring.score_and_keep(store, task, gold, run, False)  # scored again and kept in place: its views are stale
    assert store.view(key, "weak_slices") is None
    kept_scoring.kept_view(store, results[:1], "weak_slices", "", compute)
    assert compute.calls == 2
    store.forget(run.run_sha256, "ner")
    assert store.view(key, "weak_slices") is None


def test_a_run_not_read_from_kept_results_is_computed_each_time(store):
    task = get_task("ner")
    gold = load_gold(task, DEMO_BENCHMARK)
    result = evaluate_with_frames(task, gold, DEMO_NER[0].read_bytes(), "x.jsonl")
    compute = Counted(lambda: [1])
    kept_scoring.kept_view(store, [result], "weak_slices", "", compute)
    kept_scoring.kept_view(store, [result], "weak_slices", "", compute)
    kept_scoring.kept_view(None, [result], "weak_slices", "", compute)
    assert compute.calls == 3


def test_a_damaged_view_is_computed_again(store):
    task, gold, results = read_ner(store)
    compute = Counted(lambda: [{"a": 1}])
    kept_scoring.kept_view(store, results[:1], "weak_slices", "", compute)
    key = kept_scoring.kept_key(results[0])
    found = store.view(key, "weak_slices")
    store.keep_view(key, "weak_slices", {**found, "value": found["value"][:-3]})
    assert kept_scoring.kept_view(store, results[:1], "weak_slices", "", compute) == [{"a": 1}]
    assert compute.calls == 2


# ---- two processes: a second server reads them back ---------------------------------------------

#: One server's work, in a process of its own: prints the weak slices and the suspect queue it showed, and how many
#: times each was computed, as JSON on its last line.
SERVER = textwrap.dedent('''
    import json, sys
    from klue_viz.store import kept_format, kept_results, kept_scoring
    from klue_viz.store.annotations import Store
    from klue_viz.reading.demo import DEMO_BENCHMARK, demo_runs
    from klue_viz.discovery.slices import WeakSlice, weak_slices
    from klue_viz.discovery.suspects import suspects
    from klue_viz.scoring.evaluate import load_gold
    from klue_viz.tasks.kit import Evidence, Suspect
    from klue_viz.tasks import get_task

    url, task_name = sys.argv[1], sys.argv[2]
    store = kept_results.KeptResults(Store(url))
    task = get_task(task_name)
    gold = load_gold(task, DEMO_BENCHMARK)
    runs = [kept_scoring.RunInput(p.stem, kept_format.sha256(p.read_bytes()), p.name, p.read_bytes) for p in sorted(demo_runs(task_name))]
    found, _ = kept_scoring.results_for(store, task, gold, runs, False)
    results = [found[r.name] for r in runs]
    calls = {"weak_slices": 0, "suspects": 0}
    def slices():
        calls["weak_slices"] += 1
        return weak_slices(task, results[0].frames, top=10)
    def queue():
        calls["suspects"] += 1
        return suspects(task, results, top=None, gold_rows=gold.rows)
    shown_slices = kept_scoring.kept_view(store, results[:1], "weak_slices", "no tags|top=10", slices, types=[WeakSlice])
    shown_queue = kept_scoring.kept_view(store, results, "suspects", f"gold={gold.sha256}", queue, types=[Suspect, Evidence])
    assert all(type(s) is WeakSlice for s in shown_slices) and all(type(s) is Suspect for s in shown_queue)
    plain = lambda v: json.dumps(v, ensure_ascii=False, default=lambda x: x.to_dict() if hasattr(x, "to_dict") else x.item())
    print(json.dumps({"calls": calls, "slices": plain(shown_slices), "suspects": plain(shown_queue)}))
''')


def server(url: str, task_name: str) -> dict:
    done = subprocess.run([sys.executable, "-c", SERVER, url, task_name], capture_output=True, text=True, cwd=REPO,
                          env=dict(os.environ, PYTHONPATH=str(REPO)), timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.slow
@pytest.mark.parametrize("task_name", ["ner", "sts"])  # NER: ten weak slices; STS: two suspects
def test_a_second_server_reads_the_views_back_without_computing_them(tmp_path, task_name):
    url = str(tmp_path / "shared.sqlite3")
    first = server(url, task_name)
    assert first["calls"] == {"weak_slices": 1, "suspects": 1}
    second = server(url, task_name)
    assert second["calls"] == {"weak_slices": 0, "suspects": 0}
    # what both showed is what a fresh computation in this process gives
    task = get_task(task_name)
    gold = load_gold(task, DEMO_BENCHMARK)
    fresh = [evaluate_with_frames(task, gold, p.read_bytes(), p.name, run=p.stem) for p in sorted(demo_runs(task_name))]
    expected_slices = plain(weak_slices(task, fresh[0].frames, top=10))
    expected_queue = plain(suspects(task, fresh, top=None, gold_rows=gold.rows))
    assert json.loads(expected_slices) and (task_name != "sts" or json.loads(expected_queue)), "something to keep"
    assert first["slices"] == second["slices"] == expected_slices
    assert first["suspects"] == second["suspects"] == expected_queue
