"""The NER frames' gold half kept per gold (`GoldRows`: issue 15, `runs add` of many runs against one gold) and the
entity columns made from their few distinct values: hand-counted columns, a kept gold reused, a gold with other guids
kept apart, and the dtypes when a side has no entity."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pandas.testing as pdt
import pytest

from klue_viz.scoring.evaluate import evaluate_with_frames, gold_from_bytes
from klue_viz.tasks import get_task
from klue_viz.tasks import ner as ner_module
from klue_viz.tasks.ner import GoldEntityTexts, few_strings, length_buckets, tag_list
from tests.conftest import jsonl
from tests.test_ner_gold_columns import SENTENCES, official_tsv, tags_of

NER = get_task("ner")


@pytest.fixture
def fresh_cache(monkeypatch: pytest.MonkeyPatch) -> GoldEntityTexts:
    """An empty cache of gold columns and rows, for this test alone."""
    cache = GoldEntityTexts(size=2)
    monkeypatch.setattr(ner_module, "GOLD_ENTITY_TEXTS", cache)
    return cache


def run_of(gold_rows: list[dict], changes: dict[int, list[str]]) -> bytes:
    return jsonl([{"guid": row["guid"], "tags": changes.get(k, tag_list(row["tags"]))} for k, row in enumerate(gold_rows)])


def test_the_examples_gold_columns_are_counted_by_hand_on_a_new_and_on_a_kept_gold(fresh_cache: GoldEntityTexts) -> None:
    gold = gold_from_bytes(NER, official_tsv(SENTENCES), "gold.tsv")
    first = evaluate_with_frames(NER, gold, run_of(gold.rows, {0: tags_of(17, (0, 3, "OG"), (4, 6, "PS"))}), "a.jsonl")
    second = evaluate_with_frames(NER, gold, run_of(gold.rows, {1: tags_of(15, (9, 12, "PS"))}), "b.jsonl")
    assert len(fresh_cache._rows) == 1  # the second run took the first one's gold rows
    for result in (first, second):  # sentence 0: 경찰 OG, 서울 LC, 김철수 PS (17 chars); sentence 1: 2020년 3월 DT, KBS OG (15)
        ex = result.frames.examples
        assert ex["n_gold_entities"].tolist() == [3, 2]
        assert ex["gold_types"].tolist() == ["LC OG PS", "DT OG"]
        assert ex["n_entities"].tolist() == ["3-5 entities", "1-2 entities"]
        assert ex["sentence_length"].tolist() == ["1-30 chars", "1-30 chars"]
        ents = result.frames.details["entities"]
        gold_side = ents[ents["side"] == "gold"]
        assert gold_side[["guid", "label", "start", "end", "text", "length"]].values.tolist() == [
            [SENTENCES[0][0], "OG", 0, 2, "경찰", "2-3 chars"], [SENTENCES[0][0], "LC", 4, 6, "서울", "2-3 chars"],
            [SENTENCES[0][0], "PS", 9, 12, "김철수", "2-3 chars"],
            [SENTENCES[1][0], "DT", 0, 8, "2020년 3월", "7+ chars"], [SENTENCES[1][0], "OG", 9, 12, "KBS", "2-3 chars"]]
    assert first.frames.examples["pred_types"].tolist() == ["OG PS", "DT OG"]
    assert second.frames.examples["pred_types"].tolist() == ["LC OG PS", "PS"]
    assert first.frames.examples["n_pred_entities"].tolist() == [2, 2] and second.frames.examples["n_pred_entities"].tolist() == [3, 1]
    assert first.frames.details["entities"]["matched"].tolist() == [False, False, False, True, True, False, False, True, True]
    assert second.frames.examples["error_type"].tolist() == ["correct", "missed, wrong type"]


def test_a_gold_with_the_same_text_and_tags_but_other_guids_has_its_own_rows(fresh_cache: GoldEntityTexts) -> None:
    gold = gold_from_bytes(NER, official_tsv(SENTENCES), "gold.tsv")
    renamed_guids = ["klue-ner-v1_dev_00007-news", "klue-ner-v1_dev_00008-wiki"]
    renamed = gold_from_bytes(NER, official_tsv([(g, s, t) for g, (_, s, t) in zip(renamed_guids, SENTENCES)]), "renamed.tsv")
    evaluate_with_frames(NER, gold, run_of(gold.rows, {}), "a.jsonl")
    result = evaluate_with_frames(NER, renamed, run_of(renamed.rows, {}), "a.jsonl")
    assert len(fresh_cache._rows) == 2
    assert len(fresh_cache._golds) == 1  # the texts are the same gold's: sentences and tags alike
    ents = result.frames.details["entities"]
    assert ents["guid"].tolist() == [renamed_guids[0]] * 3 + [renamed_guids[1]] * 2 + [renamed_guids[0]] * 3 + [renamed_guids[1]] * 2
    evaluate_with_frames(NER, gold_from_bytes(NER, official_tsv(SENTENCES[:1]), "one.tsv"), run_of(gold.rows[:1], {}), "a.jsonl")
    assert len(fresh_cache._rows) == 2  # bounded: the oldest gold left


def test_a_side_without_entities_gives_untyped_error_columns_both_sides_text_ones(fresh_cache: GoldEntityTexts) -> None:
    gold = gold_from_bytes(NER, official_tsv(SENTENCES), "gold.tsv")
    nothing = evaluate_with_frames(NER, gold, run_of(gold.rows, {0: ["O"] * 17, 1: ["O"] * 15}), "o.jsonl").frames.details["entities"]
    assert nothing["side"].tolist() == ["gold"] * 5 and nothing["error_type"].tolist() == ["missed"] * 5
    assert nothing["other_label"].tolist() == ["none"] * 5
    assert nothing["error_type"].dtype == object and nothing["other_label"].dtype == object
    plain = [(g, s, ["O"] * len(t)) for g, s, t in SENTENCES]
    no_gold = gold_from_bytes(NER, official_tsv(plain), "plain.tsv")
    spurious = evaluate_with_frames(NER, no_gold, run_of(no_gold.rows, {1: tags_of(15, (9, 12, "OG"))}), "s.jsonl").frames.details["entities"]
    assert spurious[["side", "text", "error_type", "other_label"]].values.tolist() == [["pred", "KBS", "spurious", "none"]]
    assert spurious["error_type"].dtype == object
    both = evaluate_with_frames(NER, gold, run_of(gold.rows, {}), "g.jsonl").frames.details["entities"]
    assert both["error_type"].dtype == pd.StringDtype(na_value=np.nan) and both["other_label"].dtype == pd.StringDtype(na_value=np.nan)
    for frame in (nothing, spurious, both):  # the other columns' dtypes do not depend on which side has entities
        assert frame[["guid", "label", "text", "length", "script", "particle"]].dtypes.tolist() == [pd.StringDtype()] * 6
        assert frame["side"].dtype == pd.StringDtype(na_value=np.nan) and frame["start"].dtype == np.int64


def test_few_strings_is_pandas_own_conversion() -> None:
    values = np.array(["missed", "correct", None, "missed", "한국"], dtype=object)
    for dtype in ("string", "str"):
        pdt.assert_series_equal(few_strings(values, dtype), pd.Series(pd.array(values, dtype=dtype)), check_exact=True)
    pdt.assert_series_equal(few_strings(values, object), pd.Series(values, dtype=object), check_exact=True)
    assert few_strings(np.array([], dtype=object), "string").tolist() == []


def test_length_buckets_by_hand() -> None:
    assert length_buckets(np.array([1, 2, 3, 4, 7, 6, 1])).tolist() == [
        "1-1 chars", "2-3 chars", "2-3 chars", "4-6 chars", "7+ chars", "4-6 chars", "1-1 chars"]
    assert length_buckets(np.array([0, 1])).tolist()[0] is pd.NA  # outside the buckets, as pd.cut leaves it
    assert length_buckets(np.array([], dtype=np.int64)).tolist() == []
