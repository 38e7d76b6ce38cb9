"""WoS cards mark which errors are new at a turn and which are carried from the previous turn (issue 19, item 25b)."""
import re

import pandas as pd

from klue_viz.tasks import TASKS

# A planted dialogue; what is new and what is carried is worked out by hand in EXPECTED below.
DIALOGUE = {
    "guid": "planted-1", "domains": ["관광", "숙소"],
    "dialogue": [
        {"role": "user", "text": "공원 가고 싶어요", "state": ["관광-종류-공원"]},
        {"role": "sys", "text": "어느 지역이요?"},
        {"role": "user", "text": "서울이요", "state": ["관광-종류-공원", "관광-지역-서울"]},
        {"role": "sys", "text": "알겠습니다"},
        {"role": "user", "text": "아니 부산이요", "state": ["관광-종류-공원", "관광-지역-부산"]},
        {"role": "sys", "text": "네"},
        {"role": "user", "text": "고마워요", "state": ["관광-종류-공원", "관광-지역-부산"]},
    ],
}
PREDICTIONS = [
    [],                                          # turn 0: 관광-종류 missed (new)
    ["관광-지역-서울"],                            # turn 1: 관광-종류 still missed (carried)
    ["관광-지역-서울", "숙소-가격대-싼"],            # turn 2: 종류 carried; 지역 wrong value (new, was right); 숙소 extra (new)
    ["관광-종류-공원", "관광-지역-서울"],            # turn 3: 지역 still 서울 against 부산 (carried)
]
EXPECTED = {  # turn -> (new slots, carried slots)
    0: ({"관광-종류"}, set()),
    1: (set(), {"관광-종류"}),
    2: ({"관광-지역", "숙소-가격대"}, {"관광-종류"}),
    3: (set(), {"관광-지역"}),
}


def _card() -> str:
    task = TASKS["wos"]
    rows, problems = task.rows_from_hf([DIALOGUE])
    assert not problems
    frames = task.build_frames(pd.DataFrame(rows), PREDICTIONS)
    return task.render_card(frames, [rows[0]["guid"]])


def test_errors_marked_new_or_carried_per_turn():
    html = _card()
    turns = re.findall(r'<div class="kv-turn" [^>]*data-turn="(\d+)"[^>]*>(.*?)</div></div>', html, flags=re.S)
    assert [int(t) for t, _ in turns] == [0, 1, 2, 3]
    for turn, body in turns:
        pred = body.split('<span class="kv-side">pred</span>', 1)[1]
        chips = re.findall(r'<span class="kv-slot" ([^>]*)>', pred)
        marks: dict[str, set] = {"new": set(), "carried": set()}
        for chip in chips:
            slot = re.search(r'data-slot="([^"]+)"', chip).group(1)
            error = re.search(r'data-error="([^"]+)"', chip)
            assert error, f"turn {turn}: chip {chip} has no new/carried mark"
            marks[error.group(1)].add(slot)
        assert (marks["new"], marks["carried"]) == EXPECTED[int(turn)], f"turn {turn}"


def test_new_errors_have_a_visible_badge():
    html = _card()
    # three new errors in all (turn 0: one, turn 2: two), each with a visible "new" word; carried ones say so
    assert html.count('class="kv-new"') == 3
    assert html.count("carried from turn") == 3
