"""klue_viz.discovery.review at the edges mutation testing showed untested (docs/mutation.md): which remarks decide,
more than half (not a plurality, not a tie in either order), the units' order with turns, who and why and when of an
accepted correction, alpha on exactly two units and nominal rather than interval alpha, and the review items of a
filtered example list.

Remarks are plain records here (the Remark protocol); expected values are counted by hand, and alpha also by the
`krippendorff` package on a reliability matrix built in the test."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import krippendorff
import numpy as np
import pytest

from klue_viz.discovery.review import accepted_corrections, decision_of, example_items, outcomes, reviewer_agreement, unit_decisions
from klue_viz.tasks import get_task
from klue_viz.tasks.kit import KEEP, REVIEWED, Evidence, Suspect

NLI, STS, WOS = get_task("nli"), get_task("sts"), get_task("wos")


@dataclass
class Remark:
    guid: str
    annotator: str
    gold_wrong: bool = True
    corrected_label: str | None = None
    tags: list[str] = field(default_factory=list)
    note: str = ""
    task: str = "nli"
    run: str = "gold"
    turn: int | None = None
    updated_at: str = "2026-12-01T00:00:00"


def fix(guid, who, label, **kw):
    return Remark(guid, who, True, label, **kw)


def keep(guid, who, **kw):
    return Remark(guid, who, False, None, [REVIEWED], **kw)


def test_what_decides():
    assert decision_of(fix("g", "kim", " neutral ")) == "neutral"
    assert decision_of(keep("g", "kim")) == KEEP
    assert decision_of(Remark("g", "kim", False, "neutral")) is None  # a label left on a remark that says the gold is fine
    assert decision_of(Remark("g", "kim", True, None, [REVIEWED])) is None  # "gold wrong" without a correction
    assert decision_of(Remark("g", "kim", True, "")) is None
    assert decision_of(Remark("g", "kim", False, None)) is None  # a plain remark, not a review


def test_only_the_tasks_gold_reviews_count():
    items = [fix("a", "kim", "neutral"),
             fix("b", "kim", "neutral", task="sts"),  # another task's review
             fix("c", "kim", "neutral", run="model-a"),  # a remark on a run's answer
             Remark("d", "kim", False, None, ["typo"])]  # a remark on the gold that decides nothing
    assert list(unit_decisions(NLI, items)) == [("a", None)]


def test_one_review_decides_by_default():
    assert [o.decided for o in outcomes(NLI, [fix("a", "kim", "neutral")])] == ["neutral"]


@pytest.mark.parametrize("first, second", [("neutral", KEEP), (KEEP, "neutral")])
def test_a_tie_decides_nothing_in_either_order(first, second):
    """kim and lee split 1:1; whichever of the two sorts first, nothing is decided and nothing corrected."""
    make = {KEEP: keep, "neutral": lambda g, w: fix(g, w, "neutral")}
    items = [make[first]("a", "kim"), make[second]("a", "lee")]
    assert [o.decided for o in outcomes(NLI, items, reviews=2)] == [None]
    assert accepted_corrections(NLI, items) == []


def test_a_plurality_is_not_a_majority():
    """Four reviewers: neutral 2, contradiction 1, kept 1: 2 is not more than half of 4. A fifth for neutral makes 3 of 5."""
    items = [fix("a", "kim", "neutral"), fix("a", "lee", "neutral"), fix("a", "park", "contradiction"), keep("a", "choi")]
    assert [o.decided for o in outcomes(NLI, items)] == [None]
    items.append(fix("a", "jung", "neutral"))
    assert [o.decided for o in outcomes(NLI, items)] == ["neutral"]
    assert [o.decided for o in outcomes(NLI, items, reviews=6)] == [None]  # five reviews where six are needed


def test_units_in_guid_then_turn_order_whatever_the_order_of_the_remarks():
    """WoS units: dialogue b before a, turns 2, 1, 0 and a dialogue-level remark (turn None) mixed in."""
    items = [fix("wos-b", "kim", "x", task="wos", turn=0), fix("wos-a", "kim", "x", task="wos", turn=2),
             fix("wos-a", "kim", "x", task="wos", turn=1), fix("wos-a", "kim", "x", task="wos", turn=0),
             fix("wos-a", "kim", "x", task="wos", turn=None)]
    assert [(o.guid, o.turn) for o in outcomes(WOS, items)] == [("wos-a", None), ("wos-a", 0), ("wos-a", 1), ("wos-a", 2), ("wos-b", 0)]
    nli = [fix("b", "kim", "neutral"), fix("a", "kim", "neutral")]
    assert [o.guid for o in outcomes(NLI, nli)] == ["a", "b"]


def test_an_accepted_correction_names_its_turn_its_agreeing_reviewers_their_notes_and_the_latest_time():
    items = [fix("wos-a", "kim", "관광-지역-서울", task="wos", turn=3, note="서울 in turn 3", updated_at="2026-12-01T10:00:00"),
             fix("wos-a", "lee", "관광-지역-서울", task="wos", turn=3, note="", updated_at="2026-12-02T09:00:00"),
             fix("wos-a", "min", "관광-지역-서울", task="wos", turn=3, note="agree", updated_at="2026-11-30T00:00:00"),
             keep("wos-a", "park", task="wos", turn=3, note="looks right", updated_at="2026-12-03T00:00:00")]
    [correction] = accepted_corrections(WOS, items)
    assert (correction.guid, correction.turn, correction.correction) == ("wos-a", 3, "관광-지역-서울")
    assert correction.annotator == "kim, lee, min" and correction.note == "서울 in turn 3; agree"
    assert correction.updated_at == "2026-12-02T09:00:00"  # the latest agreeing review, not park's later disagreement


def matrix(rows: list[list[str | None]], values: list[str]) -> np.ndarray:
    """A reliability matrix (reviewers x units) coding each value by its position in `values`."""
    return np.array([[np.nan if v is None else values.index(v) for v in row] for row in rows], dtype=float)


def test_alpha_on_exactly_two_shared_units():
    """Units a = (neutral, neutral, kept) and b = (kept, kept, kept) of kim, lee, park; unit c has one reviewer and is not shared.
    By hand (pairs in a unit of m values weighted 1/(m - 1)): o_nn = 1, o_nK = o_Kn = 1, o_KK = 3; n_n = 2, n_K = 4, n = 6;
    alpha = 1 - (n - 1) * (o_nK + o_Kn) / (2 n_n n_K) = 1 - 5 * 2 / 16 = 3/8."""
    items = [fix("a", "kim", "neutral"), fix("a", "lee", "neutral"), keep("a", "park"),
             keep("b", "kim"), keep("b", "lee"), keep("b", "park"), fix("c", "kim", "neutral")]
    alpha, units = reviewer_agreement(NLI, items)
    assert units == 2 and alpha == pytest.approx(3 / 8)
    data = matrix([["neutral", KEEP], ["neutral", KEEP], [KEEP, KEEP]], [KEEP, "neutral"])
    assert alpha == pytest.approx(krippendorff.alpha(reliability_data=data, level_of_measurement="nominal"))


def test_alpha_is_nominal_not_interval():
    """Three values coded alphabetically ((gold kept) 0, contradiction 1, entailment 2): units (K, e), (K, K), (c, e) of two
    reviewers. By hand: o_Ke = o_eK = 1, o_KK = 2, o_ce = o_ec = 1; n_K = 3, n_e = 2, n_c = 1, n = 6;
    nominal alpha = 1 - (n - 1) * 4 / (n^2 - 9 - 4 - 1) = 1 - 5 * 4 / 22 = 1/11. Interval alpha (the package's default) weights
    K-e by 2^2 and c-e, K-c by 1: 1 - (n - 1) * (2 * 4 + 2 * 1) / (2 * (3 * 2 * 4 + 3 * 1 + 1 * 2)) = 1 - 50/58 = 4/29."""
    items = [keep("a", "kim"), fix("a", "lee", "entailment"), keep("b", "kim"), keep("b", "lee"),
             fix("c", "kim", "contradiction"), fix("c", "lee", "entailment")]
    alpha, units = reviewer_agreement(NLI, items)
    data = matrix([[KEEP, KEEP, "contradiction"], ["entailment", KEEP, "entailment"]], [KEEP, "contradiction", "entailment"])
    assert units == 3 and alpha == pytest.approx(1 / 11)
    assert alpha == pytest.approx(krippendorff.alpha(reliability_data=data, level_of_measurement="nominal"))
    assert krippendorff.alpha(reliability_data=data, level_of_measurement="interval") == pytest.approx(4 / 29)  # the neighbour: 0.138


def test_review_items_of_a_filtered_list():
    nli_rows = [{"guid": "n0", "gold": "neutral", "pred": "entailment"},  # a label of the task: proposed
                {"guid": "n1", "gold": "neutral", "pred": "참"},  # not a label: no proposal
                {"guid": "n2", "gold": "neutral", "pred": None}]
    assert example_items(NLI, nli_rows, "run-1") == [
        Suspect("n0", None, "pair", "neutral", "entailment", 0.0, Evidence(1, 1, {"run-1": {"label": "entailment"}})),
        Suspect("n1", None, "pair", "neutral", None, 0.0, Evidence(0, 1, {"run-1": {"label": "참"}})),
        Suspect("n2", None, "pair", "neutral", None, 0.0, Evidence(0, 1, {"run-1": {"label": None}})),
    ]
    sts_rows = [{"guid": "s0", "gold": 2.0, "pred": 5.3}, {"guid": "s1", "gold": 2.0, "pred": -0.24}, {"guid": "s2", "gold": 2.0, "pred": 3.26},
                {"guid": "s3", "gold": 2.0, "pred": math.nan}, {"guid": "s4", "gold": None, "pred": 3.0}]
    found = example_items(STS, sts_rows, "r")
    assert [s.proposed for s in found] == ["5.0", "0.0", "3.3", None, None]  # clipped to 0..5, one decimal; NaN and no gold: none
    assert [s.evidence.agreeing for s in found] == [1, 1, 1, 0, 0] and {s.evidence.of for s in found} == {1}
    assert [s.evidence.runs for s in found][:2] == [{"r": {"label": "5.3"}}, {"r": {"label": "-0.24"}}]
    assert [(s.guid, s.unit, s.gold, s.score) for s in found][:2] == [("s0", "pair", 2.0, 0.0), ("s1", "pair", 2.0, 0.0)]
    wos_rows = [{"guid": "d-4", "dialogue": "d", "turn": 4, "gold": ["a-b-c"], "pred": ["a-b-d"]}]
    [turn_item] = example_items(WOS, wos_rows, "r")
    assert (turn_item.guid, turn_item.turn, turn_item.unit, turn_item.proposed) == ("d", 4, "turn", None)
    assert turn_item.evidence.runs == {"r": {"label": "['a-b-d']"}}
