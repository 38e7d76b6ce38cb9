"""klue_viz/scoring/user_features.py's `read_features` at the two edges a full mutmut run of `read_features` and
`user_slices` left open (issue 31, docs/mutation.md): `start`/`end` columns read at the entity level only for a task
whose detail level is made of spans (NER), and what one row describes for a span task's example-level file.
Expected values are written by hand."""

from __future__ import annotations

from klue_viz.scoring.user_features import read_features
from klue_viz.tasks import get_task
from tests.cases import dp_tsv, gold_of, ner_tsv
from tests.conftest import jsonl

DP, NER = get_task("dp"), get_task("ner")
DP_GOLD = gold_of("dp", dp_tsv([("d0", [("나는", 2, "NP_SBJ"), ("간다", 0, "VP")])]))
NER_GOLD = gold_of("ner", ner_tsv([("g0", list(zip("서울에", ["B-LC", "I-LC", "O"])))]))


def test_start_and_end_are_example_columns_where_the_detail_is_not_spans():
    """DP's detail level is its words, not spans: a file with `start` and `end` describes examples."""
    features, _ = read_features(jsonl([{"guid": "d0", "start": 0, "end": 1, "kind": "a"}]), "d.jsonl", DP, DP_GOLD.rows)
    assert features.level == "examples" and features.unit == "examples"


def test_a_span_tasks_file_without_start_and_end_describes_examples():
    features, _ = read_features(jsonl([{"guid": "g0", "kind": "a"}]), "n.jsonl", NER, NER_GOLD.rows)
    assert features.level == "examples" and features.unit == "examples"
    spans, _ = read_features(jsonl([{"guid": "g0", "start": 0, "end": 2, "kind": "a"}]), "n.jsonl", NER, NER_GOLD.rows)
    assert spans.level == "entities" and spans.unit == "entity spans"
