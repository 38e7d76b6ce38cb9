"""klue_viz/store/kept_scoring.py case by case (issue 31, mutation testing): keys, kept intervals and views read back from
the database with sqlalchemy, cut frames written out by hand, and each way a run is scored, read back or left out."""

from __future__ import annotations

import dataclasses
import hashlib
import json

import pandas as pd
import pyarrow.parquet as pq
import pytest
import sqlalchemy as sa

from klue_viz.core.cache import BoundedCache
from klue_viz.core.results import Frames
from klue_viz.reading.demo import DEMO_BENCHMARK, demo_runs
from klue_viz.scoring.evaluate import load_gold
from klue_viz.store import kept_format, kept_results, kept_scoring, schema
from klue_viz.store.annotations import Annotation, Store, StoreError
from klue_viz.store.runs import RunStore
from klue_viz.tasks import get_task


@pytest.fixture
def store(tmp_path) -> kept_results.KeptResults:
    return kept_results.KeptResults(Store(str(tmp_path / "db.sqlite3")))


@pytest.fixture(scope="module")
def nli():
    task = get_task("nli")
    gold = load_gold(task, DEMO_BENCHMARK)
    path = next(iter(demo_runs("nli")))
    data = path.read_bytes()
    return task, gold, kept_scoring.RunInput(path.stem, hashlib.sha256(data).hexdigest(), path.name, lambda: data)


def views(kept: kept_results.KeptResults) -> list:
    with kept.store.engine.connect() as connection:
        return list(connection.execute(sa.select(schema.kept_views)))


def cache() -> BoundedCache:
    return BoundedCache(10**9, 3600.0, lambda _: 1)


class FakeResult:
    def __init__(self, key: str) -> None:
        self.key = key


# ---- keys ------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("key", "expected"), [
    ("ner|kept:abc|run", "abc"),
    ("ner|kept:abc|a|b", "abc"),  # a run name may hold the separator
    ("ner|kept:|run", ""),
    ("ner|abc|run", None),
    ("ner|xkept:abc|run", None),
    ("ner|kept:abc", None),
    ("", None),
])
def test_kept_key(key, expected):
    assert kept_scoring.kept_key(FakeResult(key)) == expected  # type: ignore[arg-type]


def test_as_result_names_its_kept_result_and_its_own_file(store, nli):
    task, gold, run = nli
    (result,) = kept_scoring.results_for(store, task, gold, [run], False)[0].values()
    summary = store.summary("nli", run.run_sha256, gold.sha256, False)
    back = kept_scoring.as_result(store, task, summary, "shown")
    assert back.key == f"nli|kept:{summary.key}|shown" and back.run == "shown" and back.file == run.file_name
    assert kept_scoring.as_result(store, task, summary, "shown", file_name="mine.jsonl").file == "mine.jsonl"
    assert (back.scores, back.coverage, back.problems, back.notes, back.extra_guids) == (
        summary.scores, summary.coverage, summary.problems, summary.notes, summary.extra_guids)
    assert result.key == back.key.replace("shown", run.name)


def test_as_result_without_rescore_raises_and_with_it_rescores(store, nli):
    task, gold, run = nli
    kept_scoring.results_for(store, task, gold, [run], False)
    summary = store.summary("nli", run.run_sha256, gold.sha256, False)
    (store.folder / summary.key / "examples.parquet").unlink()
    with pytest.raises(kept_format.KeptUnreadable):
        kept_scoring.as_result(store, task, summary, "r").frames  # noqa: B018
    made = Frames(pd.DataFrame({"guid": ["x"]}))
    assert kept_scoring.as_result(store, task, summary, "r", rescore=lambda: made).frames is made
    shared = cache()
    first = kept_scoring.as_result(store, task, summary, "r", rescore=lambda: made, frames_cache=shared).frames
    assert first is made and summary.key in shared
    other = Frames(pd.DataFrame())
    assert kept_scoring.as_result(store, task, summary, "s", rescore=lambda: other, frames_cache=shared).frames is made


# ---- intervals -------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("found", "expected"), [
    ({"a": [0, 1.5], "b": None}, {"a": (0.0, 1.5), "b": None}),
    ({}, {}),
    ([], None),
    (None, None),
    ({"a": [0, 1, 2]}, None),
    ({"a": [0]}, None),
    ({"a": [True, 1]}, None),
    ({"a": [0, False]}, None),
    ({"a": ["0", 1]}, None),
    ({"a": (0, 1)}, None),
    ({"b": None, "a": 3}, None),
])
def test_intervals_of(found, expected):
    got = kept_scoring._intervals_of(found)
    assert got == expected
    if got:
        assert all(type(v) is float for pair in got.values() if pair for v in pair)


def test_intervals_are_kept_under_their_view_name(store, nli, monkeypatch):
    task, gold, run = nli
    (result,) = kept_scoring.results_for(store, task, gold, [run], False)[0].values()
    first = kept_scoring.intervals(store, result, 20)
    (row,) = views(store)
    assert row.view == "ci95:20:seed0" and row.key == kept_scoring.kept_key(result)
    assert json.loads(kept_format.unseal(row.data, row.key, row.view)) == {k: list(v) if v else v for k, v in first.items()}
    calls = []
    monkeypatch.setattr(kept_scoring, "confidence_intervals", lambda *a, **k: calls.append(1) or {"x": (1.0, 2.0)})
    assert kept_scoring.intervals(store, result, 20) == first and calls == []
    assert kept_scoring.intervals(None, result, 20) == {"x": (1.0, 2.0)} and calls == [1]
    with store.store.engine.begin() as connection:
        connection.execute(schema.kept_views.update().values(data=kept_format.seal(json.dumps([1]), row.key, row.view)))
    assert kept_scoring.intervals(store, result, 20) == {"x": (1.0, 2.0)}  # not that shape: computed again, replaced
    (row,) = views(store)
    assert json.loads(kept_format.unseal(row.data, row.key, row.view)) == {"x": [1.0, 2.0]}


def test_intervals_survive_a_failing_database(store, nli, monkeypatch):
    task, gold, run = nli
    (result,) = kept_scoring.results_for(store, task, gold, [run], False)[0].values()

    def broken(*_):
        raise StoreError("gone")
    monkeypatch.setattr(store, "view", broken)
    monkeypatch.setattr(store, "keep_view", broken)
    monkeypatch.setattr(kept_scoring, "confidence_intervals", lambda *a, **k: {"x": None})
    assert kept_scoring.intervals(store, result, 20) == {"x": None}


def test_intervals_of_a_run_scored_in_memory_are_not_kept(store, nli, monkeypatch):
    task, gold, run = nli
    (result,) = kept_scoring.results_for(store, task, gold, [run], False)[0].values()
    result.key = "nli|memory|run"
    monkeypatch.setattr(kept_scoring, "confidence_intervals", lambda *a, **k: {"x": None})
    monkeypatch.setattr(store, "view", lambda *_: pytest.fail("no kept result to look in"))
    assert kept_scoring.intervals(store, result, 20) == {"x": None} and views(store) == []


# ---- cut frames ------------------------------------------------------------------------------------------------------
def test_cut_frames_keeps_the_columns_asked_in_order():
    frames = Frames(pd.DataFrame({"a": [1], "b": [2], "c": [3]}), {"d": pd.DataFrame({"x": [1], "y": [2]}), "e": pd.DataFrame({"z": [0]})})
    cut = kept_scoring.cut_frames(frames, {"examples": ["c", "a", "c", "nope"], "d": ["y"], "f": ["x"]})
    assert list(cut.examples.columns) == ["c", "a"] and list(cut.details) == ["d"] and list(cut.details["d"].columns) == ["y"]
    assert list(kept_scoring.cut_frames(frames, {}).examples.columns) == []


def test_column_frames_reads_only_the_columns_of_kept_results(store, nli, monkeypatch):
    task, gold, run = nli
    results, _ = kept_scoring.results_for(store, task, gold, [run], False)
    (result,) = results.values()
    columns = {"examples": ["correct", "guid"]}
    expected = pd.read_parquet(store.folder / kept_scoring.kept_key(result) / "examples.parquet", columns=["correct", "guid"])
    (cut,) = kept_scoring.column_frames(store, [result], columns)
    assert "frames" not in result.__dict__  # the whole frames were not read
    assert list(cut.examples.columns) == ["correct", "guid"] and cut.examples["guid"].tolist() == expected["guid"].tolist()
    assert cut.examples["correct"].tolist() == expected["correct"].tolist()
    shared = cache()
    (first,) = kept_scoring.column_frames(store, [result], columns, shared)
    assert ((kept_scoring.kept_key(result), (("examples", ("correct", "guid")),))) in shared
    monkeypatch.setattr(store, "frame_columns", lambda *_: pytest.fail("read again"))
    (again,) = kept_scoring.column_frames(store, [result], columns, shared)
    assert again is first
    assert kept_scoring.column_frames(None, [result], columns)[0].examples.equals(cut.examples)  # no store: cut from the frames
    assert "frames" in result.__dict__


def test_column_frames_cuts_frames_in_the_cache_and_unreadable_files(store, nli, monkeypatch):
    task, gold, run = nli
    (result,) = kept_scoring.results_for(store, task, gold, [run], False)[0].values()
    key = kept_scoring.kept_key(result)
    whole = Frames(pd.DataFrame({"guid": ["g"], "correct": [True], "other": [1]}))
    shared = cache()
    shared.get(key, lambda: whole)
    monkeypatch.setattr(store, "frame_columns", lambda *_: pytest.fail("the cached frames are cut instead"))
    (cut,) = kept_scoring.column_frames(store, [result], {"examples": ["correct"]}, shared)
    assert cut.examples.to_dict("list") == {"correct": [True]}

    def unreadable(*_):
        raise kept_format.KeptUnreadable("gone")
    monkeypatch.setattr(store, "frame_columns", unreadable)
    (cut,) = kept_scoring.column_frames(store, [result], {"examples": ["guid"]})
    assert cut.examples["guid"].tolist() == result.frames.examples["guid"].tolist()  # read whole, then cut


# ---- scoring and keeping ---------------------------------------------------------------------------------------------
def test_results_for_reports_progress_and_failures(store, nli):
    task, gold, run = nli
    bad = kept_scoring.RunInput("bad", "0" * 64, "bad.jsonl", lambda: b'{"guid": "nope"}\n')
    calls = []
    results, failures = kept_scoring.results_for(store, task, gold, [bad, run], False, progress=lambda *a: calls.append(a))
    assert calls == [(0, 2, "bad"), (1, 2, run.name)]
    assert list(results) == [run.name] and list(failures) == ["bad"] and failures["bad"]
    calls.clear()
    kept_scoring.results_for(store, task, gold, [run], False, progress=lambda *a: calls.append(a))
    assert calls == []


def test_a_result_that_cannot_be_kept_is_still_shown_under_its_key(store, nli, monkeypatch):
    task, gold, run = nli

    def broken(*_):
        raise StoreError("gone")
    monkeypatch.setattr(store, "keep", broken)
    (result,) = kept_scoring.results_for(store, task, gold, [run], True)[0].values()
    assert result.key == f"nli|{kept_format.result_key(run.run_sha256, gold.sha256, True)}|{run.name}"
    assert kept_scoring.kept_key(result) is None
    assert kept_scoring.score_and_keep(store, task, gold, run, True)[0] is None


def test_load(store, nli):
    task, gold, run = nli
    assert kept_scoring.load(store, task, run.run_sha256, gold.sha256, False, "r") is None
    kept_scoring.results_for(store, task, gold, [run], False)
    back = kept_scoring.load(store, task, run.run_sha256, gold.sha256, False, "r")
    assert back.run == "r" and back.key.startswith("nli|kept:")
    assert kept_scoring.load(store, task, run.run_sha256, gold.sha256, True, "r") is None


def test_remove_run_forgets_only_bytes_no_run_of_its_task_keeps(store, nli, monkeypatch):
    task, gold, run = nli
    runs = RunStore(store.store)
    data = run.read()
    first = runs.add("nli", "one.jsonl", data, name="one")
    runs.add("ner", "one.jsonl", data, name="one")  # the same bytes as a run of another task: no reason to keep nli's
    other = runs.add("nli", "three.jsonl", data + b"\n", name="three")
    run = kept_scoring.RunInput("one", first.sha256, "one.jsonl", lambda: runs.data(first.sha256))
    kept_scoring.results_for(store, task, gold, [run], False)
    kept_scoring.results_for(store, task, gold, [kept_scoring.RunInput("three", other.sha256, "three.jsonl", lambda: runs.data(other.sha256))], False)
    twin = runs.get("nli", "three")
    monkeypatch.setattr(runs, "list", lambda task=None: [twin.__class__(**{**twin.__dict__, "sha256": first.sha256})] if task == "nli" else [])
    assert kept_scoring.remove_run(store, runs, "nli", "one", first.version) == 0
    assert store.summary("nli", run.run_sha256, gold.sha256, False) is not None  # another nli run has these bytes
    monkeypatch.undo()
    runs.add("nli", "one.jsonl", data, name="one")
    assert kept_scoring.remove_run(store, runs, "nli", "one", runs.get("nli", "one").version) == 0
    assert store.summary("nli", run.run_sha256, gold.sha256, False) is None
    assert store.summary("nli", other.sha256, gold.sha256, False) is not None
    assert runs.get("ner", "one") is not None
    store.store.save(Annotation("nli", "g1", "three", "me", note="kept"))
    runs.add("nli", "one.jsonl", data, name="one")
    store.store.save(Annotation("nli", "g1", "one", "me", note="kept"))
    assert kept_scoring.remove_run(store, runs, "nli", "one", runs.get("nli", "one").version) == 0  # annotations stay unless asked
    assert sorted(a.run for a in store.store.find("nli")) == ["one", "three"]
    assert kept_scoring.remove_run(store, runs, "nli", "three", twin.version, delete_annotations=True) == 1
    assert [a.run for a in store.store.find("nli")] == ["one"]


# ---- heavy views -----------------------------------------------------------------------------------------------------
def test_kept_view_is_stamped_and_computed_once(store, nli):
    task, gold, run = nli
    (result,) = kept_scoring.results_for(store, task, gold, [run], False)[0].values()
    key = kept_scoring.kept_key(result)
    calls = []
    value = kept_scoring.kept_view(store, [result, result], "weak", "opts", lambda: calls.append(1) or {"v": [1, 2]})
    assert value == {"v": [1, 2]} and calls == [1]
    (row,) = views(store)
    stamp = hashlib.sha256("\n".join([kept_format.view_layout(), "opts", key, key]).encode()).hexdigest()
    assert (row.key, row.view) == (key, "weak")
    assert json.loads(kept_format.unseal(row.data, key, "weak")) == {"stamp": stamp, "value": kept_format.view_json({"v": [1, 2]})}
    assert kept_scoring.kept_view(store, [result, result], "weak", "opts", lambda: calls.append(1)) == {"v": [1, 2]} and calls == [1]
    assert kept_scoring.kept_view(store, [result], "weak", "opts", lambda: calls.append(1) or 5) == 5 and calls == [1, 1]
    assert kept_scoring.kept_view(store, [result], "weak", "other", lambda: 6) == 6


def test_kept_view_damaged_or_not_kept(store, nli, monkeypatch):
    task, gold, run = nli
    (result,) = kept_scoring.results_for(store, task, gold, [run], False)[0].values()
    key = kept_scoring.kept_key(result)
    stamp = hashlib.sha256("\n".join([kept_format.view_layout(), "", key]).encode()).hexdigest()
    store.keep_view(key, "weak", {"stamp": stamp, "value": "{not json"})
    assert kept_scoring.kept_view(store, [result], "weak", "", lambda: 7) == 7
    store.keep_view(key, "weak", {"stamp": stamp, "value": 8})  # not text
    assert kept_scoring.kept_view(store, [result], "weak", "", lambda: 9) == 9
    assert kept_scoring.kept_view(store, [result], "weak", "", lambda: 10) == 9
    assert kept_scoring.kept_view(None, [result], "weak", "", lambda: 11) == 11
    assert kept_scoring.kept_view(store, [], "weak", "", lambda: 12) == 12
    memory = FakeResult("nli|memory|r")
    assert kept_scoring.kept_view(store, [result, memory], "other", "", lambda: 13) == 13  # type: ignore[list-item]
    assert [r.view for r in views(store)] == ["weak"]
    assert kept_scoring.kept_view(store, [result], "bad", "", lambda: object()) is not None  # cannot be kept: shown
    assert [r.view for r in views(store)] == ["weak"]

    def broken(*_):
        raise StoreError("gone")
    monkeypatch.setattr(store, "view", broken)
    monkeypatch.setattr(store, "keep_view", broken)
    assert kept_scoring.kept_view(store, [result], "weak", "", lambda: 14) == 14


def test_keep_keeps_what_it_is_given(store, nli):
    task, gold, run = nli
    result = kept_scoring.evaluate_with_frames(task, gold, run.read(), run.file_name, run=run.name)
    summary = kept_scoring.keep(store, result, run.run_sha256, gold.sha256, True)
    assert (summary.run_sha256, summary.gold_sha256, summary.strict) == (run.run_sha256, gold.sha256, True)
    assert store.summary("nli", run.run_sha256, gold.sha256, True) == summary


def test_remove_run_leaves_the_kept_results_of_another_task(store, nli):
    task, gold, run = nli
    runs = RunStore(store.store)
    data = run.read()
    added = runs.add("nli", "one.jsonl", data, name="one")
    result = kept_scoring.evaluate_with_frames(task, gold, data, "one.jsonl", run="one")
    store.keep(result, added.sha256, gold.sha256, False)
    ner_kept = store.keep(result, added.sha256, "c" * 64, False)
    with store.store.engine.begin() as connection:  # the same bytes kept as another task's result
        connection.execute(schema.kept_scores.update().where(schema.kept_scores.c.key == ner_kept.key).values(task="ner"))
    kept_scoring.remove_run(store, runs, "nli", "one", added.version)
    with store.store.engine.connect() as connection:
        assert list(connection.execute(sa.select(schema.kept_scores.c.key))) == [(ner_kept.key,)]


def test_as_result_carries_problems_notes_and_extra_guids(store, nli):
    task, gold, run = nli
    kept_scoring.results_for(store, task, gold, [run], False)
    summary = dataclasses.replace(store.summary("nli", run.run_sha256, gold.sha256, False),
                                  problems=["p"], notes=["n1", "n2"], extra_guids=["g"])
    back = kept_scoring.as_result(store, task, summary, "r")
    assert (back.problems, back.notes, back.extra_guids) == (["p"], ["n1", "n2"], ["g"])
    assert back.problems is not summary.problems  # copies: the kept summary is shared


# ---- intervals, column frames and load: the rest (issue 31, second run) --------------------------------------------
def nli_runs() -> list[kept_scoring.RunInput]:
    """Both demo NLI runs (different bytes, so two kept results)."""
    out = []
    for path in demo_runs("nli"):
        data = path.read_bytes()
        out.append(kept_scoring.RunInput(path.stem, hashlib.sha256(data).hexdigest(), path.name, lambda data=data: data))
    return out


def kept_examples(kept: kept_results.KeptResults, key: str, columns: list[str]) -> pd.DataFrame:
    """The examples file of a kept result as written, read with pyarrow (not through the store)."""
    return pq.read_table(kept.folder / key / "examples.parquet", columns=columns).to_pandas()


class RacingCache(BoundedCache):
    """A cache whose entry of `key` goes (its time is up) between `key in cache` and `get`, as a TTL can make it."""

    def __init__(self, key: str) -> None:
        super().__init__(10**9, 3600.0, lambda _: 1)
        self.racing = key

    def __contains__(self, key) -> bool:
        return key == self.racing or super().__contains__(key)


def test_intervals_resample_the_run_s_own_frames_and_keep_what_they_give(store, nli, monkeypatch):
    task, gold, run = nli
    (result,) = kept_scoring.results_for(store, task, gold, [run], False)[0].values()
    calls = []

    def resampled(task_, frames, **options):
        calls.append((task_, frames, options))
        return {"accuracy": (0.25, 0.75), "macro_f1": None}
    monkeypatch.setattr(kept_scoring, "confidence_intervals", resampled)
    assert kept_scoring.intervals(store, result, 30) == {"accuracy": (0.25, 0.75), "macro_f1": None}
    ((task_, frames, options),) = calls
    assert task_ is result.task and frames is result.frames and options == {"samples": 30}
    (row,) = views(store)
    assert (row.key, row.view) == (kept_scoring.kept_key(result), "ci95:30:seed0")
    assert json.loads(kept_format.unseal(row.data, row.key, row.view)) == {"accuracy": [0.25, 0.75], "macro_f1": None}
    assert kept_scoring.intervals(store, result, 30) == {"accuracy": (0.25, 0.75), "macro_f1": None} and len(calls) == 1
    assert kept_scoring.intervals(store, result, 40) == {"accuracy": (0.25, 0.75), "macro_f1": None} and len(calls) == 2
    assert sorted(r.view for r in views(store)) == ["ci95:30:seed0", "ci95:40:seed0"]


def test_intervals_of_a_run_scored_in_memory_touch_no_kept_view(store, nli, monkeypatch):
    task, gold, run = nli
    result = kept_scoring.evaluate_with_frames(task, gold, run.read(), run.file_name, run=run.name)
    assert kept_scoring.kept_key(result) is None
    monkeypatch.setattr(kept_scoring, "confidence_intervals", lambda *a, **k: {"x": (0.0, 1.0)})
    monkeypatch.setattr(store, "view", lambda *_: pytest.fail("no kept result to look in"))
    monkeypatch.setattr(store, "keep_view", lambda *_: pytest.fail("no kept result to keep beside"))
    assert kept_scoring.intervals(store, result, 20) == {"x": (0.0, 1.0)}
    assert kept_scoring.intervals(None, result, 20) == {"x": (0.0, 1.0)}


def kept_unbuilt_and_built(store, nli):
    """The two demo NLI runs kept and read back: the first with its frames not built (read from the kept files on
    demand), the second with them built; and the first run's input."""
    task, gold, _ = nli
    first, second = nli_runs()
    results, _ = kept_scoring.results_for(store, task, gold, [first, second], False)
    results[second.name].frames  # noqa: B018
    return results[first.name], results[second.name], first


def test_column_frames_reads_kept_files_only_for_runs_whose_frames_are_not_built(store, nli, monkeypatch):
    task, gold, _ = nli
    unbuilt, built, first = kept_unbuilt_and_built(store, nli)
    memory = kept_scoring.evaluate_with_frames(task, gold, first.read(), first.file_name, run="memory")
    asked, read = [], []
    by_key, frame_columns = store.summaries_by_key, store.frame_columns

    def summaries_by_key(keys):
        asked.extend(keys)
        return by_key(asked)
    monkeypatch.setattr(store, "summaries_by_key", summaries_by_key)
    monkeypatch.setattr(store, "frame_columns", lambda summary, columns: read.append((summary.key, columns)) or frame_columns(summary, columns))
    columns = {"examples": ["guid", "correct"]}
    cuts = kept_scoring.column_frames(store, [unbuilt, memory, built], columns)
    key = kept_scoring.kept_key(unbuilt)
    assert asked == [key] and read == [(key, columns)] and "frames" not in unbuilt.__dict__
    expected = [kept_examples(store, key, ["guid", "correct"]), memory.frames.examples.loc[:, ["guid", "correct"]],
                kept_examples(store, kept_scoring.kept_key(built), ["guid", "correct"])]
    assert [cut.examples.to_dict("list") for cut in cuts] == [frame.to_dict("list") for frame in expected]
    assert expected[0]["guid"].tolist() != [] and expected[0]["correct"].tolist() != expected[2]["correct"].tolist()


def test_column_frames_through_a_cache_keeps_only_the_cut_it_read(store, nli, monkeypatch):
    unbuilt, built, _ = kept_unbuilt_and_built(store, nli)
    read = []
    frame_columns = store.frame_columns
    monkeypatch.setattr(store, "frame_columns", lambda summary, columns: read.append(summary.key) or frame_columns(summary, columns))
    shared = cache()
    columns = {"examples": ["correct"]}
    cuts = kept_scoring.column_frames(store, [unbuilt, built], columns, shared)
    key = kept_scoring.kept_key(unbuilt)
    assert read == [key] and len(shared) == 1 and (key, (("examples", ("correct",)),)) in shared
    assert key not in shared and "frames" not in unbuilt.__dict__  # neither whole frames built nor cached
    assert cuts[0].examples.to_dict("list") == kept_examples(store, key, ["correct"]).to_dict("list")
    assert cuts[1].examples.to_dict("list") == kept_examples(store, kept_scoring.kept_key(built), ["correct"]).to_dict("list")


def test_column_frames_cut_the_whole_frames_when_the_cached_ones_just_went(store, nli, monkeypatch):
    task, gold, run = nli
    (result,) = kept_scoring.results_for(store, task, gold, [run], False)[0].values()
    key = kept_scoring.kept_key(result)
    monkeypatch.setattr(store, "frame_columns", lambda *_: pytest.fail("the whole frames are cut"))
    (cut,) = kept_scoring.column_frames(store, [result], {"examples": ["guid"]}, RacingCache(key))
    assert "frames" in result.__dict__  # built from the kept files
    assert cut.examples.to_dict("list") == kept_examples(store, key, ["guid"]).to_dict("list")


def test_column_frames_through_a_cache_read_an_unreadable_run_whole(store, nli, monkeypatch):
    task, gold, run = nli
    (result,) = kept_scoring.results_for(store, task, gold, [run], False)[0].values()
    key = kept_scoring.kept_key(result)

    def unreadable(*_):
        raise kept_format.KeptUnreadable("gone")
    monkeypatch.setattr(store, "frame_columns", unreadable)
    shared = cache()
    (cut,) = kept_scoring.column_frames(store, [result], {"examples": ["guid", "correct"]}, shared)
    assert cut.examples.to_dict("list") == kept_examples(store, key, ["guid", "correct"]).to_dict("list")
    assert (key, (("examples", ("guid", "correct")),)) in shared


def test_load_reads_the_kept_frames_and_rescores_a_damaged_file(store, nli):
    task, gold, run = nli
    kept_scoring.results_for(store, task, gold, [run], False)
    summary = store.summary("nli", run.run_sha256, gold.sha256, False)
    back = kept_scoring.load(store, task, run.run_sha256, gold.sha256, False, "r")
    assert (back.task, back.file, back.scores) == (task, run.file_name, summary.scores)
    assert back.frames.examples[["guid", "correct"]].to_dict("list") == kept_examples(store, summary.key, ["guid", "correct"]).to_dict("list")
    assert list(back.frames.examples.columns) == [c for c in pq.read_schema(store.folder / summary.key / "examples.parquet").names
                                                  if not c.startswith("__index_level_")]
    path = store.folder / summary.key / "examples.parquet"
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF  # the same size, so the row still looks whole until its bytes are checked
    path.write_bytes(bytes(data))
    made = Frames(pd.DataFrame({"guid": ["x"]}))
    assert kept_scoring.load(store, task, run.run_sha256, gold.sha256, False, "r", rescore=lambda: made).frames is made
    with pytest.raises(kept_format.KeptUnreadable):
        kept_scoring.load(store, task, run.run_sha256, gold.sha256, False, "r").frames  # noqa: B018
