"""klue_viz/scoring/llm_outputs.py's `read_prediction`, `resolve_choices` and `locate_positions` at the edges their
mutants showed untested (issue 31, docs/mutation.md): the gold row a record is parsed against, the trace kept beside
an unreadable answer, a parser's notes added to a repaired prediction's, records with choices but no log-likelihoods,
the twelve pairs shown, a harness target of 0 and one past the choices, and documents matched by their position.

Gold sets are a few examples in the official formats (tests/cases.py); expected values are counted by hand."""

from __future__ import annotations

import dataclasses

from klue_viz.core.problems import Problem
from klue_viz.core.results import Repaired
from klue_viz.reading.answers import Answer
from klue_viz.reading.records import RecordFile
from klue_viz.scoring.llm_outputs import Trace, locate_positions, read_prediction, resolve_choices
from klue_viz.tasks import get_task
from klue_viz.tasks.nli import Nli
from tests.cases import gold_of, ner_tsv, nli

NLI, NER = get_task("nli"), get_task("ner")
E, N, C = "entailment", "neutral", "contradiction"
GOLD = gold_of("nli", nli([E, N, C]))
G = [row["guid"] for row in GOLD.rows]
NER_GOLD = gold_of("ner", ner_tsv([("g0", list(zip("서울에", ["B-LC", "I-LC", "O"])))]))


def test_a_record_is_parsed_against_its_gold_row():
    """NER tags are checked against the gold sentence's length, with or without a trace."""
    tags = ["B-LC", "I-LC", "O"]
    plain, trace = read_prediction(NER, {"guid": "g0", "tags": tags}, NER_GOLD.rows[0])
    assert trace is None and plain == NER.parse_prediction({"tags": tags}, NER_GOLD.rows[0])
    traced, trace = read_prediction(NER, {"guid": "g0", "tags": tags, "prompt": "p"}, NER_GOLD.rows[0])
    assert traced == plain and trace == Trace(None, "p", None, None)


def test_an_unreadable_answer_keeps_the_records_prompt_choices_and_raw_output():
    record = {"guid": G[0], "generation": "잘 모르겠습니다", "prompt": "질문", "raw_output": "원문", "choices": ["참"], "loglikelihoods": [-1]}
    prediction, trace = read_prediction(NLI, record, GOLD.rows[0])
    assert prediction == NLI.unreadable_prediction(GOLD.rows[0])
    assert trace.answer.fields is None and (trace.prompt, trace.choices, trace.raw_output) == ("질문", (("참", -1.0),), "원문")


class NotedNli(Nli):
    """NLI whose answer parser leaves something out and whose prediction parser repairs something: both notes are kept."""

    def parse_answer(self, text: str, gold: dict) -> Answer:
        return dataclasses.replace(super().parse_answer(text, gold), notes=("left out by the answer parser",))

    def parse_prediction(self, record: dict, gold: dict) -> Repaired:
        return Repaired(super().parse_prediction(record, gold), ("repaired by the prediction parser",))


def test_the_answer_parsers_notes_follow_the_prediction_parsers():
    parsed, trace = read_prediction(NotedNli(), {"guid": G[0], "generation": "정답: 거짓"}, GOLD.rows[0])
    assert parsed == Repaired({"label": C, "probs": None}, ("repaired by the prediction parser", "left out by the answer parser"))
    assert trace.answer.notes == ("left out by the answer parser",)


def mc(records: list[dict]) -> RecordFile:
    return RecordFile("log.jsonl", [(k + 1, r) for k, r in enumerate(records)])


def test_a_record_with_choices_but_no_loglikelihoods_is_left_alone():
    choices = [" 참", " 중립", " 거짓"]
    file = mc([{"guid": G[0], "choices": choices, "loglikelihoods": [0.0, -1.0, -2.0]},
               {"guid": G[1], "choices": choices, "generation": "중립"},
               {"guid": G[2], "loglikelihoods": [0.0], "generation": "참"}])
    [note] = resolve_choices(NLI, GOLD, file)
    assert note.startswith("multiple choice: 1 documents")
    assert file.records[0][1]["label"] == E
    assert file.records[1][1] == {"guid": G[1], "choices": choices, "generation": "중립"}
    assert file.records[2][1] == {"guid": G[2], "loglikelihoods": [0.0], "generation": "참"}


def pairs_note(pairs: int) -> str:
    """The note of a run whose choices make `pairs` distinct (text, label) pairs: the labels with 1..k leading spaces."""
    records, made = [], 0
    k = 0
    while made < pairs:
        k += 1
        choices = [f"{' ' * k}{word}" for word in ("참", "중립", "거짓")][: pairs - made]
        records.append({"guid": G[0], "choices": choices, "loglikelihoods": [0.0] * len(choices)})
        made += len(choices)
    [note] = resolve_choices(NLI, GOLD, mc(records))
    return note


def test_twelve_pairs_are_shown_whole_and_thirteen_cut_short():
    twelve, thirteen = pairs_note(12), pairs_note(13)
    assert twelve.count("→") == 12 and ", ...;" not in twelve
    assert thirteen.count("→") == 12 and ", ...; predicted" in thirteen


def test_a_target_of_zero_is_checked_and_one_past_the_choices_is_not():
    choices = [" 참", " 중립", " 거짓"]
    file = mc([{"guid": G[1], "choices": choices, "loglikelihoods": [0.0, -1.0, -2.0], "target": 0},  # 참, gold neutral
               {"guid": G[2], "choices": choices, "loglikelihoods": [0.0, -1.0, -2.0], "target": 3},  # no such choice
               {"guid": G[0], "choices": choices, "loglikelihoods": [0.0, -1.0, -2.0], "target": 0}])  # 참, gold entailment
    notes = resolve_choices(NLI, GOLD, file)
    assert notes[1:] == ["on 1 document(s) the harness's target choice is not the KLUE gold label (its own metric differs from ours there)"]


def test_documents_without_guid_take_the_guid_at_their_position():
    records = [{"doc_position": 0, "generation": "참"}, {"doc_position": 2, "turn": 1, "generation": "참"},
               {"doc_position": 3, "generation": "참"}, {"doc_position": "1", "generation": "참"},
               {"guid": G[1], "doc_position": 0, "generation": "참"}, {"guid": "x", "generation": "참"}]
    file = mc(records)
    problems = locate_positions(NLI, GOLD, file)
    assert problems == [Problem("4 document(s) of the log carry no guid: matched to the gold by their row position (doc_id k = the "
                                "k-th gold example); 2 position(s) are outside the gold's 3 examples", None, None, "log.jsonl")]
    assert [r for _, r in file.records] == [{"guid": G[0], "generation": "참"}, {"guid": G[2], "generation": "참"},
                                           {"generation": "참"}, {"generation": "참"},
                                           {"guid": G[1], "doc_position": 0, "generation": "참"}, {"guid": "x", "generation": "참"}]
    inside = mc([{"doc_position": 1, "generation": "참"}])
    assert locate_positions(NLI, GOLD, inside) == [Problem("1 document(s) of the log carry no guid: matched to the gold by their row "
                                                           "position (doc_id k = the k-th gold example)", None, None, "log.jsonl")]
    assert locate_positions(NLI, GOLD, mc([{"guid": G[0], "generation": "참"}])) == []
