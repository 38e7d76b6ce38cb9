"""`io.json_line`, the JSON-lines reader's fast path (issue 15): every line gives json.loads's own value or its own
error, and a JSON-lines file reads as before (a value split over two lines is two unreadable lines)."""

from __future__ import annotations

import json
import math

import pytest

from klue_viz.reading.records import json_line, read_records

LINES = [
    '{"guid": "a", "tags": ["B-PS", "I-PS", "O"]}', ' {"guid": "a"}', '{"guid": "a"} ', '\t{"guid": "a"}\t',
    '{"guid": "a"}{"guid": "b"}', '{"guid": "a"} x', '[1, 2]', '"text"', "3", "-0.5e3", "NaN", "Infinity", "1e400", "null",
    '{"guid": "한국", "label": "중립"}', '{"a": "\\ud55c"}', '{"a": 1', '{"a": 1,}', "tru", "", "   ", "\ufeff{}",
    '{"a": "line\\nbreak"}', '{"a": "raw\ttab"}', '{"a": 1} {"b": 2}', "[" * 100_000, "1" * 5_000,
]


@pytest.mark.parametrize("line", LINES, ids=range(len(LINES)))
def test_a_line_reads_as_json_loads_reads_it(line: str) -> None:
    try:
        expected = json.loads(line)
    except (ValueError, RecursionError) as err:
        with pytest.raises(type(err)) as raised:
            json_line(line)
        assert str(raised.value) == str(err)
        return
    got = json_line(line)
    if isinstance(expected, float) and math.isnan(expected):
        assert isinstance(got, float) and math.isnan(got)
    else:
        assert got == expected and type(got) is type(expected)


def test_a_value_over_two_lines_is_two_unreadable_lines_and_the_others_are_kept() -> None:
    text = '{"guid": "g1", "label": "neutral"}\n[1,\n2]\n{"guid": "g2", "label": "entailment"}\n"text"\n'
    read = read_records(text.encode(), "run.jsonl")
    assert [(line, record["guid"]) for line, record in read.records] == [(1, "g1"), (4, "g2")]
    messages = []
    for line in ("[1,", "2]"):
        try:
            json.loads(line)
        except json.JSONDecodeError as err:
            messages.append(f"invalid JSON: {err.msg} (column {err.colno})")
    assert [(p.line, p.message) for p in read.problems] == [(2, messages[0]), (3, messages[1]), (5, "expected a JSON object, found str")]
