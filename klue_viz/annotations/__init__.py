"""Error annotations: the store, the JSONL/CSV file forms, agreement between annotators, tag slices."""
