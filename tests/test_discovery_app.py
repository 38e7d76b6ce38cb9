"""The 'Find the errors' panel through Streamlit's AppTest, on the demo runs."""

from __future__ import annotations

import json

import pytest

from klue_viz.ui.home import PAGE_FILES
from tests.test_app import open_page, plain, shown_count

pytestmark = pytest.mark.slow  # every test here opens whole pages in AppTest


def test_calibration_view_shows_ece_for_a_run_with_probabilities():
    at = open_page(PAGE_FILES["ynat"])
    assert not at.exception
    at.segmented_control(key="discovery_view").set_value("Calibration").run()
    assert any("ECE" in m.value and "MCE" in m.value for m in at.markdown)
    assert any(list(df.value.columns)[:3] == ["from", "to", "n"] for df in at.dataframe)


def test_a_run_without_probabilities_says_where_the_calibration_view_is():
    """Issue 28, item 8: the view is offered only for a run that gave probabilities; inspecting YNAT's llm-zero-shot (no
    probs) says so and where to find it, and inspecting bert-base (probs) offers the view without the hint."""
    at = open_page(PAGE_FILES["ynat"])
    at.selectbox(key="run").set_value("llm-zero-shot").run()
    assert not at.exception
    assert "Calibration" not in at.segmented_control(key="discovery_view").options
    hint = next(plain(c.value) for c in at.caption if plain(c.value).startswith("Calibration:"))
    assert "llm-zero-shot gave no class probabilities" in hint and "run picker above" in hint
    at.selectbox(key="run").set_value("bert-base").run()
    assert "Calibration" in at.segmented_control(key="discovery_view").options
    assert not any(plain(c.value).startswith("Calibration:") for c in at.caption)


def test_weak_slices_view_lists_slices_for_one_run_and_for_two():
    at = open_page(PAGE_FILES["nli"])
    at.segmented_control(key="discovery_view").set_value("Weak slices").run()
    assert not at.exception
    tables = [df.value for df in at.dataframe if "slice" in df.value.columns]
    assert tables and len(tables[0]) >= 1
    other = next(name for name in ("llm-few-shot", "roberta-base") if name not in at.selectbox(key="discovery_against").options[0])
    at.selectbox(key="discovery_against").set_value(other).run()
    assert not at.exception
    assert any("worse run" in df.value.columns for df in at.dataframe)


def test_the_weak_slices_show_error_rates_as_the_slice_table_does():
    """A share is a percentage with one decimal everywhere (the weak slices read '33.77' beside the slice table's '56.4%')."""
    at = open_page(PAGE_FILES["nli"])
    at.segmented_control(key="discovery_view").set_value("Weak slices").run()
    formats = {}
    for df in at.dataframe:
        for column, config in json.loads(df.proto.columns).items():
            if column in ("error rate", "error_rate"):
                formats["weak" if "slice" in df.value.columns else "slices"] = (config.get("label", column), config["type_config"]["format"])
    assert formats["weak"] == formats["slices"] == ("error rate", "%.1f%%")


def test_a_chosen_slice_gives_its_interval_and_becomes_the_filter():
    at = open_page(PAGE_FILES["nli"])
    at.segmented_control(key="discovery_view").set_value("Weak slices").run()
    at.session_state["weak_slice_table"] = {"selection": {"rows": [0], "columns": [], "cells": []}}
    at.run()
    assert not at.exception and any("95% interval" in plain(c.value) for c in at.caption)
    before = shown_count(at)
    at.button(key="apply_weak_slice").click().run()
    after = shown_count(at)
    assert not at.exception and after[0] < before[0] and after[1] == before[1]
    assert len(at.session_state["f_guids"]) == after[0]
    # a found slice replaces the filters set before (a text search here), so the list is the slice itself
    at.text_input(key="f_text").set_value("없는 문자열").run()
    assert shown_count(at)[0] == 0
    at.button(key="apply_weak_slice").click().run()
    assert shown_count(at)[0] == len(at.session_state["f_guids"]) == after[0] and at.text_input(key="f_text").value == ""


def test_suspect_queue_marks_gold_wrong_and_offers_the_patch():
    at = open_page(PAGE_FILES["ynat"])
    at.sidebar.text_input(key="annotator_widget").set_value("검토자").run()
    at.segmented_control(key="discovery_view").set_value("Likely gold errors").run()
    assert not at.exception
    queue = next(df.value for df in at.dataframe if "proposed" in df.value.columns)
    at.session_state["suspect_table"] = {"selection": {"rows": [0], "columns": [], "cells": []}}
    at.run()
    evidence = next(df.value for df in at.dataframe if list(df.value.columns)[:2] == ["run", "answer"])  # which runs, which label, how sure
    assert set(evidence["run"]) == set(at.selectbox(key="run").options) and queue["proposed"][0] in set(evidence["answer"])
    assert "confidence" in evidence and evidence["confidence"].notna().any()
    at.button(key="mark_suspect").click().run()
    assert not at.exception
    from klue_viz.store.annotations import Store

    stored = [a for a in Store().find(task="ynat", run="gold") if a.annotator == "검토자"]
    assert [(a.guid, a.corrected_label, a.gold_wrong) for a in stored] == [(queue["guid"][0], queue["proposed"][0], True)]
    assert any(b.label.startswith("Download the 1 corrected") for b in at.get("download_button"))


def test_training_upload_adds_the_seen_in_training_slice(shared):
    text = (shared / "klue-ner-v1.1" / "klue-ner-v1.1_dev.tsv").read_text(encoding="utf-8")
    at = open_page(PAGE_FILES["ner"])
    at.segmented_control(key="discovery_view").set_value("Weak slices").run()
    # the operator's upload limit holds for a training file as for a prediction file
    assert at.file_uploader(key="train_upload").proto.max_upload_size_mb == at.file_uploader(key="pred_upload").proto.max_upload_size_mb
    at.file_uploader(key="train_upload").set_value([("klue-ner-v1.1_train.tsv", "\n\n".join(text.split("\n\n")[:400]).encode(), "text/plain")]).run()
    assert not at.exception
    assert any("Entity seen in training" in m.value for m in at.markdown)
    assert any(set(df.value.get("value", [])) & {"not in training", "seen once"} for df in at.dataframe)


def test_sort_page_size_and_compact_table():
    at = open_page(PAGE_FILES["sts"])
    at.selectbox(key="sort_by").set_value("largest |gold - predicted| first").run()
    at.selectbox(key="page_size").set_value(25).run()
    assert not at.exception
    drawn_guids = [m.value.split('data-guid="')[1].split('"')[0] for m in at.markdown if 'class="kv-example"' in m.value]
    from klue_viz.reading.demo import DEMO_BENCHMARK, demo_runs
    from klue_viz.scoring.evaluate import evaluate_file, load_gold
    from klue_viz.tasks import get_task

    task = get_task("sts")
    run = evaluate_file(task, load_gold(task, DEMO_BENCHMARK), next(demo_runs("sts")))
    errors = run.frames.examples.set_index("guid")["abs_error"]
    assert len(drawn_guids) == min(25, len(errors))
    assert [errors[g] for g in drawn_guids] == sorted(errors[drawn_guids], reverse=True)
    at.toggle(key="compact").set_value(True).run()
    assert not at.exception
    table = next(df.value for df in at.dataframe if "sentence1" in df.value.columns)
    assert len(table) == len(drawn_guids)
    at.session_state["compact_table"] = {"selection": {"rows": [0], "columns": [], "cells": []}}
    at.run()
    assert len([m for m in at.markdown if 'class="kv-example"' in m.value]) == 1


def test_hostile_run_name_stays_text_in_every_discovery_view():
    """A run named with HTML and Markdown: escaped in the reliability title, captions, buttons and tables."""
    import json
    import re

    from klue_viz.reading.demo import DEMO_BENCHMARK
    from klue_viz.scoring.evaluate import load_gold
    from klue_viz.tasks import get_task

    hostile = "<img src=x onerror=alert(1)>[x](javascript:alert(1))"  # no '/': the run is named after the file
    rows = load_gold(get_task("ynat"), DEMO_BENCHMARK).rows
    labels = get_task("ynat").labels
    data = "\n".join(json.dumps({"guid": r["guid"], "label": labels[(labels.index(r["gold"]) + 1) % 7],
                                 "probs": [0.9 if l == labels[(labels.index(r["gold"]) + 1) % 7] else 0.1 / 6 for l in labels]})
                     for r in rows).encode()
    at = open_page(PAGE_FILES["ynat"])
    at.file_uploader(key="pred_upload").set_value([(f"{hostile}.jsonl", data, "application/json")]).run()
    at.selectbox(key="run").set_value(next(o for o in at.selectbox(key="run").options if "javascript" in o)).run()
    for view in ("Calibration", "Weak slices", "Likely gold errors"):
        at.segmented_control(key="discovery_view").set_value(view).run()
        assert not at.exception
        # the run header of the metrics section (task_page's own, "<b>run</b> (file)") is checked by test_app.py
        texts = [m.value for m in at.markdown if not m.value.startswith("<b>")] + [c.value for c in at.caption] + [b.label for b in at.button]
        raw = re.compile(r"(?<!\\)<img src=x|(?<!\\)\]\(javascript")  # unescaped HTML or Markdown link
        assert not any(raw.search(t) for t in texts), [t for t in texts if raw.search(t)]
        charts = [str(e.proto) for e in at.get("plotly_chart")]
        assert not any("<img src=x" in c for c in charts)
        if view == "Calibration":
            assert any("&lt;img" in c for c in charts)


def test_a_paired_slice_gives_the_paired_interval_and_filters_to_the_slice_compared():
    """Two runs: the chosen slice's interval is of the difference between the runs, and the filter holds the sentences of
    the gold entities the runs were compared on (the count the finder reports)."""
    at = open_page(PAGE_FILES["ner"])
    at.segmented_control(key="discovery_view").set_value("Weak slices").run()
    inspected = at.selectbox(key="run").value
    other = next(name for name in at.selectbox(key="run").options if name != inspected)
    at.selectbox(key="discovery_against").set_value(other).run()
    table = next(df.value for df in at.dataframe if "worse run" in df.value.columns)
    at.session_state["weak_slice_table"] = {"selection": {"rows": [0], "columns": [], "cells": []}}
    at.run()
    assert not at.exception
    caption = next(plain(c.value) for c in at.caption if "resamples)" in plain(c.value))
    assert "paired bootstrap" in caption and " − " in caption
    from klue_viz.discovery.slices import paired_slices
    from klue_viz.reading.demo import DEMO_BENCHMARK, demo_runs
    from klue_viz.scoring.evaluate import evaluate_file, load_gold
    from klue_viz.tasks import get_task

    task = get_task("ner")
    gold = load_gold(task, DEMO_BENCHMARK)
    runs = {p.stem: evaluate_file(task, gold, p) for p in demo_runs("ner")}
    first = paired_slices(task, runs[inspected], runs[other], top=1)[0]
    assert table["size"][0] == first.size
    at.button(key="apply_weak_slice").click().run()
    assert len(at.session_state["f_guids"]) == first.examples


def test_a_tag_slices_interval_follows_the_tags_stored_since():
    """The interval of a chosen slice is of the examples it covers now: tagging more examples changes a tag slice."""
    from klue_viz.reading.demo import DEMO_BENCHMARK, demo_runs
    from klue_viz.scoring.bootstrap import confidence_intervals
    from klue_viz.scoring.evaluate import evaluate_file, load_gold
    from klue_viz.store.annotations import Annotation, Store
    from klue_viz.tasks import get_task

    task = get_task("nli")
    path = next(demo_runs("nli"))
    run = evaluate_file(task, load_gold(task, DEMO_BENCHMARK), path)
    examples = run.frames.examples
    wrong, right = examples.loc[~examples["correct"], "guid"].tolist(), examples.loc[examples["correct"], "guid"].tolist()
    db = Store()

    def tag_and_choose(guids: list[str]) -> str:
        for guid in guids:
            db.save(Annotation("nli", guid, path.stem, "지민", tags=["모호함"]))
        at.run()
        table = next(df.value for df in at.dataframe if "slice" in df.value.columns)
        row = next(k for k, text in enumerate(table["slice"]) if text == "Tagged '모호함' = yes")
        at.session_state["weak_slice_table"] = {"selection": {"rows": [row], "columns": [], "cells": []}}
        at.run()
        return next(plain(c.value) for c in at.caption if "resamples)" in plain(c.value))

    at = open_page(PAGE_FILES["nli"])
    at.selectbox(key="run").set_value(path.stem).run()
    first = wrong[:4] + right[:6]
    assert "10 pairs" in tag_and_choose(first)
    caption = tag_and_choose(wrong[4:] + right[6:9])
    tagged = sorted(set(first + wrong[4:] + right[6:9]))
    low, high = confidence_intervals(task, run.frames.subset(tagged), samples=200)["accuracy"]
    assert f"{len(tagged)} pairs" in caption and f"accuracy [{low:.2f}, {high:.2f}]" in caption


def test_the_train_file_of_the_gold_folder_adds_the_seen_in_training_slice(tmp_path, monkeypatch):
    """Gold from a klue_benchmark/ folder: its NER _train file is one toggle away (no upload of a large file)."""
    from klue_viz.reading.demo import DEMO_BENCHMARK

    folder = tmp_path / "klue_benchmark" / "klue-ner-v1.1"
    folder.mkdir(parents=True)
    dev = (DEMO_BENCHMARK / "klue-ner-v1.1" / "klue-ner-v1.1_dev.tsv").read_text(encoding="utf-8")
    (folder / "klue-ner-v1.1_dev.tsv").write_text(dev, encoding="utf-8")
    (folder / "klue-ner-v1.1_train.tsv").write_text("\n\n".join(dev.split("\n\n")[:5]), encoding="utf-8")
    monkeypatch.setenv("KLUE_VIZ_DATA_DIR", str(tmp_path / "klue_benchmark"))
    from klue_viz.reading.demo import demo_runs

    run = next(demo_runs("ner"))
    at = open_page(PAGE_FILES["ner"])
    at.file_uploader(key="pred_upload").set_value([(run.name, run.read_bytes(), "application/json")]).run()
    at.segmented_control(key="discovery_view").set_value("Weak slices").run()
    at.toggle(key="train_from_folder").set_value(True).run()
    assert not at.exception
    assert any("Entity seen in training" in m.value for m in at.markdown)
    values = next(set(df.value["value"]) for df in at.dataframe if "value" in df.value.columns and "not in training" in set(df.value["value"]))
    assert "seen once" in values or "seen 2-9 times" in values
