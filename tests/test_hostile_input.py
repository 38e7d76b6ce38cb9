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
