"""klue_viz.core.crowd at the edges mutation testing showed untested (docs/mutation.md): what each baseline counts and
leaves out, Pearson r against scipy, vote shares with a vote outside the labels, the cross-entropy's floor, each crowd
view at its thresholds from both sides, and the spread buckets at their edges. Expected values by hand or scipy."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import pearsonr

from klue_viz.core.crowd import (
    AGREE_UNSURE,
    CONFIDENT_SPLIT,
    NEITHER,
    NO_PROBABILITIES,
    NO_VOTES,
    HumanBaseline,
    annotator_couples,
    annotator_pearson,
    cross_entropy,
    crowd_view,
    divergences,
    example_cross_entropy,
    pearson,
    score_spread,
    score_spreads,
    spread_bucket,
    vote_agreement,
    vote_cross_entropy,
    vote_divergence,
    vote_held_out,
    vote_shares,
)

LABELS = ("a", "b", "c")


def test_vote_agreement_counts_every_vote_of_the_rows_with_votes():
    rows = [{"gold": "a", "votes": ["a", "a", "b"]}, {"gold": "b", "votes": ["b", "c"]}, {"gold": "a"}, {"gold": "c", "votes": None},
            {"gold": "1", "votes": [1, 2]}]  # votes compared as text
    found = vote_agreement(rows)
    assert found == HumanBaseline("accuracy", 100 * 4 / 7, 7, "votes")
    assert vote_agreement([{"gold": "a"}, {"gold": "a", "votes": []}]) is None
    assert found.to_dict() == {"metric": "accuracy", "value": pytest.approx(400 / 7), "n": 7}
    assert found.text() == "accuracy 57.14 over 7 votes"
    assert HumanBaseline("pearsonr", None, 1234, "annotator-pair couples").text() == "pearsonr n/a over 1,234 annotator-pair couples"


def test_annotator_couples_each_score_against_the_mean_of_the_others():
    own, others = annotator_couples([{"votes": [1, 2, 3]}, {"votes": ["4"]}, {"votes": None}, {"votes": ["0.5", 4.5]}])
    assert own.tolist() == [1, 2, 3, 0.5, 4.5] and others.tolist() == [2.5, 2.0, 1.5, 4.5, 0.5]
    assert own.dtype == others.dtype == np.float64
    empty = annotator_couples([{"votes": [3]}])
    assert empty[0].shape == empty[1].shape == (0,) and empty[0].dtype == np.float64


def test_pearson_against_scipy_and_where_it_is_undefined():
    x, y = np.array([1.0, 2.0, 4.0, 3.0]), np.array([2.0, 1.0, 5.0, 5.0])
    assert pearson(x, y) == pytest.approx(100 * pearsonr(x, y).statistic)
    assert pearson(np.array([1.0, 2.0]), np.array([3.0, 1.0])) == pytest.approx(-100.0)  # two values are enough
    assert pearson(np.array([1.0]), np.array([1.0])) is None
    assert pearson(np.array([2.0, 2.0]), np.array([1.0, 3.0])) is None and pearson(np.array([1.0, 3.0]), np.array([2.0, 2.0])) is None


def test_annotator_pearson():
    rows = [{"votes": [1, 2, 3]}, {"votes": [4, 5]}, {"votes": [0]}]
    own, others = [1, 2, 3, 4, 5], [2.5, 2.0, 1.5, 5, 4]
    found = annotator_pearson(rows)
    assert found.metric == "pearsonr" and found.n == 5 and found.counts == "annotator-pair couples"
    assert found.value == pytest.approx(100 * pearsonr(own, others).statistic)
    assert annotator_pearson([{"votes": [1]}, {}]) is None
    constant = annotator_pearson([{"votes": [2, 2]}])
    assert constant.value is None and constant.n == 2


def test_vote_shares_count_a_vote_outside_the_labels_in_the_total():
    assert vote_shares(["a", "a", "z"], LABELS).tolist() == pytest.approx([2 / 3, 0, 0])
    assert vote_shares(["c", "b"], LABELS).tolist() == [0, 0.5, 0.5]
    assert vote_shares([], LABELS).tolist() == [0, 0, 0]


def test_cross_entropy_by_hand_and_its_floor():
    assert cross_entropy(["a", "a", "b"], [0.5, 0.5, 0.0], LABELS) == pytest.approx(math.log(2))
    assert cross_entropy(["a", "b"], [0.25, 0.5, 0.25], LABELS) == pytest.approx(-(0.5 * math.log(0.25) + 0.5 * math.log(0.5)))
    assert cross_entropy(["c"], [0.7, 0.3, 0.0], LABELS) == pytest.approx(-math.log(1e-12))  # ln 0 floored at ln 1e-12
    assert cross_entropy(["c"], [0.5, 0.5, 1e-13], LABELS) == pytest.approx(-math.log(1e-12))
    assert cross_entropy(["c"], [0.5, 0.5, 2e-12], LABELS) == pytest.approx(-math.log(2e-12))


def test_example_and_mean_cross_entropy_skip_examples_without_votes_or_probabilities():
    votes = [["a"], None, ["b"], [], ["a", "b"]]
    probs = [[0.5, 0.25, 0.25], [1.0, 0, 0], None, [1.0, 0, 0], [0.5, 0.5, 0.0]]
    found = example_cross_entropy(votes, probs, LABELS)
    assert found[0] == pytest.approx(math.log(2)) and found[4] == pytest.approx(math.log(2))
    assert [math.isnan(v) for v in found] == [False, True, True, True, False]
    assert vote_cross_entropy(votes, probs, LABELS) == {"value": pytest.approx(math.log(2)), "n": 2}
    assert vote_cross_entropy([None, ["a"]], [[1.0, 0, 0], None], LABELS) is None


@pytest.mark.parametrize("confidence, votes, view", [
    (0.9, ["a", "a", "a", "b", "c"], CONFIDENT_SPLIT),  # 3 of 5 for the gold, p exactly 0.9
    (0.95, ["a", "a", "a", "a", "b"], NEITHER),  # 4 of 5
    (0.8999, ["a", "a", "b", "b", "c"], NEITHER),
    (0.99, ["a", "b"], CONFIDENT_SPLIT),  # 1 of 2 <= 60%
    (0.59, ["a", "a", "a", "a", "a"], AGREE_UNSURE),
    (0.6, ["a", "a", "a", "a", "a"], NEITHER),
    (0.3, ["a", "a", "a", "a", "b"], NEITHER),
    (0.3, ["a"], AGREE_UNSURE),
    (0.95, [], NO_VOTES), (0.95, None, NO_VOTES), (None, ["a"], NO_PROBABILITIES),
    (math.nan, ["a", "b"], NO_PROBABILITIES),
])
def test_crowd_views_at_their_thresholds(confidence, votes, view):
    assert crowd_view(confidence, votes, "a") == view


def test_crowd_view_compares_votes_as_text():
    assert crowd_view(0.2, [1, 1], "1") == AGREE_UNSURE


def test_spread_and_its_buckets_at_the_edges():
    assert score_spread([2.0, 4.0]) == 1.0 and score_spread([1, 2, 3, 4]) == pytest.approx(np.std([1, 2, 3, 4]))
    assert math.isnan(score_spread(None)) and math.isnan(score_spread([3.0]))
    assert score_spread([0, 0, 1]) == pytest.approx(math.sqrt(2 / 9))  # population: sum of squares 2/3 over 3
    assert [spread_bucket(v) for v in (0.0, 0.4999, 0.5, 0.99, 1.0, 3.0)] == [
        "std < 0.5", "std < 0.5", "0.5 ≤ std < 1", "0.5 ≤ std < 1", "std ≥ 1", "std ≥ 1"]
    assert spread_bucket(math.nan) is None


def _one_pass_held_out(rows: list[dict]) -> tuple[float, int]:
    """vote_held_out's sum as one pass over every vote (the code before it reused a row's credits): the expected value."""
    agree, total = 0.0, 0
    for row in rows:
        votes = [str(v) for v in row.get("votes") or []]
        if len(votes) < 2:
            continue
        for k, vote in enumerate(votes):
            others = votes[:k] + votes[k + 1:]
            counts = {label: others.count(label) for label in set(others)}
            tied = [label for label, c in counts.items() if c == max(counts.values())]
            agree += 1.0 / len(tied) if vote in tied else 0.0
        total += len(votes)
    return agree, total


def test_held_out_agreement_reusing_credits_is_the_one_pass_sum_to_the_last_bit():
    rng = np.random.default_rng(3)
    rows = [{"gold": "a", "votes": [str(v) for v in rng.choice(list(LABELS), size=int(rng.integers(0, 7)))]} for _ in range(2000)]
    rows += [{"gold": "a", "votes": [1, "1", 2]}, {"gold": "a"}]  # votes compared as text, a row without votes
    agree, total = _one_pass_held_out(rows)
    found = vote_held_out(rows)
    assert found is not None and found.n == total and found.value == 100.0 * agree / total  # exact: the same additions in order


@pytest.mark.parametrize("labels", [("a", "b", "c"), tuple("abcdefg")])  # NLI's 3 labels, YNAT's 7
def test_vote_divergence_of_all_examples_at_once_is_the_mean_of_each_examples_to_the_last_bit(labels):
    rng = np.random.default_rng(len(labels))
    votes, probs = [], []
    for k in range(3000):
        votes.append(None if k % 97 == 0 else [str(v) for v in rng.choice(list(labels) + ["outside"], size=int(rng.integers(1, 6)))])
        p = rng.random(len(labels)) ** 3
        p[rng.random(len(labels)) < 0.2] = 0.0  # labels the run rules out: the KL reads the floor, the JS distance does not
        probs.append(None if k % 89 == 0 else list(p / p.sum() if p.sum() else np.full(len(labels), 1 / len(labels))))
    each = [divergences(v, p, labels) for v, p in zip(votes, probs) if v is not None and p is not None and len(v)]
    kl, jsd, own = np.asarray(each, dtype=np.float64).mean(axis=0)
    assert vote_divergence(votes, probs, labels) == {"kl": kl, "jsd": jsd, "vote_entropy": own, "n": len(each)}
    assert vote_divergence([None, ["a"]], [[1.0] + [0.0] * (len(labels) - 1), None], labels) is None


def test_spreads_of_all_pairs_at_once_are_each_pairs_to_the_last_bit():
    rng = np.random.default_rng(11)
    votes: list = [None, [], [3.0], [0, 5], ["2", "4", "4"]]  # no spread without two scores; scores as text are numbers
    votes += [list(rng.integers(0, 6, size=int(rng.integers(0, 10))) + rng.random() * rng.integers(0, 2)) for _ in range(3000)]
    found = score_spreads(votes)
    expected = [score_spread(v) for v in votes]
    assert [math.isnan(x) for x in found] == [math.isnan(x) for x in expected]
    assert [x for x in found if not math.isnan(x)] == [x for x in expected if not math.isnan(x)]
    assert found[3] == 2.5 and found[4] == pytest.approx(math.sqrt(8 / 9))
