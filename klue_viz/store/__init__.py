"""Everything kept in the database (SQLite or PostgreSQL): the tables (`schema`), annotations
(`annotations`), stored runs and golds, behavioural test suites and the runs on them (`probe_runs`), gold remarks and
versions, the user's column files, kept results (`kept_results`) and parsed golds. May import: scoring, tasks, drawing, reading, metrics, core.
"""
