"""A save keeps every tag it did not remove on purpose (issue 19, item 2): tags outside the page's tag list survive."""

from __future__ import annotations

import pytest

from klue_viz.store.annotations import Annotation, Store
from klue_viz.ui.home import PAGE_FILES
from tests.test_annotations_app import open_as


def first_toggle_slot(at) -> tuple[str, str]:
    toggle = next(t for t in at.toggle if t.label == "Annotate")
    _, guid, run = toggle.key.split("|")
    return guid, run


@pytest.mark.slow
def test_an_imported_tag_outside_the_list_survives_a_note_edit(monkeypatch, tmp_path):
    path = str(tmp_path / "tags.sqlite3")
    monkeypatch.setenv("KLUE_VIZ_DB", path)
    probe = open_as("지민", PAGE_FILES["nli"])
    guid, run = first_toggle_slot(probe)
    db = Store(path)
    db.apply_import(db.plan_import([Annotation("nli", guid, run, "지민", tags=["negation", "team-custom-tag"], note="",
                                               updated_at="2026-01-01T00:00:00+00:00")]))
    at = open_as("지민", PAGE_FILES["nli"])
    next(t for t in at.toggle if t.label == "Annotate").set_value(True).run()
    tags = next(m for m in at.multiselect if m.label == "Error tags")
    assert set(tags.value) == {"negation", "team-custom-tag"} and "team-custom-tag" in tags.options
    next(t for t in at.text_area if t.label == "Note").set_value("부정어가 두 번")
    next(b for b in at.button if b.label == "Save").click().run()
    assert not at.exception
    stored = Store(path).get("nli", guid, run, "지민")
    assert (stored.tags, stored.note) == (["negation", "team-custom-tag"], "부정어가 두 번")


def test_imported_tags_join_the_tasks_tag_list(tmp_path):
    db = Store(str(tmp_path / "list.sqlite3"))
    db.apply_import(db.plan_import([Annotation("ner", "klue-ner-v1_dev_00000", "run", "지민", tags=["team-custom-tag", "boundary"],
                                               updated_at="2026-01-01T00:00:00+00:00")]))
    assert "team-custom-tag" in db.custom_tags("ner") and db.custom_tags("nli") == []
