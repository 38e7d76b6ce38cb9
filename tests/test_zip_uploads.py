"""Zip uploads (issue 19, item 14): a member whose header understates its size is named; members are limited."""

from __future__ import annotations

import io
import struct
import zipfile

import pytest

from klue_viz.core.problems import InputError
from klue_viz.reading.demo import demo_runs
from klue_viz.scoring.benchmark import MAX_ZIP_MEMBERS, prediction_files


def zipped(members: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return out.getvalue()


def understated(data: bytes, size: int) -> bytes:
    """The zip with every header's uncompressed size replaced by `size` (as a hostile zip writes it)."""
    raw = bytearray(data)
    for signature, offset in ((b"PK\x03\x04", 22), (b"PK\x01\x02", 24)):
        at = raw.find(signature)
        while at >= 0:
            raw[at + offset: at + offset + 4] = struct.pack("<I", size)
            at = raw.find(signature, at + 4)
    return bytes(raw)


def test_a_member_whose_header_understates_its_size_is_named():
    good = next(demo_runs("nli")).read_bytes()
    data = understated(zipped({"model/nli.jsonl": good}), 10)
    with pytest.raises(InputError, match=r"model\.zip/model/nli\.jsonl.*damaged"):
        prediction_files("model.zip", data)


def test_a_zip_of_more_members_than_the_limit_is_refused_saying_how_many_and_why():
    one = next(demo_runs("nli")).read_bytes()
    data = zipped({f"m/run{k}.jsonl": one for k in range(300)})
    with pytest.raises(InputError) as refused:
        prediction_files("many.zip", data)
    message = str(refused.value)
    assert "300 prediction files" in message and f"at most {MAX_ZIP_MEMBERS}" in message and "one model" in message


def test_a_zip_at_the_limit_is_read():
    one = next(demo_runs("nli")).read_bytes()
    assert len(prediction_files("ok.zip", zipped({f"m/run{k}.jsonl": one for k in range(MAX_ZIP_MEMBERS)}))) == MAX_ZIP_MEMBERS
