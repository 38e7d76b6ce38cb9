"""One readable name for a found slice, in the app and the CLI, under a header naming run, metric and unit (issue 19, item 21)."""

from __future__ import annotations

from klue_viz.cli.main import main
from klue_viz.discovery.slices import WeakSlice, slice_name
from klue_viz.reading.demo import DEMO_BENCHMARK, demo_runs


def test_ner_side_and_particle_read_as_words():
    item = WeakSlice(conditions={"side": "gold", "particle": "+other"},
                     labels={"side": "Gold or predicted entity", "particle": "Particle attached to the entity (경찰+은)"},
                     unit="entities", size=12, examples=9, errors=7, error_rate=58.3, metrics={}, score=1.5)
    assert slice_name(item) == "Entity = gold entity (recall) & Particle attached to the entity (경찰+은) = another particle"


def test_the_cli_prints_the_header_and_the_apps_names(capsys):
    run = next(demo_runs("ner"))
    assert main(["slices", "--task", "ner", "--gold", str(DEMO_BENCHMARK), "--pred", str(run), "--top", "5", "--bootstrap", "0"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"Weak slices of {run.stem}: error rate (%) of the entities (gold and predicted) in the slice, ranked by SliceLine's score"
    assert not any("side=" in line or "particle=" in line for line in out)
