"""klue_viz/reading/prediction_files.py at the edges its mutants showed untested (issue 31, docs/mutation.md): where a
log's first line starts and ends, a `.gz` name, a zip given where one file is read, each refusal's words, the gzip
trailer and the unpacked limit, `normalise` and an already-read file passed on, the converted file's first line taken
back out, the results file of a folder or zip, the problems of a converted log renamed, and `task_hint`.

Expected values come from the files in the test (the real lm-evaluation-harness sample logs of tests/data/harness,
read here with json), and messages are written out by hand."""

from __future__ import annotations

import gzip
import io
import json
import zipfile
from pathlib import Path

import pytest

from klue_viz.core.problems import InputError, Problem
from klue_viz.reading.harness.formats import HarnessLog
from klue_viz.reading.prediction_files import (
    expand,
    expand_path,
    log_files,
    log_problems,
    read_prediction_file,
    read_prediction_path,
    results_beside,
    task_hint,
)
from klue_viz.reading.records import RecordFile, read_records

LOGS = Path(__file__).parent / "data" / "harness" / "lm_eval"
MC = next(LOGS.glob("samples_klue_nli_mc_*.jsonl"))
GEN = next(LOGS.glob("samples_klue_nli_gen_*.jsonl"))
RESULTS = next(LOGS.glob("results_*.json"))
ORDINARY = b'{"guid": "g1", "label": "entailment"}\n{"guid": "g2", "label": "neutral"}\n'
TASK_NAMES = ["ynat", "sts", "nli", "ner", "re", "dp", "mrc", "wos"]


def rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def first_line(data: bytes) -> dict:
    return json.loads(data.split(b"\n", 1)[0])["klue_viz_log"]


def tagged(record: dict) -> dict:
    """A normaliser that marks each record (and, like the tasks' own, leaves a converted log's first line alone)."""
    return record if "klue_viz_log" in record else {**record, "seen": True}


def long_mc_log() -> tuple[bytes, int]:
    """The multiple-choice log with the first row's premise padded to 12,000 bytes: `filtered_resps` comes after
    `doc` in lm-eval's rows, so it lies past the first 8 KB."""
    first, *rest = rows(MC)
    first["doc"]["premise"] += "가" * 4000  # 3 bytes each in UTF-8
    lines = [json.dumps(first, ensure_ascii=False)] + [json.dumps(r, ensure_ascii=False) for r in rest]
    data = "\n".join(lines).encode()
    assert data.index(b'"filtered_resps"') > 8192
    return data, len(lines)


def test_a_first_row_longer_than_8_kb_after_a_blank_line_is_read_as_the_log():
    data, n = long_mc_log()
    runs = expand(MC.name, b"\n  \n" + data)
    assert len(runs) == 1 and first_line(runs[0].data)["format"] == "lm-evaluation-harness"
    assert runs[0].name == MC.name  # the run is named after the log (its stem, .jsonl)
    assert len(runs[0].data.decode().strip().split("\n")) == n + 1


def test_a_one_line_log_without_newline_is_read_whole():
    data, _ = long_mc_log()
    one = data.split(b"\n", 1)[0]
    runs = expand(MC.name, one)
    assert first_line(runs[0].data)["format"] == "lm-evaluation-harness"


def test_the_first_line_is_looked_for_within_first_bytes_only(monkeypatch):
    """With the look-ahead cut to 1,000 bytes, a first line of 12 KB is cut there: its keys past the cut are not seen
    and the file is an ordinary one (the bound is the module's FIRST_BYTES, 64 MB)."""
    monkeypatch.setattr("klue_viz.reading.prediction_files.FIRST_BYTES", 1000)
    data, _ = long_mc_log()
    [run] = expand(MC.name, data)
    assert run.data == data


def test_a_gzipped_file_takes_its_name_without_gz_in_any_case():
    packed = gzip.compress(ORDINARY)
    assert [(f.name, f.data) for f in expand("dir/run.jsonl.gz", packed)] == [("dir/run.jsonl", ORDINARY)]
    assert [(f.name, f.data) for f in expand("RUN.JSONL.GZ", packed)] == [("RUN.JSONL", ORDINARY)]
    assert [f.name for f in expand("run.gzip", packed)] == ["run.gzip"]  # only a .gz ending is taken off
    [log] = expand(MC.name + ".gz", gzip.compress(MC.read_bytes()))
    assert log.name == MC.name and first_line(log.data)["task"] == "klue_nli_mc" and first_line(log.data)["source"] == MC.name


def test_a_gzipped_ordinary_file_is_read_by_name_and_by_path(tmp_path):
    packed = gzip.compress(ORDINARY)
    read = read_prediction_file("run.jsonl.gz", packed)
    assert [r["guid"] for _, r in read.records.records] == ["g1", "g2"] and read.log is None
    (tmp_path / "run.jsonl.gz").write_bytes(packed)
    assert [r["label"] for _, r in read_prediction_path(tmp_path / "run.jsonl.gz").records.records] == ["entailment", "neutral"]


def zip_bytes() -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr("run.jsonl", ORDINARY)
    return out.getvalue()


NOT_A_ZIP = (": a zip archive, not a prediction file. Unpack it and give its folder (klue-viz evaluate --pred FOLDER scores each "
             "file in it, routed to its task), or give the zip itself to klue-viz runs add or the home page's upload")


def test_a_zip_given_where_one_file_is_read_is_refused_in_words(tmp_path):
    with pytest.raises(InputError) as err:
        read_prediction_file("runs.zip", zip_bytes())
    assert str(err.value) == "runs.zip" + NOT_A_ZIP
    with pytest.raises(InputError) as err:
        expand("runs.zip", zip_bytes())
    assert str(err.value) == "runs.zip" + NOT_A_ZIP
    (tmp_path / "runs.zip").write_bytes(zip_bytes())
    with pytest.raises(InputError) as err:
        read_prediction_path(tmp_path / "runs.zip")
    assert str(err.value) == "runs.zip" + NOT_A_ZIP


def test_missing_files_and_folders_are_refused_in_words(tmp_path):
    for read in (read_prediction_path, expand_path):
        with pytest.raises(InputError) as err:
            read(tmp_path / "none.jsonl")
        assert str(err.value) == f"{tmp_path / 'none.jsonl'}: no such file"
        with pytest.raises(InputError) as err:
            read(tmp_path)
        assert str(err.value) == f"{tmp_path}: is a folder, expected a file"


def several(name: str) -> str:
    filters = list(dict.fromkeys(r["filter"] for r in rows(GEN)))
    stems = ", ".join(f"{GEN.name[:-len('.jsonl')]}-{f}" for f in filters)
    return (f"{name}: this log holds {len(filters)} runs ({stems}); each is scored as its own run "
            "(klue-viz evaluate and the app's uploads split it)")


def test_a_log_of_several_filters_is_refused_where_one_run_is_read(tmp_path):
    with pytest.raises(InputError) as err:
        read_prediction_file(GEN.name, GEN.read_bytes())
    assert str(err.value) == several(GEN.name)
    path = tmp_path / GEN.name
    path.write_bytes(GEN.read_bytes())
    with pytest.raises(InputError) as err:
        read_prediction_path(path)
    assert str(err.value) == several(str(path))


def test_normalise_reaches_every_record_whatever_the_way_in(tmp_path):
    (tmp_path / "run.jsonl").write_bytes(ORDINARY)
    (tmp_path / MC.name).write_bytes(MC.read_bytes())
    read = [read_prediction_file("run.jsonl", ORDINARY, tagged), read_prediction_file(MC.name, MC.read_bytes(), tagged),
            read_prediction_path(tmp_path / "run.jsonl", tagged), read_prediction_path(tmp_path / MC.name, tagged)]
    for file in read:
        assert file.records.records and all(r.get("seen") for _, r in file.records.records)
    assert [len(f.records.records) for f in read] == [2, len(rows(MC)), 2, len(rows(MC))]


def test_a_file_already_read_under_its_name_is_taken_over():
    given = read_records(ORDINARY, "run.jsonl")
    assert read_prediction_file("run.jsonl", ORDINARY, read=given).records is given
    assert read_prediction_file("other.jsonl", ORDINARY, read=given).records is not given  # read under another name: read again
    taken = read_prediction_file("run.jsonl", ORDINARY, tagged, read=read_records(ORDINARY, "run.jsonl")).records
    assert [r for _, r in taken.records] == [{"guid": "g1", "label": "entailment", "seen": True},
                                             {"guid": "g2", "label": "neutral", "seen": True}]
    empty = RecordFile("none.jsonl", [], [Problem("not JSON", 1, file="none.jsonl")])
    assert read_prediction_file("none.jsonl", b"{", read=empty).log is None


def test_the_converted_first_line_is_taken_out_and_records_moved_to_their_log_lines():
    data = (b'{"klue_viz_log": {"format": "lm-evaluation-harness", "problems": [{"message": "bad row", "line": 2}]}}\n'
            b'{"guid": "a", "label": "neutral", "source_line": 7}\n'
            b'{"guid": "b", "label": "neutral"}\n'
            b'{"guid": "c", "label": "neutral", "source_line": "9"}\n')
    read = read_prediction_file("run.jsonl", data)
    assert read.log is not None and read.log.source == "run.jsonl"  # the line names no source: the file's own name
    assert read.records.records == [(7, {"guid": "a", "label": "neutral"}), (3, {"guid": "b", "label": "neutral"}),
                                    (4, {"guid": "c", "label": "neutral"})]
    assert Problem("bad row", 2, None, "run.jsonl") in read.records.problems


def test_a_first_record_of_one_field_is_no_log():
    read = read_prediction_file("run.jsonl", b'{"guid": "a"}\n{"guid": "b", "label": "neutral"}\n')
    assert read.log is None and [line for line, _ in read.records.records] == [1, 2]


def gzip_with_size(data: bytes, size: int) -> bytes:
    packed = gzip.compress(data)
    return packed[:-4] + size.to_bytes(4, "little")


def test_gunzip_reads_the_trailer_of_the_shortest_gzip_and_stops_at_the_limit(monkeypatch):
    monkeypatch.setenv("KLUE_VIZ_MAX_UPLOAD_MB", str(1000 / 1024 / 1024))  # 1,000 bytes
    shortest = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff" + (0).to_bytes(4, "little") + (5000).to_bytes(4, "little")
    assert len(shortest) == 18  # a header and a trailer only: the trailer's 5,000 bytes are refused before reading
    with pytest.raises(InputError) as err:
        expand("x.jsonl.gz", shortest)
    assert str(err.value).startswith("x.jsonl.gz (unpacked, as its gzip trailer says) is 4.9 KB, over the 1.0 KB limit")
    exact = ORDINARY * (1000 // len(ORDINARY)) + b" " * (1000 % len(ORDINARY))
    assert len(exact) == 1000
    assert expand("x.jsonl.gz", gzip.compress(exact)) == expand("x.jsonl", exact)  # exactly the limit: read whole
    over = b" " * 5000  # the trailer says 10 bytes: the read stops at the limit, before the wrong length is found
    with pytest.raises(InputError) as err:
        expand("y.jsonl.gz", gzip_with_size(over, 10))
    assert str(err.value).startswith("y.jsonl.gz (unpacked) is 1.0 KB, over the 1.0 KB limit")


def test_a_folders_results_file_is_a_sibling_of_its_samples():
    data = MC.read_bytes()
    results = json.loads(RESULTS.read_bytes())
    [run] = log_files(iter([(f"out/{MC.name}", data), (f"out/{RESULTS.name}", RESULTS.read_bytes())]))
    facts = first_line(run.data)
    assert facts["model"] == results["config"]["model"]
    assert facts["harness_metrics"]["acc"] == results["results"]["klue_nli_mc"]["acc,none"]
    assert run.name == MC.name  # a converted run is named after the log's file name


def test_results_beside_groups_results_files_by_folder():
    readers = {name: (lambda name=name: name.encode()) for name in
               ("a/results_1.json", "a/samples_x_2026-01-01T00-00-00.jsonl", "results_2.json", "b/c/results_3.json")}
    found = results_beside(list(readers.items()))
    assert found == {"a": {"results_1.json": readers["a/results_1.json"]}, "b/c": {"results_3.json": readers["b/c/results_3.json"]}}


def test_log_problems_name_the_log_for_the_converted_files_own():
    problems = [Problem("bad", 3, "g", "run.jsonl"), Problem("other", 4, None, "other.jsonl")]
    log = HarnessLog("lm-evaluation-harness", "samples_x.jsonl")
    assert log_problems(problems, "run.jsonl", log) == [Problem("bad", 3, "g", "samples_x.jsonl"), problems[1]]
    assert log_problems(problems, "run.jsonl", None) == problems


@pytest.mark.parametrize(("records", "hint"), [
    ([{"klue_viz_log": {"task": "klue_nli_mc"}}], "nli"),
    ([{"klue_viz_log": {"task": "KLUE-NER_gen"}}], "ner"),
    ([{"klue_viz_log": {"task": "klue_nli_ner"}}], None),  # two tasks named
    ([{"klue_viz_log": {"task": "kluenli"}}], None),  # a word of its own, not nli
    ([{"klue_viz_log": {"task": ""}}], None),
    ([{"klue_viz_log": {"format": "x"}}], None),
    ([{"klue_viz_log": "klue_nli"}], None),
    ([{"guid": "a"}, {"klue_viz_log": {"task": "klue_nli"}}], None),  # only the first line holds the facts
    ([], None),
])
def test_task_hint(records, hint):
    assert task_hint(records, TASK_NAMES) == hint
