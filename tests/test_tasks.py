"""What every registered task promises: frames with its slices, confusion pairs, escaped drawings."""

from __future__ import annotations

import re

import pandas as pd
import pytest

from klue_viz.reading.demo import DEMO_BENCHMARK, demo_runs
from klue_viz.scoring.evaluate import evaluate_file, load_gold
from klue_viz.scoring.slicing import slice_table
from klue_viz.tasks import KLUE_ORDER, TASKS

ATTACK = "<img src=x onerror=alert(1)>"


def test_the_registry_holds_the_eight_tasks_in_klue_order():
    assert tuple(TASKS) == KLUE_ORDER


@pytest.fixture(scope="module", params=list(TASKS))
def demo_result(request):
    task = TASKS[request.param]
    gold = load_gold(task, DEMO_BENCHMARK)
    return evaluate_file(task, gold, next(demo_runs(task.facts.name)))


def test_frames_are_tidy_and_carry_every_slice(demo_result):
    task, frames = demo_result.task, demo_result.frames
    examples = frames.examples
    assert examples["guid"].is_unique
    for column in ("guid", "correct", "error_type"):
        assert column in examples.columns
    for spec in task.facts.slices:
        frame = examples if spec.level == "examples" else frames.details[spec.level]
        assert spec.key in frame.columns, (task.facts.name, spec.key)
        table = slice_table(task, frames, spec)
        assert table["n"].sum() == len(frame) and len(table) >= 1


def test_the_rows_of_one_example_are_those_a_scan_of_the_frame_finds(demo_result):
    """The drawings look examples up through an index built once per frame; it must find what a full scan finds."""
    frames = demo_result.frames
    for guid in frames.examples["guid"].tolist()[:12] + ["no-such-guid"]:
        scanned = frames.examples[frames.examples["guid"] == guid]
        if scanned.empty:
            assert not len(frames.positions(guid))
            with pytest.raises(KeyError):
                frames.example(guid)
        else:
            pd.testing.assert_series_equal(frames.example(guid), scanned.iloc[0])
        for level, detail in frames.details.items():
            pd.testing.assert_frame_equal(frames.rows(guid, level), detail[detail["guid"] == guid])
    if demo_result.task.view.card_column:  # a WoS dialogue: its turns, found by another column
        column = demo_result.task.view.card_column
        value = frames.examples[column].iloc[0]
        pd.testing.assert_frame_equal(frames.rows(value, by=column), frames.examples[frames.examples[column] == value])
    kept = frames.examples
    frames.examples = kept.iloc[::-1]  # a frame replaced after a lookup is indexed again
    pd.testing.assert_series_equal(frames.example(kept["guid"].iloc[0]), kept.iloc[0])
    assert list(frames.positions(kept["guid"].iloc[0])) == [len(kept) - 1]
    frames.examples = kept


def test_scores_of_the_whole_equal_the_official_metrics(demo_result):
    assert demo_result.task.score(demo_result.frames).values == demo_result.scores.values


def test_confusion_pairs_point_at_examples(demo_result):
    pairs = demo_result.task.confusion(demo_result.frames)
    assert pairs is not None and {"guid", "gold", "pred"} <= set(pairs.columns)
    assert set(pairs["guid"]) <= set(demo_result.frames.examples["guid"])


def poisoned(frame: pd.DataFrame) -> pd.DataFrame:
    """Every text cell (and text inside list cells) with markup appended, as a hostile file would carry."""
    out = frame.copy()
    for column in out.columns:
        if column in ("guid", "dialogue"):
            continue
        values = out[column].tolist()
        if values and all(isinstance(v, str) for v in values):
            out[column] = [v + ATTACK for v in values]
        elif values and all(isinstance(v, list) and v and all(isinstance(x, str) for x in v) for v in values):
            out[column] = [[x + ATTACK for x in v] for v in values]
    return out


def test_drawings_escape_all_file_text(demo_result):
    task, frames = demo_result.task, demo_result.frames
    hostile = type(frames)(poisoned(frames.examples), {k: poisoned(v) for k, v in frames.details.items()})
    for guid in frames.examples["guid"][:6]:
        html = task.render(hostile, guid)
        assert "<img" not in html and "&#60;img src&#61;x onerror&#61;alert&#40;1&#41;&#62;" in html  # markup.esc's entities
        assert re.search(r'data-guid="[^"]+"', html)
