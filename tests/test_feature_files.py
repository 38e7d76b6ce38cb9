"""Column files kept in the annotation database: stored once per content and task, found by the start of their address."""

from __future__ import annotations

import hashlib

import pytest

from klue_viz.reading.uploads import MAX_UPLOAD_ENV, RunTooLarge
from klue_viz.store.annotations import Store
from klue_viz.store.feature_files import FeatureFileStore


def test_a_file_is_stored_once_and_read_back_by_another_store(db_url):
    data = b"guid,length\nklue-nli-v1_dev_00000,3\n"
    files = FeatureFileStore(Store(db_url))
    first = files.add("nli", "mine.csv", data, uploader="kim")
    again = files.add("nli", "renamed.csv", data)
    assert first == again and first.sha256 == hashlib.sha256(data).hexdigest() and first.file_name == "mine.csv"
    other = FeatureFileStore(Store(db_url))
    assert [f.sha256 for f in other.list("nli")] == [first.sha256] and other.list("ner") == []
    assert other.data("nli", first.sha256) == data and other.data("ner", first.sha256) is None
    assert other.find("nli", first.sha256[:12]) == first and other.find("nli", "") is None and other.find("nli", "0" * 12) is None
    files.add("ner", "mine.csv", data)  # the same bytes for another task are another file
    assert len(other.list("ner")) == 1


def test_the_upload_limit_holds(db_url, monkeypatch):
    monkeypatch.setenv(MAX_UPLOAD_ENV, "0.0001")
    with pytest.raises(RunTooLarge):
        FeatureFileStore(Store(db_url)).add("nli", "big.csv", b"x" * 1000)
