"""NLI's columns of the gold pairs alone (word overlap, hypothesis length) computed once per gold (`PairColumns`,
issue 15: `runs add` of many runs against one gold): hand values on a new and a kept gold, another gold's texts, a
subset in another order and a bound on what is kept."""

from __future__ import annotations

import pytest

from klue_viz.scoring.evaluate import evaluate_with_frames
from klue_viz.tasks import get_task
from klue_viz.tasks import nli as nli_module
from klue_viz.tasks.nli import PairColumns
from tests.cases import gold_of
from tests.conftest import jsonl

NLI = get_task("nli")
#: (premise, hypothesis): 2 of 2 words in the premise; 1 of 4; 0 of 5 (an 18-character hypothesis); 2 of 4 (half: high).
PAIRS = [("오늘 날씨가 맑다", "날씨가 맑다"), ("그는 서울에 산다", "그는 부산에 살지 않는다"), ("가", "완전히 다른 가설 문장입니다 정말"),
         ("a b c d e f", "a b x y")]
OVERLAP = ["high (≥50%)", "low (<50%)", "low (<50%)", "high (≥50%)"]
LENGTH = ["1-15 chars", "1-15 chars", "16-25 chars", "1-15 chars"]


def records(pairs: list[tuple[str, str]]) -> list[dict]:
    return [{"guid": f"klue-nli-v1_dev_{k:05d}", "source": "wikinews", "premise": p, "hypothesis": h, "gold_label": "neutral"}
            for k, (p, h) in enumerate(pairs)]


def run_of(labels: list[str], guids: list[int] | None = None) -> bytes:
    guids = list(range(len(labels))) if guids is None else guids
    return jsonl([{"guid": f"klue-nli-v1_dev_{k:05d}", "label": label} for k, label in zip(guids, labels)])


@pytest.fixture
def fresh_cache(monkeypatch: pytest.MonkeyPatch) -> PairColumns:
    cache = PairColumns(size=2)
    monkeypatch.setattr(nli_module, "PAIR_COLUMNS", cache)
    return cache


def test_the_pair_columns_by_hand_on_a_new_and_a_kept_gold(fresh_cache: PairColumns) -> None:
    assert len(PAIRS[2][1]) == 18
    gold = gold_of("nli", records(PAIRS))
    for labels in (["neutral"] * 4, ["entailment", "neutral", "contradiction", "neutral"]):
        ex = evaluate_with_frames(NLI, gold, run_of(labels), "run.jsonl").frames.examples
        assert ex["overlap"].tolist() == OVERLAP and ex["hypothesis_length"].tolist() == LENGTH
        assert ex["pred"].tolist() == labels
    assert len(fresh_cache._kept) == 1


def test_another_gold_a_subset_in_another_order_and_the_bound(fresh_cache: PairColumns) -> None:
    gold = gold_of("nli", records(PAIRS))
    evaluate_with_frames(NLI, gold, run_of(["neutral"] * 4), "run.jsonl")
    echoed = gold_of("nli", records([(h, h) for _, h in PAIRS]))  # the same hypotheses, each its own premise
    ex = evaluate_with_frames(NLI, echoed, run_of(["neutral"] * 4), "run.jsonl").frames.examples
    assert ex["overlap"].tolist() == ["high (≥50%)"] * 4 and ex["hypothesis_length"].tolist() == LENGTH
    part = evaluate_with_frames(NLI, gold, run_of(["neutral"] * 2, [3, 1]), "part.jsonl").frames.examples
    assert part["guid"].tolist() == ["klue-nli-v1_dev_00001", "klue-nli-v1_dev_00003"]  # scored in gold order
    assert part["overlap"].tolist() == [OVERLAP[1], OVERLAP[3]] and part["hypothesis_length"].tolist() == [LENGTH[1], LENGTH[3]]
    assert len(fresh_cache._kept) == 2  # bounded: the oldest left
    changed = gold_of("nli", records([(p, "가설이 아주 많이 바뀌었다") for p, _ in PAIRS]))  # 14 characters, no premise word
    ex = evaluate_with_frames(NLI, changed, run_of(["neutral"] * 4), "run.jsonl").frames.examples
    assert ex["overlap"].tolist() == ["low (<50%)"] * 4 and ex["hypothesis_length"].tolist() == ["1-15 chars"] * 4
    assert len(fresh_cache._kept) == 2
