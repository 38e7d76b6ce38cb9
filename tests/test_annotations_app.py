"""Tagging in the app (AppTest): the per-example editor, bulk tags, tags as a filter, import and export on the home page."""

from __future__ import annotations

import json
import re

import pytest
from streamlit.testing.v1 import AppTest

from klue_viz.store.annotations import Annotation, Store
from klue_viz.ui.home import PAGE_FILES
from tests.conftest import REPO
from tests.test_app import plain, shown_count

pytestmark = pytest.mark.slow  # every test here opens whole pages in AppTest


def open_as(name: str, page: str | None = None) -> AppTest:
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=120).run()
    at.sidebar.text_input(key="annotator_widget").set_value(name).run()
    if page:
        at.switch_page(page).run()
    assert not at.exception
    return at


def first_form(at: AppTest):
    switch = next(t for t in at.toggle if t.label == "Annotate")
    if not switch.value:
        switch.set_value(True).run()
    tags = next(m for m in at.multiselect if m.label == "Error tags")
    save = next(b for b in at.button if b.label == "Save")
    return tags, save


def test_tag_an_example_and_find_it_as_a_filter_and_a_slice(monkeypatch, tmp_path):
    monkeypatch.setenv("KLUE_VIZ_DB", str(tmp_path / "a.sqlite3"))
    at = open_as("지민", PAGE_FILES["ner"])
    tags, save = first_form(at)
    tags.set_value(["boundary", "gold error"])
    save.click().run()
    assert not at.exception
    stored = Store(str(tmp_path / "a.sqlite3")).find(task="ner")
    assert [(a.annotator, a.tags, a.run) for a in stored] == [("지민", ["boundary", "gold error"], "bert-crf")]
    at.multiselect(key="f_tags").set_value(["boundary"]).run()
    assert shown_count(at)[0] == 1
    assert any("share_of_errors" in df.value.columns for df in at.dataframe)


def test_a_second_session_saving_the_same_record_is_told_who_changed_it(monkeypatch, tmp_path):
    monkeypatch.setenv("KLUE_VIZ_DB", str(tmp_path / "b.sqlite3"))
    first = open_as("지민", PAGE_FILES["nli"])
    second = open_as("지민", PAGE_FILES["nli"])
    first_tags, first_save = first_form(first)
    second_tags, second_save = first_form(second)  # both forms are open on the same, still empty record
    first_tags.set_value(["negation"])
    first_save.click().run()
    second_tags.set_value(["ambiguous"])
    second_save.click().run()
    assert any("Your version was not saved" in w.value for w in second.warning)
    record = Store(str(tmp_path / "b.sqlite3")).find(task="nli")[0]
    assert record.tags == ["negation"]
    next(b for b in second.button if b.label == "Overwrite with mine").click().run()
    assert Store(str(tmp_path / "b.sqlite3")).find(task="nli")[0].tags == ["ambiguous"]


def test_bulk_tagging_the_filtered_examples(monkeypatch, tmp_path):
    monkeypatch.setenv("KLUE_VIZ_DB", str(tmp_path / "c.sqlite3"))
    at = open_as("서연", PAGE_FILES["ynat"])
    at.radio(key="f_status").set_value("wrong").run()
    wrong = shown_count(at)[0]
    at.multiselect(key="bulk_tag_values").set_value(["ambiguous"])
    next(b for b in at.button if b.label.startswith("Tag ")).click().run()
    assert len(Store(str(tmp_path / "c.sqlite3")).find(task="ynat")) == wrong


def test_home_page_exports_and_imports_with_the_plan_shown_first(monkeypatch, tmp_path):
    monkeypatch.setenv("KLUE_VIZ_DB", str(tmp_path / "d.sqlite3"))
    Store(str(tmp_path / "d.sqlite3")).save(Annotation("re", "klue-re-v1_dev_00001", "gold", "지민", tags=["gold error"], gold_wrong=True))
    at = open_as("지민")
    assert any("d.sqlite3" in plain(c.value) and "1 record" in c.value for c in at.caption)
    record = {"task": "re", "guid": "klue-re-v1_dev_00002", "turn": None, "run": "x", "tags": ["similar relation"], "note": "",
              "gold_wrong": False, "corrected_label": None, "annotator": "서연", "updated_at": "2026-01-01T00:00:00.000+00:00"}
    at.file_uploader(key="import_annotations").set_value(("shared.jsonl", json.dumps(record, ensure_ascii=False).encode(), "application/json")).run()
    assert any("1 to add, 0 to update, 0 in conflict" in i.value for i in at.info)
    plan = next(df.value for df in at.dataframe if "change" in df.value.columns)
    assert plan[["change", "task", "guid", "run", "annotator", "tags"]].values.tolist() == [
        ["add", "re", "klue-re-v1_dev_00002", "x", "서연", "similar relation"]]
    assert len(Store(str(tmp_path / "d.sqlite3")).find()) == 1  # nothing written before the user applies it
    at.button(key="apply_import").click().run()
    assert len(Store(str(tmp_path / "d.sqlite3")).find()) == 2


def test_an_unreadable_database_is_explained_and_kept(monkeypatch, tmp_path):
    path = tmp_path / "broken.sqlite3"
    path.write_bytes(b"not a database" * 64)
    monkeypatch.setenv("KLUE_VIZ_DB", str(path))
    at = open_as("지민")
    assert any("integrity check" in plain(e.value) for e in at.error)
    at.button(key="new_db").click().run()
    assert not at.exception and path.exists() and list(tmp_path.glob("broken.sqlite3.unreadable-*"))


def test_a_busy_database_is_reported_busy_and_cannot_be_set_aside_from_the_page(monkeypatch, tmp_path):
    import sqlite3

    from klue_viz.store import annotations as store_module

    path = tmp_path / "busy.sqlite3"
    monkeypatch.setenv("KLUE_VIZ_DB", str(path))
    monkeypatch.setattr(store_module, "BUSY_TIMEOUT", 0.2)
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("PRAGMA journal_mode=WAL")
    holder.execute("BEGIN EXCLUSIVE")  # a new database another process is creating
    try:
        at = open_as("지민")
        assert not at.exception
        assert any("busy" in w.value for w in at.warning) and not any("integrity" in plain(e.value) for e in at.error)
        assert not [b for b in at.button if b.key == "new_db"]
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    at.button(key="store_retry").click().run()
    assert not at.exception and any("record(s)" in plain(c.value) for c in at.caption)
    assert not list(tmp_path.glob("busy.sqlite3.unreadable-*"))


def test_a_failed_save_keeps_the_note_and_the_rest_of_the_page(monkeypatch, tmp_path):
    """The database going away mid-session: a message in the annotate box, the note still typed, the page whole."""
    from sqlalchemy.exc import OperationalError

    monkeypatch.setenv("KLUE_VIZ_DB", str(tmp_path / "c.sqlite3"))
    at = open_as("지민", PAGE_FILES["ynat"])
    drawn_before = sum('class="kv-example"' in m.value for m in at.markdown)
    first_form(at)
    note_box = next(t for t in at.text_area if t.label == "Note")
    note_box.set_value("제목만 보고는 알 수 없음")

    def gone(self, item, expected_version=None):
        raise OperationalError("UPDATE annotations", {}, Exception("server closed the connection unexpectedly"))

    monkeypatch.setattr(Store, "save", gone)
    next(b for b in at.button if b.label == "Save").click().run()
    assert not at.exception
    assert not any("Something went wrong" in e.value for e in at.error)
    assert any("Not saved" in e.value and "still in the form" in e.value for e in at.error)
    assert next(t for t in at.text_area if t.label == "Note").value == "제목만 보고는 알 수 없음"
    assert sum('class="kv-example"' in m.value for m in at.markdown) == drawn_before


def test_an_error_inside_the_example_list_stays_inside_it(monkeypatch):
    """A fragment that fails shows the guard's message, not a traceback."""
    import klue_viz.ui.task_page as task_page

    at = open_as("", PAGE_FILES["ynat"])
    monkeypatch.setattr(task_page, "annotations_by_example", lambda *a: (_ for _ in ()).throw(KeyError("boom")))
    at.radio(key="f_status").set_value("wrong").run()
    assert not at.exception
    assert any("Something went wrong" in e.value and "KeyError" in e.value for e in at.error)
    assert at.metric, "the page above the example list is still drawn"

def test_the_tag_slice_shows_shares_as_percentages_and_metrics_with_two_decimals(monkeypatch, tmp_path):
    monkeypatch.setenv("KLUE_VIZ_DB", str(tmp_path / "p.sqlite3"))
    at = open_as("지민", PAGE_FILES["ner"])
    at.radio(key="f_status").set_value("wrong").run()
    tags, save = first_form(at)
    tags.set_value(["boundary"])
    save.click().run()
    table = next(df.value for df in at.dataframe if "share_of_errors" in df.value.columns)
    wrong = shown_count(at)[0]
    assert table["share_of_errors"].tolist() == [f"{100 / wrong:.1f}%"]
    assert all(re.fullmatch(r"\d+\.\d\d|n/a", v) for v in table[["entity_macro_f1", "character_macro_f1"]].to_numpy().ravel())


def test_the_import_plan_lists_the_records_in_conflict_with_the_newer_stored_one(monkeypatch, tmp_path):
    monkeypatch.setenv("KLUE_VIZ_DB", str(tmp_path / "e.sqlite3"))
    Store(str(tmp_path / "e.sqlite3")).save(Annotation("re", "klue-re-v1_dev_00001", "gold", "지민", tags=["gold error"]))
    old = {"task": "re", "guid": "klue-re-v1_dev_00001", "turn": None, "run": "gold", "tags": ["ambiguous"], "note": "",
           "gold_wrong": False, "corrected_label": None, "annotator": "지민", "updated_at": "2020-01-01T00:00:00.000+00:00"}
    at = open_as("지민")
    at.file_uploader(key="import_annotations").set_value(("old.jsonl", json.dumps(old, ensure_ascii=False).encode(), "application/json")).run()
    plan = next(df.value for df in at.dataframe if "change" in df.value.columns)
    assert plan["change"].tolist() == ["conflict"] and plan["tags"].tolist() == ["ambiguous"]
    assert plan["stored (newer)"].iloc[0].startswith("지민, ") and plan["stored (newer)"].iloc[0].endswith("UTC: gold error")


def test_a_gold_correction_made_with_about_this_run_counts_for_the_review_queue(monkeypatch, tmp_path):
    """Issue 28, item 9: "Gold looks wrong" and a corrected label typed while About is "this run" (the default) are
    saved on the annotator's gold record, where the review decisions and gold versions read them; the tags stay on
    the run. A gold note kept there before survives the save."""
    from klue_viz.discovery.review import accepted_corrections
    from klue_viz.tasks import get_task

    db_path = str(tmp_path / "g.sqlite3")
    monkeypatch.setenv("KLUE_VIZ_DB", db_path)
    at = open_as("지민", PAGE_FILES["nli"])
    guid = next(t for t in at.toggle if t.label == "Annotate").key.split("|")[1]
    Store(db_path).save(Annotation("nli", guid, "gold", "지민", note="전제가 모호함"))
    tags, save = first_form(at)
    assert next(r for r in at.radio if r.label == "About").value == "this run"
    assert any("saved on your gold record" in plain(c.value) for c in at.caption)
    tags.set_value(["negation"])
    next(c for c in at.checkbox if c.label == "Gold looks wrong").check()
    next(t for t in at.text_input if t.label == "Corrected label (optional)").set_value("neutral")
    save.click().run()
    assert not at.exception and not at.warning
    stored = {a.run: a for a in Store(db_path).find(task="nli", guid=guid)}
    assert stored["gold"].gold_wrong and stored["gold"].corrected_label == "neutral" and stored["gold"].note == "전제가 모호함"
    run = next(name for name in stored if name != "gold")
    assert stored[run].tags == ["negation"] and not stored[run].gold_wrong and stored[run].corrected_label is None
    corrections = accepted_corrections(get_task("nli"), Store(db_path).find(task="nli"))
    assert [(c.guid, c.correction, c.annotator) for c in corrections] == [(guid, "neutral", "지민")]
