"""Hostile prediction inputs that must end in a clear error naming the file, never a traceback, a hang or gigabytes
of memory (issue 29 items 3, 4, 14): damaged and bomb-sized compressed files, zips given as one prediction file."""

from __future__ import annotations

import gzip
import io
import json
import zipfile
import zlib
from pathlib import Path

import pytest

try:
    import zipfile_zstd  # patches zipfile to read the real Inspect log's Zstandard members (the `harness` extra)
except ModuleNotFoundError:
    zipfile_zstd = None

from klue_viz.cli.main import main
from klue_viz.core.problems import InputError
from klue_viz.reading.demo import DEMO_BENCHMARK, demo_runs
from klue_viz.reading.prediction_files import expand
from klue_viz.scoring.benchmark import prediction_files
from klue_viz.scoring.evaluate import evaluate_file, load_gold
from klue_viz.tasks import TASKS

NLI_DEMO = sorted(demo_runs("nli"))


def broken_deflate(data: bytes) -> bytes:
    """A gzip file of `data` whose deflate stream is broken (its gzip header intact): the first block's type is the
    reserved 0b11 (RFC 1951 3.2.3), so zlib fails with 'invalid block type', as the probe's file did."""
    packed = bytearray(gzip.compress(data))
    packed[10] = 0x07  # BFINAL 1, BTYPE 11; the 10-byte gzip header (RFC 1952 2.3) is left as it was
    return bytes(packed)


@pytest.fixture
def corrupt_gz(tmp_path) -> Path:
    path = tmp_path / "nli-run.jsonl.gz"
    path.write_bytes(broken_deflate(NLI_DEMO[0].read_bytes() * 20))
    with pytest.raises(zlib.error, match="invalid block type"):  # the file really is damaged: Python's own reader fails
        gzip.decompress(path.read_bytes())
    return path


def test_a_corrupt_gzip_is_a_clear_error_in_evaluate(corrupt_gz, capsys):
    assert main(["evaluate", "--task", "nli", "--gold", str(DEMO_BENCHMARK), "--pred", str(corrupt_gz)]) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert f"{corrupt_gz.name}: not a readable gzip file" in err


def test_a_corrupt_gzip_is_refused_by_runs_add(corrupt_gz, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("KLUE_VIZ_DB", str(tmp_path / "store.sqlite3"))
    monkeypatch.delenv("KLUE_VIZ_DATA_DIR", raising=False)
    assert main(["runs", "add", str(corrupt_gz)]) == 1
    out = capsys.readouterr().out
    assert out.startswith(f"refused\t{corrupt_gz}\t")
    assert "not a readable gzip file" in out


def test_a_corrupt_gzip_upload_is_an_input_error(corrupt_gz):
    with pytest.raises(InputError, match=r"nli-run\.jsonl\.gz: not a readable gzip file"):
        prediction_files(corrupt_gz.name, corrupt_gz.read_bytes())


# ---- unpacked-size bombs in an Inspect AI .eval log (issue 29 item 4) -------------------------------------------------

INSPECT_LOG = Path(__file__).parent / "data" / "harness" / "inspect_nli.eval"  # a real log of Inspect's mockllm
needs_zstd = pytest.mark.skipif(zipfile_zstd is None, reason="zipfile-zstd is not installed (pip install -e '.[harness]')")


def rewritten_log(path: Path, change: dict[str, bytes], extra: dict[str, bytes] | None = None) -> Path:
    """A copy of the real Inspect log with some members' content replaced (`change`) and others added, deflated (the
    standard library writes no Zstandard; the reader takes any method zipfile reads)."""
    with zipfile.ZipFile(INSPECT_LOG) as source, zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as target:
        for name in source.namelist():
            target.writestr(name, change.get(name, b"") or source.read(name))
        for name, content in (extra or {}).items():
            target.writestr(name, content)
    return path


def first_sample_name() -> str:
    with zipfile.ZipFile(INSPECT_LOG) as archive:
        return next(n for n in archive.namelist() if n.startswith("samples/"))


def padded_sample(megabytes: float) -> bytes:
    """The log's first sample with its metadata padded by white space to `megabytes` MB (it compresses to almost nothing)."""
    with zipfile.ZipFile(INSPECT_LOG) as archive:
        sample = json.loads(archive.read(first_sample_name()))
    sample["metadata"] = {"padding": " " * int(megabytes * 1024 * 1024)}
    return json.dumps(sample, ensure_ascii=False).encode()


@pytest.fixture
def one_megabyte_limit(monkeypatch):
    monkeypatch.setenv("KLUE_VIZ_MAX_UPLOAD_MB", "1")


@needs_zstd
def test_a_sample_member_declared_over_the_limit_is_refused_before_it_is_read(tmp_path, one_megabyte_limit):
    log = rewritten_log(tmp_path / "padded.eval", {first_sample_name(): padded_sample(3)})
    assert log.stat().st_size < 1024 * 1024  # the upload itself is under the limit
    with pytest.raises(InputError, match=rf"padded\.eval/{first_sample_name()} \(unpacked\) is 3\.0 MB, over the 1\.0 MB limit"):
        expand(log.name, log.read_bytes())


@needs_zstd
def test_a_sample_member_that_unpacks_to_more_than_it_declares_is_refused(tmp_path, one_megabyte_limit):
    """The member's header says 100 bytes; zipfile stops there and the CRC fails: refused as damaged, nothing read."""
    log = rewritten_log(tmp_path / "lying.eval", {first_sample_name(): padded_sample(3)})
    data = bytearray(log.read_bytes())
    name = first_sample_name().encode()
    for signature, size_at in ((b"PK\x03\x04", 22), (b"PK\x01\x02", 24)):  # local header and central directory (APPNOTE 4.3.7, 4.3.12)
        at = data.find(signature)
        while at >= 0:
            name_at = at + (30 if signature == b"PK\x03\x04" else 46)
            if data[name_at:name_at + len(name)] == name:
                data[at + size_at:at + size_at + 4] = (100).to_bytes(4, "little")
            at = data.find(signature, at + 4)
    with zipfile.ZipFile(io.BytesIO(bytes(data))) as archive:
        assert archive.getinfo(first_sample_name()).file_size == 100
    with pytest.raises(InputError, match=r"lying\.eval/samples/.*: damaged inside the \.eval log"):
        expand(log.name, bytes(data))


@needs_zstd
def test_members_that_together_unpack_past_the_total_limit_are_refused_before_reading(tmp_path, one_megabyte_limit):
    """Eleven sample members of 0.95 MB each: each under the 1 MB limit, together over ten times it."""
    padded = padded_sample(0.95)
    extra = {f"samples/copy-{k}_epoch_1.json": padded for k in range(11)}
    log = rewritten_log(tmp_path / "many.eval", {}, extra)
    with pytest.raises(InputError, match=r"many\.eval: its samples unpack to 10\.\d MB, over 10 times the 1\.0 MB upload limit"):
        expand(log.name, log.read_bytes())


@needs_zstd
def test_a_log_within_the_limits_reads_its_samples_in_inspects_order(tmp_path):
    """The real log rewritten with deflate reads as Inspect's reader reads it: samples by epoch then id."""
    log = rewritten_log(tmp_path / "plain.eval", {})
    runs = expand(log.name, log.read_bytes())
    lines = [json.loads(line) for line in runs[0].data.decode().splitlines()]
    with zipfile.ZipFile(INSPECT_LOG) as archive:
        ids = sorted(json.loads(archive.read(n))["id"] for n in archive.namelist() if n.startswith("samples/"))
    assert [line["guid"] for line in lines[1:]] == ids
    assert lines[0]["klue_viz_log"]["format"] == "Inspect AI" and lines[0]["klue_viz_log"]["model"] == "mockllm/model"


# ---- the small ones of issue 29 item 14 ----------------------------------------------------------------------------

NLI_GOLD_FILE = DEMO_BENCHMARK / "klue-nli-v1.1" / "klue-nli-v1.1_dev.json"


def demo_nli_rows() -> list[dict]:
    return json.loads(NLI_GOLD_FILE.read_text(encoding="utf-8"))


def write_jsonl(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return path


def test_a_zip_given_to_evaluate_is_said_to_be_a_zip(tmp_path, capsys):
    archive = tmp_path / "model.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("nli.jsonl", NLI_DEMO[0].read_bytes())
    assert main(["evaluate", "--task", "nli", "--gold", str(DEMO_BENCHMARK), "--pred", str(archive)]) == 1
    err = capsys.readouterr().err
    assert "model.zip: a zip archive, not a prediction file" in err and "--pred FOLDER" in err
    assert "UTF-8" not in err


def test_runs_add_warns_of_the_wrong_gold_as_evaluate_does(tmp_path, monkeypatch, capsys):
    """Two guids of the demo gold and ten of the real dev set (not in the demo): the metrics come from 2 of 12."""
    monkeypatch.setenv("KLUE_VIZ_DB", str(tmp_path / "store.sqlite3"))
    monkeypatch.delenv("KLUE_VIZ_DATA_DIR", raising=False)
    rows = demo_nli_rows()
    records = [{"guid": r["guid"], "label": r["gold_label"]} for r in rows[:2]]
    records += [{"guid": f"klue-nli-v1_dev_{k:05d}", "label": "neutral"} for k in range(100, 110)]
    path = write_jsonl(tmp_path / "mixed.jsonl", records)
    assert main(["evaluate", "--task", "nli", "--gold", str(DEMO_BENCHMARK), "--pred", str(path)]) == 0
    evaluate_warning = next(line for line in capsys.readouterr().err.splitlines() if "WARNING" in line)
    assert main(["runs", "add", "--gold", str(DEMO_BENCHMARK), str(path)]) == 0
    out = capsys.readouterr()
    assert out.out.startswith("nli\tmixed\t") and "2/24 scored" in out.out
    assert evaluate_warning in out.err.splitlines()  # the same line: "this looks like the wrong gold: 10 of the 12 ..."
    assert "10 of the 12 predicted ids are not in it" in evaluate_warning


def test_guids_with_a_zero_width_space_are_said_to_carry_it_not_blamed_on_the_demo_gold(tmp_path, capsys):
    rows = demo_nli_rows()
    path = write_jsonl(tmp_path / "pasted.jsonl", [{"guid": r["guid"] + "\u200b", "label": r["gold_label"]} for r in rows])
    assert main(["evaluate", "--task", "nli", "--gold", str(DEMO_BENCHMARK), "--pred", str(path)]) == 1
    err = capsys.readouterr().err
    assert "carry invisible characters" in err and f"{rows[0]['guid']}\\u200b" in err
    assert "the embedded demo's guids end in" not in err


def test_duplicate_lines_are_counted_as_duplicates_not_as_unreadable(tmp_path):
    rows = demo_nli_rows()
    records = [{"guid": r["guid"], "label": r["gold_label"]} for r in rows]
    records += [{"guid": rows[0]["guid"], "label": "neutral"}, {"guid": rows[1]["guid"], "label": "neutral"}, {"label": "x"}]
    path = write_jsonl(tmp_path / "twice.jsonl", records)
    result = evaluate_file(TASKS["nli"], load_gold(TASKS["nli"], DEMO_BENCHMARK), path)
    assert result.coverage.n_scored == len(rows) and result.coverage.n_invalid == 1  # the line without a guid alone
    assert any(note.startswith("2 duplicate line(s)") for note in result.notes)
    assert sum("duplicate guid" in p.message for p in result.problems) == 2


def lm_eval_row(doc_id: int, gold_row: dict, answer: str) -> dict:
    """A row as lm-evaluation-harness --log_samples writes one for a generation task (fields as in its samples files)."""
    return {"doc_id": doc_id, "doc": gold_row, "target": "참", "arguments": {"gen_args_0": {"arg_0": "전제: ...", "arg_1": {"until": ["\n"]}}},
            "resps": [[answer]], "filtered_resps": [answer], "filter": "none", "metrics": ["exact_match"],
            "doc_hash": "0" * 64, "prompt_hash": "1" * 64, "target_hash": "2" * 64, "exact_match": 0.0}


@pytest.mark.parametrize("first_doc", ["ten_megabytes", "nested"])
def test_a_harness_log_with_a_huge_or_deeply_nested_first_line_is_still_recognised(tmp_path, first_doc):
    rows = demo_nli_rows()[:4]
    lines = [json.dumps(lm_eval_row(k, r, "참"), ensure_ascii=False) for k, r in enumerate(rows)]
    first = lm_eval_row(0, rows[0], "참")
    if first_doc == "ten_megabytes":
        first["doc"] = dict(rows[0], premise="가" * (10 * 1024 * 1024 // 3 + 1))  # 10 MB of UTF-8
        lines[0] = json.dumps(first, ensure_ascii=False)
        assert len(lines[0].encode()) > 10 * 1024 * 1024
    else:
        lines[0] = lines[0].replace('"metrics": ', '"deep": ' + "[" * 100_000 + "]" * 100_000 + ', "metrics": ', 1)
        with pytest.raises(RecursionError):
            json.loads(lines[0])
    log = tmp_path / "samples_klue_nli_gen_2026-12-02T05-00-00.123456.jsonl"
    log.write_text("\n".join(lines) + "\n", encoding="utf-8")
    runs = expand(log.name, log.read_bytes())
    facts = json.loads(runs[0].data.split(b"\n", 1)[0])["klue_viz_log"]
    assert facts["format"] == "lm-evaluation-harness" and facts["task"] == "klue_nli_gen"
    result = evaluate_file(TASKS["nli"], load_gold(TASKS["nli"], DEMO_BENCHMARK), log)
    if first_doc == "ten_megabytes":
        assert result.coverage.n_scored == 4
    else:  # the nested line cannot be read as JSON: listed on its line, the other three are scored
        assert result.coverage.n_scored == 3 and any(p.line == 1 and "not a JSON line" in p.message for p in result.problems)


def test_a_gzip_whose_trailer_declares_more_than_the_limit_is_refused_before_unpacking(tmp_path, monkeypatch):
    """3 MB of one byte compresses to a few KB; its trailer says 3 MB: refused against a 1 MB limit without unpacking."""
    monkeypatch.setenv("KLUE_VIZ_MAX_UPLOAD_MB", "1")
    packed = gzip.compress(b"{" * (3 * 1024 * 1024))
    assert len(packed) < 10_000 and int.from_bytes(packed[-4:], "little") == 3 * 1024 * 1024
    unpacked = []
    real = gzip.GzipFile
    monkeypatch.setattr(gzip, "GzipFile", lambda *a, **k: unpacked.append(1) or real(*a, **k))
    with pytest.raises(InputError, match=r"bomb\.jsonl\.gz \(unpacked, as its gzip trailer says\) is 3\.0 MB, over the 1\.0 MB limit"):
        expand("bomb.jsonl.gz", packed)
    assert unpacked == []
