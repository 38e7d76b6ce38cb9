"""Every table of the klue-viz database and its migrations, on one `metadata`, below the stores that use them.

`Store` (annotations, custom tags; klue_viz.store.annotations), `RunStore` (prediction runs;
klue_viz.store.runs), the gold versions, `FeatureFileStore` (column files; klue_viz.store.feature_files),
`GoldStore` (uploaded gold files; klue_viz.store.golds), `SuiteStore` (behavioural test suites and the runs on them;
klue_viz.store.probe_runs), kept results (klue_viz.store.kept_results) and parsed
golds (klue_viz.store.parsed_golds) share one database. Two kinds of table:

- **Kept data** (annotations, runs, golds, versions, column files, suites and the runs on them): what people made. A database is brought up to
  SCHEMA_VERSION one step of MIGRATIONS at a time, and a database of a newer schema is refused, so nothing an older
  klue-viz does not know is ever written over.
- **Computed again on demand** (`CACHE_TABLES`: kept results, their frames and views, parsed golds): created when
  missing (`create_cache_tables`) and never migrated. A change of what they hold is a new layout, which keys its
  rows apart (klue_viz.store.kept_format), so an older klue-viz on the same database keeps reading its own rows and
  the schema version, which would lock it out, does not move for them.
"""

from __future__ import annotations

import sqlalchemy as sa

SCHEMA_VERSION = 6
NO_TURN = -1  # stored instead of NULL so that the unique key holds on every database

metadata = sa.MetaData()
schema_version = sa.Table("schema_version", metadata, sa.Column("version", sa.Integer, nullable=False))
annotation_table = sa.Table(
    "annotations", metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("task", sa.String(16), nullable=False),
    sa.Column("guid", sa.String(200), nullable=False),
    sa.Column("turn", sa.Integer, nullable=False, server_default=str(NO_TURN)),
    sa.Column("run", sa.String(200), nullable=False),
    sa.Column("annotator", sa.String(100), nullable=False),
    sa.Column("tags", sa.Text, nullable=False, server_default="[]"),
    sa.Column("note", sa.Text, nullable=False, server_default=""),
    sa.Column("gold_wrong", sa.Boolean, nullable=False, server_default=sa.false()),
    sa.Column("corrected_label", sa.Text, nullable=True),
    sa.Column("updated_at", sa.String(40), nullable=False),
    sa.Column("version", sa.Integer, nullable=False, server_default="1"),
    sa.UniqueConstraint("task", "guid", "turn", "run", "annotator", name="one_record_per_key"),
)
sa.Index("annotations_by_task_run", annotation_table.c.task, annotation_table.c.run)
custom_tags = sa.Table(
    "custom_tags", metadata,
    sa.Column("task", sa.String(16), primary_key=True),
    sa.Column("tag", sa.String(100), primary_key=True),
)

# stored prediction runs: a run's bytes once per content, and its named row
run_blobs = sa.Table(
    "run_blobs", metadata,
    sa.Column("sha256", sa.String(64), primary_key=True),
    sa.Column("size", sa.BigInteger, nullable=False),
    sa.Column("data", sa.LargeBinary, nullable=False),
)
runs = sa.Table(
    "runs", metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("task", sa.String(16), nullable=False),
    sa.Column("name", sa.String(200), nullable=False),
    sa.Column("file_name", sa.Text, nullable=False),
    sa.Column("model", sa.String(200), nullable=False, server_default=""),
    sa.Column("uploader", sa.String(100), nullable=False, server_default=""),
    sa.Column("created_at", sa.String(40), nullable=False),
    sa.Column("sha256", sa.String(64), sa.ForeignKey("run_blobs.sha256"), nullable=False),
    sa.Column("version", sa.Integer, nullable=False, server_default="1"),
    sa.UniqueConstraint("task", "name", name="one_run_per_name"),
)
sa.Index("runs_by_blob", runs.c.sha256)

# named gold versions: a base gold plus the corrections accepted at one moment (klue_viz.store.gold_versions)
gold_versions = sa.Table(
    "gold_versions", metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("task", sa.String(16), nullable=False),
    sa.Column("name", sa.String(200), nullable=False),
    sa.Column("base", sa.Text, nullable=False),
    sa.Column("records", sa.Integer, nullable=False),
    sa.Column("corrections", sa.Text, nullable=False),
    sa.Column("created_by", sa.String(100), nullable=False, server_default=""),
    sa.Column("created_at", sa.String(40), nullable=False),
    sa.UniqueConstraint("task", "name", name="one_gold_version_per_name"),
)

# uploaded gold files, content-addressed like the runs' bytes (klue_viz.store.golds)
gold_files = sa.Table(
    "gold_files", metadata,
    sa.Column("sha256", sa.String(64), primary_key=True),
    sa.Column("task", sa.String(16), nullable=False),
    sa.Column("file_name", sa.Text, nullable=False),
    sa.Column("size", sa.BigInteger, nullable=False),
    sa.Column("created_at", sa.String(40), nullable=False),
    sa.Column("data", sa.LargeBinary, nullable=False),
)


# behavioural test suites and the runs on them (klue_viz.store.probe_runs): a suite's two gold files are gold_files rows
probe_suites = sa.Table(
    "probe_suites", metadata,
    sa.Column("task", sa.String(16), primary_key=True),
    sa.Column("name", sa.String(200), primary_key=True),
    #: The perturbed examples' gold file and their sources' (the official format), stored as uploaded golds are.
    sa.Column("gold_sha256", sa.String(64), sa.ForeignKey("gold_files.sha256"), nullable=False),
    sa.Column("sources_sha256", sa.String(64), sa.ForeignKey("gold_files.sha256"), nullable=False),
    sa.Column("manifest", sa.Text, nullable=False),
    sa.Column("readme", sa.Text, nullable=False, server_default=""),
    sa.Column("uploader", sa.String(100), nullable=False, server_default=""),
    sa.Column("created_at", sa.String(40), nullable=False),
)
#: A run's predictions on a suite: its bytes in run_blobs (shared with ordinary runs), tied to the suite by name.
probe_runs = sa.Table(
    "probe_runs", metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("task", sa.String(16), nullable=False),
    sa.Column("suite", sa.String(200), nullable=False),
    sa.Column("name", sa.String(200), nullable=False),
    sa.Column("file_name", sa.Text, nullable=False),
    sa.Column("model", sa.String(200), nullable=False, server_default=""),
    sa.Column("uploader", sa.String(100), nullable=False, server_default=""),
    sa.Column("created_at", sa.String(40), nullable=False),
    sa.Column("sha256", sa.String(64), sa.ForeignKey("run_blobs.sha256"), nullable=False),
    sa.UniqueConstraint("task", "suite", "name", name="probe_runs_named"),
)
sa.Index("probe_runs_by_blob", probe_runs.c.sha256)


# the researchers' own column files (klue_viz.store.feature_files): the bytes once per content and task
feature_files = sa.Table(
    "feature_files", metadata,
    sa.Column("task", sa.String(16), primary_key=True),
    sa.Column("sha256", sa.String(64), primary_key=True),
    sa.Column("file_name", sa.Text, nullable=False),
    sa.Column("uploader", sa.String(100), nullable=False, server_default=""),
    sa.Column("created_at", sa.String(40), nullable=False),
    sa.Column("size", sa.BigInteger, nullable=False),
    sa.Column("data", sa.LargeBinary, nullable=False),
)


#: Schema version -> what it adds; a database is brought up to SCHEMA_VERSION one step at a time.
MIGRATIONS = {
    1: lambda connection: metadata.create_all(connection, tables=[annotation_table, custom_tags]),
    2: lambda connection: metadata.create_all(connection, tables=[run_blobs, runs]),  # stored prediction runs (klue_viz.store.runs)
    3: lambda connection: metadata.create_all(connection, tables=[gold_versions]),  # named gold versions (klue_viz.store.gold_versions)
    4: lambda connection: metadata.create_all(connection, tables=[feature_files]),  # column files (klue_viz.store.feature_files)
    5: lambda connection: metadata.create_all(connection, tables=[gold_files]),  # uploaded gold files (klue_viz.store.golds)
    6: lambda connection: metadata.create_all(connection, tables=[probe_suites, probe_runs]),  # suites (klue_viz.store.probe_runs)
}


# ---- computed again on demand: kept results (klue_viz.store.kept_results) and parsed golds (klue_viz.store.parsed_golds) ----

#: A run scored against a gold: one row per result key (the run's bytes, the gold's bytes, strict and the layout).
kept_scores = sa.Table(
    "kept_scores", metadata,
    sa.Column("key", sa.String(64), primary_key=True),
    sa.Column("task", sa.String(16), nullable=False),
    sa.Column("run_sha256", sa.String(64), nullable=False),
    sa.Column("gold_sha256", sa.String(64), nullable=False),
    sa.Column("strict", sa.Boolean, nullable=False),
    sa.Column("layout", sa.String(40), nullable=False),
    sa.Column("file_name", sa.Text, nullable=False),
    #: JSON with its checksum (klue_viz.store.kept_format.sealed): scores, reasons, coverage, problems, notes, extra guids.
    sa.Column("summary", sa.Text, nullable=False),
    #: JSON: level -> [sha256, size] of its Parquet bytes.
    sa.Column("levels", sa.Text, nullable=False),
    sa.Column("created_at", sa.String(40), nullable=False),
)
sa.Index("kept_by_run", kept_scores.c.run_sha256)
#: Heavy views of a kept result computed once (bootstrap intervals, weak slices, suspects): JSON with its checksum.
kept_views = sa.Table(
    "kept_views", metadata,
    sa.Column("key", sa.String(64), primary_key=True),
    sa.Column("view", sa.String(100), primary_key=True),
    sa.Column("data", sa.Text, nullable=False),
)
#: A kept result's frames as Parquet bytes, on PostgreSQL (beside a SQLite database they are files).
kept_frames = sa.Table(
    "kept_frames", metadata,
    sa.Column("key", sa.String(64), primary_key=True),
    sa.Column("level", sa.String(32), primary_key=True),
    sa.Column("data", sa.LargeBinary, nullable=False),
)
#: Parsed gold files: one row per task, gold bytes, name read under and layout.
kept_golds = sa.Table(
    "kept_golds", metadata,
    sa.Column("key", sa.String(64), primary_key=True),
    sa.Column("layout", sa.String(40), nullable=False),
    #: JSON with its checksum: {"rows": [...], "problems": [...], "positional": bool}.
    sa.Column("data", sa.Text, nullable=False),
)
#: The tables of data computed again on demand, created when missing and never migrated (see the module's docstring).
CACHE_TABLES = (kept_scores, kept_views, kept_frames, kept_golds)


def create_cache_tables(connection: sa.Connection) -> None:
    """Create the missing tables of `CACHE_TABLES` (CREATE TABLE IF NOT EXISTS, their indexes with them)."""
    metadata.create_all(connection, tables=list(CACHE_TABLES), checkfirst=True)
