"""The regression gate: a planted slice regression fails and is named; chance differences pass, at the promised rate."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest
from cases import gold_of, ner_tsv, nli
from conftest import jsonl

from klue_viz.cli.main import main
from klue_viz.compare.gate import gate, gate_markdown
from klue_viz.scoring.evaluate import evaluate_bytes
from klue_viz.tasks import get_task

LABELS = ("entailment", "neutral", "contradiction")
SOURCES = ("airbnb", "policy", "wikinews", "wikipedia")
NLI = get_task("nli")


def labels(n: int) -> list[str]:
    return [LABELS[k % 3] for k in range(n)]


def source_of(k: int) -> str:
    return SOURCES[k % len(SOURCES)]


def nli_records(n: int, wrong: set[int]) -> list[dict]:
    return [{"guid": f"klue-nli-v1_dev_{k:05d}", "label": LABELS[(LABELS.index(g) + 1) % 3] if k in wrong else g}
            for k, g in enumerate(labels(n))]


def nli_runs(n: int, base_wrong: set[int], cand_wrong: set[int]):
    gold = gold_of("nli", nli(labels(n), [source_of(k) for k in range(n)]))
    return (evaluate_bytes(NLI, gold, jsonl(nli_records(n, base_wrong)), "base.jsonl", run="base"),
            evaluate_bytes(NLI, gold, jsonl(nli_records(n, cand_wrong)), "cand.jsonl", run="cand"))


def degraded(n: int = 1200, moved: int = 45, seed: int = 0) -> tuple[set[int], set[int]]:
    """Baseline wrong on 20% of the examples; the candidate breaks `moved` right ones in wikinews and fixes `moved`
    wrong ones elsewhere, so its headline accuracy is exactly the baseline's."""
    rng = random.Random(seed)
    base = set(rng.sample(range(n), n // 5))
    wikinews = [k for k in range(n) if source_of(k) == "wikinews"]
    broken = rng.sample([k for k in wikinews if k not in base], moved)
    fixed = rng.sample([k for k in base if source_of(k) != "wikinews"], moved)
    return base, (base - set(fixed)) | set(broken)


def test_one_degraded_slice_with_the_headline_unchanged_fails_and_names_that_slice():
    base_wrong, cand_wrong = degraded()
    baseline, candidate = nli_runs(1200, base_wrong, cand_wrong)
    assert baseline.scores.values == candidate.scores.values  # the headline held
    result = gate(NLI, baseline, candidate, min_size=30)
    assert result.verdict == "fail"
    named = [(t.slice, t.metric) for t in result.regressions]
    assert named == [({"source": "wikinews"}, "accuracy")]
    regression = result.regressions[0]
    assert regression.size == 300
    # 300 wikinews examples, 45 more wrong: -15 points, counted by hand
    assert regression.difference == pytest.approx(-15.0)
    assert regression.bound < 0 and regression.name == "Source = wikinews" and regression.unit == "pairs"
    overall = next(t for t in result.tests if t.slice == {})
    assert overall.difference == 0.0 and not overall.regression
    payload = result.to_dict()
    assert set(payload) == {"verdict", "checked", "overall", "regressions", "coverage_drops", "coverage_drop_allowed", "skipped"}
    assert payload["checked"] == len(result.tests) and payload["coverage_drops"] == []
    assert set(payload["regressions"][0]) == {"slice", "name", "metric", "baseline", "candidate", "difference", "upper_bound", "size", "unit"}
    assert "wikinews" in gate_markdown(result, NLI)


def balanced_flips(n: int, base: set[int], rng: random.Random, rate: float = 0.08) -> set[int]:
    """The candidate: right examples broken with probability `rate`, wrong ones fixed with the probability that keeps
    the expected accuracy equal, independently in every slice: it differs from the baseline only by chance."""
    fix_rate = rate * (n - len(base)) / len(base)
    return {k for k in range(n) if (k in base and rng.random() >= fix_rate) or (k not in base and rng.random() < rate)}


def test_random_flips_in_both_directions_pass():
    rng = random.Random(11)
    base = set(rng.sample(range(1200), 240))
    baseline, candidate = nli_runs(1200, base, balanced_flips(1200, base, rng))
    result = gate(NLI, baseline, candidate, min_size=30)
    assert result.verdict == "pass", [t.to_dict() for t in result.regressions]
    assert len(result.tests) >= 5  # overall, four sources, the agreement and length buckets


@pytest.mark.slow
def test_the_false_alarm_rate_over_many_chance_candidates_stays_at_the_promised_level():
    """200 candidates that differ from their baseline only by chance: at most 5% may fail (the promise of the one-sided
    step-down max-t). Tested per slice without the correction, the same candidates fail far more often: the correction
    is what keeps the gate quiet."""
    n, seeds = 400, 200
    failures = uncorrected = 0
    for seed in range(seeds):
        rng = random.Random(1000 + seed)
        base = set(rng.sample(range(n), 80))
        baseline, candidate = nli_runs(n, base, balanced_flips(n, base, rng, rate=0.1))
        result = gate(NLI, baseline, candidate, min_size=30, samples=400, seed=seed)
        failures += result.verdict == "fail"
        uncorrected += any(t.se > 0 and t.difference + 1.96 * t.se < 0 for t in result.tests)
    rate = failures / seeds
    # the promise (5%) plus three binomial standard errors of 200 draws
    assert rate <= 0.05 + 3 * np.sqrt(0.05 * 0.95 / seeds), rate
    assert uncorrected / seeds > 2 * max(rate, 0.02), (uncorrected, failures)


def ner_sentence(k: int, person: bool) -> tuple[str, list[tuple[str, str]]]:
    """A sentence holding a PS entity (`person`) or an OG one, then filler."""
    name, tag = ("홍길동", "PS") if person else ("한국은행", "OG")
    pairs = [(c, f"{'B' if j == 0 else 'I'}-{tag}") for j, c in enumerate(name)] + [(c, "O") for c in "은 오늘 왔다"]
    return f"klue-ner-v1_dev_{k:05d}-wikitree", pairs


def test_a_regression_on_one_entity_type_is_named_at_the_entity_level():
    task = get_task("ner")
    sentences = [ner_sentence(k, person=k % 2 == 0) for k in range(240)]
    gold = gold_of("ner", ner_tsv(sentences))

    def run(name: str, drop_person: set[int]):
        records = []
        for k, (guid, pairs) in enumerate(sentences):
            tags = ["O" if k in drop_person and t.endswith("PS") else t for _, t in pairs]
            records.append({"guid": guid, "tags": tags})
        return evaluate_bytes(task, gold, jsonl(records), f"{name}.jsonl", run=name)

    baseline = run("base", set())
    candidate = run("cand", set(range(0, 240, 4)))  # 60 of the 120 PS entities missed
    result = gate(task, baseline, candidate, min_size=30, samples=500)
    named = {(tuple(t.slice.items()), t.metric) for t in result.regressions}
    assert ((("label", "PS"),), "f1") in named
    assert not any(t.slice.get("label") == "OG" for t in result.regressions)
    ps = next(t for t in result.tests if t.slice == {"label": "PS"})
    # F1 of PS: 60 found of 120, nothing spurious -> 2*60 / (2*60 + 60) = 66.67
    assert ps.candidate == pytest.approx(200 / 3) and ps.baseline == pytest.approx(100.0)


def test_gate_command_exit_codes_and_files(tmp_path, capsys):
    n = 1200
    gold = tmp_path / "klue-nli-v1.1_dev.json"
    gold.write_text(json.dumps(nli(labels(n), [source_of(k) for k in range(n)]), ensure_ascii=False), encoding="utf-8")
    base_wrong, cand_wrong = degraded()
    base, cand, same = tmp_path / "base.jsonl", tmp_path / "cand.jsonl", tmp_path / "same.jsonl"
    base.write_bytes(jsonl(nli_records(n, base_wrong)))
    cand.write_bytes(jsonl(nli_records(n, cand_wrong)))
    same.write_bytes(jsonl(nli_records(n, base_wrong)))
    out, markdown = tmp_path / "gate.json", tmp_path / "gate.md"
    args = ["gate", "--task", "nli", "--gold", str(gold), "--baseline", str(base)]
    assert main([*args, "--candidate", str(cand), "--out", str(out), "--markdown", str(markdown)]) == 1
    payload = json.loads(out.read_text(encoding="utf-8"))
    assert payload["verdict"] == "fail" and payload["regressions"][0]["slice"] == {"source": "wikinews"}
    table = markdown.read_text(encoding="utf-8")
    assert "| slice | metric |" in table and "wikinews" in table
    assert "FAIL" in capsys.readouterr().out
    assert main([*args, "--candidate", str(same), "--out", str(out)]) == 0
    assert json.loads(out.read_text(encoding="utf-8"))["verdict"] == "pass"
    assert main([*args, "--candidate", str(tmp_path / "missing.jsonl")]) == 2
    assert main([*args, "--candidate", str(cand), "--out", str(tmp_path / "no" / "gate.json")]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_a_stored_error_tag_is_a_slice_and_a_confidence_that_depends_on_the_run_is_skipped():
    n = 1200
    base_wrong, cand_wrong = degraded()
    gold = gold_of("nli", nli(labels(n), [source_of(k) for k in range(n)]))

    def with_probs(wrong: set[int], confident: bool) -> bytes:
        records = nli_records(n, wrong)
        for record in records:  # a run's own confidence: the two runs' confidence bins differ
            chosen = LABELS.index(record["label"])
            record["probs"] = [0.9 if k == chosen else 0.05 for k in range(3)] if confident else [0.5 if k == chosen else 0.25 for k in range(3)]
        return jsonl(records)

    baseline = evaluate_bytes(NLI, gold, with_probs(base_wrong, True), "base.jsonl", run="base")
    candidate = evaluate_bytes(NLI, gold, with_probs(cand_wrong, False), "cand.jsonl", run="cand")
    broken = sorted(cand_wrong - base_wrong)  # the 45 wikinews examples the candidate broke
    policy = [k for k in range(n) if source_of(k) == "policy"][:40]
    tagged = {f"klue-nli-v1_dev_{k:05d}": {"negation"} for k in broken + policy}
    result = gate(NLI, baseline, candidate, min_size=30, tags=tagged)
    assert any(s.startswith("Confidence (p of the predicted class)") for s in result.skipped)
    assert not any("confidence_bin" in t.slice for t in result.tests)
    tag = next(t for t in result.tests if t.slice == {"tag: negation": "yes"})
    assert tag.size == 85
    # the 45 broken ones are tagged, and so are 40 policy examples, of which the planted fixes may have fixed some
    fixed_in_tag = len(set(policy) & (base_wrong - cand_wrong))
    assert tag.difference == pytest.approx(100 * (fixed_in_tag - 45) / 85)
    assert {"tag: negation": "yes"} in [t.slice for t in result.regressions]
