import json

import pytest

from klue_viz.core.problems import InputError
from klue_viz.reading.records import BARE_VALUE, decode, read_records


def test_decodes_utf8_bom_cp949_and_crlf():
    text = '{"guid": "a", "label": "사회"}\r\n{"guid": "b", "label": "정치"}\r\n'
    for data in (text.encode("utf-8"), b"\xef\xbb\xbf" + text.encode("utf-8"), text.encode("cp949")):
        records = read_records(data, "p.jsonl").records
        assert [r["label"] for _, r in records] == ["사회", "정치"]
    assert decode(text.encode("cp949"))[1] == "cp949"


def test_undecodable_bytes_are_a_clear_error():
    with pytest.raises(InputError, match="UTF-8"):
        read_records(b"\xff\xfe\xfa\x00\x81", "bad.jsonl")


def test_jsonl_keeps_valid_lines_and_numbers_the_broken_ones():
    data = b'{"guid": "a"}\n\n{"guid": oops}\n[1, 2]\n{"guid": "d"}\n'
    result = read_records(data, "p.jsonl")
    assert [line for line, _ in result.records] == [1, 5]
    assert [(p.line, p.message.split(":")[0]) for p in result.problems] == [(3, "invalid JSON"), (4, "expected a JSON object, found list")]


def test_json_list_reports_lines_of_elements():
    data = b'[\n  {"guid": "a"},\n  {"guid": "b"},\n  "x"\n]'
    result = read_records(data, "p.json")
    assert [line for line, _ in result.records] == [2, 3]
    assert result.problems[0].line == 4


def test_json_object_mapping_guid_to_value():
    data = json.dumps({"q1": "서울", "q2": ""}, ensure_ascii=False, indent=1).encode()
    records = read_records(data, "predictions.json").records
    assert [r for _, r in records] == [{"guid": "q1", BARE_VALUE: "서울"}, {"guid": "q2", BARE_VALUE: ""}]
    assert [line for line, _ in records] == [2, 3]


def test_csv_and_tsv_with_json_cells():
    csv_data = b'guid,head,deprel\nx,"[2, 0]","[""NP"", ""VP""]"\n'
    (line, record), = read_records(csv_data, "p.csv").records
    assert line == 2 and record["head"] == [2, 0] and record["deprel"] == ["NP", "VP"]
    tsv_data = b"guid\tlabel\nx\t1\ny\n"
    result = read_records(tsv_data, "p.tsv")
    assert [r for _, r in result.records] == [{"guid": "x", "label": "1"}]
    assert result.problems[0].line == 3


def test_empty_file_is_an_error():
    with pytest.raises(InputError, match="empty"):
        read_records(b"  \n", "p.jsonl")
