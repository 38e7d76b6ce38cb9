"""Parsed golds kept in the database (klue_viz/store/parsed_golds.py): read back equal to a fresh parse, of the same types,
and parsed again whenever what they were made from changed, was damaged, or cannot be kept."""

from __future__ import annotations

from pathlib import Path

import pytest
import sqlalchemy as sa

from klue_viz.core.problems import InputError
from klue_viz.reading.demo import DEMO_BENCHMARK
from klue_viz.scoring.evaluate import Gold, gold_file, gold_from_bytes
from klue_viz.store import kept_format, parsed_golds
from klue_viz.store.annotations import Store
from klue_viz.store.parsed_golds import ParsedGolds, gold_json
from klue_viz.store.schema import kept_golds
from klue_viz.tasks import TASKS, get_task

SHARED = Path(__file__).resolve().parents[2] / "shared" / "klue"
REAL = [name for name in ("ner", "nli", "sts", "dp", "wos") if SHARED.exists()]


@pytest.fixture
def golds(tmp_path: Path) -> ParsedGolds:
    return ParsedGolds(Store(f"sqlite:///{tmp_path / 'runs.sqlite3'}"), keep_from_bytes=0)  # the demo's small golds kept too


def test_golds_below_the_size_are_parsed_every_time_and_not_kept(tmp_path: Path, parses: list[str]):
    golds = ParsedGolds(Store(f"sqlite:///{tmp_path / 'runs.sqlite3'}"))
    task, path = get_task("sts"), _file("sts", DEMO_BENCHMARK)
    data = path.read_bytes()
    assert len(data) < parsed_golds.KEEP_FROM_BYTES
    _same(golds.gold(task, data, str(path)), gold_from_bytes(task, data, str(path)))
    golds.gold(task, data, str(path))
    assert parses == [str(path), str(path)]
    with golds.store.engine.connect() as connection:
        assert connection.execute(sa.select(sa.func.count()).select_from(kept_golds)).scalar() == 0


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names parsed through `gold_from_bytes` from here on."""
    seen: list[str] = []

    def counting(task, data, name):
        seen.append(name)
        return gold_from_bytes(task, data, name)
    monkeypatch.setattr(parsed_golds, "gold_from_bytes", counting)
    return seen


def _same(got: Gold, expected: Gold) -> None:
    assert repr(got.rows) == repr(expected.rows)  # repr: the same values of the same types (bytes, tuples, int/float)
    assert got.problems == expected.problems
    assert (got.positional, got.sha256, got.source, got.position) == (expected.positional, expected.sha256, expected.source, expected.position)


def _file(task_name: str, folder: Path) -> Path:
    return gold_file(get_task(task_name), folder)


@pytest.mark.parametrize("task_name,folder", [(n, DEMO_BENCHMARK) for n in TASKS] + [(n, SHARED) for n in REAL])
def test_read_back_equals_a_fresh_parse(golds: ParsedGolds, parses: list[str], tmp_path: Path, task_name: str, folder: Path):
    task, path = get_task(task_name), _file(task_name, folder)
    data = path.read_bytes()
    first = golds.gold(task, data, str(path))
    again = ParsedGolds(Store(golds.store.url), keep_from_bytes=0).gold(task, data, str(path))  # another process, same database
    expected = gold_from_bytes(task, data, str(path))
    _same(first, expected)
    _same(again, expected)
    assert parses == [str(path)]  # parsed once, read back the second time


def test_problems_come_back_with_their_lines(golds: ParsedGolds, parses: list[str], tmp_path: Path):
    task = get_task("ner")
    text = _file("ner", DEMO_BENCHMARK).read_text(encoding="utf-8")
    broken = text.replace("\tO\n", "\tNOT-A-TAG\n", 1)
    header = text.split("\n", 1)[0]
    data = (broken + header + "\n" + text.split("\n", 1)[1]).encode()  # a bad line, and the first sentence twice
    expected = gold_from_bytes(task, data, "ner_dev.tsv")
    assert {p.message.split(";")[0][:8] for p in expected.problems} >= {"expected", "duplicat"}
    golds.gold(task, data, "ner_dev.tsv")
    _same(golds.gold(task, data, "ner_dev.tsv"), expected)
    assert parses == ["ner_dev.tsv"]


def test_another_name_other_bytes_or_other_code_parse_again(golds: ParsedGolds, parses: list[str], monkeypatch: pytest.MonkeyPatch):
    task = get_task("sts")
    data = _file("sts", DEMO_BENCHMARK).read_bytes()
    golds.gold(task, data, "a.json")
    golds.gold(task, data, "b.json")  # its problems would name another file
    golds.gold(task, data.replace(b"}", b"} ", 1), "a.json")  # other bytes
    monkeypatch.setattr(kept_format, "_LAYOUT", "other-code")
    golds.gold(task, data, "a.json")
    golds.gold(task, data, "a.json")  # kept again under the new code
    assert parses == ["a.json", "b.json", "a.json", "a.json"]


def test_a_damaged_row_is_parsed_again_and_replaced(golds: ParsedGolds, parses: list[str]):
    task, path = get_task("nli"), _file("nli", DEMO_BENCHMARK)
    data = path.read_bytes()
    golds.gold(task, data, str(path))
    with golds.store.writer.begin() as connection:
        connection.execute(kept_golds.update().values(data='{"rows": [1'))
    _same(golds.gold(task, data, str(path)), gold_from_bytes(task, data, str(path)))
    _same(golds.gold(task, data, str(path)), gold_from_bytes(task, data, str(path)))
    assert parses == [str(path), str(path)]


def test_values_json_would_change_are_refused_and_such_a_gold_is_not_kept(golds: ParsedGolds, monkeypatch: pytest.MonkeyPatch):
    task = get_task("ynat")
    real = gold_from_bytes(task, _file("ynat", DEMO_BENCHMARK).read_bytes(), "ynat.json")
    for bad in ({"x"}, {1: "a"}, 1 + 2j):
        odd = Gold(task, [real.rows[0] | {"odd": bad}], "ynat.json")
        with pytest.raises(TypeError):
            gold_json(odd)
    odd = Gold(task, [real.rows[0] | {"odd": {"x"}}], "ynat.json")
    monkeypatch.setattr(parsed_golds, "gold_from_bytes", lambda task, data, name: odd)
    assert golds.gold(task, b"anything", "ynat.json") is odd
    with golds.store.engine.connect() as connection:
        assert connection.execute(sa.select(sa.func.count()).select_from(kept_golds)).scalar() == 0


def test_a_database_gone_meanwhile_only_costs_the_parse(golds: ParsedGolds, parses: list[str]):
    task, path = get_task("wos"), _file("wos", DEMO_BENCHMARK)
    data = path.read_bytes()
    with golds.store.writer.begin() as connection:
        connection.execute(sa.text("DROP TABLE kept_golds"))
    _same(golds.gold(task, data, str(path)), gold_from_bytes(task, data, str(path)))
    assert parses == [str(path)]


def test_a_file_that_is_no_gold_is_refused_as_before(golds: ParsedGolds):
    with pytest.raises(InputError, match="empty"):
        golds.gold(get_task("nli"), b"   \n", "nli.json")
