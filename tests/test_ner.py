"""The NER task module: reading predicted entity spans, scoring them and drawing them."""

from __future__ import annotations

import pytest
from seqeval.metrics import f1_score as seqeval_f1
from seqeval.scheme import IOB2

from klue_viz.scoring.evaluate import evaluate_bytes, load_gold
from klue_viz.tasks import get_task
from klue_viz.tasks.ner import tag_list
from tests.conftest import jsonl


@pytest.fixture(scope="module")
def ner_gold(shared):
    return load_gold(get_task("ner"), shared / "klue-ner-v1.1" / "klue-ner-v1.1_dev.tsv")


def test_overlapping_ner_spans_are_scored_with_the_later_span_on_top(ner_gold):
    """Convention 9: overlapping spans become tags in order, the record is scored and each overlap is a problem on its line."""
    ner = get_task("ner")
    row = next(r for r in ner_gold.rows if len(r["sentence"]) > 12)
    records = [
        {"guid": row["guid"], "entities": [
            {"start": 0, "end": 6, "label": "PS"}, {"start": 3, "end": 9, "label": "LC"}, {"start": 10, "end": 12, "label": "DT"},
        ]},
    ]
    result = evaluate_bytes(ner, ner_gold, jsonl(records), "p.jsonl")
    assert result.coverage.n_scored == 1 and result.coverage.n_invalid == 0
    (problem,) = [p for p in result.problems if "overlaps" in p.message]
    assert problem.line == 1 and problem.guid == row["guid"] and problem.file == "p.jsonl"
    tags = ["O"] * len(row["sentence"])
    tags[0:6] = ["B-PS"] + ["I-PS"] * 5
    tags[3:9] = ["B-LC"] + ["I-LC"] * 5
    tags[10:12] = ["B-DT", "I-DT"]
    g = [[t for c, t in zip(row["sentence"], tag_list(row["tags"])) if c != " "]]
    p = [[t for c, t in zip(row["sentence"], tags) if c != " "]]
    if any(t != "O" for t in g[0] + p[0]):
        assert result.scores.values["entity_macro_f1"] == pytest.approx(100 * seqeval_f1(g, p, average="macro", mode="strict", scheme=IOB2), abs=1e-9)
    drawing = ner.render(result.frames, row["guid"])
    assert drawing.count('data-status="given"') == 3
