"""klue_viz/store/kept_scoring.py, the runs' side (issue 31, mutation testing): `score_and_keep`, `results_for` (and the
rescoring of a kept result found damaged), `kept_view` of dataclasses. The run is the demo NLI run cut to its first 20
of 24 lines, so strict and not strict score differently (24 or 20 examples, counted by hand); what is kept is read back
with sqlalchemy, hashlib and pyarrow, and each key recomputed with hashlib from the bytes' digests."""

from __future__ import annotations

import hashlib
import io
import json
from dataclasses import dataclass

import pyarrow.parquet as pq
import pytest
import sqlalchemy as sa

from klue_viz.reading import prediction_files
from klue_viz.reading.records import read_records
from klue_viz.store import kept_format, kept_results, kept_scoring, schema
from tests.test_kept_scoring_mutants import cache, nli, store, views  # noqa: F401  (nli and store: the shared fixtures)

#: The demo NLI gold has 24 pairs and its run a line for each; the partial run keeps the first 20 lines.
N_GOLD = 24
N_KEPT = 20


@pytest.fixture(scope="module")
def partial(nli):  # noqa: F811
    """The demo NLI run without its last four lines, under a name that is not its file's stem."""
    _, gold, run = nli
    lines = run.read().splitlines(keepends=True)
    assert len(lines) == N_GOLD == len(gold.rows)
    data = b"".join(lines[:N_KEPT])
    return kept_scoring.RunInput("partial-run", hashlib.sha256(data).hexdigest(), "partial.jsonl", lambda: data)


def hand_key(run_sha256: str, gold_sha256: str, strict: bool) -> str:
    """`result_key` as docs/runs-storage.md describes it: the two digests, strict as 0/1 and the layout."""
    return hashlib.sha256(f"{run_sha256}|{gold_sha256}|{int(strict)}|{kept_format.layout()}".encode()).hexdigest()


def kept_rows(kept: kept_results.KeptResults) -> list:
    with kept.store.engine.connect() as connection:
        return list(connection.execute(sa.select(schema.kept_scores)))


def file_digests(kept: kept_results.KeptResults, key: str) -> dict[str, tuple[str, int]]:
    return {path.name.removesuffix(".parquet"): (hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_size)
            for path in (kept.folder / key).iterdir()}


def guids_of(data: bytes) -> list[str]:
    return pq.read_table(io.BytesIO(data), columns=["guid"]).column("guid").to_pylist()


# ---- score_and_keep --------------------------------------------------------------------------------------------------
def test_score_and_keep_scores_strict_and_keeps_under_the_run_s_own_key(store, nli, partial):  # noqa: F811
    task, gold, _ = nli
    summary, result = kept_scoring.score_and_keep(store, task, gold, partial, True)
    assert (result.run, result.file) == ("partial-run", "partial.jsonl")  # the run's name, not its file's stem
    coverage = result.coverage
    assert (coverage.n_gold, coverage.n_scored, coverage.n_missing) == (N_GOLD, N_GOLD, N_GOLD - N_KEPT)
    assert "--strict: 4 gold example(s) without a prediction were scored as empty predictions" in result.notes
    assert len(result.frames.examples) == N_GOLD
    key = hand_key(partial.run_sha256, gold.sha256, True)
    assert (summary.key, summary.run_sha256, summary.gold_sha256, summary.strict, summary.file_name) == (
        key, partial.run_sha256, gold.sha256, True, "partial.jsonl")
    (row,) = kept_rows(store)
    assert (row.key, row.task, row.run_sha256, row.gold_sha256, row.strict, row.file_name) == (
        key, "nli", partial.run_sha256, gold.sha256, True, "partial.jsonl")
    assert file_digests(store, key) == summary.levels
    assert len(pq.read_table(store.folder / key / "examples.parquet")) == N_GOLD

    loose, result = kept_scoring.score_and_keep(store, task, gold, partial, False)
    assert (result.coverage.n_scored, len(result.frames.examples)) == (N_KEPT, N_KEPT)
    assert loose.key == hand_key(partial.run_sha256, gold.sha256, False) and loose.strict is False
    assert sorted(row.key for row in kept_rows(store)) == sorted([key, loose.key])


def test_score_and_keep_takes_over_the_records_already_read(store, nli, partial, monkeypatch):  # noqa: F811
    """A caller that read the file to tell its task (`runs add`) passes the records: the bytes are not read again."""
    task, gold, _ = nli
    records = read_records(partial.read(), partial.file_name)
    given = kept_scoring.RunInput(partial.name, partial.run_sha256, partial.file_name, partial.read, records)
    monkeypatch.setattr(prediction_files, "read_records", lambda *_, **__: pytest.fail("the bytes were read again"))
    summary, result = kept_scoring.score_and_keep(store, task, gold, given, False)
    assert result.coverage.n_scored == N_KEPT and summary is not None


# ---- results_for -----------------------------------------------------------------------------------------------------
def test_results_for_strict_keeps_and_reads_back_the_strict_result(store, nli, partial):  # noqa: F811
    task, gold, _ = nli
    calls = []
    results, failures = kept_scoring.results_for(store, task, gold, [partial], True, progress=lambda *a: calls.append(a))
    assert failures == {} and calls == [(0, 1, "partial-run")]
    key = hand_key(partial.run_sha256, gold.sha256, True)
    assert results["partial-run"].key == f"nli|kept:{key}|partial-run"
    assert [row.key for row in kept_rows(store)] == [key]
    again, _ = kept_scoring.results_for(store, task, gold, [partial], True, progress=lambda *a: calls.append(a))
    assert calls == [(0, 1, "partial-run")]  # read back, not scored again
    back = again["partial-run"]
    assert back.key == f"nli|kept:{key}|partial-run" and back.coverage.n_scored == N_GOLD
    assert back.frames.examples["guid"].tolist() == guids_of((store.folder / key / "examples.parquet").read_bytes())


def test_a_failure_says_why_in_the_reader_s_words(store, nli):  # noqa: F811
    task, gold, _ = nli
    bad = kept_scoring.RunInput("bad", "0" * 64, "bad.jsonl", lambda: b'{"guid": "nope"}\n')
    results, failures = kept_scoring.results_for(store, task, gold, [bad], False)
    assert results == {}
    assert failures == {"bad": "bad.jsonl: no prediction could be scored: none of its 1 guids is in the gold (e.g. nope)"}


def test_a_run_that_cannot_be_kept_is_shown_under_its_own_key(store, nli, partial, monkeypatch):  # noqa: F811
    """A full disk when keeping: the run is shown, scored as asked, under the key it would be kept under (not a kept one),
    and a run that cannot be scored before it stops nothing."""
    task, gold, _ = nli

    def full(*_):
        raise OSError("disk full")
    monkeypatch.setattr(store, "keep", full)
    bad = kept_scoring.RunInput("bad", "0" * 64, "bad.jsonl", lambda: b"not json\n")  # refused even strict: nothing is read
    results, failures = kept_scoring.results_for(store, task, gold, [bad, partial], True)
    assert list(failures) == ["bad"] and list(results) == ["partial-run"]
    shown = results["partial-run"]
    assert shown.key == f"nli|{hand_key(partial.run_sha256, gold.sha256, True)}|partial-run"
    assert (shown.run, shown.coverage.n_scored, len(shown.frames.examples)) == ("partial-run", N_GOLD, N_GOLD)
    assert kept_rows(store) == []


def test_a_kept_result_read_for_another_file_of_the_same_bytes(store, nli, partial):  # noqa: F811
    """The kept result keeps the name of the file it was first scored from; each run shows its own, and its frames go
    through the shared cache under the kept key."""
    task, gold, _ = nli
    kept_scoring.results_for(store, task, gold, [partial], False)
    twin = kept_scoring.RunInput("twin", partial.run_sha256, "twin.jsonl", lambda: pytest.fail("kept: not read"))
    shared = cache()
    results, _ = kept_scoring.results_for(store, task, gold, [twin], False, frames_cache=shared)
    back = results["twin"]
    key = hand_key(partial.run_sha256, gold.sha256, False)
    assert (back.run, back.file, back.key) == ("twin", "twin.jsonl", f"nli|kept:{key}|twin")
    frames = back.frames
    assert frames.examples["guid"].tolist() == guids_of((store.folder / key / "examples.parquet").read_bytes())
    assert len(frames.examples) == N_KEPT
    assert key in shared and shared.get(key, lambda: pytest.fail("not cached")) is frames


def test_a_kept_result_found_damaged_is_scored_again_and_kept_again(store, nli, partial):  # noqa: F811
    """A file of the right size but other bytes passes the size check of `summaries`; reading its frames finds it, and the
    run is scored again (strict, as it was asked) and kept again under the same key."""
    task, gold, _ = nli
    kept_scoring.results_for(store, task, gold, [partial], True)
    key = hand_key(partial.run_sha256, gold.sha256, True)
    path = store.folder / key / "examples.parquet"
    original = path.read_bytes()
    damaged = bytearray(original)
    damaged[len(damaged) // 2] ^= 0xFF
    path.write_bytes(bytes(damaged))
    calls = []
    results, _ = kept_scoring.results_for(store, task, gold, [partial], True, progress=lambda *a: calls.append(a))
    assert calls == []  # the damage shows only when the frames are read
    frames = results["partial-run"].frames
    assert frames.examples["guid"].tolist() == guids_of(original) and len(frames.examples) == N_GOLD
    again = store.summary("nli", partial.run_sha256, gold.sha256, True)
    assert again is not None and again.key == key and [row.key for row in kept_rows(store)] == [key]
    assert file_digests(store, key) == again.levels  # the damaged file replaced
    assert guids_of(path.read_bytes()) == guids_of(original)


# ---- kept_view -------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Weak:
    """A view's item as a dataclass: kept as JSON, rebuilt on reading."""

    name: str
    size: int


def test_kept_view_keeps_and_rebuilds_dataclasses(store, nli):  # noqa: F811
    task, gold, run = nli
    (result,) = kept_scoring.results_for(store, task, gold, [run], False)[0].values()
    key = kept_scoring.kept_key(result)
    value = [Weak("a", 1), Weak("b", 2)]
    calls = []
    assert kept_scoring.kept_view(store, [result], "weak", "t", lambda: calls.append(1) or value, (Weak,)) == value
    (row,) = views(store)
    stored = json.loads(kept_format.unseal(row.data, key, "weak"))
    assert stored["stamp"] == hashlib.sha256("\n".join([kept_format.view_layout(), "t", key]).encode()).hexdigest()
    assert kept_format.view_from_json(stored["value"], (Weak,)) == value
    back = kept_scoring.kept_view(store, [result], "weak", "t", lambda: calls.append(1), (Weak,))
    assert back == value and all(type(item) is Weak for item in back) and calls == [1]
