"""Gold versions in the database (SQLite, and PostgreSQL when KLUE_VIZ_TEST_PG names one): kept, named, listed newest first."""

from __future__ import annotations

import pytest

from klue_viz.store.annotations import Store, StoreError
from klue_viz.store.gold_versions import GoldVersions

CORRECTION = {"guid": "klue-nli-v1_dev_00005", "correction": "entailment", "turn": None, "annotator": "kim", "note": "", "updated_at": ""}


def test_versions_are_kept_with_their_corrections_and_a_taken_name_gets_a_suffix(db_url):
    versions = GoldVersions(Store(db_url))
    first = versions.add("nli", "dev + corrections, 1 record, 2026-12-01", "dev.json", 1, [CORRECTION], created_by="kim")
    second = versions.add("nli", "dev + corrections, 1 record, 2026-12-01", "dev.json", 1, [CORRECTION])
    assert second.name == "dev + corrections, 1 record, 2026-12-01 (2)"
    again = GoldVersions(Store(db_url))
    assert [v.name for v in again.for_task("nli")] == [second.name, first.name]
    kept = again.get("nli", first.name)
    assert kept.corrections == [CORRECTION] and kept.created_by == "kim" and kept.records == 1
    assert again.for_task("sts") == [] and again.get("nli", "nope") is None
    with pytest.raises(StoreError, match="at least one correction"):
        again.add("nli", "empty", "dev.json", 0, [])
