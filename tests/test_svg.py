"""Standalone SVG drawings: well-formed XML for every task, file text kept as text, Hangul fonts named, offline in Chromium."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from klue_viz.drawing.svg import spans_drawing
from klue_viz.outputs.example_document import drawing_document, example_svg, svg_name
from klue_viz.reading.demo import DEMO_BENCHMARK
from klue_viz.scoring.evaluate import evaluate_bytes, evaluate_file, gold_from_bytes, load_gold
from klue_viz.tasks import TASKS, get_task
from tests.conftest import REPO, jsonl

SVG = "{http://www.w3.org/2000/svg}"
HOSTILE = '<script>alert("x")</script> & 김 씨는 서울에 <b>갔다</b>'


def parse(svg: str) -> ET.Element:
    assert svg.startswith('<?xml version="1.0" encoding="UTF-8"?>')
    return ET.fromstring(svg.encode("utf-8"))


def texts(root: ET.Element) -> str:
    return "".join("".join(t.itertext()) for t in root.iter(f"{SVG}text"))


def hostile_ner():
    """A one-sentence NER gold whose text is markup, with 김 씨 a PS and 서울 an LC, and a run that misses 서울."""
    task = get_task("ner")
    tags = ["O"] * len(HOSTILE)
    start = HOSTILE.index("김 씨")
    tags[start], tags[start + 1], tags[start + 2] = "B-PS", "I-PS", "I-PS"
    seoul = HOSTILE.index("서울")
    tags[seoul], tags[seoul + 1] = "B-LC", "I-LC"
    tsv = "## klue-ner-v1_dev_00000-hostile\t" + HOSTILE + "\n" + "".join(f"{c}\t{t}\n" for c, t in zip(HOSTILE, tags)) + "\n"
    gold = gold_from_bytes(task, tsv.encode("utf-8"), "hostile.tsv")
    pred = list(tags)
    pred[seoul] = pred[seoul + 1] = "O"
    return task, evaluate_bytes(task, gold, jsonl([{"guid": gold.rows[0]["guid"], "tags": pred}]), "run.jsonl")


def test_a_hostile_sentence_stays_text():
    task, result = hostile_ner()
    svg = example_svg(task, result.frames, [result.frames.examples["guid"].iloc[0]])
    root = parse(svg)
    assert not list(root.iter(f"{SVG}script")) and not list(root.iter("{http://www.w3.org/2000/svg}b"))
    assert "<script>" not in svg and "&#60;script&#62;" in svg
    shown = texts(root)
    assert HOSTILE.split(" ")[0] in shown.replace("\u2060", "") and "&" in shown  # the markup is there, as text
    assert root.get("font-family") == "'Noto Sans CJK KR', sans-serif"
    statuses = [r.get("data-status") for r in root.iter(f"{SVG}rect") if r.get("class") == "kv-mark"]
    assert statuses.count("missed") == 1 and statuses.count("correct") == 2  # 김 씨 right on both rows, 서울 missed in gold
    legend = "".join(next(g for g in root.iter(f"{SVG}g") if g.get("class") == "kv-legend").itertext())
    assert "PS" in legend and "LC" in legend and "missed" in legend


@pytest.mark.parametrize("name", list(TASKS))
def test_every_task_draws_a_wrong_example_as_well_formed_svg(name):
    task = TASKS[name]
    gold = load_gold(task, DEMO_BENCHMARK)
    run = sorted((REPO / "klue_viz" / "demo" / "runs" / name).iterdir())[0]
    result = evaluate_file(task, gold, run)
    ex = result.frames.examples
    guid = ex.loc[~ex["correct"].astype(bool), "guid"].iloc[0]
    root = parse(example_svg(task, result.frames, [guid]))
    assert float(root.get("width")) > 100 and float(root.get("height")) > 50
    assert texts(root)  # some text is drawn
    title = root.find(f"{SVG}title").text
    assert guid.split("-")[0] in title.replace("\u2060", "") or result.frames.example(guid).get("dialogue", "") in title


def test_control_characters_and_nonxml_characters_are_codes():
    doc = {"title": "t", "rows": [{"side": "x", "text": "a\x01b\uffffc", "marks": [{"start": 0, "end": 1, "tag": "\x07", "status": "correct"}]}]}
    root = parse(spans_drawing(doc))
    assert "\\u0001" in texts(root) and "\\uffff" in texts(root)


def test_svg_name_is_a_safe_file_name():
    assert svg_name(get_task("wos"), "my run/../x", "wos-v1_dev_00000") == "wos-my_run____x-wos-v1_dev_00000.svg"


def test_dp_drawing_keeps_every_arc():
    task = get_task("dp")
    gold = load_gold(task, DEMO_BENCHMARK)
    result = evaluate_file(task, gold, REPO / "klue_viz" / "demo" / "runs" / "dp" / "biaffine-bert.jsonl")
    guid = result.frames.examples["guid"].iloc[0]
    doc = drawing_document(task, result.frames, [guid])
    root = parse(example_svg(task, result.frames, [guid]))
    arcs = [g for g in root.iter(f"{SVG}g") if g.get("class") == "kv-arc"]
    assert len(arcs) == len(doc["arcs"]) == 2 * len(result.frames.rows(guid, "words"))

