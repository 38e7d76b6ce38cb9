"""NER frames with the gold's own columns computed once per gold (issue 15: `runs add` of many runs against one gold),
the entity error classes and joins done with numpy, and a file read once by `runs add`."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pandas.testing as pdt
import pytest

from klue_viz.scoring import benchmark as workspace
from klue_viz.scoring import evaluate
from klue_viz.scoring.evaluate import evaluate_with_frames, gold_from_bytes, load_gold
from klue_viz.tasks import get_task
from klue_viz.tasks import ner as ner_module
from klue_viz.tasks.ner import GoldEntityTexts, classify_errors, joined, tag_list
from tests.conftest import jsonl

NER = get_task("ner")


def official_tsv(sentences: list[tuple[str, str, list[str]]]) -> bytes:
    """An official KLUE-NER TSV of (guid, sentence, tags) (the ## line holds the plain sentence: no entity markup)."""
    blocks = []
    for guid, sentence, tags in sentences:
        body = "".join(f"{c}\t{t}\n" for c, t in zip(sentence, tags))
        blocks.append(f"## {guid}\t{sentence}\n{body}")
    return "\n".join(blocks).encode("utf-8")


def tags_of(length: int, *entities: tuple[int, int, str]) -> list[str]:
    tags = ["O"] * length
    for start, end, label in entities:
        tags[start:end] = [f"B-{label}"] + [f"I-{label}"] * (end - start - 1)
    return tags


SENTENCES = [
    ("klue-ner-v1_dev_00000-news", "경찰은 서울에서 김철수를 만났다", tags_of(17, (0, 2, "OG"), (4, 6, "LC"), (9, 12, "PS"))),
    ("klue-ner-v1_dev_00001-wiki", "2020년 3월 KBS 방송", tags_of(15, (0, 8, "DT"), (9, 12, "OG"))),
]


@pytest.fixture
def fresh_cache(monkeypatch: pytest.MonkeyPatch) -> GoldEntityTexts:
    """An empty cache of gold columns, for this test alone."""
    cache = GoldEntityTexts(size=2)
    monkeypatch.setattr(ner_module, "GOLD_ENTITY_TEXTS", cache)
    return cache


def run_records(gold_rows: list[dict], changes: dict[int, list[str]]) -> bytes:
    """A prediction file: the gold tags, with the tags of the sentences in `changes` replaced."""
    return jsonl([{"guid": row["guid"], "tags": changes.get(k, tag_list(row["tags"]))} for k, row in enumerate(gold_rows)])


def assert_same_frames(a: evaluate.RunResult, b: evaluate.RunResult) -> None:
    assert a.scores.values == b.scores.values
    pdt.assert_frame_equal(a.frames.examples, b.frames.examples, check_exact=True)
    assert a.frames.details.keys() == b.frames.details.keys()
    for level in a.frames.details:
        pdt.assert_frame_equal(a.frames.details[level], b.frames.details[level], check_exact=True)


def test_two_runs_against_one_gold_have_the_frames_each_has_scored_alone(fresh_cache: GoldEntityTexts, monkeypatch: pytest.MonkeyPatch) -> None:
    gold = gold_from_bytes(NER, official_tsv(SENTENCES), "gold.tsv")
    first = run_records(gold.rows, {0: tags_of(17, (0, 3, "OG"), (4, 6, "PS"))})  # boundary, wrong type, missed
    second = run_records(gold.rows, {1: tags_of(15, (0, 5, "DT"), (9, 12, "PS"), (14, 15, "QT"))})
    together = [evaluate_with_frames(NER, gold, data, f"run{k}.jsonl") for k, data in enumerate((first, second))]
    assert len(fresh_cache._golds) == 1  # both scored against one kept gold
    for k, data in enumerate((first, second)):
        monkeypatch.setattr(ner_module, "GOLD_ENTITY_TEXTS", GoldEntityTexts())
        assert_same_frames(together[k], evaluate_with_frames(NER, gold, data, f"run{k}.jsonl"))
    ents = together[0].frames.details["entities"]
    sentences = {guid: sentence for guid, sentence, _ in SENTENCES}
    assert ents["text"].tolist() == [sentences[g][a:b] for g, a, b in zip(ents["guid"], ents["start"], ents["end"])]  # read in the test
    first_sentence = ents[ents["guid"] == SENTENCES[0][0]]
    assert first_sentence[["side", "text", "particle", "error_type"]].values.tolist() == [
        ["gold", "경찰", "+은", "wrong boundary"], ["gold", "서울", "+에서", "wrong type"], ["gold", "김철수", "+를", "missed"],
        ["pred", "경찰은", "whole eojeol", "wrong boundary"], ["pred", "서울", "+에서", "wrong type"]]


def test_a_changed_gold_is_described_again(fresh_cache: GoldEntityTexts) -> None:
    gold = gold_from_bytes(NER, official_tsv(SENTENCES), "gold.tsv")
    changed_sentences = [(SENTENCES[0][0], "경찰은 부산에서 김철수를 만났다", SENTENCES[0][2]), SENTENCES[1]]  # same tags, other text
    changed = gold_from_bytes(NER, official_tsv(changed_sentences), "gold.tsv")
    data = run_records(gold.rows, {})
    before = evaluate_with_frames(NER, gold, data, "run.jsonl").frames.details["entities"]
    after = evaluate_with_frames(NER, changed, data, "run.jsonl").frames.details["entities"]
    assert "서울" in before["text"].tolist() and "서울" not in after["text"].tolist()
    assert after["text"].tolist().count("부산") == 2  # the gold's and the prediction's, both from the changed gold
    assert len(fresh_cache._golds) == 2
    retagged = [(SENTENCES[0][0], SENTENCES[0][1], tags_of(17, (0, 3, "OG"))), SENTENCES[1]]  # same text, other tags
    third = evaluate_with_frames(NER, gold_from_bytes(NER, official_tsv(retagged), "gold.tsv"), data, "run.jsonl").frames.details["entities"]
    assert third[third["side"] == "gold"]["text"].tolist() == ["경찰은", "2020년 3월", "KBS"]
    assert len(fresh_cache._golds) == 2  # bounded: the oldest gold left


def test_a_subset_of_the_gold_in_another_order_is_its_own_key(fresh_cache: GoldEntityTexts) -> None:
    gold = gold_from_bytes(NER, official_tsv(SENTENCES), "gold.tsv")
    full = evaluate_with_frames(NER, gold, run_records(gold.rows, {}), "full.jsonl")
    part = evaluate_with_frames(NER, gold, jsonl([{"guid": gold.rows[1]["guid"], "tags": tag_list(gold.rows[1]["tags"])}]), "part.jsonl")
    assert len(fresh_cache._golds) == 2
    assert part.frames.details["entities"]["text"].tolist() == ["2020년 3월", "KBS", "2020년 3월", "KBS"]
    assert full.frames.details["entities"]["text"].tolist()[:3] == ["경찰", "서울", "김철수"]


def frame_of(*entities: tuple[int, int, int, bool]) -> pd.DataFrame:
    """Entities of one side: (ns_start, ns_end, type id, matched), in start order."""
    columns = ["ns_start", "ns_end", "type", "matched"]
    return pd.DataFrame([dict(zip(columns, e)) for e in entities], columns=columns).astype({"matched": bool})


def test_entity_errors_are_classified_by_hand() -> None:
    ps, lc, og, dt, ti, qt = (ner_module.TYPES.index(t) for t in ("PS", "LC", "OG", "DT", "TI", "QT"))
    gold = frame_of((0, 3, ps, False), (5, 8, og, False), (10, 14, dt, False), (20, 22, lc, False), (40, 42, qt, True))
    pred = frame_of((0, 3, lc, False), (5, 7, og, False), (10, 12, ti, False), (12, 14, qt, False), (30, 31, ps, False), (40, 42, qt, True))
    errors, labels = classify_errors(gold, pred, "missed")
    assert errors.tolist() == ["wrong type", "wrong boundary", "wrong type and boundary", "missed", "correct"]
    assert labels.tolist() == ["LC", "OG", "TI", "none", "QT"]  # TI and QT overlap 2 characters each: the first one
    errors, labels = classify_errors(pred, gold, "spurious")
    assert errors.tolist() == ["wrong type", "wrong boundary", "wrong type and boundary", "wrong type and boundary", "spurious", "correct"]
    assert labels.tolist() == ["PS", "OG", "DT", "DT", "none", "QT"]
    errors, labels = classify_errors(gold, frame_of(), "missed")
    assert errors.tolist() == ["missed"] * 4 + ["correct"]


def test_joined_gives_each_groups_distinct_values_sorted() -> None:
    groups = np.array([2, 0, 2, 2, 0])
    values = pd.Series(["wrong type", "missed", "missed", "wrong type", "spurious"])
    assert joined(groups, values, 4, ", ", "correct").tolist() == ["missed, spurious", "correct", "missed, wrong type", "correct"]
    assert joined(np.array([], dtype=np.int64), pd.Series([], dtype=object), 2, " ", "").tolist() == ["", ""]


@pytest.mark.slow
def test_runs_add_scores_from_the_records_read_to_tell_the_task(shared, monkeypatch: pytest.MonkeyPatch) -> None:
    """The records read by read_and_detect give the result reading the bytes gives (problems and lines too), without reading them again."""
    gold = load_gold(NER, shared / "klue-ner-v1.1" / "klue-ner-v1.1_dev.tsv")
    rows = gold.rows[:40]
    lines = [jsonl([{"guid": r["guid"], "tags": tag_list(r["tags"])}]).decode().strip() for r in rows]
    lines[3] = "{not json"
    lines[5] = lines[6]  # a duplicate guid
    data = ("\n".join(lines) + "\n").encode()
    file = workspace.ModelFile("p.jsonl", data, "m")
    task_name, records = workspace.read_and_detect(file)
    assert task_name == "ner"
    expected = evaluate_with_frames(NER, gold, data, "p.jsonl")

    def no_second_read(*args: object, **kwargs: object) -> None:
        raise AssertionError("the file was read again")

    monkeypatch.setattr(evaluate, "read_records", no_second_read)
    reused = evaluate_with_frames(NER, gold, data, "p.jsonl", read=records)
    assert_same_frames(expected, reused)
    assert [(p.line, p.guid, p.message) for p in reused.problems] == [(p.line, p.guid, p.message) for p in expected.problems]
    assert {p.line for p in reused.problems} >= {4, 7}  # not JSON; the second of two same guids
    assert reused.coverage == expected.coverage
