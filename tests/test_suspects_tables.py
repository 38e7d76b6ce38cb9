"""The likely-gold-errors tables (issue 19, item 22): no 'turn' column of None outside WoS, evidence as a table."""

from __future__ import annotations

from klue_viz.discovery.suspects import evidence_details, queue_frame
from klue_viz.tasks.kit import Evidence, Suspect


def suspect(turn, **evidence) -> Suspect:
    return Suspect("klue-ner-v1_dev_00001-wikitree", turn, "entity", "PS", "OG", 0.9, Evidence(2, 2, {"a": "OG", "b": "OG"}, extra=evidence))


def test_the_turn_column_is_left_out_when_no_suspect_has_a_turn():
    assert "turn" not in queue_frame([suspect(None), suspect(None)]).columns
    wos = queue_frame([suspect(3), suspect(None)])
    assert "turn" in wos.columns and wos["turn"].tolist()[0] == 3


def test_the_evidence_besides_the_runs_is_a_table_of_readable_rows():
    table = evidence_details(suspect(None, span="5-7", label_quality=0.12345, nested={"x": 1}))
    assert list(table.columns) == ["evidence", "value"]
    rows = dict(zip(table["evidence"], table["value"]))
    assert rows == {"runs agreeing": "2 of 2", "span": "5-7", "label quality": "0.123", "nested": "x: 1"}
