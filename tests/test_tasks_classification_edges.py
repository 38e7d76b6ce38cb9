"""The single-label tasks' shared code (tasks/classification.py), piece by piece on inputs made by hand (issue 14's
mutation run: each test pins what a survivor showed untested; expected values by hand, from cleanlab or sklearn)."""

from __future__ import annotations

import json
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from cleanlab.filter import find_label_issues
from sklearn.metrics import f1_score

from klue_viz.core.problems import InputError
from klue_viz.core.results import Frames
from klue_viz.discovery.patch import make_patch
from klue_viz.drawing import markup as mk
from klue_viz.metrics.official import scalar
from klue_viz.reading.answers import UNREADABLE
from klue_viz.scoring.evaluate import evaluate_bytes
from klue_viz.tasks import classification, get_task
from klue_viz.tasks.base import RecordError
from klue_viz.tasks.kit import confidence_bucket
from tests.cases import gold_of, nli
from tests.conftest import jsonl

NLI = ("entailment", "neutral", "contradiction")


def _refusal(call) -> str:
    with pytest.raises(RecordError) as err:
        call()
    return str(err.value)


# ---- label names, ids and probabilities -----------------------------------------------------------


def test_label_of_names_ids_and_each_refusal():
    task = get_task("nli")
    assert task.label_of(" neutral ") == "neutral" and task.label_of(2) == "contradiction" and task.label_of(" 1 ") == "neutral"
    assert task.label_of(0.0) == "entailment"
    assert _refusal(lambda: task.label_of(3)) == "label id 3 is outside 0..2 (KLUE-NLI has 3 labels)"
    assert _refusal(lambda: task.label_of("-1", "gold label")) == "gold label id -1 is outside 0..2 (KLUE-NLI has 3 labels)"
    assert _refusal(lambda: task.label_of(1.5)) == "label must be an integer, found 1.5"
    assert _refusal(lambda: task.label_of("X1")) == (
        "label 'X1' is not a NLI label (expected one of: entailment, neutral, contradiction, or an integer id)")
    assert _refusal(lambda: task.label_of("1-")) == (
        "label '1-' is not a NLI label (expected one of: entailment, neutral, contradiction, or an integer id)")
    re_labels = get_task("re").labels  # 30 relations: the first eight are shown
    assert _refusal(lambda: get_task("re").label_of("friend")) == (
        f"label 'friend' is not a RE label (expected one of: {', '.join(re_labels[:8])}, ..., or an integer id)")
    ynat_labels = get_task("ynat").labels  # seven topics: all shown
    assert _refusal(lambda: get_task("ynat").label_of("날씨")) == (
        f"label '날씨' is not a YNAT label (expected one of: {', '.join(ynat_labels)}, or an integer id)")


def test_probs_of_lists_objects_json_text_and_each_refusal():
    task = get_task("nli")
    expected = "probs must be a list of 3 numbers (Hugging Face label order) or a label->probability object"
    assert task.probs_of("[0.1, 0.2, 0.7]") == [0.1, 0.2, 0.7]
    assert task.probs_of('{"contradiction": 0.75, "0": 0.25}') == [0.25, 0.0, 0.75]
    assert task.probs_of([1, "0.5", 0]) == [1.0, 0.5, 0.0]
    assert _refusal(lambda: task.probs_of("[0.1, 0.2")) == expected
    assert _refusal(lambda: task.probs_of([0.1, 0.2])) == expected
    assert _refusal(lambda: task.probs_of([True, 0.0, 0.0])) == expected
    assert _refusal(lambda: task.probs_of([None, 0.0, 0.0])) == expected
    assert _refusal(lambda: task.probs_of(["high", 0.0, 0.0])) == expected
    assert _refusal(lambda: task.probs_of({"neutral": "high"})) == expected
    assert _refusal(lambda: task.probs_of({"maybe": 0.5})) == (
        "probs key 'maybe' is not a NLI label (expected one of: entailment, neutral, contradiction, or an integer id)")
    assert _refusal(lambda: task.probs_of([0.5, "nan", 0.5])) == "probs must be finite numbers; found nan for 'neutral'"
    assert _refusal(lambda: task.probs_of([0.5, "nan", "inf"])) == "probs must be finite numbers; found nan for 'neutral' and 1 more"
    assert _refusal(lambda: get_task("ynat").probs_of(["inf"] * 4 + [0.0] * 3)) == (
        "probs must be finite numbers; found inf for 'IT과학' and 3 more")


def test_parse_prediction_label_probs_and_the_missing_label():
    task = get_task("nli")
    assert task.parse_prediction({"label": "neutral", "probs": ""}, {}) == {"label": "neutral", "probs": None}
    assert task.parse_prediction({"label": "", "probs": [0.2, 0.1, 0.7]}, {}) == {"label": "contradiction", "probs": [0.2, 0.1, 0.7]}
    assert task.parse_prediction({"probs": [0.6, 0.3, 0.1]}, {}) == {"label": "entailment", "probs": [0.6, 0.3, 0.1]}
    assert _refusal(lambda: task.parse_prediction({"label": "", "probs": ""}, {})) == (
        "missing field 'label' (the predicted label name or id)")


# ---- gold reading ----------------------------------------------------------------------------------


def test_official_json_refusals_name_the_record_guid_and_file():
    task = get_task("nli")
    good = nli(["entailment"])[0]
    bad = {**good, "guid": "klue-nli-v1_dev_00009", "gold_label": "maybe"}
    rows, problems = task.read_official_json([good, bad, ["not", "a", "record"]], "dev.json")
    assert [r["guid"] for r in rows] == ["klue-nli-v1_dev_00000"]
    assert [(p.guid, p.file) for p in problems] == [("klue-nli-v1_dev_00009", "dev.json"), (None, "dev.json")]
    assert problems[0].message == ("gold record #2: gold label 'maybe' is not a NLI label "
                                   "(expected one of: entailment, neutral, contradiction, or an integer id)")
    assert problems[1].message == "gold record #3: not a JSON object (expected one example's fields)"
    with pytest.raises(InputError) as err:
        task.read_official_json({"guid": "x"}, "dev.json")
    assert str(err.value) == "dev.json: expected the official KLUE-NLI JSON list of examples"


def test_hugging_face_rows_and_their_refusals():
    task = get_task("nli")
    records = [{"guid": "a", "source": "wiki", "premise": "p", "hypothesis": "h", "label": 2},
               {"guid": "b", "premise": "p", "hypothesis": "h", "label": 7},
               {"guid": "c", "premise": "p", "label": 0}]
    rows, problems = task.rows_from_hf(iter(records))
    assert [(r["guid"], r["gold"], r["source"]) for r in rows] == [("a", "contradiction", "wiki")]
    assert [(p.guid, p.message) for p in problems] == [("b", "gold record #2: gold label id 7 is outside 0..2 (KLUE-NLI has 3 labels)"),
                                                        ("c", "gold record #3: missing field 'hypothesis'")]


# ---- frames, codes, statistics ------------------------------------------------------------------


def _nli_run(strict: bool = True):
    """Four NLI pairs, gold entailment, neutral, contradiction, neutral; the run: right with probabilities, wrong
    without, wrong with probabilities, and no answer for the last (scored as missing under --strict)."""
    task = get_task("nli")
    gold = gold_of("nli", nli(["entailment", "neutral", "contradiction", "neutral"]))
    guids = [r["guid"] for r in gold.rows]
    records = [{"guid": guids[0], "label": "entailment", "probs": [0.5, 0.25, 0.25]},
               {"guid": guids[1], "label": "contradiction"},
               {"guid": guids[2], "label": "neutral", "probs": [0.125, 0.625, 0.25]}]
    return task, evaluate_bytes(task, gold, jsonl(records), "run.jsonl", strict=strict)


def test_the_classification_frame_by_hand():
    task, run = _nli_run()
    ex = run.frames.examples
    assert str(ex["pred"].dtype) == "string"
    assert ex["pred"].isna().tolist() == [False, False, False, True]
    assert ex["correct"].tolist() == [True, False, False, False] and ex["correct"].dtype == bool
    assert ex["error_type"].tolist() == ["correct", "neutral → contradiction", "contradiction → neutral", "neutral → (none)"]
    assert ex["confidence"].iloc[0] == 0.5 and ex["confidence"].iloc[2] == 0.625
    assert ex["confidence"].isna().tolist() == [False, True, False, True]
    assert ex["gold_prob"].iloc[0] == 0.5 and ex["gold_prob"].iloc[2] == 0.25 and ex["gold_prob"].isna().tolist() == [False, True, False, True]
    assert ex["confidence_bin"].tolist() == confidence_bucket(pd.Series([0.5, np.nan, 0.625, np.nan])).tolist()
    confusion = task.confusion(run.frames)
    assert list(confusion.columns) == ["guid", "gold", "pred"]
    assert confusion["pred"].tolist() == ["entailment", "contradiction", "neutral", "(none)"]


def test_class_codes_and_the_columns_the_statistics_read():
    task, run = _nli_run()
    gold, pred = task.class_codes(run.frames)
    assert gold.tolist() == [0, 1, 2, 1] and pred.tolist() == [0, 2, 1, -1]
    assert gold.dtype == np.int64 and pred.dtype == np.int64
    assert task.statistics_columns() == {"examples": ("gold", "pred", "probs")}
    only = Frames(run.frames.examples[list(task.statistics_columns()["examples"])])  # the declared columns are enough
    assert scalar(task.statistics(only), "accuracy") == 25.0  # percent: 1 of 4


def test_row_statistics_score_an_unreadable_answer_as_wrong():
    task = get_task("ynat")
    gold = ["IT과학", "경제", "사회", "경제", "정치"]
    pred = ["IT과학", UNREADABLE, "사회", "사회", "정치"]
    stats = task.row_statistics([{"gold": g} for g in gold], [{"label": p, "probs": None} for p in pred])
    present = sorted(set(gold) | {p for p in pred if p in task.labels})
    expected = f1_score(gold, pred, labels=present, average="macro")
    assert scalar(stats, "macro_f1") == pytest.approx(100 * expected)


# ---- drawing ---------------------------------------------------------------------------------------


def test_probs_row_lists_the_most_probable_labels():
    task = get_task("nli")
    assert task.probs_row(None, 2) == ""
    # most probable first (not in label or name order)
    assert task.probs_row([0.2, 0.75, 0.05], 2) == ('<div class="kv-row"><span class="kv-side">probs</span>'
                                                    '<span class="kv-kv">neutral 0.75 · entailment 0.20</span></div>')


def test_label_rows_badges_and_votes():
    task = get_task("nli")
    right = pd.Series({"gold": "neutral", "pred": "neutral", "correct": True, "votes": ["neutral", "entailment"], "agreement": "1/2 agree"})
    assert task.label_rows(right) == (mk.row("gold", mk.badge("neutral", "correct")) + mk.row("pred", mk.badge("neutral", "correct"))
                                      + mk.row("votes", '<span class="kv-kv">neutral, entailment (1/2 agree)</span>'))
    missing = pd.Series({"gold": "neutral", "pred": pd.NA, "correct": False, "votes": [], "agreement": "(no votes)"})
    assert task.label_rows(missing) == mk.row("gold", mk.badge("neutral", "correct")) + mk.row("pred", mk.badge("(none)", "wrong"))
    assert mk.badge("x", "correct") != mk.badge("x", "wrong")


# ---- discovery: suspects and the patch ---------------------------------------------------------------


def _runs(task, gold, answers: list[list[str]], probs: list[list[list[float]]] | None = None) -> list:
    guids = [r["guid"] for r in gold.rows]
    out = []
    for k, labels in enumerate(answers):
        records = [{"guid": g, "label": label, **({"probs": probs[k][j]} if probs else {})} for j, (g, label) in enumerate(zip(guids, labels))]
        out.append(evaluate_bytes(task, gold, jsonl(records), f"run{k}.jsonl"))
    return out


def _found(task, runs) -> dict[str, tuple[str, int, int]]:
    return {s.guid[-1]: (s.proposed, s.evidence.agreeing, s.evidence.of) for s in task.find_suspects(runs)}


def test_how_many_runs_must_agree():
    task = get_task("nli")
    gold = gold_of("nli", nli(["entailment"] * 4))
    e, n, c = NLI
    # one run: its every wrong answer
    assert _found(task, _runs(task, gold, [[e, n, e, c]])) == {"1": (n, 1, 1), "3": (c, 1, 1)}
    # two runs: both, with the same answer
    assert _found(task, _runs(task, gold, [[e, n, n, c], [e, e, n, n]])) == {"2": (n, 2, 2)}
    # four runs: two agreeing are enough (half), one is not; the gold's own votes are no proposal
    four = [[e, n, e, n], [e, n, e, n], [e, e, e, c], [e, e, c, e]]
    assert _found(task, _runs(task, gold, four)) == {"1": (n, 2, 4), "3": (n, 2, 4)}
    # five runs: more than half must agree (three); two are not enough
    five = [[n, n, e, e], [n, n, e, e], [e, n, e, e], [e, c, e, e], [e, c, e, e]]
    assert _found(task, _runs(task, gold, five)) == {"1": (n, 3, 5)}
    # three runs, two right: the one wrong answer is no suspect
    assert _found(task, _runs(task, gold, [[n, e, e, e], [e, e, e, e], [e, e, e, e]])) == {}


def test_a_suspect_without_probabilities_scores_one_per_agreeing_run():
    task = get_task("nli")
    gold = gold_of("nli", nli(["entailment", "entailment", "neutral"]))
    runs = _runs(task, gold, [["entailment", "neutral", "neutral"], ["entailment", "neutral", "contradiction"],
                              ["entailment", "neutral", "contradiction"]])
    found = task.find_suspects(runs)
    assert [(s.guid, s.unit, s.gold, s.proposed, s.score) for s in found] == [
        ("klue-nli-v1_dev_00001", "label", "entailment", "neutral", 3.0), ("klue-nli-v1_dev_00002", "label", "neutral", "contradiction", 2.0)]
    second = found[1].evidence
    assert (second.agreeing, second.of) == (2, 3) and second.extra == {}
    assert dict(second.runs) == {"run0": {"label": "neutral"}, "run1": {"label": "contradiction"}, "run2": {"label": "contradiction"}}


def _probability_runs():
    """Four NLI pairs (gold e, e, n, c), two runs with probabilities (one of them summing 1.01: read scaled to sum 1)."""
    task = get_task("nli")
    gold = gold_of("nli", nli(["entailment", "entailment", "neutral", "contradiction"]))
    a = [[0.1, 0.2, 0.7], [0.6, 0.3, 0.1], [0.2, 0.7, 0.1], [0.1, 0.1, 0.8]]
    b = [[0.31, 0.1, 0.6], [0.1, 0.81, 0.1], [0.1, 0.81, 0.1], [0.0, 0.1, 0.91]]  # sums 1.01
    answers = [[NLI[int(np.argmax(p))] for p in run] for run in (a, b)]
    return task, gold, a, b, _runs(task, gold, answers, [a, b])


def test_cleanlab_scores_come_from_the_mean_of_each_runs_normalised_probabilities(monkeypatch):
    task, gold, a, b, runs = _probability_runs()
    # each run's rows scaled to sum 1 first (b's rows sum 1.01; a 0 becomes 1e-6), then the two runs averaged
    rows_a = np.clip(np.array(a), 1e-6, None)
    rows_b = np.clip(np.array(b), 1e-6, None)
    mean = (rows_a / rows_a.sum(axis=1, keepdims=True) + rows_b / rows_b.sum(axis=1, keepdims=True)) / 2
    assert mean[0, 0] == pytest.approx((0.1 + 0.31 / 1.01) / 2)  # first pair, p(entailment): a 0.1, b 0.31 of 1.01
    assert mean.sum(axis=1) == pytest.approx(np.ones(4))
    labels = np.array([0, 0, 1, 2])
    calls = []
    real = find_label_issues

    def spy(*args, **kwargs):
        calls.append(kwargs)
        return real(*args, **kwargs)

    monkeypatch.setattr(classification, "cleanlab_filter", SimpleNamespace(find_label_issues=spy))
    found = task.find_suspects(runs)
    assert calls == [{"n_jobs": 1}]  # never a process pool inside the server
    flagged = real(labels, mean, n_jobs=1)
    assert [s.guid[-1] for s in found] == ["0"]
    only = found[0]
    assert only.evidence.extra["cleanlab"]["label_quality"] == pytest.approx(mean[0, 0])  # self-confidence: p(gold)
    assert only.evidence.extra["cleanlab"]["flagged"] == bool(flagged[0])
    assert only.score == pytest.approx(0.7 + 0.6 / 1.01 + 1 - mean[0, 0])
    assert dict(only.evidence.runs) == {
        "run0": {"label": "contradiction", "confidence": 0.7, "p_gold": 0.1, "p_proposed": 0.7},
        "run1": {"label": "contradiction", "confidence": pytest.approx(0.6 / 1.01), "p_gold": pytest.approx(0.31 / 1.01),
                 "p_proposed": pytest.approx(0.6 / 1.01)}}


def test_a_zero_probability_is_clipped_and_two_examples_are_enough():
    task = get_task("nli")
    gold = gold_of("nli", nli(["entailment", "neutral"]))
    runs = _runs(task, gold, [["contradiction", "neutral"]], [[[0.0, 0.25, 0.75], [0.25, 0.5, 0.25]]])
    found = task.find_suspects(runs)
    quality = found[0].evidence.extra["cleanlab"]["label_quality"]
    assert quality == pytest.approx(1e-6 / (1 + 1e-6)) and quality > 0
    assert found[0].evidence.extra["cleanlab"]["flagged"] in (True, False)


def test_too_few_examples_per_class_flag_nothing(monkeypatch):
    task = get_task("nli")
    gold = gold_of("nli", nli(["entailment", "neutral", "contradiction"]))
    runs = _runs(task, gold, [["neutral", "neutral", "contradiction"]], [[[0.2, 0.7, 0.1], [0.1, 0.8, 0.1], [0.1, 0.1, 0.8]]])

    def refuse(*args, **kwargs):
        raise ValueError("not enough examples")

    monkeypatch.setattr(classification, "cleanlab_filter", SimpleNamespace(find_label_issues=refuse))
    found = task.find_suspects(runs)
    assert found[0].evidence.extra["cleanlab"] == {"label_quality": pytest.approx(0.2), "flagged": False}


def test_cleanlab_reads_only_the_runs_that_gave_probabilities():
    task = get_task("nli")
    gold = gold_of("nli", nli(["entailment", "neutral", "contradiction"]))
    guids = [r["guid"] for r in gold.rows]
    with_probs = jsonl([{"guid": g, "label": "neutral", "probs": [0.2, 0.6, 0.2]} for g in guids])
    without = jsonl([{"guid": g, "label": "neutral"} for g in guids])
    runs = [evaluate_bytes(task, gold, with_probs, "a.jsonl"), evaluate_bytes(task, gold, without, "b.jsonl")]
    found = task.find_suspects(runs)
    assert [s.guid[-1] for s in found] == ["0", "2"]
    assert [s.evidence.extra["cleanlab"]["label_quality"] for s in found] == [pytest.approx(0.2), pytest.approx(0.2)]
    assert found[0].score == pytest.approx(0.6 + 1.0 + 1 - 0.2)  # run a's p(proposed), 1 for run b, 1 - label quality
    assert dict(found[0].evidence.runs) == {"a": {"label": "neutral", "confidence": 0.6, "p_gold": 0.2, "p_proposed": 0.6},
                                            "b": {"label": "neutral"}}


def test_the_label_patch_writes_the_last_correction_and_names_a_bad_one():
    task = get_task("nli")
    records = nli(["entailment", "neutral", "contradiction"])
    corrections = {("klue-nli-v1_dev_00002", None): ["neutral", "contradiction; "], ("klue-nli-v1_dev_00000", None): ["maybe"],
                   ("klue-nli-v1_dev_00009", None): ["neutral"]}
    patch = make_patch(task, json.dumps(records, ensure_ascii=False), "dev.json", corrections)
    assert patch.records == 1  # a bad correction of the first record does not stop the ones after it
    assert json.loads(patch.text) == [{**records[2], "gold_label": "contradiction"}]
    assert [(p.guid, p.file, p.message) for p in patch.problems] == [
        ("klue-nli-v1_dev_00000", "dev.json",
         "corrected label 'maybe' is not a NLI label (expected one of: entailment, neutral, contradiction, or an integer id)")]
    assert make_patch(task, json.dumps(records), "dev.json", {}).records == 0


def test_a_run_without_an_answer_is_listed_with_no_label():
    task = get_task("nli")
    gold = gold_of("nli", nli(["entailment", "entailment"]))
    guids = [r["guid"] for r in gold.rows]
    both = jsonl([{"guid": g, "label": "neutral"} for g in guids])
    first_only = jsonl([{"guid": guids[1], "label": "neutral"}])
    runs = [evaluate_bytes(task, gold, data, name, strict=True) for data, name in ((both, "a.jsonl"), (both, "b.jsonl"), (first_only, "c.jsonl"))]
    found = task.find_suspects(runs)
    assert [(s.guid[-1], s.evidence.agreeing) for s in found] == [("0", 2), ("1", 3)]
    assert dict(found[0].evidence.runs) == {"a": {"label": "neutral"}, "b": {"label": "neutral"}, "c": {"label": None}}


def test_the_vote_cross_entropy_of_a_gold_with_votes():
    task = get_task("nli")
    records = nli(["entailment", "neutral"])
    votes = {"author": "entailment", "label2": "entailment", "label3": "neutral", "label4": "entailment", "label5": "contradiction"}
    records[0].update(votes)
    gold = gold_of("nli", records)
    run = evaluate_bytes(task, gold, jsonl([{"guid": records[0]["guid"], "label": "entailment", "probs": [0.5, 0.25, 0.25]},
                                            {"guid": records[1]["guid"], "label": "neutral"}]), "run.jsonl")
    values = run.frames.examples["vote_cross_entropy"]
    # vote shares 3/5, 1/5, 1/5 against 1/2, 1/4, 1/4: -(0.6 ln 0.5 + 0.4 ln 0.25) = 1.4 ln 2; no probabilities: NaN
    assert values.iloc[0] == pytest.approx(1.4 * np.log(2)) and np.isnan(values.iloc[1])


def test_cleanlab_flags_a_label_the_runs_contradict_with_confidence():
    task = get_task("nli")
    gold = gold_of("nli", nli(["entailment"] * 3 + ["neutral"] * 3 + ["contradiction"] * 3))
    probs = [[0.8, 0.1, 0.1]] * 3 + [[0.1, 0.8, 0.1]] * 3 + [[0.1, 0.1, 0.8]] * 3
    probs[0] = [0.05, 0.05, 0.9]  # the runs are sure the first pair is a contradiction
    answers = [NLI[int(np.argmax(p))] for p in probs]
    labels = np.array([0] * 3 + [1] * 3 + [2] * 3)
    assert find_label_issues(labels, np.array(probs), n_jobs=1).tolist() == [True] + [False] * 8  # cleanlab's own verdict
    found = task.find_suspects(_runs(task, gold, [answers, answers], [probs, probs]))
    assert [s.guid[-1] for s in found] == ["0"]
    assert found[0].evidence.extra["cleanlab"] == {"label_quality": pytest.approx(0.05), "flagged": True}


def test_a_patch_of_a_file_that_is_not_json_names_the_file():
    with pytest.raises(InputError) as err:
        make_patch(get_task("nli"), '[{"guid": ', "klue-nli-v1.1_dev.json", {("x", None): ["neutral"]})
    assert str(err.value).startswith("klue-nli-v1.1_dev.json: invalid JSON at line 1: ")
