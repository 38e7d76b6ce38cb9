"""One damaged kept row never breaks a page, and two klue-viz versions on one database leave each other's rows alone
(issue 29 item 6), on SQLite and PostgreSQL.

A kept row that does not read back (edited, truncated, of the wrong types, written by hand) is treated like a damaged
file: the run is scored again (the view computed, the gold parsed) and the row replaced, so the next read uses it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import sqlalchemy as sa

from klue_viz.reading.demo import DEMO_BENCHMARK, demo_runs
from klue_viz.scoring.bootstrap import confidence_intervals
from klue_viz.scoring.evaluate import evaluate_bytes, load_gold
from klue_viz.store import kept_format, kept_results, kept_scoring, parsed_golds, schema
from klue_viz.store.annotations import Store
from klue_viz.tasks import get_task


@pytest.fixture
def store(db_url) -> kept_results.KeptResults:
    return kept_results.KeptResults(Store(db_url))


def demo_input(task_name: str = "nli") -> tuple:
    task = get_task(task_name)
    gold = load_gold(task, DEMO_BENCHMARK)
    path = sorted(demo_runs(task_name))[0]
    data = path.read_bytes()
    return task, gold, kept_scoring.RunInput(path.stem, kept_format.sha256(data), path.name, lambda: data)


class Counting:
    """Counts the runs scored from their bytes."""

    def __init__(self, monkeypatch) -> None:
        self.calls = 0
        real = kept_scoring.evaluate_with_frames

        def counted(*args, **kwargs):
            self.calls += 1
            return real(*args, **kwargs)
        monkeypatch.setattr(kept_scoring, "evaluate_with_frames", counted)


def update(store: kept_results.KeptResults, table: sa.Table, **values) -> None:
    """Damage every row of `table` the way a person with a database console (or a broken disk) would."""
    with store.store.engine.begin() as connection:
        connection.execute(table.update().values(**values))


def fresh_scores(task, gold, run) -> dict:
    return evaluate_bytes(task, gold, run.read(), run.file_name, run=run.name).scores.values


def summary_text(store: kept_results.KeptResults) -> str:
    with store.store.engine.connect() as connection:
        return connection.execute(sa.select(schema.kept_scores.c.summary)).scalar_one()


def body_of(sealed: str) -> dict:
    return json.loads(sealed.partition("\n")[2])


def wrong_types(sealed: str) -> str:
    """The summary's JSON with a score as text, a coverage count as a list and a problem line as text, checksum kept."""
    body = body_of(sealed)
    body["scores"] = {k: "99.9" for k in body["scores"]}
    body["coverage"]["n_gold"] = [1]
    body["problems"] = [{"message": "x", "line": "seven", "guid": None, "file": None}]
    return sealed.partition("\n")[0] + "\n" + json.dumps(body)


DAMAGES = {
    "not JSON": lambda sealed: "{broken",
    "JSON without its checksum": lambda sealed: json.dumps(body_of(sealed)),
    "edited behind its checksum": lambda sealed: sealed.replace('"n_gold": ', '"n_gold": 1'),
    "wrong types": wrong_types,
}


@pytest.mark.parametrize("damage", list(DAMAGES))
def test_a_damaged_scores_row_is_scored_again_and_replaced(store, monkeypatch, damage):
    task, gold, run = demo_input()
    kept_scoring.results_for(store, task, gold, [run], strict=False)
    update(store, schema.kept_scores, summary=DAMAGES[damage](summary_text(store)))
    counting = Counting(monkeypatch)
    results, failures = kept_scoring.results_for(store, task, gold, [run], strict=False)
    assert not failures and counting.calls == 1
    assert results[run.name].scores.values == fresh_scores(task, gold, run)
    again, _ = kept_scoring.results_for(kept_results.KeptResults(Store(store.store.url)), task, gold, [run], strict=False)
    assert counting.calls == 1  # the row was replaced: read back, not scored a third time
    assert again[run.name].scores.values == fresh_scores(task, gold, run)


def test_a_damaged_levels_column_is_scored_again(store, monkeypatch):
    task, gold, run = demo_input()
    kept_scoring.results_for(store, task, gold, [run], strict=False)
    update(store, schema.kept_scores, levels='{"examples": ["abc", "not a size"]}')
    counting = Counting(monkeypatch)
    results, _ = kept_scoring.results_for(store, task, gold, [run], strict=False)
    assert counting.calls == 1 and results[run.name].scores.values == fresh_scores(task, gold, run)


@pytest.mark.parametrize("damage", ["{broken", '{"stamp": 1, "value": [1, 2'])
def test_a_damaged_view_row_is_computed_again_and_replaced(store, damage):
    task, gold, run = demo_input()
    results, _ = kept_scoring.results_for(store, task, gold, [run], strict=False)
    result = results[run.name]
    calls = []

    def compute():
        calls.append(1)
        return [{"slice": "a", "n": 3}]

    assert kept_scoring.kept_view(store, [result], "weak_slices", "", compute) == [{"slice": "a", "n": 3}]
    expected = confidence_intervals(task, result.frames, samples=20)
    assert kept_scoring.intervals(store, result, 20) == expected
    update(store, schema.kept_views, data=damage)
    assert kept_scoring.kept_view(store, [result], "weak_slices", "", compute) == [{"slice": "a", "n": 3}]
    assert kept_scoring.intervals(store, result, 20) == expected
    assert len(calls) == 2
    assert kept_scoring.kept_view(store, [result], "weak_slices", "", compute) == [{"slice": "a", "n": 3}] and len(calls) == 2  # replaced


def test_two_versions_on_one_database_leave_each_others_results_alone(store, monkeypatch):
    """Version A keeps a result; version B (another layout) keeps its own beside it; each then reads its own without
    scoring again, however often they take turns (they used to replace each other's row and score again each time)."""
    task, gold, run = demo_input()
    counting = Counting(monkeypatch)
    for _turn in range(3):
        for version in ("A", "B"):
            monkeypatch.setattr(kept_format, "_LAYOUT", f"9.version-{version}")
            results, _ = kept_scoring.results_for(store, task, gold, [run], strict=False)
            assert results[run.name].scores.values == fresh_scores(task, gold, run)
            assert results[run.name].frames.examples.shape[0] > 0
    assert counting.calls == 2  # once per version, on its first turn
    with store.store.engine.connect() as connection:
        assert sorted(connection.execute(sa.select(schema.kept_scores.c.layout)).scalars()) == ["9.version-A", "9.version-B"]
    assert store.forget(run.run_sha256) == 2  # a removed run takes the results of every version with it


def test_two_versions_parse_a_gold_once_each(db_url, monkeypatch, tmp_path):
    task = get_task("nli")
    data = (Path(DEMO_BENCHMARK) / "klue-nli-v1.1" / "klue-nli-v1.1_dev.json").read_bytes()
    golds = parsed_golds.ParsedGolds(Store(db_url), keep_from_bytes=0)
    parses = []
    real = parsed_golds.gold_from_bytes
    monkeypatch.setattr(parsed_golds, "gold_from_bytes", lambda *a, **k: parses.append(1) or real(*a, **k))
    for _ in range(3):
        for version in ("A", "B"):
            monkeypatch.setattr(kept_format, "_LAYOUT", f"9.version-{version}")
            assert golds.gold(task, data, "dev.json").rows == real(task, data, "dev.json").rows
    assert len(parses) == 2


def test_a_parsed_gold_edited_behind_its_checksum_is_parsed_again(db_url, monkeypatch):
    task = get_task("nli")
    data = (Path(DEMO_BENCHMARK) / "klue-nli-v1.1" / "klue-nli-v1.1_dev.json").read_bytes()
    golds = parsed_golds.ParsedGolds(Store(db_url), keep_from_bytes=0)
    fresh = parsed_golds.gold_from_bytes(task, data, "dev.json")
    golds.gold(task, data, "dev.json")
    with golds.store.engine.begin() as connection:
        stored = connection.execute(sa.select(schema.kept_golds.c.data)).scalar_one()
        label = fresh.rows[0]["gold"]
        other = next(name for name in ("entailment", "neutral", "contradiction") if name != label)
        connection.execute(schema.kept_golds.update().values(data=stored.replace(f'"{label}"', f'"{other}"', 1)))
    assert golds.gold(task, data, "dev.json").rows == fresh.rows
