"""The readers of klue_viz/reading/harness/ at the edges their mutants showed untested (issue 31, docs/mutation.md):
every field each reader takes from a row, sample or detail and what it does with a missing, empty or odd one, each
refusal's words, the converted file's first line and its reading back, and how a format is told from its first line.

Each test writes its log here (lm-evaluation-harness rows, Every Eval Ever instances, Inspect AI JSON logs and
`.eval` zips, lighteval Parquet details, with the fields those tools write) and the records it expects, by hand."""

from __future__ import annotations

import io
import json
import zipfile

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from klue_viz.core.problems import InputError, Problem
from klue_viz.reading.harness import every_eval_ever, inspect_logs, lighteval, lm_eval
from klue_viz.reading.harness.formats import Format, HarnessLog, LogFile, converted, guid_of, stem, top_level_keys


def lines(data: bytes) -> list[dict]:
    return [json.loads(line) for line in data.decode("utf-8").splitlines()]


def split(run: LogFile) -> tuple[dict, list[dict]]:
    """A converted run: its first line's facts and its records."""
    first, *records = lines(run.data)
    return first["klue_viz_log"], records


def jsonl(*rows: object) -> bytes:
    return "\n".join(r if isinstance(r, str) else json.dumps(r, ensure_ascii=False) for r in rows).encode()


# ---- formats.py ---------------------------------------------------------------------------------

def test_converted_keeps_korean_and_escapes_a_lone_surrogate():
    log = HarnessLog("lm-evaluation-harness", "로그.jsonl", "과제")
    data = converted(log, [{"guid": "가", "generation": "\ud800"}])
    assert data == ('{"klue_viz_log": {"format": "lm-evaluation-harness", "source": "로그.jsonl", "task": "과제", "filter": null, '
                    '"model": null, "harness_metrics": {}, "problems": []}}\n{"guid": "가", "generation": "\\ud800"}\n').encode()


def test_harness_log_from_record_reads_each_fact_and_refuses_wrong_types():
    given = {"format": "Inspect AI", "source": "log.json", "task": 3, "filter": None, "model": "m", "epoch": 2,
             "harness_metrics": {"acc": 1, "f1": 0.5, "flag": True, "name": "x"},
             "problems": [{"message": "bad", "line": 4, "guid": "g"}, {"line": 5}, "not a problem"]}
    log = HarnessLog.from_record(given, "run.jsonl")
    assert log == HarnessLog("Inspect AI", "log.json", "3", None, "m", {"acc": 1.0, "f1": 0.5},
                             (Problem("bad", 4, "g", "log.json"), Problem("", 5, None, "log.json")), 2)
    assert HarnessLog.from_record({"epoch": True, "harness_metrics": [1]}, "run.jsonl") == HarnessLog("harness", "run.jsonl")
    assert HarnessLog.from_record("not facts", "run.jsonl") == HarnessLog("harness", "run.jsonl")
    assert HarnessLog.from_record({"epoch": "2", "source": ""}, "run.jsonl").epoch is None
    assert HarnessLog.from_record({"problems": [{"message": "m"}]}, "run.jsonl").problems == (Problem("m", None, None, "run.jsonl"),)


def test_harness_log_to_dict_and_notes():
    log = HarnessLog("lm-evaluation-harness", "s.jsonl", "klue_nli", "strict", "my/model", {"acc": 0.5, "f1": 1 / 3},
                     (Problem("bad", 2, "g", "s.jsonl"),), 3)
    assert log.to_dict() == {"format": "lm-evaluation-harness", "source": "s.jsonl", "task": "klue_nli", "filter": "strict",
                             "model": "my/model", "harness_metrics": {"acc": 0.5, "f1": 1 / 3},
                             "problems": [{"message": "bad", "line": 2, "guid": "g", "file": "s.jsonl"}], "epoch": 3}
    assert "epoch" not in HarnessLog("x", "y").to_dict()
    assert HarnessLog("x", "y", epoch=0).to_dict()["epoch"] == 0
    assert log.notes() == ["lm-evaluation-harness log s.jsonl, task klue_nli, filter strict, model my/model",
                           "the harness's own metrics: acc 0.5000, f1 0.3333 (on its 0..1 scale, with its own targets)"]
    assert HarnessLog("lighteval", "d.parquet", filter="none").notes() == ["lighteval log d.parquet"]


@pytest.mark.parametrize(("line", "keys"), [
    (b'{"a": 1, "b": {"c": [1, {"d": 2}]}, "e" : "f:"}', {"a", "b", "e"}),
    (b'{"a": {"x": 1}} {"late": 1}', {"a"}),  # the object ends: what follows is not its key
    (b'{"a": [1, 2]], "b": 1}', {"a"}),  # an unbalanced bracket closes the object
    (b'{"a"' + b" " * 70 + b': 1, "b": 2}', {"b"}),  # a colon more than 64 bytes on is not looked for
    (b'{"a": "b", "c"\t:\n1}', {"a", "c"}),
    (b'{"\\u0061b": 1}', {"ab"}),
    (b'{"a"' + b" " * 64 + b': 1, "b": 2}', {"b"}),  # 64 bytes of blanks: the colon is the 65th
    (b'{"a"' + b" " * 63 + b': 1, "b": 2}', {"a", "b"}),
    (b'{"\\x": 1, "b": 2}', {"b"}),  # a key that is no JSON string is passed over
    (b'["a", {"b": 1}]', set()),
    (b'"a" {"b": 1}', set()),
])
def test_top_level_keys(line, keys):
    assert top_level_keys(line) == keys


def test_handles_reads_the_first_line_of_a_text_format_and_the_opening_key_of_a_json_one():
    rows = Format("rows", lambda *_: None, first_keys=(frozenset({"a", "b"}), frozenset({"c"})))
    assert rows.handles("x.jsonl", b'\xef\xbb\xbf \n{"a": 1, "b": 2}\n{"z": 1}')
    assert rows.handles("x.jsonl", b'{"c": 1}\n')
    assert not rows.handles("x.jsonl", b'{"a": 1}\n{"a": 1, "b": 2}\n')  # the first line only
    assert rows.handles("x.jsonl", b'{"a": 1, "b": 2')  # a first line cut short is read by the keys it has
    pretty = Format("doc", lambda *_: None, opening_key="eval", suffixes=(".json",))
    document = b'{\n  "version": 2,\n  "eval": {}\n}'
    assert pretty.handles("LOG.JSON", document)
    assert not pretty.handles("log.jsonl", document)
    assert not pretty.handles("log.json", b'{"version": 2, "eval": {}}\n')  # a one-line object: its keys decide
    assert not pretty.handles("log.json", b"{\n" + b" " * 8200 + b'"eval": {}}')  # past the first 8 KB
    assert not pretty.handles("log.json", b'[\n"eval"]')
    assert pretty.handles("log.json", b'{"version": 2,\n "eval": {}}')  # a first line with a key that is not the whole object
    assert not pretty.handles("log.json", b'{"version": 2, "eval": {}} \r\n')  # one object, blanks after it
    assert not pretty.handles("log.json", b"{\n" + b" " * 8185 + b'"eval": {}}')  # the key's closing quote is byte 8193
    assert pretty.handles("log.json", b"{\n" + b" " * 8184 + b'"eval": {}}')
    binary = Format("zip", lambda *_: None, magic=b"PK\x03\x04")
    assert binary.handles("x", b"PK\x03\x04rest") and not binary.handles("x", b"PK\x03")


def test_handles_needs_every_key_of_one_set():
    rows = Format("rows", lambda *_: None, first_keys=(frozenset({"a", "b"}),))
    assert rows.handles("x", b'{"a": 1, "b": 2}') and not rows.handles("x", b'{"a": 1}')


@pytest.mark.parametrize(("base", "expected"), [
    ("run.JSONL", "run"), ("run.Json", "run"), ("run.EVAL", "run"), ("run.Parquet", "run"), ("run.jsonl.txt", "run.jsonl"),
    ("run.json.jsonl", "run.json"), (".jsonl", ""), (".JSON", ""), (".eval", ""), (".parquet", ""),
])
def test_stem(base, expected):
    assert stem(base) == expected


def test_guid_of():
    assert guid_of({"guid": "", "id": 7}) == "7"
    assert guid_of({"guid": None, "id": ""}) is None
    assert guid_of({"id": "XXXX"}) == "XXXX"
    assert guid_of({"guid": 0}) == "0"
    assert guid_of(["guid"]) is None


# ---- lm_eval.py ---------------------------------------------------------------------------------

SAMPLES = "samples_klue_nli_mc_2026-01-01T00-00-00.123.jsonl"
RESULTS = "results_2026-01-01T00-00-00.123.json"


def results_file(model_args: object = "pretrained=my/model,dtype=float16") -> bytes:
    return json.dumps({"results": {"klue_nli_mc": {"acc,none": 0.5, "acc_stderr,none": 0.1, "alias": "x", "f1,none": 1, "acc,strict": 0.7},
                                   "other": {"acc,none": 0.9}},
                       "config": {"model": "hf", "model_args": model_args}}).encode()


def lm_eval_rows() -> bytes:
    mc = {"doc_id": 0, "doc": {"guid": "g0", "turn": 2}, "target": " 2 ",
          "arguments": {"gen_args_10": {"arg_0": "p", "arg_1": " 거짓"}, "gen_args_0": {"arg_0": "프롬프트", "arg_1": " 참"},
                        "gen_args_2": {"arg_0": "p", "arg_1": " 중립"}},
          "resps": [[["-1.5", "False"]]], "filtered_resps": [["-1.5", "False"], [-0.5, True], [-3, False]], "filter": "none"}
    generation = {"doc_id": 5, "doc": {"guid": "", "id": "", "turn": ""}, "target": "참",
                  "arguments": {"gen_args_0": {"arg_0": "질문", "arg_1": {"until": ["\n"]}}},
                  "resps": [["raw 참입니다"]], "filtered_resps": ["참"], "filter": "strict"}
    pairs_of_text = {"doc_id": 1, "doc": "not a dict", "filtered_resps": [["a", "b"]], "filter": "strict", "target": True}
    nothing = {"doc_id": 2, "doc": {"id": 9}, "filtered_resps": None, "resps": [["same"]]}
    mismatch = {"doc_id": 3, "doc": {}, "arguments": {"a": {"arg_0": None, "arg_1": "x"}, "b": {"arg_1": "y"}},
                "filtered_resps": [[-1, 0]], "resps": ["-1"], "target": 1}
    return jsonl(mc, "", generation, "{bad", "[1]", pairs_of_text, nothing, mismatch)


def lm_eval_row_fields() -> bytes:
    choices = {"gen_args_0": {"arg_0": "p", "arg_1": " 참"}, "gen_args_1": {"arg_0": "p", "arg_1": " 거짓"}}
    return jsonl({"doc_id": 0, "doc": {"guid": "a"}, "filtered_resps": "참입니다"},  # the three fields only; a text, not a list
                 {"doc_id": 1, "doc": {"guid": "b"}, "filtered_resps": [[]], "resps": "abc", "arguments": ["gen_args_0"]},
                 {"doc_id": 2, "doc": {"guid": "c"}, "filtered_resps": [[-1, 0], [-2, 0]], "arguments": choices},  # no target
                 {"doc_id": 3, "doc": {"guid": "d"}, "filtered_resps": [[-1, 0], [-2, 0]], "arguments": choices, "target": 1},
                 {"doc_id": 4, "doc": {"guid": "e"}, "filtered_resps": [[-1, 0]], "arguments": {"gen_args_0": "not an argument"}})


def test_lm_eval_row_fields():
    [run] = lm_eval.read("log.jsonl", lm_eval_row_fields(), {})
    assert split(run)[1] == [
        {"source_line": 1, "guid": "a", "generation": "참입니다"},
        {"source_line": 2, "guid": "b", "generation": ""},
        {"source_line": 3, "guid": "c", "prompt": "p", "choices": [" 참", " 거짓"], "loglikelihoods": [-1.0, -2.0]},
        {"source_line": 4, "guid": "d", "prompt": "p", "choices": [" 참", " 거짓"], "loglikelihoods": [-1.0, -2.0], "target": 1},
        {"source_line": 5, "guid": "e", "generation": "-1"},
    ]


NOT_UTF8 = b"\x80\x81 abc"


def test_a_log_that_is_not_utf8_is_named():
    for read in (lm_eval.read, every_eval_ever.read):
        with pytest.raises(InputError) as err:
            read("log.jsonl", NOT_UTF8, {})
        assert str(err.value) == "log.jsonl: not UTF-8 (line 1 is not) or CP949/EUC-KR text; save it as UTF-8"
    with pytest.raises(InputError) as err:
        inspect_logs.read_json_log("log.json", b'{"samples": "\x80\x81"}', {})
    assert str(err.value) == "log.json: not UTF-8 (line 1 is not) or CP949/EUC-KR text; save it as UTF-8"


def test_lm_eval_rows_become_records_one_run_per_filter():
    siblings = {RESULTS: results_file, "results_2099.json": lambda: b"{}"}
    runs = {r.name: split(r) for r in lm_eval.read(SAMPLES, lm_eval_rows(), siblings)}
    assert list(runs) == [f"{SAMPLES[:-6]}-none.jsonl", f"{SAMPLES[:-6]}-strict.jsonl"]
    problems = [{"message": "not a JSON line of the harness log (JSONDecodeError)", "line": 4, "guid": None, "file": SAMPLES},
                {"message": "not a row of an lm-evaluation-harness samples log (doc_id, doc, filtered_resps)", "line": 5, "guid": None,
                 "file": SAMPLES}]
    none_facts, none_records = runs[f"{SAMPLES[:-6]}-none.jsonl"]
    assert none_facts == {"format": "lm-evaluation-harness", "source": SAMPLES, "task": "klue_nli_mc", "filter": "none", "model": "my/model",
                          "harness_metrics": {"acc": 0.5, "f1": 1.0}, "problems": problems}
    assert none_records == [
        {"source_line": 1, "guid": "g0", "turn": 2, "prompt": "프롬프트", "choices": [" 참", " 중립", " 거짓"],
         "loglikelihoods": [-1.5, -0.5, -3.0], "target": 2},
        {"source_line": 7, "guid": "9", "generation": "", "raw_output": "same"},
        {"source_line": 8, "doc_position": 3, "generation": "-1"},
    ]
    strict_facts, strict_records = runs[f"{SAMPLES[:-6]}-strict.jsonl"]
    assert strict_facts["filter"] == "strict" and strict_facts["harness_metrics"] == {"acc": 0.7}
    assert strict_records == [{"source_line": 3, "doc_position": 5, "prompt": "질문", "generation": "참", "raw_output": "raw 참입니다"},
                              {"source_line": 6, "doc_position": 1, "generation": "a"}]


def test_one_filter_is_one_run_named_after_the_log():
    [run] = lm_eval.read("log.jsonl", jsonl({"doc_id": 0, "doc": {"guid": "g"}, "filtered_resps": ["x"], "filter": "f"}), {})
    facts, records = split(run)
    assert run.name == "log.jsonl" and facts["task"] is None and facts["model"] is None and facts["harness_metrics"] == {}
    assert records == [{"source_line": 1, "guid": "g", "generation": "x"}]


def test_lm_eval_refuses_a_log_without_a_row():
    with pytest.raises(InputError) as err:
        lm_eval.read("s.jsonl", b"{bad\n\n[]", {})
    assert str(err.value) == "s.jsonl: no row of the lm-evaluation-harness log could be read (not a JSON line of the harness log (JSONDecodeError))"
    with pytest.raises(InputError) as err:
        lm_eval.read("s.jsonl", b"\n", {})
    assert str(err.value) == "s.jsonl: no row of the lm-evaluation-harness log could be read"


def test_the_results_file_of_the_same_time_else_the_newest_that_has_the_task():
    def broken() -> bytes:
        raise OSError("gone")
    wanted = {RESULTS: lambda: json.dumps({"results": {"other": {}}}).encode(), "results_z.json": results_file}
    assert lm_eval._results(SAMPLES, wanted) == ("klue_nli_mc", None)  # the same time's file does not have the task: no other is read
    others = {"results_c.json": broken, "results_b.json": lambda: b"{bad", "results_a.json": results_file,
              "results_0.json": lambda: json.dumps({"results": {"klue_nli_mc": {}}, "config": {"model": "old"}}).encode()}
    task, results = lm_eval._results(SAMPLES, others)
    assert task == "klue_nli_mc" and results is not None and results["config"]["model"] == "hf"
    assert lm_eval._results("log.jsonl", {"results_x.json": lambda: b'{"results": []}', "results_y.json": results_file})[1] is not None


@pytest.mark.parametrize(("config", "model"), [
    ({"model": "hf", "model_args": "pretrained=a/b,dtype=x,novalue"}, "a/b"),
    ({"model": "hf", "model_args": {"pretrained": "c/d"}}, "c/d"),
    ({"model": "hf", "model_args": "dtype=x"}, "hf"),
    ({"model": "hf", "model_args": {"pretrained": ""}}, "hf"),
    ({"model_args": "pretrained=x=y"}, "x=y"),
    ({}, "named"),
])
def test_the_model_of_a_results_file(config, model):
    assert lm_eval._model({"config": config, "model_name": "named"}) == model
    assert lm_eval._model({"config": {}}) is None and lm_eval._model(None) is None


def test_choices_are_ordered_by_their_argument_number():
    assert sorted(["gen_args_10", "gen_args_2", "x", "gen_args_0"], key=lm_eval._arg_index) == ["x", "gen_args_0", "gen_args_2", "gen_args_10"]
    assert lm_eval._arg_index("a1b2") == 12 and lm_eval._arg_index("none") == 0


@pytest.mark.parametrize(("value", "rows"), [
    ([["-1.5", False], [2, True]], True), ([[-1, 0, 0]], False), ([], False), ([["x", 0]], False), ([[None, 0]], False),
    ([-1.0], False), ("[[-1, 0]]", False), ([[-1, 0], "x"], False),
])
def test_loglikelihood_rows(value, rows):
    assert lm_eval._is_loglikelihood_rows(value) is rows


def test_metrics_of_a_filter():
    results = json.loads(results_file())
    assert lm_eval._metrics(results, "klue_nli_mc", "none") == {"acc": 0.5, "f1": 1.0}
    assert lm_eval._metrics(results, None, "none") == {} and lm_eval._metrics(None, "klue_nli_mc", "none") == {}
    assert lm_eval._metrics(results, "missing", "none") == {}


def test_results_names():
    assert lm_eval.is_results_name("a/b/results_2026.json") and not lm_eval.is_results_name("results_.json")
    assert not lm_eval.is_results_name("my_results_x.json") and not lm_eval.is_results_name("results_x.json.gz")


# ---- every_eval_ever.py -------------------------------------------------------------------------

def test_every_eval_ever_instances_become_records_one_run_per_evaluation():
    data = jsonl(
        {"sample_id": "0", "evaluation_id": "e", "model_id": "m1", "evaluation_name": "클루 nli/strict match",
         "output": {"raw": ["참입니다", "x"]}, "input": {"raw": "r1", "formatted": "f1"},
         "answer_attribution": [{"extracted_value": "참", "is_terminal": True}, {"extracted_value": "거짓", "is_terminal": False}, "x"],
         "evaluation": {"score": 1}},
        {"sample_id": "klue-nli-v1_dev_00001", "model_id": "m2", "evaluation_name": "클루 nli/strict match", "output": {"raw": "중립"},
         "input": {"raw": "r2"}, "answer_attribution": [{"extracted_value": "중립", "is_terminal": True}], "evaluation": {"score": 0.0}},
        "{bad",
        '["list"]',
        "",
        {"sample_id": 7, "evaluation_name": "/flexible/", "output": "text", "input": "str", "evaluation": {"score": True}},
        {"sample_id": "x", "output": {"raw": []}, "evaluation": "bad", "input": {"formatted": ""}},
    )
    runs = {r.name: split(r) for r in every_eval_ever.read("inst.jsonl", data, {})}
    assert list(runs) == ["inst-클루-nli-strict-match.jsonl", "inst-flexible.jsonl", "inst-.jsonl"]
    problems = [{"message": "not a JSON line of the instance file", "line": 3, "guid": None, "file": "inst.jsonl"},
                {"message": "not an Every Eval Ever instance (no sample_id)", "line": 4, "guid": None, "file": "inst.jsonl"}]
    facts, records = runs["inst-클루-nli-strict-match.jsonl"]
    assert facts == {"format": "Every Eval Ever", "source": "inst.jsonl", "task": "클루 nli/strict match", "filter": None, "model": "m1",
                     "harness_metrics": {"mean score": 0.5}, "problems": problems}
    assert records == [{"source_line": 1, "doc_position": 0, "generation": "참입니다", "prompt": "f1", "raw_output": "(the harness extracted: 참)"},
                       {"source_line": 2, "guid": "klue-nli-v1_dev_00001", "generation": "중립", "prompt": "r2"}]
    facts, records = runs["inst-flexible.jsonl"]
    assert facts["task"] == "/flexible/" and facts["harness_metrics"] == {}
    assert records == [{"source_line": 6, "doc_position": 7, "generation": ""}]
    facts, records = runs["inst-.jsonl"]
    assert facts["task"] is None and records == [{"source_line": 7, "guid": "x", "generation": "", "prompt": None}]


def test_every_eval_ever_one_run_and_refusal():
    [run] = every_eval_ever.read("inst.jsonl", jsonl({"sample_id": "a", "evaluation_name": "t", "output": {"raw": [0]}}), {})
    facts, records = split(run)
    assert run.name == "inst.jsonl" and facts["model"] is None and records == [{"source_line": 1, "guid": "a", "generation": "0", "prompt": None}]
    with pytest.raises(InputError) as err:
        every_eval_ever.read("inst.jsonl", b"{bad\n[]\n", {})
    assert str(err.value) == "inst.jsonl: no Every Eval Ever instance could be read"


def test_every_eval_ever_names_and_scores_of_runs():
    data = jsonl({"sample_id": "a", "evaluation_name": "KLUE/NLI-X", "evaluation": {"score": 1}},
                 {"evaluation_id": "e", "output": {}},  # an object without sample_id
                 {"sample_id": "b", "evaluation": {"score": 0.25}})
    runs = {r.name: split(r) for r in every_eval_ever.read("inst.jsonl", data, {})}
    assert list(runs) == ["inst-KLUE-NLI-X.jsonl", "inst-.jsonl"]
    assert runs["inst-.jsonl"][0]["harness_metrics"] == {"mean score": 0.25}
    assert runs["inst-KLUE-NLI-X.jsonl"][0]["problems"] == [
        {"message": "not an Every Eval Ever instance (no sample_id)", "line": 2, "guid": None, "file": "inst.jsonl"}]


def test_every_eval_ever_is_told_by_either_set_of_keys():
    fmt = every_eval_ever.FORMAT
    assert fmt.handles("x.jsonl", b'{"sample_id": "0", "evaluation_id": "e", "output": {}}')
    assert fmt.handles("x.jsonl", b'{"sample_id": "0", "evaluation_id": "e", "answer_attribution": []}')
    assert not fmt.handles("x.jsonl", b'{"sample_id": "0", "output": {}, "answer_attribution": []}')


# ---- lighteval.py -------------------------------------------------------------------------------

def parquet(docs: list[object], responses: list[object]) -> bytes:
    table = pa.table({"doc": pa.array(docs, type=pa.string()), "model_response": pa.array(responses, type=pa.string())})
    sink = io.BytesIO()
    pq.write_table(table, sink)
    return sink.getvalue()


def test_lighteval_details_become_records():
    docs = [{"query": "q0", "choices": ["참", "중립", "거짓"], "gold_index": [1], "specific": json.dumps({"guid": "g0"}), "id": "0"},
            {"query": "", "choices": ["a"], "gold_index": True, "id": "12"},
            {"id": "klue-x", "choices": [], "specific": {"id": ""}},
            [1, 2],
            {"id": 5, "choices": ["x", "y"], "gold_index": [0, 1]},
            "{broken",
            {"specific": "{\"guid\": \"g6\"}", "choices": ["a", "b"], "gold_index": 1, "id": "3"},
            {"id": ""}]
    responses = [{"logprobs": [-1, -0.5, -2], "text": []},
                 {"logprobs": [-0.1], "text": [""]},
                 {"text": ["답: 중립", "b"], "logprobs": []},
                 "not json {",
                 {"logprobs": [-1], "text": None},
                 None,
                 {"logprobs": [-1, -2], "text": ["b"]},
                 {"text": ["c"]}]
    cells = [d if isinstance(d, str) else json.dumps(d, ensure_ascii=False) for d in docs]
    answers = [r if r is None or isinstance(r, str) else json.dumps(r) for r in responses]
    [run] = lighteval.read("details_klue_nli_2026-12-01T12-00-00.parquet", parquet(cells, answers), {})
    facts, records = split(run)
    assert run.name == "details_klue_nli_2026-12-01T12-00-00.jsonl"
    assert facts == {"format": "lighteval", "source": "details_klue_nli_2026-12-01T12-00-00.parquet", "task": "klue_nli", "filter": None,
                     "model": None, "harness_metrics": {}, "problems": []}
    assert records == [
        {"source_line": 1, "guid": "g0", "prompt": "q0", "choices": ["참", "중립", "거짓"], "loglikelihoods": [-1.0, -0.5, -2.0], "target": 1},
        {"source_line": 2, "doc_position": 12, "choices": ["a"], "loglikelihoods": [-0.1]},
        {"source_line": 3, "guid": "klue-x", "generation": "답: 중립"},
        {"source_line": 4, "doc_position": 3, "generation": ""},
        {"source_line": 5, "doc_position": 5, "generation": ""},
        {"source_line": 6, "doc_position": 5, "generation": ""},
        {"source_line": 7, "guid": "g6", "generation": "b"},
        {"source_line": 8, "doc_position": 7, "generation": "c"},
    ]


def test_lighteval_names_and_refusals():
    [run] = lighteval.read("mine.parquet", parquet([json.dumps({"id": "7"})], [json.dumps({"text": "whole"})]), {})
    facts, records = split(run)
    assert facts["task"] is None and records == [{"source_line": 1, "doc_position": 7, "generation": "whole"}]
    with pytest.raises(InputError) as err:
        lighteval.read("x.parquet", b"PAR1 not parquet", {})
    with pytest.raises(pa.ArrowException) as arrow:
        pq.read_table(io.BytesIO(b"PAR1 not parquet"))
    assert str(err.value) == f"x.parquet: cannot be read as Parquet: {str(arrow.value)[:160]}"
    with pytest.raises(InputError) as err:
        lighteval.read("x.parquet", parquet([], []), {})
    assert str(err.value) == "x.parquet: the Parquet file holds no rows"


def test_maybe_json():
    assert lighteval._maybe_json('{"a": 1}') == {"a": 1} and lighteval._maybe_json("[1]") == [1]
    assert lighteval._maybe_json("{bad") == "{bad" and lighteval._maybe_json("a{") == "a{" and lighteval._maybe_json("") == ""
    assert lighteval._maybe_json(3) == 3


# ---- inspect_logs.py ----------------------------------------------------------------------------

SAMPLES_OF_A_LOG = [
    {"id": "g1", "epoch": 1, "input": "전제", "output": {"completion": "참"}, "metadata": {"turn": 2}},
    {"id": 3, "epoch": 2, "input": [{"role": "system", "content": "sys"},
                                    {"role": "user", "content": [{"type": "text", "text": "a"}, {"text": "b"}, {"type": "image"}, "junk"]},
                                    {"role": "assistant", "content": ""}, {"content": "no role"}, "not a message"],
     "output": {"completion": "attachment://h1"}, "attachments": {"h1": "중립"}, "metadata": {"turn": ""}},
    {"id": True, "epoch": 0, "input": 5, "output": "x", "metadata": "m"},
    {"id": "g4", "epoch": "1", "input": "attachment://h2", "output": {"completion": None}, "attachments": {"h2": "긴 프롬프트", "h3": 1}},
    {"id": "g5", "input": "attachment://h3", "output": {"completion": "attachment://none"}, "attachments": {"h3": 1}},
]
RECORDS_OF_EPOCH_1 = [
    {"source_line": 1, "guid": "g1", "turn": 2, "generation": "참", "prompt": "전제"},
    {"source_line": 3, "doc_position": None, "generation": "", "prompt": None},
    {"source_line": 4, "guid": "g4", "generation": "", "prompt": "긴 프롬프트"},
    {"source_line": 5, "guid": "g5", "generation": "attachment://none", "prompt": "attachment://h3"},
]


def inspect_log(samples: list[dict], status: str = "success") -> dict:
    return {"version": 2, "status": status, "eval": {"task": "klue_nli", "model": "mockllm/model"},
            "results": {"scores": [{"name": "match", "metrics": {"accuracy": {"name": "accuracy", "value": 0.5},
                                                                 "stderr": {"name": "stderr", "value": "n/a"}}},
                                   {"name": "other", "metrics": {"mean": {"name": "mean", "value": 2}}}]},
            "samples": samples}


def test_an_inspect_json_log_becomes_one_run_per_epoch():
    runs = {r.name: split(r) for r in inspect_logs.read_json_log("log.json", json.dumps(inspect_log(SAMPLES_OF_A_LOG)).encode(), {})}
    assert list(runs) == ["log-epoch1.jsonl", "log-epoch2.jsonl"]
    facts, records = runs["log-epoch1.jsonl"]
    assert facts == {"format": "Inspect AI", "source": "log.json", "task": "klue_nli", "filter": None, "model": "mockllm/model",
                     "harness_metrics": {"match/accuracy": 0.5, "other/mean": 2.0}, "problems": [], "epoch": 1}
    assert records == RECORDS_OF_EPOCH_1
    facts, records = runs["log-epoch2.jsonl"]
    assert facts["epoch"] == 2
    assert records == [{"source_line": 2, "doc_position": 3, "generation": "중립", "prompt": "system: sys\nuser: a b \n: no role"}]


def test_an_inspect_json_log_of_one_epoch_and_the_files_that_are_not_one():
    log = {"eval": {}, "samples": [{"id": "a", "output": {"completion": "x"}, "input": []}]}
    [run] = inspect_logs.read_json_log("log.json", json.dumps(log).encode(), {})
    facts, records = split(run)
    assert run.name == "log.jsonl" and facts["task"] is None and facts["model"] is None and facts["harness_metrics"] == {}
    assert records == [{"source_line": 1, "guid": "a", "generation": "x", "prompt": None}]
    assert inspect_logs.read_json_log("x.json", b'{"eval": {}, "sample": []}', {}) is None
    assert inspect_logs.read_json_log("x.json", b'{"eval": {}, "samples": [}', {}) is None
    assert inspect_logs.read_json_log("x.json", b'{"eval": [], "samples": []}', {}) is None
    assert inspect_logs.read_json_log("x.json", b'{"eval": {}, "samples": {}}', {}) is None
    assert inspect_logs.read_json_log("x.json", b'["eval", "samples"]', {}) is None
    with pytest.raises(InputError) as err:
        inspect_logs.read_json_log("x.json", json.dumps(inspect_log(["not a sample"], "started")).encode(), {})
    assert str(err.value) == "x.json: the Inspect AI log holds no samples (status 'started')"


def eval_zip(members: dict[str, object], method: int = zipfile.ZIP_DEFLATED) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=method) as archive:
        for name, value in members.items():
            archive.writestr(name, value if isinstance(value, bytes) else json.dumps(value, ensure_ascii=False))
    return out.getvalue()


def test_an_eval_zip_is_read_in_inspects_order_from_its_header_or_its_start():
    header = inspect_log([])
    del header["samples"]
    samples = {f"samples/{s_id}_epoch_{epoch}.json": {"id": s_id, "epoch": epoch, "output": {"completion": f"{s_id}/{epoch}"}}
               for s_id, epoch in ((10, 1), (9, 1), ("b", 2), ("a", 2), (2, 2))}
    samples["samples/notes.txt"] = b"not a sample"
    samples["samples/list.json"] = [1]
    runs = inspect_logs.read_eval_zip("run.eval", eval_zip({"header.json": header, **samples}), {})
    assert [r.name for r in runs] == ["run-epoch1.jsonl", "run-epoch2.jsonl"]
    one, two = (split(r) for r in runs)
    assert one[0]["model"] == "mockllm/model" and one[0]["harness_metrics"] == {"match/accuracy": 0.5, "other/mean": 2.0}
    assert [r["generation"] for r in one[1] + two[1]] == ["9/1", "10/1", "2/2", "a/2", "b/2"]
    assert [r["source_line"] for r in one[1] + two[1]] == [1, 2, 3, 4, 5]
    started = inspect_logs.read_eval_zip("run.eval", eval_zip({"_journal/start.json": {"eval": {"task": "t", "model": "m"}},
                                                                "samples/a_epoch_1.json": {"id": "a"}}), {})
    assert split(started[0])[0]["model"] == "m"
    both = inspect_logs.read_eval_zip("run.eval", eval_zip({"_journal/start.json": {"eval": {"model": "start"}},
                                                             "header.json": {"eval": {"model": "header"}},
                                                             "samples/a_epoch_1.json": {"id": "a"}}), {})
    assert split(both[0])[0]["model"] == "header"
    bare = inspect_logs.read_eval_zip("run.eval", eval_zip({"header.json": [1], "samples/a_epoch_1.json": {"id": "a"}}), {})
    assert split(bare[0])[0]["model"] is None


def test_eval_zip_refusals(monkeypatch):
    with pytest.raises(InputError) as err:
        inspect_logs.read_eval_zip("run.eval", b"PK\x03\x04 not a zip", {})
    assert str(err.value).startswith("run.eval: not a readable Inspect AI .eval log (a zip): ")
    with pytest.raises(InputError) as err:
        inspect_logs.read_eval_zip("run.eval", eval_zip({"samples/a.json": b"{bad"}), {})
    assert str(err.value) == "run.eval/samples/a.json: not JSON (Expecting property name enclosed in double quotes); nothing was read"
    damaged = bytearray(eval_zip({"samples/a.json": {"id": "a"}}, zipfile.ZIP_STORED))
    damaged[damaged.index(b'{"id"')] = ord("[")  # the stored bytes no longer match the CRC
    with pytest.raises(InputError) as err:
        inspect_logs.read_eval_zip("run.eval", bytes(damaged), {})
    assert str(err.value).startswith("run.eval/samples/a.json: damaged inside the .eval log (Bad CRC-32") and str(err.value).endswith("nothing was read")
    with pytest.raises(InputError) as err:
        inspect_logs.read_eval_zip("run.eval", eval_zip({"header.json": {"eval": {}}}), {})
    assert str(err.value) == "run.eval: the Inspect AI log holds no samples (status None)"


def test_eval_zip_sizes(monkeypatch):
    monkeypatch.setenv("KLUE_VIZ_MAX_UPLOAD_MB", str(1000 / 1024 / 1024))  # 1,000 bytes
    sample = {"id": "a", "output": {"completion": "x" * 900}}
    eleven = eval_zip({f"samples/{k}_epoch_1.json": {**sample, "id": str(k)} for k in range(11)})
    with pytest.raises(InputError) as err:
        inspect_logs.read_eval_zip("run.eval", eleven, {})
    assert str(err.value).startswith("run.eval: its samples unpack to ")
    assert str(err.value).endswith(" KB, over 10 times the 1.0 KB upload limit; nothing was read. Split the log (inspect eval --limit) or "
                                   "raise KLUE_VIZ_MAX_UPLOAD_MB")
    ten = eval_zip({f"samples/{k}_epoch_1.json": {**sample, "id": str(k)} for k in range(10)})
    assert len(split(inspect_logs.read_eval_zip("run.eval", ten, {})[0])[1]) == 10  # each member under the limit, ten of them at most
    big = eval_zip({"samples/a.json": {"id": "a", "output": {"completion": "x" * 1000}}})
    with pytest.raises(InputError) as err:
        inspect_logs.read_eval_zip("run.eval", big, {})
    assert str(err.value).startswith("run.eval/samples/a.json (unpacked) is 1.0 KB, over the 1.0 KB limit")
    ignored = eval_zip({"samples/a.json": {"id": "a"}, "samples/big.txt": b"x" * 5000, "other.json": b"x" * 5000})
    assert len(inspect_logs.read_eval_zip("run.eval", ignored, {})) == 1  # members that are not read are not counted


def test_eval_zip_with_zstandard_members_needs_the_patch(monkeypatch):
    data = bytearray(eval_zip({"samples/a.json": {"id": "a"}}, zipfile.ZIP_STORED))
    for magic, offset in ((b"PK\x03\x04", 8), (b"PK\x01\x02", 10)):
        at = data.index(magic) + offset
        data[at:at + 2] = (93).to_bytes(2, "little")
    monkeypatch.setattr(inspect_logs, "zstd_zip", None)
    with pytest.raises(InputError) as err:
        inspect_logs.read_eval_zip("run.eval", bytes(data), {})
    assert str(err.value) == ("run.eval: an Inspect AI .eval log is compressed with Zstandard, which needs the zipfile-zstd package "
                              "(pip install 'klue-viz[harness]'), or write the log as JSON (inspect eval --log-format json)")


def test_inspect_order():
    keys = [(5, 1, {}), ("b", 1, {}), (10, 1, {}), ("a", 2, {}), (9, 2, {})]
    assert [s[0] for s in sorted(keys, key=inspect_logs._inspect_order)] == [5, 10, "b", 9, "a"]


def test_inspect_input():
    assert inspect_logs._inspect_input("text") == "text"
    assert inspect_logs._inspect_input([]) is None and inspect_logs._inspect_input([{"role": "user", "content": ""}]) is None
    assert inspect_logs._inspect_input({"content": "x"}) is None and inspect_logs._inspect_input(None) is None
    assert inspect_logs._inspect_input([{"role": "user", "content": [{"text": ""}]}]) is None
    assert inspect_logs._inspect_input([{"role": "user", "content": [{"text": 1}, {"text": "x"}]}]) == "user: 1 x"


def sized(sample_id: str, size: int) -> bytes:
    """A sample member of exactly `size` bytes."""
    text = json.dumps({"id": sample_id, "output": {"completion": ""}})
    return (text[:-1] + " " * (size - len(text)) + text[-1:]).encode()  # blanks before the closing brace


def test_eval_zip_members_at_exactly_the_limits(monkeypatch):
    monkeypatch.setenv("KLUE_VIZ_MAX_UPLOAD_MB", str(1000 / 1024 / 1024))  # 1,000 bytes
    members = {f"samples/{k}_epoch_1.json": sized(str(k), 1000) for k in range(10)}
    assert all(len(m) == 1000 for m in members.values())
    [run] = inspect_logs.read_eval_zip("run.eval", eval_zip(members), {})  # ten members of the limit: ten times it, read
    assert [r["guid"] for r in split(run)[1]] == [str(k) for k in range(10)]


def test_a_header_over_the_limit_is_refused_by_its_declared_size(monkeypatch):
    monkeypatch.setenv("KLUE_VIZ_MAX_UPLOAD_MB", str(1000 / 1024 / 1024))
    header = json.dumps({"eval": {"model": "m" * 5000}}).encode()
    with pytest.raises(InputError) as err:
        inspect_logs.read_eval_zip("run.eval", eval_zip({"header.json": header, "samples/a.json": {"id": "a"}}), {})
    assert str(err.value).startswith(f"run.eval/header.json (unpacked) is {len(header) / 1024:.1f} KB, over the 1.0 KB limit")


def test_a_damaged_member_with_a_long_name_is_named_in_160_characters_of_the_error():
    name = "samples/" + "a" * 200 + ".json"
    damaged = bytearray(eval_zip({name: {"id": "a"}}, zipfile.ZIP_STORED))
    damaged[damaged.index(b'{"id"')] = ord("[")
    with pytest.raises(InputError) as err:
        inspect_logs.read_eval_zip("run.eval", bytes(damaged), {})
    assert str(err.value) == f"run.eval/{name}: damaged inside the .eval log ({('Bad CRC-32 for file ' + repr(name))[:160]}); nothing was read"


def test_attachments_that_are_not_an_object_are_not_read():
    log = {"eval": {}, "samples": [{"id": "a", "input": "attachment://h", "output": {"completion": "attachment://h"}, "attachments": ["h"]}]}
    [run] = inspect_logs.read_json_log("log.json", json.dumps(log).encode(), {})
    assert split(run)[1] == [{"source_line": 1, "guid": "a", "generation": "attachment://h", "prompt": "attachment://h"}]
