"""Edges of klue_viz/reading/answers.py that its mutation run (issue 31, docs/mutation.md) showed untested: the spans an
answer marks, bracket peeling, the vocabulary's own rules (case, exact-only forms, not-words, longer forms first), a
question mark after a space, option lists whose forms carry an ending, answer lines behind Markdown and in conflict,
`read_number`'s refusals and span, `json_in` past a broken bracket, and `align` of pieces out of order.

Every expected value is worked out by hand from the text in the test (offsets counted character by character); an answer
a careful reader cannot read (two answer lines that disagree) must stay unreadable."""

from __future__ import annotations

from klue_viz.reading.answers import (
    Answer,
    Vocabulary,
    align,
    casefold_same_length,
    json_in,
    read_label,
    read_number,
    strip_answer,
)

#: NLI's Korean forms, written here (not taken from the task module) so the expected labels are the test's own.
NLI = Vocabulary({"참": "entailment", "함의": "entailment", "거짓": "contradiction", "모순": "contradiction", "중립": "neutral"})


def test_used_spans_are_the_spans_else_the_span_else_none():
    assert Answer("참입니다", {"label": "entailment"}, (0, 1)).used_spans() == ((0, 1),)
    assert Answer("a b", {"entities": []}, (0, 1), spans=((0, 1), (2, 3))).used_spans() == ((0, 1), (2, 3))
    assert Answer("?", None).used_spans() == ()


def test_bracket_pairs_are_peeled_only_when_they_close_at_the_end():
    # ( 정 답 : ␠ ( 참 ) ): the outer pair, the prefix, then the inner pair: 참 at 6..7.
    assert strip_answer("(정답: (참))") == (6, 7)
    # (( 가 ) ␠ 또 는 ␠ ( 나 )): the outer pair closes at the end; the inner `(가)` does not, so it stays.
    assert strip_answer("((가) 또는 (나))") == (1, 11)
    # An unbalanced text keeps its brackets: the first `(` is never closed.
    assert strip_answer("((참)") == (0, 4)


def test_vocabulary_folds_case_strips_forms_and_keeps_exact_only_and_not_words():
    vocabulary = Vocabulary({" Neutral ": "neutral", "반대": "contradiction"}, exact_only={" IT ": "IT과학"}, not_words=["반대로"])
    assert vocabulary.exact("NEUTRAL") == "neutral"
    assert vocabulary.exact("it") == "IT과학"
    assert vocabulary.uses("it 기업") == []  # exact-only: never read inside a text
    assert vocabulary.exact("반대입니다") == "contradiction"
    assert vocabulary.exact("반대로") is None
    assert vocabulary.uses("반대로 생각하면") == []
    assert [(m.label, m.start, m.end, m.kind) for m in vocabulary.uses("답은 neutral이다")] == [("neutral", 3, 10, "positive")]


def test_a_longer_form_wins_over_the_shorter_form_inside_it():
    # `정치적` is `정치` + the ending `적` as well as a form of its own: the longer form is the one read.
    vocabulary = Vocabulary({"정치": "politics", "정치적": "other"})
    assert vocabulary.exact("정치적") == "other"
    assert [(m.label, m.start, m.end) for m in vocabulary.uses("정치적 기사")] == [("other", 0, 3)]


def test_uses_reads_from_the_start_of_the_text_and_a_spaced_question_mark_asks():
    assert [(m.label, m.start, m.end, m.kind) for m in NLI.uses("참입니다")] == [("entailment", 0, 1, "positive")]
    assert [(m.label, m.kind) for m in NLI.uses("함의 ?")] == [("entailment", "question")]
    assert [(m.label, m.kind) for m in NLI.uses("함의？")] == [("entailment", "question")]  # a full-width mark
    # Only text[start:end] is read: the negation on the next line lies outside it.
    assert [(m.label, m.kind) for m in NLI.uses("함의\n아님", 0, 3)] == [("entailment", "positive")]
    assert [(m.label, m.kind) for m in NLI.uses("함의\n아님")] == [("entailment", "negated")]


def test_reply_words_that_are_no_form_are_yes_or_no():
    assert [(m.label, m.start, m.end, m.kind) for m in NLI.uses("네")] == [(None, 0, 1, "yes")]
    assert [(m.label, m.start, m.end, m.kind) for m in NLI.uses("아니요")] == [(None, 0, 3, "no")]


def test_coordinated_negations():
    neither = read_label("함의도 모순도 아닙니다", NLI, 3)  # neither entailment nor contradiction: the one left
    assert neither.fields == {"label": "neutral"} and neither.span == (0, 2)
    assert read_label("함의도, 모순도 아닙니다", NLI, 3).fields == {"label": "neutral"}
    assert read_label("함의도 모순도 아님", NLI, 3).fields == {"label": "neutral"}  # the last two mentions
    # Not coordinated: a comma without `도` before it, and a sentence between.
    assert read_label("참, 모순도 아닙니다", NLI, 3).fields == {"label": "entailment"}
    assert [(m.label, m.kind) for m in NLI.uses("함의도. 모순도 아닙니다")] == [
        ("entailment", "positive"), ("contradiction", "negated"), (None, "no")]  # `아닙니다` is also a reply word


def test_offered_options_with_endings_and_other_separators_are_dropped():
    answer = read_label("참입니다/거짓입니다 중 거짓입니다", NLI, 3)
    assert answer.fields == {"label": "contradiction"} and answer.span == (13, 15)
    assert read_label("참·거짓·중립 중에서 중립입니다", NLI, 3).fields == {"label": "neutral"}
    assert read_label("참/거짓/중립 중 중립", NLI, 3).fields == {"label": "neutral"}


def test_answer_lines_behind_markdown_that_disagree_are_unreadable():
    answer = read_label("- 정답: 참\n- 정답: 거짓", NLI, 3)
    assert answer.fields is None and answer.reason == "its answer lines name 2 labels: entailment, contradiction"
    answer = read_label("정답: 참\n정답: 거짓\n정답: 참", NLI, 3)
    assert answer.fields is None and answer.reason == "its answer lines name 2 labels: entailment, contradiction"


def test_which_lines_are_answer_lines():
    # O/X: `모순 X` says "not contradiction", it is no answer line; the answer line is `중립`.
    assert read_label("모순 X\n중립", NLI, 3).fields == {"label": "neutral"}
    # A table cell: `|` and spaces after the form are cut; the prose line names two labels and is no answer line.
    assert read_label("참일 수도, 거짓일 수도 있다.\n| 중립  |", NLI, 3).fields == {"label": "neutral"}
    # A prefixed line is an answer line even when what follows is no bare form, also behind Markdown bold.
    assert read_label("참일 수도 거짓일 수도 있다.\n정답: 중립인 것 같습니다", NLI, 3).fields == {"label": "neutral"}
    assert read_label("참일 수도 거짓일 수도 있다.\n**정답:** 중립인 것 같습니다", NLI, 3).fields == {"label": "neutral"}


def test_an_answer_line_inside_brackets_is_read_without_the_closing_bracket():
    # The explanation names two labels; the answer line `중립` (before `]` and the final newline) decides.
    text = "[전제에 따르면 가설은 참일 수도 있고 거짓일 수도 있다.\n중립]\n"
    answer = read_label(text, NLI, 3)
    assert answer.fields == {"label": "neutral"} and answer.span == (text.index("중립"), text.index("중립") + 2)


def test_read_number_field_span_and_refusals():
    answer = read_number("점수: 3.5점")
    assert answer.fields == {"score": 3.5} and answer.span == (4, 7) and answer.text == "점수: 3.5점"
    assert read_number("(0~5) 4").fields == {"score": 4.0}  # a number right after the scale is the score
    empty = read_number("  ")
    assert (empty.text, empty.fields, empty.reason) == ("  ", None, "the answer is empty")
    assert read_number("모르겠습니다").reason == "names no number"
    several = read_number("3 또는 4")
    assert (several.text, several.fields, several.reason) == ("3 또는 4", None, "names 2 numbers: 3, 4")
    assert read_number("1, 2, 3, 4, 5").reason == "names 5 numbers: 1, 2, 3, 4"


def test_json_in_finds_the_first_value_past_broken_brackets():
    assert json_in("[1]") == ([1], 0, 3)
    assert json_in("답: [1]") == ([1], 3, 6)
    assert json_in('{"a": 1} {"b": 2}') == ({"a": 1}, 0, 8)
    assert json_in("x [1, 2] y", 0, 5) is None  # cut at `end`: the list is not closed
    assert json_in("[[1]") == ([1], 1, 4)  # the outer `[` is never closed
    assert json_in('[x {"a": 1}') == ({"a": 1}, 3, 11)
    assert json_in("ab [x] [1]") == ([1], 7, 10)
    assert json_in("{x [1]") == ([1], 3, 6)


def test_align_in_order_out_of_order_and_missing():
    assert align("가나다가나다", ["가", "나", "가"]) == [0, 1, 3]
    assert align("a b a", ["b", "a"]) == [2, 4]
    assert align("abc", ["", "b"]) == [None, 1]
    assert align("abc", ["z", "b"]) == [None, 1]
    # Out of order: the first occurrence not already taken.
    assert align("x y x", ["y", "x", "x"]) == [2, 4, 0]
    assert align("x x x y", ["x", "y", "x"]) == [0, 6, 2]
    # Touching a taken piece is not overlapping it.
    assert align("aab", ["ab", "a"]) == [1, 0]
    assert align("xx y", ["x", "y", "x"]) == [0, 3, 1]


#: YNAT's seven topics, each its own form (written here).
TOPICS = Vocabulary({name: name for name in ("IT과학", "경제", "사회", "생활문화", "세계", "스포츠", "정치")})


def test_options_only_name_no_label_and_the_range_bounds_the_options():
    assert read_label("참/거짓 중에서 고를 수 없습니다", NLI, 3).reason == "names no label"
    # `중` lies outside text[0:5]: inside it the two forms are no offered options.
    assert [(m.label, m.kind) for m in NLI.uses("참/거짓 중", 0, 5)] == [("entailment", "positive"), ("contradiction", "positive")]


def test_the_reasons_name_at_most_four_labels():
    assert read_label("참, 거짓, 중립", NLI, 3).reason == "names 3 labels: entailment, contradiction, neutral"
    assert read_label("정치, 경제, 사회, 생활문화, 세계 모두 해당", TOPICS, 7).reason == "names 5 labels: 정치, 경제, 사회, 생활문화"
    assert (read_label("정치도 경제도 사회도 생활문화도 세계도 아닙니다", TOPICS, 7).reason
            == "names no label (only what it is not: 정치, 경제, 사회, 생활문화)")


def test_a_question_answered_no_negates_what_was_asked():
    # Entailment? No. Not contradiction either: neutral, marked where the question named entailment.
    answer = read_label("함의인가요? 아니요. 모순도 아닙니다.", NLI, 3)
    assert answer.fields == {"label": "neutral"} and answer.span == (0, 2)
    # A second `no` has nothing left to answer: only entailment is ruled out, two labels remain.
    assert read_label("함의인가요? 아니요. 아니요.", NLI, 3).reason == "names no label (only what it is not: entailment)"


def test_read_label_keeps_the_text_and_marks_the_part_used():
    empty = read_label("  ", NLI, 3)
    assert (empty.text, empty.fields, empty.reason) == ("  ", None, "the answer is empty")
    whole = read_label("정답: 중립.", NLI, 3)
    assert (whole.text, whole.fields, whole.span) == ("정답: 중립.", {"label": "neutral"}, (4, 6))
    by_id = read_label(" 1 ", NLI, 3)
    assert (by_id.text, by_id.fields, by_id.span) == (" 1 ", {"label": 1}, (1, 2))
    text = "전제와 가설을 비교하면\n정답: 함의도 모순도 아님"  # the answer line rules out two of three
    lines = read_label(text, NLI, 3)
    assert (lines.text, lines.fields, lines.span) == (text, {"label": "neutral"}, (17, 19))
    text = "정답: 정치\n정답: 경제\n정답: 사회\n정답: 생활문화\n정답: 세계"
    conflict = read_label(text, TOPICS, 7)
    assert (conflict.text, conflict.reason) == (text, "its answer lines name 5 labels: 정치, 경제, 사회, 생활문화")
    prose = read_label("전제에 따르면 가설은 참이다", NLI, 3)
    assert (prose.text, prose.fields, prose.span) == ("전제에 따르면 가설은 참이다", {"label": "entailment"}, (12, 13))


def test_at_most_eight_bracket_pairs_are_peeled_and_an_empty_pair_is_empty():
    assert strip_answer("[" * 9 + "참" + "]" * 9) == (8, 11)
    assert strip_answer("[]") == (1, 1)
    assert read_label("[]", NLI, 3).reason == "the answer is empty"


def test_casefold_keeps_every_offset():
    assert casefold_same_length("ΣΟΦΟΣ ς") == "σοφοσ σ"  # casefolded: the final sigma folds to σ, lengths kept
    # `ß` casefolds to `ss` and `İ` lowers to two characters: lowered one by one, `İ` left as it is.
    assert casefold_same_length("Straße İ") == "straße İ"
