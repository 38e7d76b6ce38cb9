"""The tables of the annotation database and their migrations, below the stores that use them.

`Store` (annotations, custom tags; klue_viz.store.annotations), `RunStore` (prediction runs;
klue_viz.store.runs), the gold versions, `FeatureFileStore` (column files; klue_viz.store.feature_files)
and `GoldStore` (uploaded gold files; klue_viz.store.golds) share one database and one schema version: its
tables are defined here, on one `metadata`, and a database is brought up to SCHEMA_VERSION one step of MIGRATIONS at a
time.
"""

from __future__ import annotations

import sqlalchemy as sa

SCHEMA_VERSION = 5
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
}
