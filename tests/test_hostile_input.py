"""Hostile prediction inputs that must end in a clear error naming the file, never a traceback, a hang or gigabytes
of memory (issue 29 items 3, 4, 14): damaged and bomb-sized compressed files, zips given as one prediction file."""

from __future__ import annotations

import gzip
import zlib
from pathlib import Path

import pytest

from klue_viz.cli.main import main
from klue_viz.core.problems import InputError
from klue_viz.reading.demo import DEMO_BENCHMARK, demo_runs
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
