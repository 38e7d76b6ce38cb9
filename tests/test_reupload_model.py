"""Re-uploading a stored file under a model name (issue 19, item 7): the name is assigned, or the page says where the file is."""

from __future__ import annotations

from klue_viz.reading.demo import demo_runs
from klue_viz.store.annotations import Store
from klue_viz.store.runs import RunStore
from klue_viz.ui.state import reupload_note


def test_a_stored_file_without_a_model_takes_the_model_it_is_uploaded_under_again(tmp_path):
    runs = RunStore(Store(str(tmp_path / "r.sqlite3")))
    data = next(demo_runs("nli")).read_bytes()
    first = runs.add("nli", "pred.jsonl", data)
    again = runs.add("nli", "pred.jsonl", data, model="mixmodel")
    assert (first.model, again.name, again.model) == ("", first.name, "mixmodel")
    assert [(r.name, r.model) for r in runs.list("nli")] == [(first.name, "mixmodel")]
    assert reupload_note("pred.jsonl", "mixmodel", again) == ""


def test_a_stored_file_of_another_model_is_named_where_it_is(tmp_path):
    runs = RunStore(Store(str(tmp_path / "r.sqlite3")))
    data = next(demo_runs("nli")).read_bytes()
    first = runs.add("nli", "pred.jsonl", data, model="klue-bert")
    again = runs.add("nli", "pred.jsonl", data, model="mixmodel")
    assert (again.name, again.model) == (first.name, "klue-bert")
    assert reupload_note("pred.jsonl", "mixmodel", again) == (
        f"pred.jsonl is already stored as run {first.name} of model klue-bert; it was not stored again under mixmodel "
        "(rename or remove that run on the home page to change it)")
