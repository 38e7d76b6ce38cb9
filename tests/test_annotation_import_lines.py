"""Annotation imports, line by line (issue 19, items 4 and 13): a repeated key, out-of-range times, non-text fields."""

from __future__ import annotations

import json

from klue_viz.cli.main import main
from klue_viz.store.annotation_files import parse
from klue_viz.store.annotations import Store

BASE = {"task": "ynat", "guid": "ynat-v1_dev_00001", "turn": None, "run": "bert-base", "annotator": "지민", "tags": ["ambiguous"],
        "note": "", "gold_wrong": False, "corrected_label": None}


def lines(*records: dict) -> bytes:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records).encode("utf-8")


def test_a_repeated_key_is_named_by_its_lines_and_the_newer_updated_at_wins(tmp_path, capsys):
    data = lines({**BASE, "note": "older", "updated_at": "2026-03-01T00:00:00+00:00"},
                 {**BASE, "guid": "ynat-v1_dev_00002", "updated_at": "2026-03-01T00:00:00+00:00"},
                 {**BASE, "note": "newer", "updated_at": "2026-03-02T00:00:00+00:00"})
    items, problems = parse(data, "dup.jsonl")
    assert [(i.guid, i.note) for i in items] == [("ynat-v1_dev_00002", ""), ("ynat-v1_dev_00001", "newer")]
    assert [(p.line, p.guid) for p in problems] == [(1, "ynat-v1_dev_00001")]
    assert "line 3" in problems[0].message and "newer updated_at" in problems[0].message
    path = tmp_path / "dup.jsonl"
    path.write_bytes(data)
    assert main(["annotations", "import", str(path)]) == 0
    stored = {a.guid: a.note for a in Store().find(task="ynat")}
    assert stored == {"ynat-v1_dev_00001": "newer", "ynat-v1_dev_00002": ""}
    assert "line 1" in capsys.readouterr().err


def test_the_store_takes_a_repeated_key_once_even_without_the_file_reader(tmp_path):
    from klue_viz.store.annotations import Annotation

    db = Store(str(tmp_path / "x.sqlite3"))
    twice = [Annotation("ynat", "g1", "run", "지민", note=n, updated_at=t) for n, t in (("b", "2026-01-02T00:00:00+00:00"), ("a", "2026-01-01T00:00:00+00:00"))]
    assert db.apply_import(db.plan_import(twice)) == 1
    assert [a.note for a in db.find()] == ["b"]


def test_out_of_range_times_and_non_text_fields_are_refused_per_line(tmp_path, capsys):
    data = lines({**BASE, "updated_at": "0001-01-01T00:00:00+05:00"},
                 {**BASE, "guid": "ynat-v1_dev_00002", "updated_at": "9999-12-31T23:59:59-05:00"},
                 {**BASE, "guid": "ynat-v1_dev_00003", "note": {"text": "x"}},
                 {**BASE, "guid": "ynat-v1_dev_00004", "annotator": ["지민", "수아"]},
                 {**BASE, "guid": "ynat-v1_dev_00005", "updated_at": "2026-03-01T00:00:00+00:00"})
    items, problems = parse(data, "bad.jsonl")
    assert [i.guid for i in items] == ["ynat-v1_dev_00005"]
    assert [p.line for p in problems] == [1, 2, 3, 4]
    assert "updated_at" in problems[0].message and "updated_at" in problems[1].message
    assert "note must be text" in problems[2].message and "annotator must be text" in problems[3].message
    path = tmp_path / "bad.jsonl"
    path.write_bytes(data)
    assert main(["annotations", "import", str(path)]) == 0
    assert "Traceback" not in capsys.readouterr().err
    assert [a.guid for a in Store().find()] == ["ynat-v1_dev_00005"]
