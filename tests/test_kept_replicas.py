"""Two app replicas on one database: a run added through one is listed, read back without scoring and annotated through
the other. Each replica is its own process (its own engine, caches and kept-results store), as two app servers are."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest
import sqlalchemy as sa

from klue_viz.reading.demo import demo_runs
from klue_viz.store import annotations as store_module
from klue_viz.store import schema
from tests.conftest import REPO

PG_URL = os.environ.get("KLUE_VIZ_TEST_PG")
BACKENDS = ["sqlite", pytest.param("postgresql", marks=pytest.mark.skipif(not PG_URL and not os.environ.get("CI"),
                                                                          reason="set KLUE_VIZ_TEST_PG (CI starts a server)"))]

#: One replica's work, run in a process of its own: prints what it saw as JSON on its last line.
REPLICA = textwrap.dedent('''
    import json, sys
    from klue_viz.store import kept_results, kept_scoring
    from klue_viz.store.runs import RunStore
    from klue_viz.store.annotations import Annotation, Store
    from klue_viz.reading.demo import DEMO_BENCHMARK, demo_runs
    from klue_viz.scoring.evaluate import load_gold
    from klue_viz.tasks import get_task

    url, action = sys.argv[1], sys.argv[2]
    store = Store(url)
    runs, results = RunStore(store), kept_results.KeptResults(store)
    task = get_task("ner")
    gold = load_gold(task, DEMO_BENCHMARK)
    scored = []
    real = kept_scoring.evaluate_with_frames
    def counted(*args, **kwargs):
        scored.append(args[3])
        return real(*args, **kwargs)
    kept_scoring.evaluate_with_frames = counted
    if action == "add":
        path = next(iter(demo_runs("ner")))
        run = runs.add("ner", path.name, path.read_bytes(), model="replica-a")
        data = path.read_bytes()
        kept_scoring.results_for(results, task, gold, [kept_scoring.RunInput(run.name, run.sha256, run.file_name, lambda: data)], False)
    listed = runs.list("ner")
    inputs = [kept_scoring.RunInput(r.name, r.sha256, r.file_name, lambda r=r: runs.data(r.sha256)) for r in listed]
    found, failures = kept_scoring.results_for(results, task, gold, inputs, False)
    out = {"runs": [[r.name, r.model] for r in listed], "scored": scored, "failures": failures,
           "metrics": {name: result.scores.values for name, result in found.items()}}
    if action == "read":
        result = found[listed[0].name]
        frames = result.frames  # the columns a task page draws from, read from the kept result
        out["examples"] = len(frames.examples)
        out["entities"] = len(frames.details["entities"])
        first = frames.examples["guid"].iloc[0]
        store.save(Annotation(task="ner", guid=first, run=result.run, annotator="replica-b", tags=["boundary"]))
        out["scored_after_frames"] = list(scored)
    out["annotations"] = [[a.guid, a.run, a.annotator] for a in store.find(task="ner")]
    print(json.dumps(out))
''')


def replica(url: str, action: str) -> dict:
    done = subprocess.run([sys.executable, "-c", REPLICA, url, action], capture_output=True, text=True, cwd=REPO,
                          env=dict(os.environ, PYTHONPATH=str(REPO)), timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.fixture(params=BACKENDS)
def db_url(request, tmp_path) -> str:
    if request.param == "sqlite":
        return str(tmp_path / "shared.sqlite3")
    assert PG_URL, "CI must provide KLUE_VIZ_TEST_PG"
    engine = sa.create_engine(store_module.database_url(PG_URL))
    schema.metadata.drop_all(engine)
    engine.dispose()
    return PG_URL


@pytest.mark.slow
def test_a_run_added_through_one_replica_is_read_and_annotated_through_another(db_url):
    path = next(iter(demo_runs("ner")))
    first = replica(db_url, "add")
    assert first["runs"] == [[path.stem, "replica-a"]] and first["scored"] == [path.name] and not first["failures"]
    second = replica(db_url, "read")
    assert second["runs"] == first["runs"]
    assert second["scored"] == [] and second["scored_after_frames"] == []  # listed, scored and drawn with no rescoring
    assert second["metrics"] == first["metrics"]
    assert second["examples"] == 24 and second["entities"] > 0
    third = replica(db_url, "list")
    assert third["scored"] == [] and [a[2] for a in third["annotations"]] == ["replica-b"]
    if db_url.startswith("postgresql"):
        engine = sa.create_engine(store_module.database_url(db_url))
        with engine.connect() as connection:
            levels = connection.execute(sa.select(schema.kept_frames.c.level)).scalars().all()
        engine.dispose()
        assert sorted(levels) == ["entities", "examples"]  # the frames are rows every replica reads, not files beside one
