"""lm-evaluation-harness `--log_samples` logs (`samples_<task>_<ts>.jsonl`, or `.jsonl.gz`): a row per document and
filter; the document is found through `doc` (its `guid`, else its position `doc_id`); several filters are one run
each (`<run>-<filter>`); `results_<ts>.json` beside it gives the model and the harness's metrics. Multiple-choice
rows keep their choices and log-likelihoods (klue_viz.scoring.llm_outputs maps them to labels), generation rows their
generated text (the task's answer parser reads it)."""

from __future__ import annotations

import json
import re
from pathlib import PurePosixPath
from typing import Any

from klue_viz.core.problems import InputError, Problem
from klue_viz.reading.harness.formats import (
    CHOICES,
    LOGLIKELIHOODS,
    POSITION,
    PROMPT,
    RAW_OUTPUT,
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
from klue_viz.reading.records import JSON_FAILURES, decode, lines_of

#: lm-evaluation-harness's results file, written beside the samples.
RESULTS_NAME = re.compile(r"^results_(.+)\.json$")
SAMPLES_NAME = re.compile(r"^samples_(.+)_(\d{4}-\d\d-\d\dT[\d\-.:]+)\.jsonl(?:\.gz)?$")
ROW_FIELDS = frozenset({"doc_id", "doc", "filtered_resps"})


def is_results_name(name: str) -> bool:
    """lm-evaluation-harness's `results_<ts>.json`: read beside its samples, never as predictions."""
    return bool(RESULTS_NAME.match(PurePosixPath(name).name))


def read(base: str, data: bytes, siblings: Siblings) -> list[LogFile]:
    """The runs of a samples log, one per filter, converted."""
    text = decode(data, base)[0]
    by_filter: dict[str, list[dict]] = {}
    problems: list[Problem] = []
    for number, line in enumerate(lines_of(text), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except JSON_FAILURES as err:
            problems.append(Problem(f"not a JSON line of the harness log ({err.__class__.__name__})", number, file=base))
            continue
        if not isinstance(row, dict) or not ROW_FIELDS <= row.keys():
            problems.append(Problem("not a row of an lm-evaluation-harness samples log (doc_id, doc, filtered_resps)", number, file=base))
            continue
        by_filter.setdefault(str(row.get("filter") or "none"), []).append(_record(row, number))
    if not by_filter:
        raise InputError(f"{base}: no row of the lm-evaluation-harness log could be read" + (f" ({problems[0].message})" if problems else ""))
    task, results = _results(base, siblings)
    out = []
    for name, records in by_filter.items():
        log = HarnessLog("lm-evaluation-harness", base, task, name, _model(results), _metrics(results, task, name), tuple(problems))
        run = stem(base) if len(by_filter) == 1 else f"{stem(base)}-{name}"
        out.append(LogFile(f"{run}.jsonl", converted(log, records)))
    return out


FORMAT = Format("lm-evaluation-harness", read, first_keys=(ROW_FIELDS,))


def _record(row: dict, number: int) -> dict:
    """One samples row as a prediction record: the document's guid (or position), and its choices or generation."""
    doc = row.get("doc")
    record: dict[str, Any] = {SOURCE_LINE: number}
    guid = guid_of(doc)
    if guid is None:
        record[POSITION] = row.get("doc_id")
    else:
        record["guid"] = guid
    if isinstance(doc, dict) and doc.get("turn") not in (None, ""):
        record["turn"] = doc["turn"]
    arguments = row.get("arguments") or {}
    args = [arguments[k] for k in sorted(arguments, key=_arg_index)] if isinstance(arguments, dict) else []
    if args and isinstance(args[0], dict) and args[0].get("arg_0") is not None:
        record[PROMPT] = str(args[0]["arg_0"])
    filtered: Any = row.get("filtered_resps")
    if _is_loglikelihood_rows(filtered) and len(filtered) == len(args) and all(isinstance(a, dict) and isinstance(a.get("arg_1"), str) for a in args):
        record[CHOICES] = [a["arg_1"] for a in args]
        record[LOGLIKELIHOODS] = [float(pair[0]) for pair in filtered]
        target = row.get("target")
        if isinstance(target, str) and target.strip().isdigit():
            target = int(target)
        if isinstance(target, int) and not isinstance(target, bool):
            record[TARGET] = target
        return record
    text = filtered[0] if isinstance(filtered, list) and filtered else filtered
    if isinstance(text, list):
        text = text[0] if text else ""
    record["generation"] = "" if text is None else str(text)
    resps = row.get("resps")
    raw = resps[0] if isinstance(resps, list) and resps else None
    raw = raw[0] if isinstance(raw, list) and raw else raw
    if isinstance(raw, str) and raw != record["generation"]:
        record[RAW_OUTPUT] = raw
    return record


def _arg_index(key: str) -> int:
    digits = re.sub(r"\D", "", key)
    return int(digits) if digits else 0


def _is_loglikelihood_rows(value: Any) -> bool:
    """[[loglikelihood, is_greedy], ...] (numbers or, as 0.4 writes them, strings)."""
    if not isinstance(value, list) or not value:
        return False
    for pair in value:
        if not isinstance(pair, list) or len(pair) != 2:
            return False
        try:
            float(pair[0])
        except (TypeError, ValueError):
            return False
    return True


def _results(base: str, siblings: Siblings) -> tuple[str | None, dict | None]:
    """The harness task of a samples file and the results file written with it (same timestamp), when beside it."""
    match = SAMPLES_NAME.match(base)
    task = match.group(1) if match else None
    wanted = f"results_{match.group(2)}.json" if match else None
    candidates = [wanted] if wanted in siblings else sorted(siblings, reverse=True)
    for name in candidates:
        try:
            results = json.loads(siblings[name]())
        except (OSError, *JSON_FAILURES):
            continue
        if isinstance(results, dict) and isinstance(results.get("results"), dict) and (task is None or task in results["results"]):
            return task, results
    return task, None


def _model(results: dict | None) -> str | None:
    if not results:
        return None
    config = results.get("config") or {}
    args = config.get("model_args")
    if isinstance(args, str):
        args = dict(part.split("=", 1) for part in args.split(",") if "=" in part)
    if isinstance(args, dict) and args.get("pretrained"):
        return str(args["pretrained"])
    return str(config.get("model") or results.get("model_name") or "") or None


def _metrics(results: dict | None, task: str | None, filter_name: str) -> dict[str, float]:
    """The harness's own metrics of one task and filter (`acc,none` -> `acc`), standard errors left out."""
    if not results or task is None:
        return {}
    found = results["results"].get(task) or {}
    out = {}
    for key, value in found.items():
        metric, _, name = key.partition(",")
        if name == filter_name and not metric.endswith("_stderr") and isinstance(value, (int, float)):
            out[metric] = float(value)
    return out
