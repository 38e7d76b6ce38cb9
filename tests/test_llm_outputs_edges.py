"""klue_viz.scoring.llm_outputs at the edges mutation testing showed untested (docs/mutation.md): which field holds the
generated text, what a record's trace keeps, an answer the task cannot score and one read with notes, softmax by hand,
multiple-choice logs mapped by text and by index with every refusal's words, ties between choices, the harness's
target against the gold, and the columns, problems and slices an LLM run adds.

Gold sets are a few examples in the official formats (tests/cases.py); expected values are counted by hand."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from klue_viz.core.problems import InputError
from klue_viz.core.results import Frames, Repaired
from klue_viz.reading.answers import UNREADABLE, Answer
from klue_viz.reading.records import RecordFile
from klue_viz.scoring.llm_outputs import (
    ANSWER_SLICE,
    STATUS_COLUMN,
    Trace,
    answer_columns,
    generated_text,
    read_prediction,
    resolve_choices,
    run_slices,
    softmax,
    trace_of,
    unreadable_problems,
)
from klue_viz.tasks import get_task
from tests.cases import dp_tsv, gold_of, ner_tsv, nli, sts

NLI, STS, DP, NER = get_task("nli"), get_task("sts"), get_task("dp"), get_task("ner")
E, N, C = "entailment", "neutral", "contradiction"
GOLD = gold_of("nli", nli([E, N, C]))
G = [row["guid"] for row in GOLD.rows]


def test_which_field_holds_the_generated_text():
    assert generated_text(NLI, {"label": E, "generation": "참"}) is None  # the task's own field wins
    assert generated_text(NLI, {"label": "", "output": "거짓"}) == "거짓"
    assert generated_text(NLI, {"label": None, "response": "중립"}) == "중립"
    assert generated_text(NLI, {"generation": "참", "output": "거짓"}) == "참"  # the first text field in order
    assert generated_text(NLI, {"generation": ["중립", "참"]}) == "중립"  # samples: the first
    assert generated_text(NLI, {"generation": [], "text": "참"}) == "참"
    assert generated_text(NLI, {"generation": ["참", 1], "text": "거짓"}) == "거짓"  # not a list of strings
    assert generated_text(NLI, {"generation": 3}) is None and generated_text(NLI, {"prompt": "p"}) is None


def test_an_ordinary_record_has_no_trace():
    assert read_prediction(NLI, {"guid": G[0], "label": N}, GOLD.rows[0]) == ({"label": N, "probs": None}, None)


def test_a_harness_record_keeps_its_prompt_choices_and_raw_output():
    record = {"guid": G[0], "label": C, "prompt": 12, "choices": ["참", "거짓"], "loglikelihoods": ["-1.5", -0.5], "raw_output": "x"}
    assert read_prediction(NLI, record, GOLD.rows[0]) == ({"label": C, "probs": None}, Trace(None, "12", (("참", -1.5), ("거짓", -0.5)), "x"))
    assert trace_of({"choices": ["a"], "loglikelihoods": [0.0, 1.0]}) is None  # lengths differ: no choices shown
    assert trace_of({"choices": "ab", "loglikelihoods": [0.0, 1.0]}) is None
    assert trace_of({"raw_output": 0}) == Trace(None, None, None, "0")
    assert trace_of({"prompt": "p"}) == Trace(None, "p", None, None)
    assert trace_of({"label": "x"}) is None


def test_a_generated_answer_read_unreadable_or_unscorable():
    label, trace = read_prediction(NLI, {"guid": G[0], "generation": "정답: 거짓", "prompt": "p"}, GOLD.rows[0])
    assert label == {"label": C, "probs": None} and trace.answer.fields == {"label": C} and trace.prompt == "p" and trace.choices is None
    label, trace = read_prediction(NLI, {"guid": G[0], "generation": "잘 모르겠습니다"}, GOLD.rows[0])
    assert label == NLI.unreadable_prediction(GOLD.rows[0]) and trace.answer.fields is None and trace.prompt is None
    dp_gold = gold_of("dp", dp_tsv([("d0", [("나는", 2, "NP_SBJ"), ("간다", 0, "VP")])]))
    heads, trace = read_prediction(DP, {"guid": "d0", "output": "1 나는 2 FOO\n2 간다 0 VP", "raw_output": "r"}, dp_gold.rows[0])
    assert heads == DP.unreadable_prediction(dp_gold.rows[0])
    assert trace.answer.fields is None and trace.answer.reason == "deprel 'FOO' is not a KLUE-DP relation (e.g. NP_SBJ, VP, NP_OBJ)"
    assert trace.answer.text == "1 나는 2 FOO\n2 간다 0 VP" and trace.raw_output == "r"


def test_what_the_parser_left_out_is_kept_as_notes():
    gold = gold_of("ner", ner_tsv([("g0", list(zip("서울에", ["B-LC", "I-LC", "O"])))]))
    parsed, trace = read_prediction(NER, {"guid": "g0", "generation": "서울:LC, 부산:LC"}, gold.rows[0])
    assert isinstance(parsed, Repaired) and parsed.notes == ("entity '부산' (LC) of the answer is not in the sentence; left out",)
    assert parsed.prediction == NER.parse_prediction({"entities": [{"start": 0, "end": 2, "label": "LC"}]}, gold.rows[0])
    assert trace.answer.notes == parsed.notes


def test_softmax_by_hand():
    assert softmax([0.0, math.log(3)]) == pytest.approx([0.25, 0.75])
    assert softmax([-1000.0, -1000.0 + math.log(3), -1000.0]) == pytest.approx([0.2, 0.6, 0.2])
    assert softmax([5.0]) == [1.0]


def mc(records):
    return RecordFile("log.jsonl", [(k + 1, r) for k, r in enumerate(records)])


def record(k, choices, scores, target=None, **extra):
    out = {"guid": G[k], "choices": choices, "loglikelihoods": scores, **extra}
    return out if target is None else {**out, "target": target}


def test_choices_by_text_label_probabilities_ties_and_the_targets_that_disagree():
    text = [" 참", " 중립", " 거짓"]
    file = mc([record(0, text, [-1.0, -1.0, -3.0], target=0),  # a tie between 참 and 중립: the first choice
               record(1, text[::-1], [0.0, math.log(2), 0.0], target=2),  # choices in another order: target 2 is 참
               record(2, text, [-2.0, -1.0, -1.5], target=1),
               {"guid": G[0], "label": E}])  # not a multiple-choice record
    notes = resolve_choices(NLI, GOLD, file)
    first, second, third = (r for _, r in file.records[:3])
    total = 2 + math.exp(-2)
    assert first["label"] == E and first["probs"] == pytest.approx({E: 1 / total, N: 1 / total, C: math.exp(-2) / total})
    assert second["label"] == N and second["probs"] == pytest.approx({C: 0.25, N: 0.5, E: 0.25})
    assert third["label"] == N
    assert file.records[3][1] == {"guid": G[0], "label": E}
    assert notes[0] == ("multiple choice: 3 documents, choices mapped to labels by their text through the answer parser: "
                        "거짓 → contradiction, 중립 → neutral, 참 → entailment; predicted label = the most likely choice, "
                        "probabilities = softmax over the choices' log-likelihoods")
    # targets: document 0's is 참 (gold entailment), document 1's 참 (gold neutral), document 2's 중립 (gold contradiction)
    assert notes[1:] == ["on 2 document(s) the harness's target choice is not the KLUE gold label (its own metric differs from ours there)"]


def test_choices_without_targets_or_matching_gold_make_no_disagreement_note():
    file = mc([record(0, ["참", "중립", "거짓"], [0.0, -1.0, -2.0]), record(2, ["참", "중립", "거짓"], [0.0, -1.0, -2.0], target=7),
               {**record(1, ["참", "중립", "거짓"], [0.0, -1.0, -2.0], target=0), "guid": "not-in-gold"}])
    assert len(resolve_choices(NLI, GOLD, file)) == 1


def test_choices_by_index_only_when_the_target_agrees_with_the_gold():
    abc = ["A", "B", "C"]
    file = mc([record(0, abc, [0.0, -1.0, -2.0], target=0), record(1, abc[:2], [-1.0, 0.0], target=1),
               {**record(2, abc, [0.0, 0.0, 1.0], target=0), "guid": "elsewhere"}])  # not in the gold: not checked
    notes = resolve_choices(NLI, GOLD, file)
    assert [r["label"] for _, r in file.records] == [E, N, C]
    assert file.records[1][1]["probs"] == pytest.approx({E: 1 / (1 + math.e), N: math.e / (1 + math.e), C: 0.0})
    assert notes == ["multiple choice: 3 documents, choices mapped to labels by index (choice k is label k in Hugging Face order; the "
                     "harness's target agrees with the gold on every document): A → entailment, B → neutral, C → contradiction; predicted "
                     "label = the most likely choice, probabilities = softmax over the choices' log-likelihoods"]


@pytest.mark.parametrize("records, message", [
    ([record(0, ["A", "B", "C", "D"], [0, 0, 0, 0], target=0)],
     "by text, choice 'A' (line 1) names no single label; by index, line 1 has 4 choices, more than the 3 labels"),
    ([record(0, ["참", "정답: 참", "거짓"], [0, 0, 0])],
     "by text, two choices of line 1 name the same label (entailment, entailment, contradiction); by index, line 1 has no integer target"
     " to check the order against"),
    ([record(0, ["A", "B"], [0, 0], target=0), record(1, ["A", "B"], [0, 0], target=2)],
     "by text, choice 'A' (line 1) names no single label; by index, line 2: target choice 2 would be contradiction, but the gold is neutral"),
    ([record(1, ["A", "B"], [0, 0], target=5)],
     "by text, choice 'A' (line 1) names no single label; by index, line 1: target choice 5 would be ?, but the gold is neutral"),
    ([record(1, ["A", "B"], [0, 0], target=-1)],
     "by text, choice 'A' (line 1) names no single label; by index, line 1: target choice -1 would be ?, but the gold is neutral"),
    ([record(1, ["A", "B"], [0, 0], target=3)],  # one past the last label
     "by text, choice 'A' (line 1) names no single label; by index, line 1: target choice 3 would be ?, but the gold is neutral"),
    ([record(1, ["A", "B"], [0, 0], target=0)],
     "by text, choice 'A' (line 1) names no single label; by index, line 1: target choice 0 would be entailment, but the gold is neutral"),
    ([{**record(0, ["A", "B"], [0, 0], target=0), "guid": "x"}, record(1, ["A", "B"], [0, 0], target=0)],  # past a document not in the gold
     "by text, choice 'A' (line 1) names no single label; by index, line 2: target choice 0 would be entailment, but the gold is neutral"),
    ([{**record(1, ["A", "B"], [0, 0], target=0), "guid": "x"}],
     "by text, choice 'A' (line 1) names no single label; by index, no document matches the gold to check the order against"),
])
def test_choices_that_cannot_be_mapped(records, message):
    with pytest.raises(InputError) as caught:
        resolve_choices(NLI, GOLD, mc(records))
    assert str(caught.value) == f"log.jsonl: the choices cannot be mapped to NLI labels: {message}"


def test_a_task_without_labels_refuses_a_multiple_choice_log_and_a_plain_file_is_left_alone():
    sts_gold = gold_of("sts", sts([1.0]))
    with pytest.raises(InputError) as caught:
        resolve_choices(STS, sts_gold, mc([{"guid": "x", "choices": ["1"], "loglikelihoods": [0.0]}]))
    assert str(caught.value) == "log.jsonl: a multiple-choice log, but STS has no label set to map choices to; log it as a generation task"
    plain = mc([{"guid": G[0], "label": E, "choices": "참"}])
    assert resolve_choices(NLI, GOLD, plain) == [] and plain.records[0][1] == {"guid": G[0], "label": E, "choices": "참"}


def test_more_than_twelve_pairs_are_cut_short():
    ynat = get_task("ynat")
    gold = gold_of("ynat", [{"guid": f"y{k}", "title": "t", "label": "경제", "predefined_news_category": "경제", "url": "", "date": ""}
                            for k in range(3)])
    names = ["IT과학", "경제", "사회", "생활문화", "세계", "스포츠", "정치"]
    file = RecordFile("y.jsonl", [(k + 1, {"guid": f"y{k}", "choices": [f"{' ' * k}{n}" for n in names], "loglikelihoods": [0.0] * 7})
                                  for k in range(2)])
    [note] = resolve_choices(ynat, gold, file)
    assert note.count("→") == 12 and ", ...; predicted" in note


def test_answer_columns_of_an_llm_run():
    read = Answer("정답: 참", {"label": E}, (4, 5))
    bad = Answer("모름", None, None, "no label")
    examples = pd.DataFrame({"guid": ["a", "b", "c", "d"], "correct": [True, True, True, True], "error_type": ["correct"] * 4})
    answer_columns(examples, [Trace(read, "p"), Trace(bad), None, Trace(None, None, (("참", 0.0),), "raw")])
    assert [None if pd.isna(v) else v for v in examples["answer_text"]] == ["정답: 참", "모름", None, None]
    assert examples["answer_spans"].tolist() == [((4, 5),), (), (), ()]
    assert examples["answer_reason"].tolist() == ["", "no label", "", ""]
    assert [None if pd.isna(v) else v for v in examples["prompt"]] == ["p", None, None, None]
    assert [None if pd.isna(v) else v for v in examples["raw_output"]] == [None, None, None, "raw"]
    assert examples["choices"].tolist() == [None, None, None, (("참", 0.0),)]
    assert examples[STATUS_COLUMN].tolist() == ["read", UNREADABLE, "(no generated answer)", "(no generated answer)"]
    assert examples["correct"].tolist() == [True, False, True, True]
    assert examples["error_type"].tolist() == ["correct", UNREADABLE, "correct", "correct"]
    assert run_slices(NLI, Frames(examples, {})) == NLI.facts.slices + (ANSWER_SLICE,)


def test_a_run_without_generated_answers_gets_no_status_column():
    examples = pd.DataFrame({"guid": ["a"], "correct": [True]})
    answer_columns(examples, [None])
    assert list(examples.columns) == ["guid", "correct"]
    answer_columns(examples, [Trace(None, "prompt")])  # prompts but no generated text: no answer slice
    assert STATUS_COLUMN not in examples and examples["prompt"].tolist() == ["prompt"]
    assert run_slices(NLI, Frames(examples, {})) == NLI.facts.slices


def test_one_problem_per_unreadable_answer():
    long = "모르겠다\n" + "가" * 100
    traces = {0: Trace(Answer("  정답 없음\n ", None, None, "no label")), 1: Trace(Answer("참", {"label": E})), 2: Trace(None, "p"),
              3: Trace(Answer(long, None, None, "too long"))}
    problems = unreadable_problems(traces, {0: 4, 3: 9}, {0: "g0", 3: "g3"}, "run.jsonl")
    assert [(p.message, p.line, p.guid, p.file) for p in problems] == [
        ("unreadable answer (no label): '정답 없음'", 4, "g0", "run.jsonl"),
        (f"unreadable answer (too long): {('모르겠다 ' + '가' * 100)[:80]!r}", 9, "g3", "run.jsonl")]
    assert unreadable_problems({5: Trace(Answer("x", None, None, "r"))}, {}, {}, "f")[0].line is None
