"""The gate's statistics and its verdict's edges (issues 27.2, 28.7, 29.8, 29.11): the one-sided step-down max-t against
the two-sided single step it replaced, coverage drops, the confidence slices left out, the fewest resamples, an
unreadable store, and the pull-request comment."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest
from cases import gold_of, ner_tsv, nli
from conftest import jsonl
from markdown_it import MarkdownIt
from test_gate import NLI, balanced_flips, degraded, labels, ner_sentence, nli_records, nli_runs, source_of

from klue_viz.cli.main import main
from klue_viz.compare.gate import gate, gate_markdown, gate_text, minimum_resamples
from klue_viz.scoring.evaluate import evaluate_bytes
from klue_viz.tasks import get_task


def single_step_two_sided(result) -> set[int]:
    """The procedure the gate used before: simultaneous two-sided intervals d +- c se, c the 95% quantile of the largest
    |d* - d| / se over every test; a regression is an interval wholly below 0. Returns the positions of the regressions."""
    se = np.array([t.se for t in result.tests])
    d = np.array([t.difference for t in result.tests])
    usable = se > 0
    t_star = np.abs(result.resampled[:, usable] - d[usable]) / se[usable]
    critical = np.quantile(np.nanmax(t_star, axis=1), 0.95)
    return {k for k in np.flatnonzero(usable) if d[k] + critical * se[k] < 0}


def step_down_by_hand(result) -> list[float]:
    """Romano and Wolf's one-sided step-down, written out from the paper's algorithm for these tests."""
    se = np.array([t.se for t in result.tests])
    d = np.array([t.difference for t in result.tests])
    t_obs = -d / se
    t_star = -(result.resampled - d) / se
    remaining = list(range(len(d)))
    criticals = []
    while remaining:
        c = np.quantile(t_star[:, remaining].max(axis=1), 0.95)
        criticals.append(c)
        rejected = [k for k in remaining if t_obs[k] > c]
        if not rejected:
            break
        remaining = [k for k in remaining if k not in rejected]
    return criticals


def planted(n: int, seed: int, drop: int) -> tuple[set[int], set[int]]:
    """A baseline wrong on 20%, and a candidate that differs from it by chance (balanced flips) and, when `drop` > 0,
    breaks `drop` more of its right wikinews examples."""
    rng = random.Random(seed)
    base = set(rng.sample(range(n), n // 5))
    cand = balanced_flips(n, base, rng, rate=0.05)
    right_wikinews = [k for k in range(n) if source_of(k) == "wikinews" and k not in cand]
    return base, cand | set(rng.sample(right_wikinews, drop))


def test_the_step_down_critical_values_are_those_of_the_algorithm_written_out():
    base, cand = degraded()
    result = gate(NLI, *nli_runs(1200, base, cand), min_size=30)
    assert all(t.se > 0 for t in result.tests)
    assert result.criticals == pytest.approx(step_down_by_hand(result), rel=1e-12)
    assert len(result.criticals) == 2  # wikinews found at the first step, nothing more at the second
    assert result.criticals[1] <= result.criticals[0]


@pytest.mark.slow
def test_the_step_down_finds_more_than_the_two_sided_single_step_and_stays_quiet_on_chance():
    """60 seeded candidates that break 12 of about 80 right wikinews pairs (plus chance flips everywhere), and 100 that
    differ only by chance: the one-sided step-down finds the drop more often than the two-sided single step (and every
    time that one does, since its critical value is never larger), and fails at most 5% of the chance candidates
    (plus three binomial standard errors)."""
    n = 400
    step_down_found = single_step_found = 0
    for seed in range(60):
        base, cand = planted(n, seed, drop=12)
        result = gate(NLI, *nli_runs(n, base, cand), min_size=30, samples=400, seed=seed)
        wikinews = {k for k, t in enumerate(result.tests) if t.slice == {"source": "wikinews"}}
        ours = {k for k, t in enumerate(result.tests) if t.regression}
        theirs = single_step_two_sided(result)
        assert theirs <= ours
        step_down_found += bool(wikinews & ours)
        single_step_found += bool(wikinews & theirs)
    assert step_down_found > single_step_found
    assert step_down_found >= single_step_found + 5, (step_down_found, single_step_found)
    failures = 0
    for seed in range(100):
        base, cand = planted(n, 500 + seed, drop=0)
        failures += gate(NLI, *nli_runs(n, base, cand), min_size=30, samples=400, seed=seed).verdict == "fail"
    assert failures / 100 <= 0.05 + 3 * np.sqrt(0.05 * 0.95 / 100), failures


def write_nli(tmp_path, n: int, runs: dict[str, list[dict]]) -> tuple[str, dict[str, str]]:
    gold = tmp_path / "klue-nli-v1.1_dev.json"
    gold.write_text(json.dumps(nli(labels(n), [source_of(k) for k in range(n)]), ensure_ascii=False), encoding="utf-8")
    paths = {}
    for name, records in runs.items():
        path = tmp_path / f"{name}.jsonl"
        path.write_bytes(jsonl(records))
        paths[name] = str(path)
    return str(gold), paths


def test_a_candidate_that_stops_predicting_a_whole_slice_fails_on_coverage_unless_allowed(tmp_path, capsys):
    n = 1200
    base_wrong = set(random.Random(1).sample(range(n), 240))
    records = nli_records(n, base_wrong)
    without_wikinews = [r for k, r in enumerate(records) if source_of(k) != "wikinews"]  # the same predictions, 300 fewer
    gold_file, paths = write_nli(tmp_path, n, {"base": records, "cand": without_wikinews})
    gold = gold_of("nli", nli(labels(n), [source_of(k) for k in range(n)]))
    baseline = evaluate_bytes(NLI, gold, jsonl(records), "base.jsonl", run="base")
    candidate = evaluate_bytes(NLI, gold, jsonl(without_wikinews), "cand.jsonl", run="cand")
    result = gate(NLI, baseline, candidate)
    assert not result.regressions  # on the examples both scored, nothing changed
    assert result.verdict == "fail"
    drops = {c.name: (c.baseline, c.candidate) for c in result.coverage}
    assert drops["overall"] == (1200, 900) and drops["Source = wikinews"] == (300, 0)
    assert not any(name.startswith("Source = ") and name != "Source = wikinews" for name in drops)
    assert gate(NLI, baseline, candidate, allow_coverage_drop=True).verdict == "pass"
    args = ["gate", "--task", "nli", "--gold", gold_file, "--baseline", paths["base"], "--candidate", paths["cand"], "--no-store"]
    out = tmp_path / "gate.json"
    assert main([*args, "--out", str(out)]) == 1
    printed = capsys.readouterr().out
    assert "coverage drop: Source = wikinews: the candidate scored 0 of the 300 pairs the baseline scored (300 missing)" in printed
    payload = json.loads(out.read_text(encoding="utf-8"))
    assert payload["verdict"] == "fail" and payload["regressions"] == []
    assert {"slice": {"source": "wikinews"}, "name": "Source = wikinews", "unit": "pairs", "baseline": 300, "candidate": 0,
            "missing": 300} in payload["coverage_drops"]
    assert main([*args, "--allow-coverage-drop"]) == 0
    assert "allowed by --allow-coverage-drop" in capsys.readouterr().out


def test_the_confidence_slices_are_not_tested_when_no_run_has_probabilities():
    """Without probabilities each confidence slice is one group equal to overall: a drop was listed three times."""
    n = 1200
    rng = random.Random(4)
    base = set(rng.sample(range(n), 120))
    worse = base | set(rng.sample(sorted(set(range(n)) - base), 120))  # ten points worse everywhere
    result = gate(NLI, *nli_runs(n, base, worse), min_size=30)
    features = {key for t in result.tests for key in t.slice}
    assert not features & {"confidence_bin", "crowd_view"}
    assert [t.name for t in result.regressions].count("overall") == 1
    assert len([s for s in result.skipped if "confidence" in s]) == 2


def test_a_user_column_is_named_as_the_readme_names_it(tmp_path, capsys):
    n = 1200
    base_wrong, cand_wrong = degraded()
    gold_file, paths = write_nli(tmp_path, n, {"base": nli_records(n, base_wrong), "cand": nli_records(n, cand_wrong)})
    features = tmp_path / "mine.csv"
    # the user's batch column: "late" on the wikinews pairs (where the candidate broke 45), "early" elsewhere
    batches = "".join(f"klue-nli-v1_dev_{k:05d},{'late' if source_of(k) == 'wikinews' else 'early'}\n" for k in range(n))
    features.write_text("guid,batch\n" + batches, encoding="utf-8")
    markdown = tmp_path / "gate.md"
    assert main(["gate", "--task", "nli", "--gold", gold_file, "--baseline", paths["base"], "--candidate", paths["cand"], "--no-store",
                 "--features", str(features), "--markdown", str(markdown)]) == 1
    printed = capsys.readouterr().out
    text = printed + markdown.read_text(encoding="utf-8")
    assert "user:" not in text
    assert "regression: batch (your column) = late Accuracy: 77.67 -> 62.67" in printed  # 300 pairs, 45 more wrong: by hand
    assert "| batch (your column) = late | Accuracy |" in text


@pytest.mark.parametrize("resamples", ["0", "1", "2", "199"])
def test_too_few_resamples_are_refused_naming_the_minimum(tmp_path, capsys, resamples):
    n = 400
    rng = random.Random(2)
    base = set(rng.sample(range(n), 80))
    cand = balanced_flips(n, base, rng)
    gold_file, paths = write_nli(tmp_path, n, {"base": nli_records(n, base), "cand": nli_records(n, cand)})
    args = ["gate", "--task", "nli", "--gold", gold_file, "--baseline", paths["base"], "--candidate", paths["cand"], "--no-store"]
    assert main([*args, "--bootstrap", resamples]) == 2
    err = capsys.readouterr().err
    assert f"--bootstrap {resamples}" in err and "at least 200 resamples" in err
    assert minimum_resamples() == 200
    assert main([*args, "--bootstrap", "200"]) in (0, 1)


def test_an_unreachable_store_fails_the_gate_unless_told_to_go_without(tmp_path, capsys, monkeypatch):
    n = 400
    records = nli_records(n, set(range(0, n, 5)))
    gold_file, paths = write_nli(tmp_path, n, {"base": records, "cand": records})
    monkeypatch.setenv("KLUE_VIZ_DB", "postgresql://klue@127.0.0.1:1/nowhere")  # nothing listens on port 1
    args = ["gate", "--task", "nli", "--gold", gold_file, "--baseline", paths["base"], "--candidate", paths["cand"]]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "KLUE_VIZ_DB" in err and "--no-store" in err
    assert main([*args, "--no-store"]) == 0


def test_the_pull_request_comment_reads_in_a_terminal_and_renders_as_grouped_tables():
    n = 1200
    base_wrong, cand_wrong = degraded()
    baseline, candidate = nli_runs(n, base_wrong, cand_wrong)
    candidate.run = "cand | <b>x</b> @someone"
    result = gate(NLI, baseline, candidate, min_size=30)
    text = gate_markdown(result, NLI)
    lines = text.splitlines()
    table_rows = [line for line in lines if line.startswith("| ")]
    assert table_rows[1].startswith("| **overall** | Accuracy | 80.00 | 80.00 | +0.00 |")  # first, though it did not regress
    assert "| Source = wikinews | Accuracy | 77.67 | 62.67 | -15.00 |" in text and "| 300 pairs |" in text
    assert "\\=" not in text and "\\-" not in text and "\\." not in text
    html = MarkdownIt("commonmark").enable("table").render(text)
    assert "<b>x</b>" not in html and "&lt;b&gt;x&lt;/b&gt;" in html  # the run's name is text
    assert "\u2060@someone" in text  # a word joiner: no one is mentioned
    assert gate_text(result).splitlines()[1].startswith("  overall Accuracy: 80.00 -> 80.00 (+0.00")


def test_regressions_are_grouped_by_feature_worst_first_with_the_rest_folded():
    task = get_task("ner")
    sentences = [ner_sentence(k, person=k % 2 == 0) for k in range(240)]
    gold = gold_of("ner", ner_tsv(sentences))

    def run(name: str, drop_person: set[int]):
        records = [{"guid": guid, "tags": ["O" if k in drop_person and t.endswith("PS") else t for _, t in pairs]}
                   for k, (guid, pairs) in enumerate(sentences)]
        return evaluate_bytes(task, gold, jsonl(records), f"{name}.jsonl", run=name)

    result = gate(task, run("base", set()), run("cand", set(range(0, 240, 4))), min_size=30, samples=500)
    text = gate_markdown(result, task)
    assert "Entity type = PS" in text and "entities |" in text
    head, _, folded = text.partition("<details>")
    main_rows = [line for line in head.splitlines() if line.startswith("| ") and "overall" not in line and "slice" not in line]
    features = [row.split(" = ")[0].strip("| ") for row in main_rows]
    assert len(features) == len(set(features))  # one row per feature in the table, the worst of each
    assert folded and "</details>" in folded
