"""Evaluation-harness logs read as prediction files: one reader module per harness format, each declaring the
`Format` it reads (`formats`): which files it handles, from their name and first bytes, and how it turns one into
converted prediction files (`LogFile`: ordinary JSONL whose first line describes the log, a `HarnessLog`).

- `lm_eval`: lm-evaluation-harness `--log_samples` (`samples_<task>_<ts>.jsonl`), with `results_<ts>.json` beside it.
- `inspect_logs`: Inspect AI logs, the JSON log and the `.eval` zip (read member by member, sizes limited).
- `every_eval_ever`: Every Eval Ever instance-level JSONL.
- `lighteval`: lighteval's per-sample details (Parquet).

klue_viz.reading.prediction_files holds the table of these formats and is the one reading stage the scoring
floor calls. May import: klue_viz.reading (records, uploads), core.
"""
