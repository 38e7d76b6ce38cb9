"""Edges of the WoS task module that mutation testing showed untested (docs/mutation.md, "tasks/dp.py and tasks/wos.py").

Expected values are counted by hand on small made-up dialogues (each count in a comment).
"""

from __future__ import annotations

import json
import math
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from klue_viz.compare.ranking import compared_columns
from klue_viz.core.problems import InputError, Problem
from klue_viz.core.results import Frames
from klue_viz.reading.answers import Answer
from klue_viz.tasks.base import RecordError
from klue_viz.tasks.kit import suspect_item
from klue_viz.tasks.wos import TASK, slot_value, split_item, training_keys, unit_training_keys, value_class

D1, D2, D3 = "wos-v1_dev_00001", "wos-v1_dev_00002", "wos-v1_dev_00003"
T0 = ["식당-지역-서울 중앙"]
T1 = ["식당-지역-서울 중앙", "식당-예약 시간-18:00", "관광-종류-dontcare"]
DIALOGUES = [
    {"guid": D1, "domains": ["식당", "관광"], "dialogue": [
        {"role": "user", "text": "식당 찾아요", "state": T0},
        {"role": "sys", "text": "네"},
        {"role": "user", "text": "예약해요", "state": T1},
        {"role": "sys", "text": "언제요"},
        {"role": "user", "text": "고마워요", "state": T1},
    ]},
    {"guid": D2, "domains": ["택시"], "dialogue": [{"role": "user", "text": "택시", "state": []}]},
    {"guid": D3, "domains": ["지하철"], "dialogue": [{"role": "user", "text": f"u{k}"} for k in range(7)]},  # no state: empty
]
# Predictions: D1 turn 0 right; turn 1 the time 19:00 for 18:00, an extra 숙소-가격대-yes, 관광-종류 missing;
# turn 2 관광-종류 missing. Every other turn empty, as the gold.
PREDICTIONS = [T0, ["식당-지역-서울 중앙", "식당-예약 시간-19:00", "숙소-가격대-yes"], ["식당-예약 시간-18:00", "식당-지역-서울 중앙"],
               [], *[[]] * 7]


@pytest.fixture(scope="module")
def scored():
    rows, problems = TASK.rows_from_hf(DIALOGUES)
    assert problems == []
    return rows, TASK.build_frames(pd.DataFrame(rows), PREDICTIONS)


def test_rows_from_hf_by_hand(scored):
    rows, _ = scored
    assert len(rows) == 3 + 1 + 7
    assert rows[:4] == [
        {"guid": f"{D1}-0", "dialogue": D1, "turn": 0, "domains": "식당 관광", "domain_count": "2 domains", "system": "",
         "text": "식당 찾아요", "gold_state": T0, "previous_gold": []},
        {"guid": f"{D1}-1", "dialogue": D1, "turn": 1, "domains": "식당 관광", "domain_count": "2 domains", "system": "네",
         "text": "예약해요", "gold_state": T1, "previous_gold": T0},
        {"guid": f"{D1}-2", "dialogue": D1, "turn": 2, "domains": "식당 관광", "domain_count": "2 domains", "system": "언제요",
         "text": "고마워요", "gold_state": T1, "previous_gold": T1},
        {"guid": f"{D2}-0", "dialogue": D2, "turn": 0, "domains": "택시", "domain_count": "single-domain", "system": "",
         "text": "택시", "gold_state": [], "previous_gold": []},
    ]
    assert [r["turn"] for r in rows[4:]] == list(range(7)) and rows[10]["guid"] == f"{D3}-6"
    assert [r["system"] for r in rows[4:]] == [""] * 7  # user turns one after another: no system text between


def test_rows_from_hf_reports_unusable_dialogues():
    bad = [
        {"guid": "x", "domains": []},
        {"guid": "y", "dialogue": [{"role": "user", "text": "t", "state": ["식당-x"]}]},
        "not a dialogue",
        {"guid": "z", "dialogue": [{"role": "user", "text": "t", "state": ["식당-지역-a"]}]},  # no domains: "0 domains"
    ]
    rows, problems = TASK.rows_from_hf(bad)
    assert problems == [
        Problem("dialogue not usable: missing field 'dialogue'", guid="x"),
        Problem("dialogue not usable: state item '식당-x' is not 'domain-slot-value'", guid="y"),
        Problem("dialogue not usable: string indices must be integers, not 'str'", guid=None),
    ]
    assert [(r["guid"], r["domain_count"], r["domains"]) for r in rows] == [("z-0", "0 domains", "")]


def test_read_official_json():
    with pytest.raises(InputError) as err:
        TASK.read_official_json({"guid": D1}, "x.json")
    assert str(err.value) == "x.json: expected the official WoS JSON list of dialogues"
    rows, problems = TASK.read_official_json(DIALOGUES[1:2], "x.json")
    assert [r["guid"] for r in rows] == [f"{D2}-0"] and problems == []
    assert TASK.looks_like_hf({}) is True


def test_split_item_and_value_class():
    assert split_item("식당-예약 시간-23:20") == ("식당", "예약 시간", "23:20")
    assert split_item("관광-이름-a-b") == ("관광", "이름", "a-b")  # the value may hold '-'
    assert split_item("식당-지역-") == ("식당", "지역", "")  # only domain and slot must be there
    for bad in ("식당-지역", "-지역-a", "식당- -a"):
        with pytest.raises(RecordError) as err:
            split_item(bad)
        assert str(err.value) == f"state item {bad!r} is not 'domain-slot-value'"
    assert [value_class(v) for v in (None, "none", "dontcare", "yes", "no", "서울", "Yes")] == [
        "none", "none", "dontcare", "yes", "no", "value", "value"]
    assert [slot_value(v) for v in (None, float("nan"), "a", 3)] == [None, None, "a", "3"]


def test_keys_of_records_and_annotations():
    assert TASK.record_key({"guid": " d ", "turn": 2}) == "d-2"
    assert TASK.record_key({"guid": "d", "turn": "3"}) == "d-3"
    assert TASK.record_key({"guid": "d", "turn": "x"}) == "d-x"
    assert TASK.record_key({"guid": "d", "turn": 3.0}) == "d-3"
    assert TASK.record_key({"guid": "d", "turn": ""}) == "d"
    assert TASK.record_key({"guid": "d"}) == "d"
    assert TASK.record_key({"turn": 1}) is None
    assert TASK.annotation_key({"dialogue": "d", "turn": "2"}) == ("d", 2)


def test_parse_prediction():
    assert TASK.parse_prediction({"state": [" 식당-지역-서울 ", "택시-도착지-역"]}, {}) == ["식당-지역-서울", "택시-도착지-역"]
    assert TASK.parse_prediction({"state": []}, {}) == []
    cases = [({}, "missing field 'state' (list of 'domain-slot-value'; [] for an empty state)"),
             ({"state": "식당-지역-서울"}, "state must be a JSON list, found str: '식당-지역-서울'"),
             ({"state": ["식당-지역-a", "식당"]}, "state item '식당' is not 'domain-slot-value'")]
    for record, message in cases:
        with pytest.raises(RecordError) as err:
            TASK.parse_prediction(record, {})
        assert str(err.value) == message


def test_parse_answer_forms():
    text = "  없음."
    assert TASK.parse_answer(text, {}) == Answer(text, {"state": []}, (2, 4))
    body = '["식당 - 지역 - 서울", "택시-도착지-역"]'
    text = "상태: " + body
    start = text.index("[")
    assert TASK.parse_answer(text, {}) == Answer(text, {"state": ["식당-지역-서울", "택시-도착지-역"]}, (start, start + len(body)))
    text = '{"식당-지역": "서울", "택시-도착지": "역"}'
    assert TASK.parse_answer(text, {}) == Answer(text, {"state": ["식당-지역-서울", "택시-도착지-역"]}, (0, len(text)))
    text = '["날씨-x-y"]'
    assert TASK.parse_answer(text, {}) == Answer(text, None, None, "state item '날씨-x-y' is not 'domain-slot-value' with a WoS domain")
    # One item per line or comma; a bullet is not part of the item; pieces without a domain are skipped.
    text = "상태는\n- 식당-지역-서울\n택시 - 도착지 - 역, 기타"
    a, b = text.index("식당"), text.index("택시")
    assert TASK.parse_answer(text, {}) == Answer(text, {"state": ["식당-지역-서울", "택시-도착지-역"]}, None, "",
                                                 ((a, a + len("식당-지역-서울")), (b, b + len("택시 - 도착지 - 역"))))
    assert TASK.parse_answer("모름", {}) == Answer(
        "모름", None, None, "no 'domain-slot-value' item with a WoS domain (관광, 숙소, 식당, 지하철, 택시)")
    # A value holding ' - ' keeps it (only the two separators are tightened); a repeated item has its own span.
    text = '["식당-지역-a - b"]'
    assert TASK.parse_answer(text, {}).fields == {"state": ["식당-지역-a - b"]}
    assert TASK.parse_answer("식당 - 지역 - a - b", {}).fields == {"state": ["식당-지역-a - b"]}
    text = "식당-지역-a\n식당-지역-a"  # 7 characters, a newline, 7 characters
    assert TASK.parse_answer(text, {}).spans == ((0, 7), (8, 15))
    # A JSON list of numbers is no state: read as lines, where nothing has a domain.
    assert TASK.parse_answer("[1, 2]", {}).fields is None
    assert TASK.empty_prediction({}) == []


def test_turn_frame_by_hand(scored):
    _, frames = scored
    turns = frames.examples
    assert list(turns["pred_state"][:2]) == PREDICTIONS[:2]
    # D1 turn 1: gold 3 items, predicted 3, one alike: tp 1, fp 2, fn 2, F1 2/6; turn 2: tp 2, fp 0, fn 1, F1 4/5.
    assert list(turns["tp"][:4]) == [1, 1, 2, 0] and list(turns["fp"][:4]) == [0, 2, 0, 0] and list(turns["fn"][:4]) == [0, 2, 1, 0]
    assert np.allclose(turns["f1"][:4], [100, 100 / 3, 80, 100])
    assert list(turns["correct"]) == [True, False, False, *[True] * 8]
    assert list(turns["joint"]) == list(turns["correct"])
    assert list(turns["first_break"]) == [False, True, False, *[False] * 8]
    assert list(turns["turn_bucket"]) == ["turn 0", "turns 1-2", "turns 1-2", "turn 0", "turn 0", "turns 1-2", "turns 1-2",
                                          "turns 3-5", "turns 3-5", "turns 3-5", "turns 6+"]
    assert list(turns["error_type"][:4]) == ["correct", "extra, missing, wrong value", "missing", "correct"]
    assert list(turns["n_slots"][:4]) == [1, 3, 3, 0]
    assert np.allclose(TASK.example_scores(frames)[:3], [1, 1 / 3, 0.8])
    orders = TASK.sort_orders()
    assert list(orders) == ["most slot errors first", "lowest slot F1 first"]
    assert list(orders["most slot errors first"](frames)[:4]) == [0, -4, -1, 0]
    assert np.allclose(orders["lowest slot F1 first"](frames)[:3], [100, 100 / 3, 80])


def test_slot_frame_by_hand(scored):
    _, frames = scored
    slots = frames.details["slots"]
    assert list(slots.columns) == ["guid", "dialogue", "turn", "domain_slot", "domain", "gold_value", "pred_value", "status", "correct",
                                   "value_type", "change"]
    rows = [tuple(None if isinstance(v, float) and math.isnan(v) else v for v in r) for r in slots.itertuples(index=False)]
    assert rows == [
        (f"{D1}-0", D1, 0, "식당-지역", "식당", "서울 중앙", "서울 중앙", "correct", True, "free text", "new or updated"),
        (f"{D1}-1", D1, 1, "관광-종류", "관광", "dontcare", None, "missing", False, "dontcare", "new or updated"),
        (f"{D1}-1", D1, 1, "숙소-가격대", "숙소", None, "yes", "extra", False, "yes", "not in gold"),
        (f"{D1}-1", D1, 1, "식당-예약 시간", "식당", "18:00", "19:00", "wrong value", False, "free text", "new or updated"),
        (f"{D1}-1", D1, 1, "식당-지역", "식당", "서울 중앙", "서울 중앙", "correct", True, "free text", "carried over"),
        (f"{D1}-2", D1, 2, "관광-종류", "관광", "dontcare", None, "missing", False, "dontcare", "carried over"),
        (f"{D1}-2", D1, 2, "식당-예약 시간", "식당", "18:00", "18:00", "correct", True, "free text", "carried over"),
        (f"{D1}-2", D1, 2, "식당-지역", "식당", "서울 중앙", "서울 중앙", "correct", True, "free text", "carried over"),
    ]
    assert unit_training_keys(slots)[:4] == ["식당-지역-서울 중앙", "관광-종류-dontcare", "숙소-가격대-yes", "식당-예약 시간-18:00"]
    rows_, _ = scored
    assert list(training_keys(rows_[:2])) == [*T0, *T1]


def test_frames_without_any_slot(scored):
    rows, _ = scored
    frames = TASK.build_frames(pd.DataFrame(rows[3:]), [[]] * 8)  # D2 and D3: every state empty, gold and predicted
    slots = frames.details["slots"]
    assert len(slots) == 0 and len(slots.columns) == 11
    assert list(frames.examples["error_type"]) == ["correct"] * 8


def test_statistics_by_hand(scored):
    rows, frames = scored

    def scores(stats):
        return {k: float(v[0]) for k, v in stats.scores(stats.totals()).items()}

    # Joint goal: 9 of 11 turns; slot F1: the mean of the turns' F1 (1, 1/3, 4/5 and eight empty turns at 1).
    expected = {"joint_goal_acc": 100 * 9 / 11, "slot_micro_f1": 100 * (1 + 1 / 3 + 0.8 + 8) / 11}
    assert scores(TASK.statistics(frames)) == pytest.approx(expected)
    assert scores(TASK.row_statistics(rows, PREDICTIONS)) == pytest.approx(expected)
    keep = compared_columns(TASK)
    slim = Frames(frames.examples[list(keep["examples"])])
    assert scores(TASK.statistics(slim)) == pytest.approx(expected)
    assert np.allclose(TASK.example_scores(slim)[:3], [1, 1 / 3, 0.8])
    # Slot rows: tp 4 (correct), fp 2 (extra, wrong value), fn 3 (2 missing, wrong value): P 4/6, R 4/7, F1 8/13.
    slots = scores(TASK.detail_statistics("slots", frames.details["slots"]))
    assert slots == pytest.approx({"precision": 400 / 6, "recall": 400 / 7, "f1": 800 / 13})
    with pytest.raises(KeyError, match="wos has no detail level 'words'"):
        TASK.detail_statistics("words", frames.details["slots"])


def test_confusion_by_hand(scored):
    _, frames = scored
    confusion = TASK.confusion(frames)
    assert list(confusion.columns) == ["guid", "gold", "pred"]
    assert list(confusion["guid"]) == list(frames.details["slots"]["guid"])
    assert list(confusion["gold"]) == ["value", "dontcare", "none", "value", "value", "dontcare", "value", "value"]
    assert list(confusion["pred"]) == ["value", "none", "yes", "other value", "value", "none", "value", "value"]


def test_find_suspects_and_their_text(scored):
    rows, frames = scored
    other = list(PREDICTIONS)
    other[1] = ["식당-지역-서울 중앙", "식당-예약 시간-19:00"]  # the same time, no 숙소, 관광-종류 missing too
    other[2] = ["식당-예약 시간-18:00", "식당-지역-서울 중앙", "관광-종류-yes"]  # a value where run a has none
    a = SimpleNamespace(run="a", frames=frames)
    b = SimpleNamespace(run="b", frames=TASK.build_frames(pd.DataFrame(rows), other))
    found = TASK.find_suspects([a, b])
    assert [(s.guid, s.turn, s.unit, s.gold, s.proposed, s.score) for s in found] == [
        (D1, 1, "slot", "관광-종류-dontcare", "관광-종류-none", 2.0),
        (D1, 1, "slot", "식당-예약 시간-18:00", "식당-예약 시간-19:00", 2.0),
    ]
    assert (found[0].evidence.agreeing, found[0].evidence.of, list(found[0].evidence.runs)) == (2, 2, ["a", "b"])
    # One run: each of its four wrong slots (turn 1: three, turn 2: one).
    assert [s.proposed for s in TASK.find_suspects([a])] == ["관광-종류-none", "숙소-가격대-yes", "식당-예약 시간-19:00", "관광-종류-none"]
    assert [s.gold for s in TASK.find_suspects([a])] == ["관광-종류-dontcare", "숙소-가격대-none", "식당-예약 시간-18:00", "관광-종류-dontcare"]
    suspect = suspect_item(D1, "slot", "관광-종류-dontcare", "관광-종류-none", 2, None, turn=1)
    assert TASK.suspect_text(rows[1], suspect) == "system: 네\nuser (turn 1): 예약해요\nslot: 관광-종류-dontcare -> 관광-종류-none"
    assert TASK.suspect_text(rows[0], suspect) == "user (turn 0): 식당 찾아요\nslot: 관광-종류-dontcare -> 관광-종류-none"


def test_write_patch_by_hand():
    official = json.dumps([DIALOGUES[2], DIALOGUES[0], DIALOGUES[1]], ensure_ascii=False)
    corrections = {
        (D1, 1): ["식당-예약 시간-19:00;관광-종류-none"],  # set in place; remove
        (D1, 0): ["bad", "식당-지역-a-b"],  # a bad item, then a value holding '-' that replaces the slot
        (D2, 0): ["택시-출발지-서울역"],  # a new slot goes last
    }
    problems: list[Problem] = []
    text, count = TASK.write_patch(official, "dev.json", corrections, problems)
    assert count == 2
    out = json.loads(text)
    assert [d["guid"] for d in out] == [D1, D2]
    assert [t.get("state") for t in out[0]["dialogue"]] == [["식당-지역-a-b"], None, ["식당-지역-서울 중앙", "식당-예약 시간-19:00"], None, T1]
    assert out[0]["dialogue"][1] == {"role": "sys", "text": "네"} and out[0]["domains"] == ["식당", "관광"]
    assert out[1]["dialogue"] == [{"role": "user", "text": "택시", "state": ["택시-출발지-서울역"]}]
    assert problems == [Problem("correction 'bad' is not 'domain-slot-value'", guid=f"{D1}-0", file="dev.json")]
    # Only a bad item: nothing changed, nothing written.
    text, count = TASK.write_patch(official, "dev.json", {(D2, 0): ["x-y"]}, [])
    assert (count, json.loads(text)) == (0, [])
