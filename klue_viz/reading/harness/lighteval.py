"""lighteval's per-sample details (Parquet, `details_<task>_<date>.parquet`), read with pyarrow."""

from __future__ import annotations

import io
import json
import re
from typing import Any

from klue_viz.core.lazy import lazy_module
from klue_viz.core.problems import InputError
from klue_viz.reading.harness.formats import (
    CHOICES,
    LOGLIKELIHOODS,
    POSITION,
    PROMPT,
    SOURCE_LINE,
    TARGET,
    Format,
    HarnessLog,
    LogFile,
    Siblings,
    converted,
    guid_of,
    stem,
)
from klue_viz.reading.records import JSON_FAILURES

pq = lazy_module("pyarrow.parquet")  # heavy: loaded when a Parquet file is read


def read(base: str, data: bytes, siblings: Siblings) -> list[LogFile]:
    """A row per document with `doc` (query, choices, gold_index, specific, id) and `model_response` (text, logprobs).
    The example is `doc.specific.guid`, else `doc.id` (a number: its position), else the row's position; a response
    with one log-probability per choice is multiple choice, else its first text is the generation."""
    try:
        rows = pq.read_table(io.BytesIO(data)).to_pylist()
    except Exception as err:  # pyarrow raises ArrowInvalid and others for a broken file
        raise InputError(f"{base}: cannot be read as Parquet: {str(err)[:160]}") from None
    records = []
    for k, row in enumerate(rows):
        doc = _maybe_json(row.get("doc")) or {}
        response = _maybe_json(row.get("model_response")) or {}
        doc = doc if isinstance(doc, dict) else {}
        response = response if isinstance(response, dict) else {}
        record: dict[str, Any] = {SOURCE_LINE: k + 1}
        specific = _maybe_json(doc.get("specific"))
        guid = guid_of(specific) or (str(doc["id"]) if doc.get("id") not in (None, "") and not str(doc["id"]).isdigit() else None)
        if guid is None:
            record[POSITION] = int(doc["id"]) if str(doc.get("id", "")).isdigit() else k
        else:
            record["guid"] = guid
        if doc.get("query"):
            record[PROMPT] = str(doc["query"])
        choices, logprobs, texts = doc.get("choices"), response.get("logprobs"), response.get("text")
        if isinstance(choices, list) and choices and isinstance(logprobs, list) and len(logprobs) == len(choices) and not any(texts or []):
            record[CHOICES] = [str(c) for c in choices]
            record[LOGLIKELIHOODS] = [float(v) for v in logprobs]
            gold_index = doc.get("gold_index")
            gold_index = gold_index[0] if isinstance(gold_index, list) and len(gold_index) == 1 else gold_index
            if isinstance(gold_index, int) and not isinstance(gold_index, bool):
                record[TARGET] = gold_index
        else:
            record["generation"] = str(texts[0] if isinstance(texts, list) and texts else texts or "")
        records.append(record)
    if not records:
        raise InputError(f"{base}: the Parquet file holds no rows")
    match = re.match(r"^details_(.+)_\d{4}-\d\d-\d\dT.*$", stem(base))
    return [LogFile(f"{stem(base)}.jsonl", converted(HarnessLog("lighteval", base, match.group(1) if match else None), records))]


FORMAT = Format("lighteval", read, magic=b"PAR1")


def _maybe_json(value: Any) -> Any:
    if isinstance(value, str) and value[:1] in "[{":
        try:
            return json.loads(value)
        except JSON_FAILURES:
            return value
    return value
