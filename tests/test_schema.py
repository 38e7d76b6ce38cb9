"""One store (issue 26 item 3): every table on one MetaData in klue_viz/store/schema.py, and every query of the store
through its one transaction helper, whose failures are the store's errors (busy, unavailable), never SQLAlchemy's."""

from __future__ import annotations

import ast
import importlib
import pkgutil
import re

import pytest
import sqlalchemy as sa

import klue_viz
from klue_viz.reading.demo import DEMO_BENCHMARK, demo_runs
from klue_viz.scoring.evaluate import evaluate_bytes, load_gold
from klue_viz.store import kept_format, kept_results, kept_scoring, parsed_golds, schema
from klue_viz.store.annotations import Store, StoreError
from klue_viz.tasks import get_task
from tests.conftest import REPO

PACKAGE = REPO / "klue_viz"
#: The tables of the database, counted by hand from docs/runs-storage.md and the stores' docstrings.
TABLES = {"schema_version", "annotations", "custom_tags", "run_blobs", "runs", "gold_versions", "gold_files", "feature_files",
          "probe_suites", "probe_runs", "kept_scores", "kept_views", "kept_frames", "kept_golds"}


def sources() -> dict[str, str]:
    return {path.relative_to(REPO).as_posix(): path.read_text(encoding="utf-8") for path in PACKAGE.rglob("*.py")}


def test_no_metadata_outside_the_schema_module():
    found = [name for name, text in sources().items() if re.search(r"\bMetaData\(", text)]
    assert found == ["klue_viz/store/schema.py"]


def test_one_metadata_holds_every_table_the_package_defines():
    assert set(schema.metadata.tables) == TABLES
    defined = {}
    for module in pkgutil.walk_packages(klue_viz.__path__, "klue_viz."):
        if module.name.startswith("klue_viz.ui") or module.name.endswith("__main__"):
            continue  # Streamlit pages: they define no table (and import Streamlit)
        for value in vars(importlib.import_module(module.name)).values():
            if isinstance(value, sa.Table):
                defined[value.name] = value
    assert set(defined) == TABLES and all(table.metadata is schema.metadata for table in defined.values())


def test_every_query_of_the_store_goes_through_the_transaction_helper():
    """Only the Store's own helpers open connections; the other stores call `store.read` / `store.write`."""
    for name, text in sources().items():
        if name == "klue_viz/store/annotations.py":
            continue
        tree = ast.parse(text)
        opened = [node.lineno for node in ast.walk(tree) if isinstance(node, ast.Attribute) and node.attr in ("begin", "connect")
                  and isinstance(node.value, ast.Attribute) and node.value.attr in ("engine", "writer")]
        assert not opened, f"{name}: lines {opened} open a connection of their own"
        assert not re.search(r"for attempt in range", text) or name == "klue_viz/store/annotations.py", f"{name}: a retry loop of its own"


def _broken(store: kept_results.KeptResults, table: str) -> None:
    with store.store.engine.begin() as connection:
        connection.exec_driver_sql(f"DROP TABLE {table}")


def test_kept_results_fail_as_store_errors_and_what_was_scored_is_still_shown(db_url):
    task = get_task("nli")
    gold = load_gold(task, DEMO_BENCHMARK)
    path = sorted(demo_runs("nli"))[0]
    data = path.read_bytes()
    run = kept_scoring.RunInput(path.stem, kept_format.sha256(data), path.name, lambda: data)
    store = kept_results.KeptResults(Store(db_url))
    result = evaluate_bytes(task, gold, data, path.name, run=run.name)
    _broken(store, "kept_views")
    with pytest.raises(StoreError):
        store.keep(result, run.run_sha256, gold.sha256, False)  # it used to re-raise SQLAlchemy's OperationalError
    with pytest.raises(StoreError):
        store.view("k", "v")
    summary, fresh = kept_scoring.score_and_keep(store, task, gold, run, False)
    assert summary is None and fresh.scores.values == result.scores.values  # not kept, still shown
    golds = parsed_golds.ParsedGolds(store.store, keep_from_bytes=0)
    _broken(store, "kept_golds")
    assert golds.gold(task, gold_bytes := (DEMO_BENCHMARK / "klue-nli-v1.1" / "klue-nli-v1.1_dev.json").read_bytes(), "dev.json").rows == \
        parsed_golds.gold_from_bytes(task, gold_bytes, "dev.json").rows


def test_opening_a_database_creates_the_missing_kept_tables_without_a_new_schema_version(db_url):
    """The kept tables are created when missing, not migrated: the schema version does not move, so an older klue-viz
    still opens the database."""
    store = Store(db_url)
    with store.engine.begin() as connection:
        for table in schema.CACHE_TABLES:
            connection.exec_driver_sql(f"DROP TABLE {table.name}")
    again = Store(db_url)
    with again.engine.connect() as connection:
        assert set(sa.inspect(connection).get_table_names()) == TABLES
    assert again.version() == schema.SCHEMA_VERSION == 6
