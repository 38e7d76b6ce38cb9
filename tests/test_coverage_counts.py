"""Coverage counts (scored, missing, extra, unreadable) on crafted prediction files, in the result and the CLI output."""

from __future__ import annotations

import json

from klue_viz.cli.main import main
from klue_viz.scoring.evaluate import evaluate_bytes
from klue_viz.tasks import get_task
from tests import cases

GOLD = cases.nli(["entailment", "neutral", "contradiction", "neutral", "entailment"])
GOOD = [
    '{"guid": "klue-nli-v1_dev_00000", "label": "entailment"}',  # right
    '{"guid": "klue-nli-v1_dev_00001", "label": "contradiction"}',  # wrong
]
EXTRA = '{"guid": "klue-nli-v1_dev_00099", "label": "neutral"}'
BAD_LABEL = '{"guid": "klue-nli-v1_dev_00002", "label": "maybe"}'
DUPLICATE = '{"guid": "klue-nli-v1_dev_00000", "label": "neutral"}'
NO_GUID = '{"label": "neutral"}'
NOT_JSON = '{not json'


def evaluate(lines, strict=False):
    return evaluate_bytes(get_task("nli"), cases.gold_of("nli", GOLD), "\n".join(lines).encode("utf-8"), "p.jsonl", strict=strict)


def test_scored_missing_extra_and_unusable_records_are_counted():
    result = evaluate([*GOOD, EXTRA, BAD_LABEL, DUPLICATE, NO_GUID])
    c = result.coverage
    # 2 scored (guids 0, 1); missing: 2 (bad label), 3, 4; extra: 00099; unreadable: bad label, no guid; one duplicate.
    assert (c.n_gold, c.n_scored, c.n_missing, c.n_extra, c.n_invalid) == (5, 2, 3, 1, 2)
    assert "1 duplicate line(s) of a guid given before were left out (the first line of each guid is used)" in result.notes
    assert result.extra_guids == ["klue-nli-v1_dev_00099"]
    assert result.scores.values["accuracy"] == 50.0  # the duplicate line does not replace the first one
    lines = sorted(p.line for p in result.problems)
    assert lines == [4, 5, 6]
    strict = evaluate([*GOOD, EXTRA, BAD_LABEL, DUPLICATE, NO_GUID], strict=True)
    assert (strict.coverage.n_scored, strict.coverage.n_missing) == (5, 3)
    assert strict.scores.values["accuracy"] == 20.0  # 1 right of 5


def test_a_line_that_is_not_json_counts_as_unreadable():
    result = evaluate([*GOOD, NOT_JSON, NO_GUID])
    assert result.coverage.n_invalid == 2
    assert result.coverage.n_scored == 2


def test_cli_prints_and_writes_the_counts(tmp_path, capsys):
    gold = tmp_path / "klue-nli-v1.1_dev.json"
    gold.write_text(json.dumps(GOLD, ensure_ascii=False), encoding="utf-8")
    pred = tmp_path / "p.jsonl"
    pred.write_text("\n".join([*GOOD, EXTRA, BAD_LABEL, DUPLICATE, NO_GUID]), encoding="utf-8")
    out = tmp_path / "out.json"
    assert main(["evaluate", "--task", "nli", "--gold", str(gold), "--pred", str(pred), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "coverage: 2/5 gold scored, 3 missing, 1 extra, 2 records left out" in printed and "note: 1 duplicate line(s)" in printed
    run = json.loads(out.read_text(encoding="utf-8"))["runs"][0]
    assert run["coverage"] == {"n_gold": 5, "n_scored": 2, "n_missing": 3, "n_extra": 1, "n_invalid": 2, "unreadable_answers": 0}
    assert run["metrics"] == {"accuracy": 50.0}
