"""klue_viz.discovery.corrected at the edges mutation testing showed untested (docs/mutation.md): every form of a
corrections file and each refusal's words, the merge of corrected records back into the whole file (a JSON list, MRC's
questions in documents and paragraphs, NER sentence blocks), the official file a source names, version names, ranks
with ties, and rescoring (a run that fails, Kendall's tau undefined, --strict).

Expected files are written out by hand from the official text in the test; ranks and tau are counted by hand and tau
checked against scipy."""

from __future__ import annotations

import json
import re
import time
from datetime import datetime, timezone

import pytest
from scipy import stats

from klue_viz.core.problems import InputError
from klue_viz.discovery.corrected import (
    Correction,
    Rescored,
    RunInput,
    corrected_file,
    corrected_gold,
    correction_map,
    official_text,
    ranks,
    read_corrections,
    rescore,
    version_name,
)
from klue_viz.tasks import get_task
from tests.cases import gold_of, mrc, ner_tsv, nli, sts
from tests.conftest import jsonl

NLI, NER, MRC, STS = get_task("nli"), get_task("ner"), get_task("mrc"), get_task("sts")
E, N, C = "entailment", "neutral", "contradiction"


def test_correction_map_keeps_every_correction_of_a_unit_in_order():
    found = correction_map([Correction("a", "x"), Correction("b", "w"), Correction("a", "y"), Correction("a", "z", turn=1)])
    assert found == {("a", None): ["x", "y"], ("b", None): ["w"], ("a", 1): ["z"]}


def test_every_form_of_a_corrections_file():
    lines = [
        '{"guid": 7, "correction": "neutral", "turn": 2, "annotator": "kim", "note": "why", "updated_at": "2026-12-01"}',
        "",
        '{"guid": "b", "corrected_label": "x", "gold_wrong": true, "run": "gold", "annotator": null, "note": null}',
        '{"guid": "c", "corrected_label": "x", "gold_wrong": false}',  # an annotation that says the gold is right
        '{"guid": "d", "corrected_label": "y"}',  # an export record without run or gold_wrong: the gold's, wrong
        '{"guid": "e", "correction": "p", "corrected_label": "q"}',  # both: the plain field wins
        '{"guid": "f", "corrected_label": "x", "run": "bert", "gold_wrong": true}',  # a remark on a run's answer
        '{"guid": "g", "correction": 3, "turn": null}',
    ]
    data = "\ufeff" + "\n".join(lines) + "\n"
    assert read_corrections(data.encode("utf-8"), "c.jsonl") == [
        Correction("7", "neutral", 2, "kim", "why", "2026-12-01"), Correction("b", "x"), Correction("d", "y"), Correction("e", "p"),
        Correction("g", "3")]


@pytest.mark.parametrize("line, message", [
    ("[1]", "c.jsonl, line 2: expected an object with 'guid' and 'correction' (or an annotation export record)"),
    ('{"correction": "x"}', "c.jsonl, line 2: expected an object with 'guid' and 'correction' (or an annotation export record)"),
    ("{", "c.jsonl, line 2: not a JSON object"),
    ('{"guid": "g", "correction": ""}', "c.jsonl, line 2, guid g: no 'correction' (or 'corrected_label') given"),
    ('{"guid": "g", "corrected_label": null}', "c.jsonl, line 2, guid g: no 'correction' (or 'corrected_label') given"),
    ('{"guid": "g", "correction": "x", "turn": true}', "c.jsonl, line 2, guid g: turn must be a whole number or null"),
    ('{"guid": "g", "correction": "x", "turn": "1"}', "c.jsonl, line 2, guid g: turn must be a whole number or null"),
    ('{"guid": "g", "correction": "x", "turn": 1.0}', "c.jsonl, line 2, guid g: turn must be a whole number or null"),
])
def test_each_refusal_names_the_file_line_and_guid(line, message):
    with pytest.raises(InputError) as caught:
        read_corrections(f'{{"guid": "ok", "correction": "x"}}\n{line}\n'.encode(), "c.jsonl")
    assert str(caught.value) == message


@pytest.mark.parametrize("data", [b"", b"\n  \n", b'{"guid": "c", "corrected_label": "x", "gold_wrong": false}\n'])
def test_a_file_without_a_correction_is_refused(data):
    with pytest.raises(InputError, match=r"^c\.jsonl: no correction found$"):
        read_corrections(data, "c.jsonl")


def test_json_list_only_the_corrected_records_change_in_file_order_and_bad_ones_are_problems():
    records = nli([N, N, N, N])
    records[1]["premise"] = "서울은 수도다"  # Korean text stays Korean in the written file
    official = json.dumps(records, ensure_ascii=False)
    found = corrected_file(NLI, official, "n.json", [Correction("klue-nli-v1_dev_00003", E), Correction("klue-nli-v1_dev_00001", C),
                                                     Correction("klue-nli-v1_dev_00000", "bogus")])
    expected = [dict(r) for r in records]
    expected[1]["gold_label"], expected[3]["gold_label"] = C, E
    assert found.text == json.dumps(expected, ensure_ascii=False, indent=2) + "\n"
    assert found.changed == ["klue-nli-v1_dev_00001", "klue-nli-v1_dev_00003"]
    assert [(p.guid, p.file) for p in found.problems] == [("klue-nli-v1_dev_00000", "n.json")] and "'bogus'" in found.problems[0].message


def test_mrc_questions_are_replaced_inside_their_documents_and_paragraphs():
    first = mrc([["문맥"], ["문맥"]])
    second = mrc([["문맥"]])
    second["data"][0]["paragraphs"][0]["qas"][0]["guid"] = "klue-mrc-v1_dev_00009"
    second["data"][0]["paragraphs"].append({"context": "다른 문단", "qas": [{**first["data"][0]["paragraphs"][0]["qas"][1], "guid": "q-last"}]})
    official = {"version": "v1.1", "data": first["data"] + second["data"]}
    found = corrected_file(MRC, json.dumps(official, ensure_ascii=False), "m.json",
                           [Correction("q-last", "(unanswerable)"), Correction("klue-mrc-v1_dev_00001", "(unanswerable)")])
    expected = json.loads(json.dumps(official))
    for qa in (expected["data"][0]["paragraphs"][0]["qas"][1], expected["data"][1]["paragraphs"][1]["qas"][0]):
        qa.update({"answers": [], "plausible_answers": qa["answers"], "is_impossible": True, "question_type": 3})
    assert found.text == json.dumps(expected, ensure_ascii=False, indent=2) + "\n" and "문맥" in found.text
    assert found.changed == ["klue-mrc-v1_dev_00001", "q-last"]


def test_mrc_documents_without_paragraphs_or_questions_and_a_file_without_data_pass_through():
    official = mrc([["문맥"]])
    official["data"].append({"title": "no paragraphs"})
    official["data"][0]["paragraphs"].append({"context": "no questions"})
    found = corrected_file(MRC, json.dumps(official, ensure_ascii=False), "m.json", [Correction("klue-mrc-v1_dev_00000", "(unanswerable)")])
    assert found.changed == ["klue-mrc-v1_dev_00000"] and json.loads(found.text)["data"][1] == {"title": "no paragraphs"}
    assert json.loads(found.text)["data"][0]["paragraphs"][1] == {"context": "no questions"}
    with pytest.raises(InputError, match="m.json: expected the official KLUE-MRC JSON object with a 'data' list"):
        corrected_file(MRC, '{"version": "v1.1"}', "m.json", [Correction("q", "(unanswerable)")])  # every correction is checked against the gold


def test_ner_blocks_are_replaced_and_every_other_line_kept():
    official = ner_tsv([("g0", list(zip("가나", ["O", "O"]))), ("g1", list(zip("다라마", ["O", "O", "O"]))),
                        ("g2", list(zip("바사", ["B-PS", "I-PS"])))])
    found = corrected_file(NER, official, "x.tsv", [Correction("g2", "0-1:LC"), Correction("g1", "1-3:OG")])
    assert found.text == ("## 칼럼명 : CHAR\tNE_TAG\n## g0\t가나\n가\tO\n나\tO\n\n"
                          "## g1\t다<라마:OG>\n다\tO\n라\tB-OG\n마\tI-OG\n\n"
                          "## g2\t<바:LC>사\n바\tB-LC\n사\tO\n\n")
    assert found.changed == ["g1", "g2"]
    gold, written = corrected_gold(NER, official, "klue-ner-v1.1_dev.tsv", [Correction("g1", "1-3:OG")])
    assert written.changed == ["g1"] and [r["guid"] for r in gold.rows] == ["g0", "g1", "g2"] and gold.source == "klue-ner-v1.1_dev.tsv"
    _, refused = corrected_gold(NER, official, "klue-ner-v1.1_dev.tsv", [Correction("g1", "9-12:OG")])
    assert [(p.guid, p.file) for p in refused.problems] == [("g1", "klue-ner-v1.1_dev.tsv")]


def test_a_guid_line_without_a_tab_or_with_a_space_is_not_a_sentence_header():
    """Only `## <guid>\\t<text>` starts a sentence; `## note` and `## two words\\t...` lines pass through (before the
    sentences, where the gold reader, which every correction is checked against, passes over them too)."""
    official = ner_tsv([("g0", list(zip("가나", ["O", "O"])))]).replace("## g0\t가나", "## note\n## g0 x\t가\n\n## g0\t가나")
    found = corrected_file(NER, official, "x.tsv", [Correction("g0", "0-1:PS")])
    assert found.text == "## 칼럼명 : CHAR\tNE_TAG\n## note\n## g0 x\t가\n\n## g0\t<가:PS>나\n가\tB-PS\n나\tO\n\n" and found.changed == ["g0"]


def test_the_official_file_a_source_names(tmp_path):
    path = tmp_path / "klue-nli-v1.1_dev.json"
    path.write_bytes("\ufeff[]".encode())
    assert official_text(NLI, path) == ("[]", "klue-nli-v1.1_dev.json")
    assert official_text(NLI, str(path)) == ("[]", "klue-nli-v1.1_dev.json")
    folder = tmp_path / "klue_benchmark" / "klue-nli-v1.1"
    folder.mkdir(parents=True)
    (folder / "klue-nli-v1.1_dev.json").write_text("[{}]", encoding="utf-8")
    assert official_text(NLI, tmp_path / "klue_benchmark") == ("[{}]", "klue-nli-v1.1_dev.json")
    bad = tmp_path / "bad" / "klue-nli-v1.1_dev.json"
    bad.parent.mkdir()
    bad.write_bytes(b"\xff\xfe\xfa\x00\x81")
    with pytest.raises(InputError, match=f"^{re.escape(str(bad))}: not UTF-8"):
        official_text(NLI, bad)
    for source in ("hf", "hf:klue/klue"):
        with pytest.raises(InputError) as caught:
            official_text(NLI, source)
        assert str(caught.value) == ("corrections apply to an official file; give --gold path/to/klue-nli-v1.1_dev.json "
                                     "or a klue_benchmark/ folder instead of the Hugging Face hub")


def test_version_names():
    day = datetime(2026, 12, 3, 23, 59, tzinfo=timezone.utc)
    assert version_name("dev", 1, day) == "dev + corrections, 1 record, 2026-12-03"
    assert version_name("dev v2", 17, day) == "dev v2 + corrections, 17 records, 2026-12-03"
    assert version_name("dev", 0, day) == "dev + corrections, 0 records, 2026-12-03"
    before, named, after = datetime.now(timezone.utc), version_name("dev", 2), datetime.now(timezone.utc)
    assert named.removeprefix("dev + corrections, 2 records, ") in {before.strftime("%Y-%m-%d"), after.strftime("%Y-%m-%d")}


@pytest.mark.parametrize("zone", ["Etc/GMT+12", "Etc/GMT-14"])
def test_the_default_date_is_utc_whatever_the_local_time_zone(zone, monkeypatch):
    """UTC-12 and UTC+14: at any hour the local date differs from the UTC date in at least one of the two."""
    monkeypatch.setenv("TZ", zone)
    time.tzset()
    try:
        before = datetime.now(timezone.utc).strftime("%Y-%m-%d")
        named = version_name("dev", 1)
        after = datetime.now(timezone.utc).strftime("%Y-%m-%d")
    finally:
        monkeypatch.undo()
        time.tzset()
    assert named.removeprefix("dev + corrections, 1 record, ") in {before, after}


def test_competition_ranks():
    assert ranks([80.0, 90.0, 90.0, None, 70.0]) == [3, 1, 1, None, 4]
    assert ranks([]) == [] and ranks([None]) == [None] and ranks([5.0]) == [1]


def run(name, labels, missing=()):
    return RunInput(name, f"{name}.jsonl", jsonl({"guid": f"klue-nli-v1_dev_{k:05d}", "label": label} for k, label in enumerate(labels)
                                                 if k not in missing))


def test_rescore_lists_a_failing_run_and_leaves_tau_undefined_when_it_cannot_be_computed():
    before, after = gold_of("nli", nli([E, N, C, E])), gold_of("nli", nli([E, N, C, N]))
    broken = RunInput("broken", "broken.jsonl", b'{"guid": "nobody", "label": "entailment"}\n')
    found = rescore(NLI, before, after, [broken, run("a", [E, N, C, E])])
    assert list(found.failures) == ["broken"] and "nobody" in found.failures["broken"]
    assert found.kendall_tau is None and [r["run"] for r in found.rows] == ["a"]  # one run: no ordering to compare
    assert found.rows[0]["before"]["accuracy"] == 100.0 and found.rows[0]["after"]["accuracy"] == 75.0
    assert found.rows[0]["change"] == {"accuracy": -25.0}
    tied = rescore(NLI, before, after, [run("a", [E, N, C, E]), run("b", [E, N, C, E])])  # both sides constant: NaN -> None
    assert tied.kendall_tau is None and [(r["rank_before"], r["rank_after"]) for r in tied.rows] == [(1, 1), (1, 1)]
    assert Rescored("accuracy", [], None, {"x": "y"}).to_dict() == {"metric": "accuracy", "runs": [], "kendall_tau": None, "failed": {"x": "y"}}


def test_a_metric_undefined_on_one_gold_has_no_change():
    """STS F1 is undefined while neither gold nor run has a positive pair (score >= 3); the correction makes one positive."""
    before, after = gold_of("sts", sts([1.0, 2.0, 2.5])), gold_of("sts", sts([1.0, 2.0, 3.5]))
    data = jsonl({"guid": f"klue-sts-v1_dev_{k:05d}", "score": s} for k, s in enumerate([1.0, 2.0, 2.4]))
    [row] = rescore(STS, before, after, [RunInput("r", "r.jsonl", data)]).rows
    assert row["before"]["f1"] is None and row["after"]["f1"] == 0.0 and row["change"]["f1"] is None
    assert row["change"]["pearsonr"] == pytest.approx(100 * (stats.pearsonr([1, 2, 3.5], [1, 2, 2.4]).statistic - stats.pearsonr([1, 2, 2.5], [1, 2, 2.4]).statistic))


def test_rescore_ranks_tau_and_strict():
    """Gold before E N C E, after E N C N. Runs: a = E N C E (100 -> 75), b = E N C N (75 -> 100), c = E E E N (25 -> 50).
    Before a > b > c, after b > a > c: pairs (a, b) discordant, (a, c) and (b, c) concordant: tau = (2 - 1) / 3."""
    before, after = gold_of("nli", nli([E, N, C, E])), gold_of("nli", nli([E, N, C, N]))
    found = rescore(NLI, before, after, [run("a", [E, N, C, E]), run("b", [E, N, C, N]), run("c", [E, E, E, N])])
    assert found.metric == "accuracy"
    assert [(r["run"], r["rank_before"], r["rank_after"]) for r in found.rows] == [("a", 1, 2), ("b", 2, 1), ("c", 3, 3)]
    assert [r["change"]["accuracy"] for r in found.rows] == [-25.0, 25.0, 25.0]
    assert found.kendall_tau == pytest.approx(1 / 3) and found.kendall_tau == pytest.approx(stats.kendalltau([100, 75, 25], [75, 100, 50]).statistic)
    # --strict: the missing pair 3 is a miss; without it the run is scored on the three pairs it gave
    lenient = rescore(NLI, before, after, [run("d", [E, N, C], missing=(3,))])
    strict = rescore(NLI, before, after, [run("d", [E, N, C], missing=(3,))], strict=True)
    assert lenient.rows[0]["before"]["accuracy"] == 100.0 and strict.rows[0]["before"]["accuracy"] == 75.0
    assert lenient.rows[0]["after"]["accuracy"] == 100.0 and strict.rows[0]["after"]["accuracy"] == 75.0
    named = rescore(NLI, before, after, [RunInput("model A", "preds.jsonl", run("x", [E, N, C, E]).data)])
    assert named.rows[0]["run"] == "model A"


def test_tau_leaves_out_runs_whose_metric_is_undefined_on_either_gold():
    """Constant gold scores before: Pearson r undefined for every run, so no pair and no tau (after: +-86.6)."""
    before, after = gold_of("sts", sts([2.0, 2.0, 2.0])), gold_of("sts", sts([2.0, 2.0, 4.0]))
    runs = [RunInput(n, f"{n}.jsonl", jsonl({"guid": f"klue-sts-v1_dev_{k:05d}", "score": s} for k, s in enumerate(v)))
            for n, v in (("a", [1.0, 2.0, 3.0]), ("b", [3.0, 2.0, 1.0]))]
    found = rescore(STS, before, after, runs)
    assert [(r["before"]["pearsonr"], r["rank_before"], r["rank_after"]) for r in found.rows] == [(None, None, 1), (None, None, 2)]
    assert found.rows[0]["after"]["pearsonr"] == pytest.approx(100 * stats.pearsonr([2, 2, 4], [1, 2, 3]).statistic)
    assert found.kendall_tau is None
