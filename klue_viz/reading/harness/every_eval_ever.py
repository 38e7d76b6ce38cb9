"""Every Eval Ever instance-level JSONL: `sample_id` names the example (a number: its position), `output.raw` holds
the generated text; each `evaluation_name` (lm-eval's task/filter) is one run."""

from __future__ import annotations

import json
import re
from typing import Any

from klue_viz.core.problems import InputError, Problem
from klue_viz.reading.harness.formats import POSITION, PROMPT, RAW_OUTPUT, SOURCE_LINE, Format, HarnessLog, LogFile, Siblings, converted, stem
from klue_viz.reading.records import JSON_FAILURES, decode, lines_of


def read(base: str, data: bytes, siblings: Siblings) -> list[LogFile]:
    """The runs of an instance file, one per `evaluation_name`, converted (it has no sibling files)."""
    text = decode(data, base)[0]
    by_name: dict[str, list[dict]] = {}
    scores: dict[str, list[float]] = {}
    problems: list[Problem] = []
    model = None
    for number, line in enumerate(lines_of(text), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except JSON_FAILURES:
            problems.append(Problem("not a JSON line of the instance file", number, file=base))
            continue
        if not isinstance(row, dict) or "sample_id" not in row:
            problems.append(Problem("not an Every Eval Ever instance (no sample_id)", number, file=base))
            continue
        model = model or row.get("model_id")
        record: dict[str, Any] = {SOURCE_LINE: number}
        sample_id = str(row["sample_id"])
        if sample_id.isdigit():
            record[POSITION] = int(sample_id)
        else:
            record["guid"] = sample_id
        output = row.get("output") or {}
        raw = output.get("raw") if isinstance(output, dict) else None
        record["generation"] = str(raw[0] if isinstance(raw, list) and raw else raw or "")
        given = row.get("input") or {}
        if isinstance(given, dict):
            record[PROMPT] = given.get("formatted") or given.get("raw")
        attribution = [a for a in row.get("answer_attribution") or [] if isinstance(a, dict)]
        extracted = next((a.get("extracted_value") for a in reversed(attribution) if a.get("is_terminal")), None)
        if extracted is not None and str(extracted) != record["generation"]:
            record[RAW_OUTPUT] = f"(the harness extracted: {extracted})"
        by_name.setdefault(str(row.get("evaluation_name") or ""), []).append(record)
        score = (row.get("evaluation") or {}).get("score") if isinstance(row.get("evaluation"), dict) else None
        if isinstance(score, (int, float)) and not isinstance(score, bool):
            scores.setdefault(str(row.get("evaluation_name") or ""), []).append(float(score))
    if not by_name:
        raise InputError(f"{base}: no Every Eval Ever instance could be read")
    out = []
    for name, records in by_name.items():
        given_scores = scores.get(name) or []
        log = HarnessLog("Every Eval Ever", base, name or None, None, None if model is None else str(model),
                         {"mean score": sum(given_scores) / len(given_scores)} if given_scores else {}, tuple(problems))
        run = stem(base) if len(by_name) == 1 else f"{stem(base)}-{re.sub(r'[^0-9A-Za-z가-힣_.-]+', '-', name).strip('-')}"
        out.append(LogFile(f"{run}.jsonl", converted(log, records)))
    return out


FORMAT = Format("Every Eval Ever", read, first_keys=(frozenset({"sample_id", "evaluation_id", "output"}),
                                                     frozenset({"sample_id", "evaluation_id", "answer_attribution"})))
