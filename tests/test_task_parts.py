"""Per-task knowledge stays in the task module: features outside tasks/ ask a task's optional parts
(`task.<part> is None`), never its name, its detail frames' names or the shape of its frames.

A ninth task is built here: NER under another name whose detail frame is called `mentions` instead of
`entities`. Every feature outside tasks/ must treat it exactly as it treats NER (the same weak slices,
the same surface-form table, the same drawing, the same user columns), which fails as soon as a feature
names a detail level of its own."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from klue_viz.core.results import Frames
from klue_viz.discovery.slices import paired_units, slices_header, unit_level, units, weak_slices
from klue_viz.outputs.example_document import drawing_document
from klue_viz.reading.demo import DEMO_BENCHMARK, demo_runs
from klue_viz.scoring.evaluate import evaluate_bytes, load_gold
from klue_viz.scoring.surface_forms import surface_errors
from klue_viz.scoring.user_features import apply_features, read_features, summary
from klue_viz.tasks import TASKS, get_task
from klue_viz.tasks.base import DrawingDocument, SurfaceForms
from klue_viz.tasks.ner import Ner
from tests.conftest import REPO

NER = get_task("ner")
RENAMED = "mentions"


def _to_ner(frames: Frames) -> Frames:
    return Frames(frames.examples, {("entities" if k == RENAMED else k): v for k, v in frames.details.items()})


def _from_ner(frames: Frames) -> Frames:
    return Frames(frames.examples, {(RENAMED if k == "entities" else k): v for k, v in frames.details.items()})


class Mentions(Ner):
    """NER whose detail frame is named `mentions`: a task module the code outside tasks/ has never seen."""

    facts = dataclasses.replace(
        Ner.facts, name="mentions", title="Mentions",
        slices=tuple(dataclasses.replace(s, level=RENAMED) if s.level == "entities" else s for s in Ner.facts.slices),
        detail=dataclasses.replace(Ner.facts.detail, name=RENAMED) if Ner.facts.detail else None,
    )
    surface = SurfaceForms(lambda frames: NER.surface.errors(_to_ner(frames)) if NER.surface else pd.DataFrame())
    svg_document = DrawingDocument(lambda frames, guids: NER.svg_document.document(_to_ner(frames), guids) if NER.svg_document else {})

    def build_frames(self, gold, predictions):
        return _from_ner(super().build_frames(gold, predictions))

    def statistics(self, frames):
        return super().statistics(_to_ner(frames))

    def detail_statistics(self, level, frame):
        return super().detail_statistics("entities" if level == RENAMED else level, frame)


@pytest.fixture(scope="module")
def both():
    """The first demo NER run scored as NER and as the ninth task, and the second run as the other side of a pair."""
    ninth = Mentions()
    gold = load_gold(NER, DEMO_BENCHMARK)
    first, second = list(demo_runs("ner"))[:2]
    ner_runs = [evaluate_bytes(NER, gold, path.read_bytes(), path.name) for path in (first, second)]
    ninth_runs = [evaluate_bytes(ninth, gold, path.read_bytes(), path.name) for path in (first, second)]
    return ninth, gold, ner_runs, ninth_runs


def test_the_ninth_task_scores_as_ner(both):
    ninth, _, ner_runs, ninth_runs = both
    assert ner_runs[0].scores.values == ninth_runs[0].scores.values
    assert RENAMED in ninth_runs[0].frames.details and "entities" not in ninth_runs[0].frames.details


def test_weak_slices_and_their_units_are_the_same_for_the_ninth_task(both):
    ninth, _, ner_runs, ninth_runs = both
    assert unit_level(ninth) == RENAMED
    ner_units, ninth_units = units(NER, ner_runs[0].frames), units(ninth, ninth_runs[0].frames)
    assert "side" in ninth_units.features  # the sided detail level adds the gold/predicted side as a feature
    pd.testing.assert_frame_equal(ner_units.features, ninth_units.features)
    assert ner_units.labels == ninth_units.labels
    found_ner = [(s.conditions, s.errors, s.size) for s in weak_slices(NER, ner_runs[0].frames)]
    found_ninth = [(s.conditions, s.errors, s.size) for s in weak_slices(ninth, ninth_runs[0].frames)]
    assert found_ner == found_ninth and found_ner
    assert slices_header(ninth, ["a"], RENAMED) == slices_header(NER, ["a"], "entities")


def test_two_runs_of_the_ninth_task_pair_on_their_gold_rows(both):
    ninth, _, ner_runs, ninth_runs = both
    shared_ner, a_ner, b_ner = paired_units(NER, ner_runs[0].frames, ner_runs[1].frames)
    shared_ninth, a_ninth, b_ninth = paired_units(ninth, ninth_runs[0].frames, ninth_runs[1].frames)
    gold_entities = ner_runs[0].frames.details["entities"]
    assert len(shared_ninth.frame) == len(shared_ner.frame) == int((gold_entities["side"] == "gold").sum())
    assert np.array_equal(a_ner, a_ninth) and np.array_equal(b_ner, b_ninth)


def test_surface_forms_and_drawing_come_from_the_ninth_tasks_parts(both):
    ninth, _, ner_runs, ninth_runs = both
    pd.testing.assert_frame_equal(surface_errors(NER, ner_runs[0].frames), surface_errors(ninth, ninth_runs[0].frames))
    guid = str(ner_runs[0].frames.examples["guid"].iloc[0])
    ner_doc, ninth_doc = drawing_document(NER, ner_runs[0].frames, [guid]), drawing_document(ninth, ninth_runs[0].frames, [guid])
    assert ninth_doc.pop("title") == f"Mentions · {guid}" and ner_doc.pop("title") == f"KLUE-NER named entity recognition · {guid}"
    assert ner_doc == ninth_doc and ner_doc["kind"] == "spans"


def test_your_span_columns_land_on_the_ninth_tasks_detail_frame(both):
    ninth, gold, _, ninth_runs = both
    row = gold.rows[0]
    entity = next(e for e in ninth_runs[0].frames.details[RENAMED].itertuples() if e.guid == row["guid"])
    data = f"guid,start,end,source\n{row['guid']},{entity.start},{entity.end},wiki\n".encode()
    features, problems = read_features(data, "mine.csv", ninth, gold.rows)
    assert problems == [] and features.level == RENAMED
    assert summary(features, []).startswith("mine.csv: 1 entity spans described by 1 column(s)")
    frames = apply_features(ninth_runs[0].frames, features)
    marked = frames.details[RENAMED]
    assert (marked["user:source"] == "wiki").sum() >= 1


def _code_strings(path: Path) -> list[tuple[int, str]]:
    """The string constants of a module that are not docstrings, with their lines."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body
                  and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}
    return [(n.lineno, n.value) for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docstrings]


def test_no_feature_outside_tasks_and_ui_names_a_detail_level_or_probes_a_task():
    """No module outside tasks/ and ui/ holds a detail level's name ("entities", "words", "slots": read from the
    registry, so a ninth task's counts too), calls getattr on a task or tests its class."""
    levels = {t.facts.detail.name for t in TASKS.values() if t.facts.detail is not None}
    assert levels == {"entities", "words", "slots"}
    found = []
    for path in sorted((REPO / "klue_viz").rglob("*.py")):
        floor = path.relative_to(REPO / "klue_viz").parts[0]
        if floor in ("tasks", "ui"):
            continue
        found += [f"{path.name}:{line} {value!r}" for line, value in _code_strings(path) if value in levels]
        text = path.read_text(encoding="utf-8")
        found += [f"{path.name}: {probe}" for probe in ("getattr(task", "isinstance(task", "LabelTask)") if probe in text]
    assert found == []
