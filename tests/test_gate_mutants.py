"""The gate written out by hand (issue 31, mutation testing of `gate`, `_groups`, `_scores`, the behaviour columns and
the texts of klue_viz/compare/gate.py).

A planted NLI pair whose every number is known from the construction: which examples each run gets wrong, which
source each example has, which examples carry an error tag and which behavioural cases each run passes. The expected
tests are computed here from those sets alone: the resample counts drawn again with the same seed, each group's
accuracy and each behaviour's pass rate on every resample as weighted sums, the standard errors as the spread of the
resampled differences, and the one-sided step-down max-t written out from Romano and Wolf's algorithm. The case
holds what the simpler neighbours get wrong: a slice value exactly at the minimum size and one below it, two values of
the same size (ordered by name), a tag below the minimum, a behaviour below it, a behaviour case whose example the
candidate did not score, examples the candidate dropped (the tests are on the shared ones, the coverage on all), and a
level and seed that are not the defaults."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from cases import dp_tsv, gold_of, ner_tsv, nli, re_records, sts
from conftest import jsonl
from sklearn.metrics import auc, precision_recall_curve
from test_gate import ner_sentence

from klue_viz.compare import gate as gate_module
from klue_viz.compare.gate import CoverageDrop, GateResult, by_feature, gate, gate_markdown, gate_text
from klue_viz.compare.gate import Test as GateTest
from klue_viz.metrics.official import RE_RELATIONS
from klue_viz.scoring.bootstrap import resample_counts
from klue_viz.scoring.evaluate import evaluate_bytes
from klue_viz.tasks import get_task

NLI = get_task("nli")
LABELS = ("entailment", "neutral", "contradiction")
#: Sources by block of positions: airbnb 44 and wikitree 40 (40 each on the shared examples: name order), policy exactly
#: the minimum (30), wikinews one below it on the shared examples (27 of 29), wikipedia 11.
SOURCE_SIZES = {"airbnb": 44, "wikitree": 40, "policy": 30, "wikinews": 29, "wikipedia": 11}
SOURCES = [name for name, size in SOURCE_SIZES.items() for _ in range(size)]
N = len(SOURCES)  # 154
MIN_SIZE, SAMPLES, SEED, LEVEL = 30, 100, 4, 0.90
#: The candidate has no prediction for these (4 in airbnb, 2 in wikinews).
DROPPED = {3, 17, 25, 39, 120, 121}
#: Wrong answers: the baseline's spread out; the candidate breaks 14 more of policy (positions 84..113) and fixes 2 of
#: airbnb.
BASE_WRONG = set(range(0, N, 9))
CAND_WRONG = (BASE_WRONG - {0, 9}) | set(range(86, 114, 2))
TAGGED = {"negation": set(range(74, 114)), "numbers or time": set(range(40, 70)), "ambiguous": set(range(0, 12))}
#: Behavioural cases by source example (120 and 121 are examples the candidate did not score).
TYPO_SOURCES = [k for k in range(0, 154, 4)] + [121]
SPACING_SOURCES = list(range(10))


def guid(k: int) -> str:
    return f"klue-nli-v1_dev_{k:05d}"


def records(wrong: set[int], missing: set[int] = frozenset()) -> list[dict]:
    return [{"guid": guid(k), "label": LABELS[(k + 1) % 3] if k in wrong else LABELS[k % 3]} for k in range(N) if k not in missing]


def typo_passes(k: int, run: str) -> bool:
    """The baseline fails every fifth case, the candidate every third."""
    return k % (5 if run == "base" else 3) != 0


@pytest.fixture(scope="module")
def runs():
    gold = gold_of("nli", nli([LABELS[k % 3] for k in range(N)], SOURCES))
    return (evaluate_bytes(NLI, gold, jsonl(records(BASE_WRONG)), "base.jsonl", run="base"),
            evaluate_bytes(NLI, gold, jsonl(records(CAND_WRONG, DROPPED)), "cand.jsonl", run="cand"))


def behaviour() -> dict:
    return {"typo": ([guid(k) for k in TYPO_SOURCES], [typo_passes(k, "base") for k in TYPO_SOURCES],
                     [typo_passes(k, "cand") for k in TYPO_SOURCES]),
            "spacing": ([guid(k) for k in SPACING_SOURCES], [True] * 10, [False] * 10)}


def tags() -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for tag, positions in TAGGED.items():
        for k in positions:
            out.setdefault(guid(k), set()).add(tag)
    return out


def step_down_by_hand(d: np.ndarray, se: np.ndarray, resampled: np.ndarray, level: float) -> tuple[list[float], np.ndarray]:
    """Romano and Wolf's one-sided step-down over studentised drops: the critical values and the regressions. A test
    whose resamples never differ (se 0: Source = wikitree, which neither run changes) stays out of the quantile and
    is a regression only when its difference is below 0."""
    usable = np.flatnonzero(se > 0)
    t_obs = -d[usable] / se[usable]
    t_star = -(resampled[:, usable] - d[usable]) / se[usable]
    remaining, found, criticals = list(range(len(usable))), np.zeros(len(d), dtype=bool), []
    while remaining:
        c = float(np.quantile(np.nanmax(t_star[:, remaining], axis=1), level))
        criticals.append(c)
        new = [k for k in remaining if t_obs[k] > c]
        if not new:
            break
        found[usable[new]] = True
        remaining = [k for k in remaining if k not in new]
    found[se == 0] = d[se == 0] < 0
    return criticals, found


def expected_tests(seed: int = SEED, samples: int = SAMPLES) -> list[dict]:
    """Every test of the planted pair from the sets above: name, slice, size, observed values and resampled differences."""
    shared = [k for k in range(N) if k not in DROPPED]
    counts = np.vstack([np.ones(len(shared)), resample_counts(np.random.default_rng(seed), len(shared), samples)])
    right = {run: np.array([k not in wrong for k in shared], dtype=float) for run, wrong in (("base", BASE_WRONG), ("cand", CAND_WRONG))}

    def accuracy_test(name: str, feature: str, key: dict, mask: np.ndarray) -> dict:
        weights = counts * mask
        base, cand = (100 * weights @ right[run] / weights.sum(axis=1) for run in ("base", "cand"))
        return {"name": name, "feature": feature, "slice": key, "metric": "accuracy", "label": "Accuracy", "unit": "pairs",
                "size": int(mask.sum()), "base": base[0], "cand": cand[0], "resampled": (cand - base)[1:], "d": cand[0] - base[0]}

    everything = np.ones(len(shared))
    out = [accuracy_test("overall", "", {}, everything)]
    source = np.array([SOURCES[k] for k in shared])
    for value in ("airbnb", "wikitree", "policy"):  # 40, 40 (name order), 30; wikinews has 27, wikipedia 11
        out.append(accuracy_test(f"Source = {value}", "Source", {"source": value}, (source == value).astype(float)))
    # no votes, one hypothesis length and one overlap bin: each feature is one group of every shared example
    out.append(accuracy_test("Annotator agreement = (no votes)", "Annotator agreement", {"agreement": "(no votes)"}, everything))
    out.append(accuracy_test("Hypothesis length = 1-15 chars", "Hypothesis length", {"hypothesis_length": "1-15 chars"}, everything))
    out.append(accuracy_test("Hypothesis words found in premise = low (<50%)", "Hypothesis words found in premise",
                             {"overlap": "low (<50%)"}, everything))
    negation = np.array([k in TAGGED["negation"] for k in shared], dtype=float)
    out.append(accuracy_test("Error tag negation = yes", "Error tag negation", {"tag: negation": "yes"}, negation))
    # "numbers or time" holds exactly the minimum (30); "ambiguous" 11 shared examples, below it
    numbers = np.array([k in TAGGED["numbers or time"] for k in shared], dtype=float)
    out.append(accuracy_test("Error tag numbers or time = yes", "Error tag numbers or time", {"tag: numbers or time": "yes"}, numbers))
    cases = np.zeros((len(shared), 3))
    for k in TYPO_SOURCES:
        if k in shared:
            cases[shared.index(k)] += (1, typo_passes(k, "base"), typo_passes(k, "cand"))
    sums = counts @ cases
    base, cand = 100 * sums[:, 1] / sums[:, 0], 100 * sums[:, 2] / sums[:, 0]
    out.append({"name": "Behaviour = typo", "feature": "Behaviour", "slice": {"behaviour": "typo"}, "metric": "pass rate",
                "label": "Pass rate", "unit": "cases", "size": int(cases[:, 0].sum()), "base": base[0], "cand": cand[0],
                "resampled": (cand - base)[1:], "d": cand[0] - base[0]})
    return out


@pytest.fixture(scope="module")
def result(runs) -> GateResult:
    return gate(NLI, *runs, min_size=MIN_SIZE, tags=tags(), samples=SAMPLES, seed=SEED, level=LEVEL, behaviour=behaviour())


def test_every_test_of_the_gate_is_the_by_hand_one_in_order(result):
    expected = expected_tests()
    assert [t.name for t in result.tests] == [e["name"] for e in expected]
    for test, e in zip(result.tests, expected):
        assert (test.slice, test.metric, test.size, test.feature, test.unit, test.metric_label) == (
            e["slice"], e["metric"], e["size"], e["feature"], e["unit"], e["label"])
        assert (test.baseline, test.candidate, test.difference) == pytest.approx((e["base"], e["cand"], e["d"]), rel=1e-9, abs=1e-9)
        assert test.se == pytest.approx(np.std(e["resampled"], ddof=1), rel=1e-9)
    assert result.resampled == pytest.approx(np.column_stack([e["resampled"] for e in expected]), rel=1e-9, abs=1e-9)
    assert expected[-1]["size"] == len(TYPO_SOURCES) - 2  # the cases of examples the candidate dropped (120, 121) are not counted
    assert (result.samples, result.n_shared, result.unit, result.baseline, result.candidate) == (SAMPLES, N - len(DROPPED), "pairs",
                                                                                                  "base", "cand")


def test_the_defaults_are_thirty_examples_a_thousand_resamples_and_seed_0(runs):
    """With the defaults the planted pair has the same tests (policy holds exactly 30), on 1000 resamples drawn with seed
    0, at 95%."""
    found = gate(NLI, *runs, tags=tags(), behaviour=behaviour())
    expected = expected_tests(seed=0, samples=1000)
    assert [t.name for t in found.tests] == [e["name"] for e in expected] and found.samples == 1000
    assert found.resampled == pytest.approx(np.column_stack([e["resampled"] for e in expected]), rel=1e-9, abs=1e-9)
    d = np.array([e["d"] for e in expected])
    se = np.array([np.std(e["resampled"], ddof=1) for e in expected])
    assert found.criticals == pytest.approx(step_down_by_hand(d, se, found.resampled, 0.95)[0], rel=1e-9)


def test_resamples_drawn_in_chunks_are_the_same_draws_and_exactly_as_many(runs, monkeypatch):
    """Counts held at most 300 cells at once: chunks of 2 resamples of the 148 shared examples, 101 in all (the last
    chunk holds one); the draws are those of one call with the same seed."""
    monkeypatch.setattr(gate_module, "CHUNK_CELLS", 300)
    found = gate(NLI, *runs, min_size=MIN_SIZE, tags=tags(), samples=101, seed=SEED, level=LEVEL, behaviour=behaviour())
    expected = expected_tests(samples=101)
    assert found.resampled.shape == (101, len(expected)) and found.samples == 101
    assert found.resampled == pytest.approx(np.column_stack([e["resampled"] for e in expected]), rel=1e-9, abs=1e-9)


def test_the_verdict_is_the_step_down_written_out_at_the_level_given(result):
    expected = expected_tests()
    d = np.array([e["d"] for e in expected])
    se = np.array([np.std(e["resampled"], ddof=1) for e in expected])
    resampled = np.column_stack([e["resampled"] for e in expected])
    criticals, found = step_down_by_hand(d, se, resampled, LEVEL)
    at_95 = step_down_by_hand(d, se, resampled, 0.95)[0]
    assert at_95[0] > criticals[0]  # the level given is used, not the default
    assert result.criticals == pytest.approx(criticals, rel=1e-9)
    assert [t.regression for t in result.tests] == found.tolist()
    regressions = sorted((k for k in range(len(d)) if found[k]), key=lambda k: (d[k] + criticals[-1] * se[k], expected[k]["name"]))
    assert [t.name for t in result.regressions] == [expected[k]["name"] for k in regressions]
    assert "Source = policy" in [t.name for t in result.regressions] and "Source = airbnb" not in [t.name for t in result.regressions]
    assert result.verdict == "fail"
    assert se[2] == 0 and d[2] == 0 and result.tests[2].name == "Source = wikitree"
    assert (result.tests[2].bound, result.tests[2].critical) == (0.0, 0.0)
    for test in result.tests:
        if not test.regression and test.se > 0:
            assert test.critical == pytest.approx(criticals[-1], rel=1e-9)
            assert test.bound == pytest.approx(test.difference + criticals[-1] * test.se, rel=1e-9)


def test_what_was_skipped_is_named_in_order(result):
    assert result.skipped == [
        "Confidence (p of the predicted class): its values come from each run's own confidence, so the two runs' groups are not "
        "the same examples",
        "Run confidence against the annotators' votes: its values come from each run's own confidence, so the two runs' groups "
        "are not the same examples",
        "behaviour spacing: 9 case(s) on the shared examples, fewer than 30",  # one of its ten examples was dropped
    ]


def test_the_coverage_counts_every_baseline_example(result):
    assert [(c.name, c.baseline, c.candidate) for c in result.coverage] == [
        ("overall", 154, 148), ("Source = airbnb", 44, 40), ("Annotator agreement = (no votes)", 154, 148),
        ("Hypothesis length = 1-15 chars", 154, 148), ("Hypothesis words found in premise = low (<50%)", 154, 148)]
    assert result.coverage_fails and not result.allow_coverage_drop


def test_too_few_resamples_and_nothing_in_common_are_refused_in_words(runs):
    """The refusal counts every test the gate would run: 9 groups and the behaviour with enough cases (it left the
    behaviour out before)."""
    with pytest.raises(ValueError, match=r"^--bootstrap 99: the gate's 90% critical value over its 10 tests needs at least 100 "
                                         r"resamples \(10 beyond the quantile\); give --bootstrap 100 or more \(default 1000\)$"):
        gate(NLI, *runs, min_size=MIN_SIZE, tags=tags(), samples=99, level=LEVEL, behaviour=behaviour())
    gold = gold_of("nli", nli([LABELS[k % 3] for k in range(N)], SOURCES))
    first = evaluate_bytes(NLI, gold, jsonl(records(set())[:10]), "first.jsonl", run="first")
    second = evaluate_bytes(NLI, gold, jsonl(records(set())[10:20]), "second.jsonl", run="second")
    with pytest.raises(ValueError, match=r"^first and second have no scored example in common$"):
        gate(NLI, first, second)


# ---- the texts, from results built by hand -------------------------------------------------------------------------

def made(name: str, feature: str, difference: float, se: float, bound: float, *, metric: str = "accuracy", label: str = "Accuracy",
         size: int = 40, unit: str = "pairs", baseline: float = 80.0) -> GateTest:
    """A test as the gate leaves it (its bound set): `Feature = value`, or overall when `feature` is empty."""
    key = {} if not feature else {feature.lower(): name.split(" = ", 1)[1]}
    return GateTest(key, metric, size, baseline, baseline + difference, difference, se, name, feature, unit, label, 1.5, bound)


def made_result(tests: list[GateTest], coverage: list[CoverageDrop] = (), skipped: list[str] = (), allow: bool = False) -> GateResult:
    return GateResult("base<1>", "cand_x", tests, [2.1, 1.5], 1000, 1234, list(skipped), list(coverage), allow, np.zeros((0, 0)), "pairs")


def drop(name: str, baseline: int, candidate: int) -> CoverageDrop:
    feature = name.split(" = ", 1)[0] if " = " in name else ""
    return CoverageDrop({}, name, feature, "pairs", baseline, candidate)


def test_gate_text_line_by_line():
    tests = [made("overall", "", -2.5, 1.0, -1.0, size=1234), made("overall", "", 1.25, 1.0, 2.75, metric="f1", label="", size=1234),
             made("Source = policy", "Source", -10.0, 3.0, -5.5), made("Source = airbnb", "Source", -1.0, 3.0, 3.5),
             made("Topic = b", "Topic", -12.0, 2.0, -9.0, size=1500)]
    result = made_result(tests, [drop("overall", 1300, 1234), drop("Source = policy", 2000, 1000)], ["Confidence: why"])
    assert gate_text(result).split("\n") == [
        "gate FAIL: cand_x against base<1>, 5 tests on 1,234 pairs both scored (1000 paired resamples; one-sided step-down max-t, "
        "family-wise error 5%; critical value 1.50)",
        "  regression: overall Accuracy: 80.00 -> 77.50 (-2.50, 95% upper bound -1.00), 1,234 pairs",
        "  overall f1: 80.00 -> 81.25 (+1.25, 95% upper bound +2.75), 1,234 pairs",
        "  coverage drop: overall: the candidate scored 1,234 of the 1,300 pairs the baseline scored (66 missing)",
        "  coverage drop: Source = policy: the candidate scored 1,000 of the 2,000 pairs the baseline scored (1,000 missing)",
        "  regression: Topic = b Accuracy: 80.00 -> 68.00 (-12.00, 95% upper bound -9.00), 1,500 pairs",
        "  regression: Source = policy Accuracy: 80.00 -> 70.00 (-10.00, 95% upper bound -5.50), 40 pairs",
        "  skipped Confidence: why",
    ]
    allowed = made_result(tests[1:2] + tests[3:4], [drop("overall", 1300, 1234)], allow=True)
    assert gate_text(allowed).split("\n") == [
        "gate PASS: cand_x against base<1>, 2 tests on 1,234 pairs both scored (1000 paired resamples; one-sided step-down max-t, "
        "family-wise error 5%; critical value 1.50)",
        "  overall f1: 80.00 -> 81.25 (+1.25, 95% upper bound +2.75), 1,234 pairs",
        "  coverage drop (allowed by --allow-coverage-drop): overall: the candidate scored 1,234 of the 1,300 pairs the baseline "
        "scored (66 missing)",
    ]
    assert gate_text(made_result([], [])).split("\n")[0].endswith("critical value 1.50)")
    empty = GateResult("a", "b", [], [], 200, 3, unit="entities")
    assert gate_text(empty) == ("gate PASS: b against a, 0 tests on 3 entities both scored (200 paired resamples; one-sided step-down "
                                "max-t, family-wise error 5%; critical value 0.00)")


def test_by_feature_groups_regressions_worst_first_and_ties_by_name_then_metric():
    a1 = made("Source = a", "Source", -9.0, 1.0, -4.0)
    a2 = made("Source = b", "Source", -9.0, 1.0, -4.0)
    a3 = made("Source = b", "Source", -9.0, 1.0, -4.0, metric="accuracy_b")
    t1 = made("Topic = x", "Topic", -9.0, 1.0, -6.0)
    t2 = made("Topic = y", "Topic", -9.0, 1.0, -1.0)
    u1 = made("Unit = z", "Unit", -9.0, 1.0, -5.0)
    for order in ([a3, a2, a1, t2, u1, t1], [t1, u1, t2, a1, a2, a3]):
        assert by_feature(order) == [[t1, t2], [u1], [a1, a2, a3]]
    assert by_feature([]) == []


ROW_HEAD = ["| slice | metric | baseline | candidate | difference | 95% upper bound | size |", "|---|---|---:|---:|---:|---:|---:|"]


def row(name: str, label: str, base: str, cand: str, diff: str, bound: str, size: str) -> str:
    return f"| {name} | {label} | {base} | {cand} | {diff} | {bound} | {size} |"


def test_gate_markdown_of_a_failing_gate_with_folded_coverage_and_regressions():
    overall = made("overall", "", -0.5, 1.0, 1.0, size=1234)
    tests = [overall, made("Source = a*b", "Source", -10.0, 3.0, -5.5, size=35), made("Source = c", "Source", -8.0, 3.0, -2.0),
             made("Source = d", "Source", -7.0, 3.0, -1.0), made("Topic = t", "Topic", -6.0, 1.0, -3.0, label="F1", unit="entities"),
             made("Topic = u", "Topic", 5.0, 1.0, 7.0)]
    coverage = [drop(f"Source = s{k}", 100 + k, 90) for k in range(8)]
    text = gate_markdown(made_result(tests, coverage, ["one", "two_"]), NLI)
    assert text.endswith("\n") and not text.endswith("\n\n")
    assert text.split("\n")[:-1] == [
        "### klue-viz gate NLI: ❌ **fail**", "",
        "cand_x against base\\<1\\>: 6 tests (every official metric, overall and on each slice with at least the minimum size) on "
        "1,234 pairs both runs scored. A regression is a drop whose one-sided 95% upper bound is below 0 (paired bootstrap, 1000 "
        "resamples, step-down max-t over all tests: a candidate that differs only by chance fails at most 5% of the time).", "",
        *ROW_HEAD, row("**overall**", "Accuracy", "80.00", "79.50", "-0.50", "+1.00", "1,234 pairs"), "",
        "**Coverage drop**: the candidate has no prediction for these pairs.", "",
        "| slice | baseline | candidate | missing |", "|---|---:|---:|---:|",
        *[f"| Source = s{k} | {100 + k} | 90 | {10 + k} |" for k in range(6)], "",
        "<details><summary>2 more slices lost coverage</summary>", "",
        "| slice | baseline | candidate | missing |", "|---|---:|---:|---:|",
        "| Source = s6 | 106 | 90 | 16 |", "| Source = s7 | 107 | 90 | 17 |", "", "</details>", "",
        "**Regressions**: 4 in 2 feature(s), the worst of each:", "", *ROW_HEAD,
        row("Source = a\\*b", "Accuracy", "80.00", "70.00", "-10.00", "-5.50", "35 pairs"),
        row("Topic = t", "F1", "80.00", "74.00", "-6.00", "-3.00", "40 entities"), "",
        "<details><summary>The other 2 regressions, by feature</summary>", "",
        "**Source**", "", *ROW_HEAD,
        row("Source = c", "Accuracy", "80.00", "72.00", "-8.00", "-2.00", "40 pairs"),
        row("Source = d", "Accuracy", "80.00", "73.00", "-7.00", "-1.00", "40 pairs"), "", "</details>", "",
        "Not tested: one; two\\_.",
    ]


def test_gate_markdown_of_a_passing_gate_lists_the_five_slices_closest_to_a_regression():
    overall = made("overall", "", -3.0, 1.0, 0.5)  # d / se -3, not a slice: never among the closest
    sliced = [made(f"Source = s{k}", "Source", d, se, 1.0) for k, (d, se) in enumerate(
        [(-1.0, 1.0), (-4.0, 2.0), (-0.5, 0.1), (2.0, 1.0), (-6.0, 0.0), (0.0, 1.0), (-3.0, 2.0), (-0.9, 1.0)])]
    result = made_result([overall, *sliced], [drop("overall", 1300, 1234)], allow=True)
    lines = gate_markdown(result, NLI).split("\n")
    assert lines[0] == "### klue-viz gate NLI: ✅ **pass**"
    at = lines.index("**Coverage drop (allowed: it does not fail the gate)**: the candidate has no prediction for these pairs.")
    assert lines[at + 4:at + 6] == ["| overall | 1,300 | 1,234 | 66 |", ""]
    at = lines.index("No slice regressed. The five slices closest to a regression:")
    # d / se: s2 -5, s1 -2, s6 -1.5, s0 -1, s7 -0.9 (s4 has se 0; s5 0 and s3 +2 are further)
    assert [line.split(" | ")[0] for line in lines[at + 4:]] == ["| Source = s2", "| Source = s1", "| Source = s6", "| Source = s0",
                                                                 "| Source = s7", ""]
    assert lines[at + 1:at + 4] == ["", *ROW_HEAD]
    regressed = made_result([made("overall", "", -3.0, 1.0, -0.5), *sliced[:3]])
    assert "No slice regressed" not in gate_markdown(regressed, NLI) and "**Regressions**" not in gate_markdown(regressed, NLI)
    assert "Not tested" not in gate_markdown(regressed, NLI) and "Coverage drop" not in gate_markdown(regressed, NLI)
    fewer = gate_markdown(made_result([overall, *sliced[3:6]]), NLI).split("\n")
    assert [line.split(" | ")[0] for line in fewer[fewer.index("No slice regressed. The five slices closest to a regression:") + 4:]] == [
        "| Source = s5", "| Source = s3", ""]
    nothing = gate_markdown(made_result([overall, sliced[4]]), NLI)
    assert "No slice regressed" not in nothing and nothing.endswith("|\n")


def test_a_dp_candidate_whose_statistics_are_wider_than_the_baseline_s_is_read_block_by_block():
    """DP statistics hold one column per head index a run uses: the candidate points a word of the long sentence at
    head 10, which no other head reaches, so its blocks are wider than the baseline's and each run's sums are cut at its
    own edges; it also drops sentence 39, whose words leave every word-level group. UAS micro F1 by hand: every word has a prediction, so it is the share of words with the right head,
    resampled by sentence."""
    dp = get_task("dp")
    short = [(f"klue-dp-v1_dev_{k:05d}_wikitree", [("가", 2, "NP_SBJ"), ("나", 0, "VP"), ("다", 2, "VP")]) for k in range(40)]
    long_words = [("라", 0, "VP")] + [(chr(0xB9C8 + k), 1, "NP") for k in range(9)]
    sentences = short + [("klue-dp-v1_dev_00040_wikitree", long_words)]
    gold = gold_of("dp", dp_tsv(sentences))
    exact = [{"guid": g, "head": [h for _, h, _ in words], "deprel": [d for _, _, d in words]} for g, words in sentences]
    changed = [dict(r) for r in exact]
    for k in range(10):  # the first word of ten short sentences points at the third
        changed[k] = {**changed[k], "head": [3, 0, 2]}
    changed[40] = {**changed[40], "head": [0, 10] + [1] * 8}
    del changed[39]  # the candidate has no prediction for sentence 39: its words are in no test
    runs = [evaluate_bytes(dp, gold, jsonl(records), f"{name}.jsonl", run=name) for name, records in (("base", exact), ("cand", changed))]
    found = gate(dp, *runs, min_size=2, samples=200, seed=1)
    words = np.array([3] * 39 + [10], dtype=float)
    right = {"base": words, "cand": np.array([2] * 10 + [3] * 29 + [9], dtype=float)}
    counts = np.vstack([np.ones(40), resample_counts(np.random.default_rng(1), 40, 200)])
    uas = {run: 100 * counts @ right[run] / (counts @ words) for run in right}
    test = next(t for t in found.tests if not t.slice and t.metric == "uas_micro_f1")
    assert (test.baseline, test.candidate) == pytest.approx((100.0, 100 * 116 / 127))  # 11 of the 127 words wrong
    assert found.resampled[:, found.tests.index(test)] == pytest.approx((uas["cand"] - uas["base"])[1:], rel=1e-9)
    # the overall test is named as the task names its metric; a word-level one by its key (no detail name for UAS/LAS)
    assert (test.metric_label, test.unit) == ("UAS (micro F1)", "sentences")
    words = [t for t in found.tests if t.unit == "words"]
    assert words and all(t.metric_label == t.metric for t in words)
    # one root per shared sentence (40: the first counts, the dropped one does not), and no group of dropped words
    assert {t.size for t in words if t.name == "Dependency distance = root"} == {40}
    assert not any(t.name.endswith(" = ") for t in found.tests)


# ---- a metric undefined on a group or on most of its resamples (STS) ------------------------------------------------

STS_GROUPS = {"main": 54, "a-neg": 3, "b-pos": 3, "tiny": 2}


def sts_case() -> tuple[np.ndarray, dict[str, np.ndarray], np.ndarray]:
    """Gold and two runs' scores: `main` spread over 0..5; `a-neg` all below 3 in gold and in both runs (F1 undefined:
    nothing similar); `b-pos` and `tiny` each with a similar pair. Every group's scores differ inside it."""
    rng = np.random.default_rng(8)
    gold = np.concatenate([np.round(rng.uniform(0, 5, 54), 1), [0.5, 1.0, 1.5], [3.5, 4.0, 1.0], [4.0, 1.0]])
    source = np.array([name for name, size in STS_GROUPS.items() for _ in range(size)])
    scores = {}
    for name, shift in (("base", 0.3), ("cand", -0.4)):
        noisy = np.clip(np.round(gold + rng.normal(0, 0.8, len(gold)), 2), 0, 5)
        noisy[54:57] = np.array([0.5, 1.0, 1.5]) + shift + 1  # a-neg: 1.8..2.8 and 1.1..2.1, below 3
        scores[name] = noisy
    return gold, scores, source


def sts_by_hand(gold: np.ndarray, pred: np.ndarray, weights: np.ndarray) -> dict[str, np.ndarray]:
    """Pearson r (undefined unless two different pairs are drawn: each group's scores all differ) and F1 at 3.0 (undefined
    when nothing is similar in gold or prediction), both on 0..100, per row of weights."""
    total = weights.sum(axis=1)
    mean_p, mean_g = weights @ pred / np.maximum(total, 1), weights @ gold / np.maximum(total, 1)
    covariance = weights @ (pred * gold) - total * mean_p * mean_g
    var_p, var_g = weights @ (pred * pred) - total * mean_p ** 2, weights @ (gold * gold) - total * mean_g ** 2
    distinct = (weights > 0).sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.where(distinct >= 2, 100 * covariance / np.sqrt(var_p * var_g), np.nan)
        similar, predicted = gold >= 3, pred >= 3
        tp, fp, fn = weights @ (similar & predicted), weights @ (~similar & predicted), weights @ (similar & ~predicted)
        f1 = np.where(tp + fp + fn > 0, 100 * 2 * tp / (2 * tp + fp + fn), np.nan)
    return {"pearsonr": r, "f1": f1}


def test_a_test_is_left_out_when_its_metric_is_undefined_observed_or_on_more_than_half_the_resamples():
    """By hand: `a-neg`'s F1 is undefined on the whole group (left out; `b-pos` after it is still tested), `tiny`'s
    Pearson r needs both its pairs drawn, which about 40% of resamples do (left out), its F1 only the similar pair
    (about 63%: tested, though the first resample lacks it). The labels are the task's own."""
    gold, scores, source = sts_case()
    sts_task = get_task("sts")
    gold_file = gold_of("sts", sts(gold.tolist(), sources=source.tolist()))
    runs = [evaluate_bytes(sts_task, gold_file, jsonl([{"guid": f"klue-sts-v1_dev_{k:05d}", "score": float(s)} for k, s in enumerate(v)]),
                           f"{name}.jsonl", run=name) for name, v in scores.items()]
    found = gate(sts_task, *runs, min_size=2, samples=400, seed=8)
    counts = np.vstack([np.ones(len(gold)), resample_counts(np.random.default_rng(8), len(gold), 400)])
    expected = []
    for key in ("pearsonr", "f1"):
        for value in STS_GROUPS:
            weights = counts * (source == value)
            d = sts_by_hand(gold, scores["cand"], weights)[key] - sts_by_hand(gold, scores["base"], weights)[key]
            if not np.isnan(d[0]) and np.mean(~np.isnan(d[1:])) >= 0.5:
                expected.append((f"Source = {value}", key, d[0], np.nanstd(d[1:], ddof=1)))
    tiny_positive = int(np.flatnonzero(source == "tiny")[0])
    assert counts[1, tiny_positive] == 0  # the first resample lacks tiny's similar pair: its F1 is undefined there
    assert [(name, key) for name, key, _, _ in expected] == [
        ("Source = main", "pearsonr"), ("Source = a-neg", "pearsonr"), ("Source = b-pos", "pearsonr"),
        ("Source = main", "f1"), ("Source = b-pos", "f1"), ("Source = tiny", "f1")]
    tested = [t for t in found.tests if "source" in t.slice]
    assert [(t.name, t.metric) for t in tested] == [(name, key) for name, key, _, _ in expected]
    for test, (_, key, difference, se) in zip(tested, expected):
        assert (test.difference, test.se) == pytest.approx((difference, se), rel=1e-6)
        assert test.metric_label == {"pearsonr": "Pearson r", "f1": "F1 (≥ 3.0)"}[key] and test.unit == "pairs"


# ---- a metric that does not sum (RE's AUPRC) --------------------------------------------------------------------------

def re_auprc_by_hand(gold: np.ndarray, probs: np.ndarray, draws: np.ndarray) -> float:
    """KLUE's AUPRC as its reference script computes it (scikit-learn's precision-recall curve and trapezoid area per
    relation, the mean over the 30 on 0..100), on the examples drawn (`draws`: indices, repeated as drawn)."""
    g, p = gold[draws], probs[draws]
    areas = []
    for c in range(len(RE_RELATIONS)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a relation without a positive example: scikit-learn sets recall to 1
            precision, recall, _ = precision_recall_curve(g == c, p[:, c])
        areas.append(auc(recall, precision))
    return 100 * float(np.mean(areas))


def test_the_gate_tests_re_s_auprc_which_does_not_sum():
    """RE's official metrics are micro F1 and AUPRC; AUPRC is not a sum over examples (the statistics' `unsummed`), and
    the gate left it out of its tests. Both runs label every example right (micro F1 100 each); the candidate's
    probabilities rank worse, so only AUPRC differs. Its observed values and its first resamples are scikit-learn's."""
    re_task = get_task("re")
    labels = ["no_relation", "org:founded", "per:title"] * 14
    gold_ids = np.array([RE_RELATIONS.index(label) for label in labels])
    rng = np.random.default_rng(3)
    probs = {}
    for name, sharp in (("base", 0.9), ("cand", 0.4)):
        table = rng.uniform(0, 1 - sharp, (len(labels), len(RE_RELATIONS)))
        table[np.arange(len(labels)), gold_ids] = sharp + rng.uniform(0, 1 - sharp, len(labels))
        probs[name] = table / table.sum(axis=1, keepdims=True)
    gold = gold_of("re", re_records(labels))
    runs = [evaluate_bytes(re_task, gold, jsonl([{"guid": f"klue-re-v1_dev_{k:05d}", "label": labels[k], "probs": probs[name][k].tolist()}
                                                 for k in range(len(labels))]), f"{name}.jsonl", run=name) for name in ("base", "cand")]
    found = gate(re_task, *runs, samples=200, seed=2)
    overall = {t.metric: t for t in found.tests if not t.slice}
    assert set(overall) == {"micro_f1", "auprc"} and overall["auprc"].metric_label == "AUPRC"
    everything = np.arange(len(labels))
    assert (overall["auprc"].baseline, overall["auprc"].candidate) == pytest.approx(
        (re_auprc_by_hand(gold_ids, probs["base"], everything), re_auprc_by_hand(gold_ids, probs["cand"], everything)), rel=1e-9)
    counts = resample_counts(np.random.default_rng(2), len(labels), 200)
    column = found.resampled[:, found.tests.index(overall["auprc"])]
    for b in range(3):
        draws = np.repeat(everything, counts[b].astype(int))
        expected = re_auprc_by_hand(gold_ids, probs["cand"], draws) - re_auprc_by_hand(gold_ids, probs["base"], draws)
        assert column[b] == pytest.approx(expected, rel=1e-9, abs=1e-9)


# ---- the user's own columns as slices ----------------------------------------------------------------------------------

def test_user_columns_are_slices_when_both_runs_agree_and_skipped_when_their_values_differ():
    """Three user columns set on the runs' frames: `user:mood` differs between the runs (skipped, named), `user:half`
    is the same in both (tested after it: the skip does not end the loop) and `user:only` exists on the candidate
    alone (the baseline's columns decide what is tested, so it is not)."""
    base_wrong, cand_wrong = set(range(0, 60, 6)), set(range(0, 60, 6)) | set(range(1, 30, 3))
    gold = gold_of("nli", nli([LABELS[k % 3] for k in range(60)]))
    runs = []
    for name, wrong in (("base", base_wrong), ("cand", cand_wrong)):
        records = [{"guid": guid(k), "label": LABELS[(k + 1) % 3] if k in wrong else LABELS[k % 3]} for k in range(60)]
        run = evaluate_bytes(NLI, gold, jsonl(records), f"{name}.jsonl", run=name)
        run.frames.examples["user:mood"] = ["calm" if (k % 2) == (name == "base") else "calm!" for k in range(60)]
        run.frames.examples["user:half"] = ["first" if k < 30 else "second" for k in range(60)]
        if name == "cand":
            run.frames.examples["user:only"] = "x"
        runs.append(run)
    found = gate(NLI, *runs, samples=200)
    assert "mood (your column): its values depend on the run's predictions, so the two runs' groups differ" in found.skipped
    half = [t for t in found.tests if "user:half" in t.slice]
    assert [(t.name, t.size) for t in half] == [("half (your column) = first", 30), ("half (your column) = second", 30)]
    # by hand: the candidate breaks 10 of the first half (1, 4, ..., 28; none a multiple of 6), nothing of the second
    assert [t.difference for t in half] == pytest.approx([-100 * 10 / 30, 0.0])
    assert not any("user:only" in t.slice or "user:mood" in t.slice for t in found.tests)


def test_an_entity_level_test_is_named_by_its_detail_label():
    """NER's entity-type slices are tested on their F1, named `F1` (DETAIL_METRIC_LABELS), sized in gold entities; the sentence-level
    tests carry the task's labels. F1 of PS by hand: 20 of 40 found, nothing spurious: 2 * 20 / (2 * 20 + 20)."""
    task = get_task("ner")
    sentences = [ner_sentence(k, person=k % 2 == 0) for k in range(80)]
    gold = gold_of("ner", ner_tsv(sentences))
    runs = []
    for name, missed in (("base", set()), ("cand", set(range(0, 80, 4)))):
        records = [{"guid": g, "tags": ["O" if k in missed and t.endswith("PS") else t for _, t in pairs]} for k, (g, pairs) in enumerate(sentences)]
        runs.append(evaluate_bytes(task, gold, jsonl(records), f"{name}.jsonl", run=name))
    found = gate(task, *runs, samples=200)
    ps = next(t for t in found.tests if t.slice == {"label": "PS"})
    # its size counts the 40 gold PS entities (sentences 0, 2, ..., 78), not the 80 gold and predicted rows
    assert (ps.metric, ps.metric_label, ps.size, ps.unit) == ("f1", "F1", 40, "gold entities")
    assert (ps.baseline, ps.candidate) == pytest.approx((100.0, 200 / 3))
    overall = {t.metric: t.metric_label for t in found.tests if not t.slice}
    assert overall == {m.key: m.label for m in task.facts.metrics}


def test_a_behaviour_without_cases_is_left_out_and_one_undefined_on_some_resamples_is_kept(runs):
    """At minimum size 0: `empty` has no case (its pass rate is undefined observed: left out, and `typo` after it is
    still tested); `one` has all 30 cases on example 5, so its rate is undefined on the resamples that miss example 5
    (about 37%, the first resample among them) and constant elsewhere: kept, with a standard error of 0."""
    cases = {"empty": ([], [], []), "one": ([guid(5)] * 30, [k < 20 for k in range(30)], [k < 10 for k in range(30)])}
    found = gate(NLI, *runs, min_size=0, samples=SAMPLES, seed=SEED, level=LEVEL, behaviour={**cases, "typo": behaviour()["typo"]})
    shared = [k for k in range(N) if k not in DROPPED]
    counts = resample_counts(np.random.default_rng(SEED), len(shared), SAMPLES)
    assert counts[0, shared.index(5)] == 0 and 0.5 < np.mean(counts[:, shared.index(5)] > 0) < 1
    tested = {t.slice["behaviour"]: t for t in found.tests if "behaviour" in t.slice}
    assert list(tested) == ["one", "typo"]
    one = tested["one"]
    assert (one.size, one.baseline, one.candidate, one.se) == (30, pytest.approx(200 / 3), pytest.approx(100 / 3), 0.0)
    assert np.isnan(found.resampled[0, found.tests.index(one)])


def test_a_behaviour_below_the_minimum_is_skipped_and_one_exactly_at_it_is_tested(runs):
    """`few` (9 cases on the shared examples) comes first and is skipped with its count; `exact` has 30 cases, the
    minimum, and is tested after it; the candidate passes fewer of them (15 against 24, counted by hand)."""
    cases = {"few": ([guid(k) for k in range(40, 49)], [k % 2 == 0 for k in range(9)], [False] * 9),  # 9 cases, 5 passed
             "exact": ([guid(k) for k in range(40, 70)], [k % 5 != 0 for k in range(30)], [k % 2 == 0 for k in range(30)])}
    found = gate(NLI, *runs, min_size=MIN_SIZE, samples=SAMPLES, seed=SEED, level=LEVEL, behaviour=cases)
    assert "behaviour few: 9 case(s) on the shared examples, fewer than 30" in found.skipped
    exact = [t for t in found.tests if t.slice == {"behaviour": "exact"}]
    assert [(t.size, t.baseline, t.candidate) for t in exact] == [(30, pytest.approx(100 * 24 / 30), pytest.approx(100 * 15 / 30))]
    assert not any(t.slice == {"behaviour": "few"} for t in found.tests)


def test_a_gate_whose_every_metric_is_undefined_has_no_test_and_passes():
    """STS runs with constant scores below 3 on a gold below 3: Pearson r (a constant side) and F1 (nothing similar) are
    undefined for both, so no test is left: an empty B x 0 matrix of differences, one critical value of 0, a pass."""
    sts_task = get_task("sts")
    gold = [round(2.9 * k / 39, 3) for k in range(40)]
    gold_file = gold_of("sts", sts(gold))
    runs = [evaluate_bytes(sts_task, gold_file, jsonl([{"guid": f"klue-sts-v1_dev_{k:05d}", "score": score} for k in range(40)]),
                           f"{name}.jsonl", run=name) for name, score in (("base", 1.0), ("cand", 2.0))]
    found = gate(sts_task, *runs, samples=200)
    assert found.tests == [] and found.resampled.shape == (200, 0)
    assert found.criticals == [0.0] and found.verdict == "pass"


@pytest.mark.parametrize("drops,folded", [(6, 0), (7, 1)])
def test_six_coverage_rows_show_before_the_rest_fold(drops, folded):
    """The fold starts at the seventh drop: six are shown whole, seven show six and fold one (counted by hand). The other
    tests have 1 and 8 drops, which `>= 6` and `> 7` for `> 6` would not tell apart."""
    coverage = [drop(f"Source = s{k}", 100 + k, 90) for k in range(drops)]
    lines = gate_markdown(made_result([made("overall", "", -0.5, 1.0, 1.0, size=1234)], coverage), NLI).split("\n")
    shown = [line for line in lines if line.startswith("| Source = s")]
    assert shown == [f"| Source = s{k} | {100 + k} | 90 | {10 + k} |" for k in range(drops)]
    summaries = [line for line in lines if line.startswith("<details><summary>") and "lost coverage" in line]
    assert summaries == ([f"<details><summary>{folded} more slices lost coverage</summary>"] if folded else [])
    if folded:
        assert lines.index(summaries[0]) < lines.index(f"| Source = s{drops - 1} | {99 + drops} | 90 | {9 + drops} |")
