"""Evaluation-harness logs read as prediction files: each log becomes ordinary prediction records plus what the
log says about itself (model, the harness's own metrics), recognised by the shape of its records.

- lm-evaluation-harness `--log_samples` (`samples_<task>_<ts>.jsonl`, or `.jsonl.gz`): a row per document and
  filter; the document is found through `doc` (its `guid`, else its position `doc_id`); several filters are one
  run each (`<run>-<filter>`); `results_<ts>.json` beside it gives the model and the harness's metrics.
  Multiple-choice rows keep their choices and log-likelihoods (klue_viz.scoring.llm_outputs maps them to labels),
  generation rows their generated text (the task's answer parser reads it).
- Inspect AI logs: the JSON log, and the `.eval` zip through inspect_ai's own reader.
- Every Eval Ever instance-level JSONL (`sample_id`, `output.raw`, `answer_attribution`).
- lighteval details (Parquet, read with pyarrow).

`expand` turns one file into the prediction files klue-viz scores: an ordinary file as it is, a log as one JSONL
per run whose first line is `{"klue_viz_log": {...}}` (format, model, filter, harness metrics, problems) and
whose records carry `source_line`, the line of the log they came from. The store keeps these converted files, so
a run reads the same wherever it was uploaded; `take_log` and `locate_positions` undo the wrapping when a file is
matched to gold.
"""

from __future__ import annotations

import gzip
import io
import json
import re
import tempfile
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath
from types import ModuleType
from typing import TYPE_CHECKING, Any

from klue_viz.core.lazy import lazy_module
from klue_viz.core.problems import InputError, Problem
from klue_viz.reading.records import JSON_FAILURES, RecordFile, decode, lines_of, read_bytes
from klue_viz.reading.uploads import check_size, max_upload_bytes
from klue_viz.scoring.llm_outputs import CHOICES, LOGLIKELIHOODS, PROMPT, RAW_OUTPUT, TARGET, GoldRows

pq = lazy_module("pyarrow.parquet")  # heavy: loaded when a Parquet file is read
inspect_log: ModuleType | None
try:
    inspect_log = lazy_module("inspect_ai.log")  # optional (the `harness` extra), and slow to import: .eval logs only
except ModuleNotFoundError:
    inspect_log = None

if TYPE_CHECKING:
    from klue_viz.tasks.base import Task

#: The key of the first line of a converted log.
LOG_KEY = "klue_viz_log"
#: Key of a converted record: the line of the original log it came from.
SOURCE_LINE = "source_line"
#: Key of a converted record whose document had no guid: its 0-based position in the harness's dataset.
POSITION = "doc_position"
#: File names klue-viz reads as logs besides the ordinary prediction suffixes.
LOG_SUFFIXES = (".jsonl.gz", ".json.gz", ".eval", ".parquet")
#: lm-evaluation-harness's results file, written beside the samples.
RESULTS_NAME = re.compile(r"^results_(.+)\.json$")
SAMPLES_NAME = re.compile(r"^samples_(.+)_(\d{4}-\d\d-\d\dT[\d\-.:]+)\.jsonl(?:\.gz)?$")
LM_EVAL_FIELDS = frozenset({"doc_id", "doc", "filtered_resps"})
#: Fields of a harness document that may hold the KLUE guid.
GUID_FIELDS = ("guid", "id")

#: A sibling file of the log: name -> a reader of its bytes (results_<ts>.json beside the samples).
Siblings = dict[str, Callable[[], bytes]]


@dataclass(frozen=True)
class LogFile:
    """One prediction file made from a log: the name its run takes, and its converted JSONL."""

    name: str
    data: bytes


def is_results_name(name: str) -> bool:
    """lm-evaluation-harness's `results_<ts>.json`: read beside its samples, never as predictions."""
    return bool(RESULTS_NAME.match(PurePosixPath(name).name))


def expand(name: str, data: bytes, siblings: Siblings | None = None) -> list[LogFile]:
    """The prediction files of one file: a log's runs converted to JSONL, anything else as it is."""
    base = PurePosixPath(name).name
    if data[:2] == b"\x1f\x8b":
        data = _gunzip(name, data)
        if name.lower().endswith(".gz"):
            name, base = name[:-3], base[:-3]
    if data[:4] == b"PK\x03\x04" and base.lower().endswith(".eval"):
        return _inspect_runs(base, _inspect_eval_zip(name, data))
    if data[:4] == b"PAR1":
        return _lighteval_runs(base, data)
    first = _first_record(data, name)
    if first is None:
        return [LogFile(name, data)]
    kind, value = first
    if kind == "lm-eval":
        return _lm_eval_runs(base, data, siblings or {})
    if kind == "inspect":
        return _inspect_runs(base, value)
    return _eee_runs(base, data)


def expand_path(path: str | Path) -> list[LogFile]:
    """`expand` for a file on disk; the files beside it are its siblings (lm-evaluation-harness's results file)."""
    path = Path(path)
    data = read_bytes(path)
    siblings = {p.name: p.read_bytes for p in path.parent.glob("results_*.json") if p.is_file()}
    return expand(path.name, data, siblings)


def _gunzip(name: str, data: bytes) -> bytes:
    """A gzip file's content, refused once it grows past the upload limit (a small file can unpack to gigabytes)."""
    limit = max_upload_bytes()
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(data)) as unpacked:
            content = unpacked.read(limit + 1)
    except (OSError, EOFError, zlib.error) as err:  # zlib.error: a broken deflate stream (an invalid block type...)
        raise InputError(f"{name}: not a readable gzip file ({err})") from None
    check_size(f"{name} (unpacked)", len(content))
    return content


def _first_record(data: bytes, name: str) -> tuple[str, Any] | None:
    """What kind of log a text file is, from its first line: ("lm-eval" | "inspect" | "eee", value), or None.

    Only the first line is decoded for an ordinary file; a pretty-printed Inspect log is parsed whole."""
    head = data[:4096]
    start = len(head) - len(head.lstrip(b"\xef\xbb\xbf \t\r\n"))
    if data[start:start + 1] != b"{":
        return None
    newline = data.find(b"\n", start, start + (1 << 22))
    try:
        record = json.loads(data[start:newline if newline >= 0 else len(data)].decode("utf-8"))
    except (UnicodeDecodeError, *JSON_FAILURES):
        record = None
    if isinstance(record, dict):
        if LM_EVAL_FIELDS <= record.keys():
            return "lm-eval", record
        if "sample_id" in record and "evaluation_id" in record and ("output" in record or "answer_attribution" in record):
            return "eee", record
        if not ("samples" in record and "eval" in record):
            return None
    elif b'"eval"' not in data[:8192] or b'"samples"' not in data:
        return None
    try:
        whole = json.loads(decode(data, name)[0])
    except JSON_FAILURES:
        return None
    if isinstance(whole, dict) and isinstance(whole.get("eval"), dict) and isinstance(whole.get("samples"), list):
        return "inspect", whole
    return None


def _jsonl(meta: dict, records: list[dict]) -> bytes:
    lines = [json.dumps({LOG_KEY: meta}, ensure_ascii=False)]
    lines.extend(json.dumps(r, ensure_ascii=False) for r in records)
    # backslashreplace: a lone surrogate (from a \\ud800 escape in the log) has no UTF-8 form; as an escape again it is
    # read back, and reported, by io.read_records like any other
    return ("\n".join(lines) + "\n").encode("utf-8", "backslashreplace")


def _stem(base: str) -> str:
    for suffix in (".jsonl", ".json", ".eval", ".parquet"):
        if base.lower().endswith(suffix):
            return base[: -len(suffix)]
    return Path(base).stem


def _guid_of(doc: Any) -> str | None:
    if isinstance(doc, dict):
        for key in GUID_FIELDS:
            if doc.get(key) not in (None, ""):
                return str(doc[key])
    return None


# ---- lm-evaluation-harness ------------------------------------------------------------------------

def _lm_eval_runs(base: str, data: bytes, siblings: Siblings) -> list[LogFile]:
    text = decode(data, base)[0]
    by_filter: dict[str, list[dict]] = {}
    problems: list[dict] = []
    for number, line in enumerate(lines_of(text), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except JSON_FAILURES as err:
            problems.append(Problem(f"not a JSON line of the harness log ({err.__class__.__name__})", number, file=base).to_dict())
            continue
        if not isinstance(row, dict) or not LM_EVAL_FIELDS <= row.keys():
            problems.append(Problem("not a row of an lm-evaluation-harness samples log (doc_id, doc, filtered_resps)", number, file=base).to_dict())
            continue
        by_filter.setdefault(str(row.get("filter") or "none"), []).append(_lm_eval_record(row, number))
    if not by_filter:
        raise InputError(f"{base}: no row of the lm-evaluation-harness log could be read" + (f" ({problems[0]['message']})" if problems else ""))
    task, results = _lm_eval_results(base, siblings)
    stem = _stem(base)
    out = []
    for name, records in by_filter.items():
        meta = {"format": "lm-evaluation-harness", "source": base, "task": task, "filter": name,
                "model": _lm_eval_model(results), "harness_metrics": _lm_eval_metrics(results, task, name),
                "problems": problems}
        run = stem if len(by_filter) == 1 else f"{stem}-{name}"
        out.append(LogFile(f"{run}.jsonl", _jsonl(meta, records)))
    return out


def _lm_eval_record(row: dict, number: int) -> dict:
    """One samples row as a prediction record: the document's guid (or position), and its choices or generation."""
    doc = row.get("doc")
    record: dict[str, Any] = {SOURCE_LINE: number}
    guid = _guid_of(doc)
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


def _lm_eval_results(base: str, siblings: Siblings) -> tuple[str | None, dict | None]:
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


def _lm_eval_model(results: dict | None) -> str | None:
    if not results:
        return None
    config = results.get("config") or {}
    args = config.get("model_args")
    if isinstance(args, str):
        args = dict(part.split("=", 1) for part in args.split(",") if "=" in part)
    if isinstance(args, dict) and args.get("pretrained"):
        return str(args["pretrained"])
    return str(config.get("model") or results.get("model_name") or "") or None


def _lm_eval_metrics(results: dict | None, task: str | None, filter_name: str) -> dict[str, float]:
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


# ---- Inspect AI -----------------------------------------------------------------------------------

def _inspect_eval_zip(name: str, data: bytes) -> dict:
    """An Inspect `.eval` log read by inspect_ai's own reader (a kept library), as the JSON log's dictionary."""
    if inspect_log is None:
        raise InputError(f"{name}: an Inspect AI .eval log needs the inspect-ai package (pip install 'klue-viz[harness]'), "
                         "or write the log as JSON (inspect eval --log-format json)") from None
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "log.eval"
        path.write_bytes(data)
        try:
            log = inspect_log.read_eval_log(str(path))
        except Exception as err:  # inspect_ai raises its own errors for a broken zip
            raise InputError(f"{name}: inspect_ai cannot read this .eval log: {str(err).splitlines()[0][:160]}") from None
    return json.loads(log.model_dump_json(exclude_none=True))


def _inspect_runs(base: str, log: dict) -> list[LogFile]:
    evaluation = log.get("eval") or {}
    metrics = {}
    for score in (log.get("results") or {}).get("scores") or []:
        for metric in (score.get("metrics") or {}).values():
            if isinstance(metric.get("value"), (int, float)):
                metrics[f"{score.get('name')}/{metric.get('name')}"] = float(metric["value"])
    by_epoch: dict[int, list[dict]] = {}
    for k, sample in enumerate(log.get("samples") or []):
        record: dict[str, Any] = {SOURCE_LINE: k + 1}
        guid = sample.get("id")
        if isinstance(guid, int):
            record[POSITION] = guid if not isinstance(guid, bool) else None
        else:
            record["guid"] = str(guid)
        metadata = sample.get("metadata") or {}
        if isinstance(metadata, dict) and metadata.get("turn") not in (None, ""):
            record["turn"] = metadata["turn"]
        output = sample.get("output") or {}
        record["generation"] = str(output.get("completion") or "")
        record[PROMPT] = _inspect_input(sample.get("input"))
        by_epoch.setdefault(int(sample.get("epoch") or 1), []).append(record)
    if not by_epoch:
        raise InputError(f"{base}: the Inspect AI log holds no samples (status {log.get('status')!r})")
    stem = _stem(base)
    out = []
    for epoch, records in by_epoch.items():
        meta: dict[str, Any] = {"format": "Inspect AI", "source": base, "task": evaluation.get("task"), "filter": None,
                "model": evaluation.get("model"), "harness_metrics": metrics, "problems": [], "epoch": epoch}
        out.append(LogFile(f"{stem if len(by_epoch) == 1 else f'{stem}-epoch{epoch}'}.jsonl", _jsonl(meta, records)))
    return out


def _inspect_input(value: Any) -> str | None:
    """The prompt of an Inspect sample: its text, or its chat messages' texts joined."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        parts = []
        for message in value:
            content = message.get("content") if isinstance(message, dict) else None
            if isinstance(content, list):
                content = " ".join(str(c.get("text", "")) for c in content if isinstance(c, dict))
            if content:
                parts.append(f"{message.get('role', '')}: {content}")
        return "\n".join(parts) or None
    return None


# ---- Every Eval Ever, lighteval ---------------------------------------------------------------

def _eee_runs(base: str, data: bytes) -> list[LogFile]:
    """Every Eval Ever instance-level JSONL: `sample_id` names the example (a number: its position), `output.raw` holds
    the generated text; each `evaluation_name` (lm-eval's task/filter) is one run."""
    text = decode(data, base)[0]
    by_name: dict[str, list[dict]] = {}
    scores: dict[str, list[float]] = {}
    problems: list[dict] = []
    model = None
    for number, line in enumerate(lines_of(text), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except JSON_FAILURES:
            problems.append(Problem("not a JSON line of the instance file", number, file=base).to_dict())
            continue
        if not isinstance(row, dict) or "sample_id" not in row:
            problems.append(Problem("not an Every Eval Ever instance (no sample_id)", number, file=base).to_dict())
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
    stem, out = _stem(base), []
    for name, records in by_name.items():
        given = scores.get(name) or []
        meta = {"format": "Every Eval Ever", "source": base, "task": name or None, "filter": None, "model": model,
                "harness_metrics": {"mean score": sum(given) / len(given)} if given else {}, "problems": problems}
        run = stem if len(by_name) == 1 else f"{stem}-{re.sub(r'[^0-9A-Za-z가-힣_.-]+', '-', name).strip('-')}"
        out.append(LogFile(f"{run}.jsonl", _jsonl(meta, records)))
    return out


def _lighteval_runs(base: str, data: bytes) -> list[LogFile]:
    """lighteval's per-sample details (Parquet, `details_<task>_<date>.parquet`): a row per document with `doc` (query,
    choices, gold_index, specific, id) and `model_response` (text, logprobs). The example is `doc.specific.guid`, else
    `doc.id` (a number: its position), else the row's position; a response with one log-probability per choice is
    multiple choice, else its first text is the generation."""
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
        guid = _guid_of(specific) or (str(doc["id"]) if doc.get("id") not in (None, "") and not str(doc["id"]).isdigit() else None)
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
    match = re.match(r"^details_(.+)_\d{4}-\d\d-\d\dT.*$", _stem(base))
    meta: dict[str, Any] = {"format": "lighteval", "source": base, "task": match.group(1) if match else None, "filter": None,
                            "model": None, "harness_metrics": {}, "problems": []}
    return [LogFile(f"{_stem(base)}.jsonl", _jsonl(meta, records))]


def _maybe_json(value: Any) -> Any:
    if isinstance(value, str) and value[:1] in "[{":
        try:
            return json.loads(value)
        except JSON_FAILURES:
            return value
    return value


# ---- matching a converted log -------------------------------------------------------------------

def take_log(file: RecordFile) -> dict:
    """The log's description (the first `klue_viz_log` record) taken out of `file`, every record moved to the line of
    the log it came from, and the log's own problems added; {} for an ordinary file."""
    meta: dict = {}
    kept = []
    for line, record in file.records:
        if LOG_KEY in record and len(record) == 1:
            meta = record[LOG_KEY] if isinstance(record[LOG_KEY], dict) else {}
            continue
        given = record.pop(SOURCE_LINE, None) if meta else None
        kept.append((given if isinstance(given, int) else line, record))
    if meta:
        file.records = kept
        source = str(meta.get("source") or file.name)
        file.problems.extend(Problem(p.get("message", ""), p.get("line"), p.get("guid"), source) for p in meta.get("problems") or []
                             if isinstance(p, dict))
    return meta


def locate_positions(task: Task, gold: GoldRows, file: RecordFile) -> list[Problem]:
    """Records of documents without a guid get the guid of the gold example at their position; one problem says so."""
    positional = [record for _, record in file.records if POSITION in record and task.record_key(record) is None]
    if not positional:
        return []
    outside = 0
    for record in positional:
        position = record.pop(POSITION)
        if isinstance(position, int) and 0 <= position < len(gold.rows):
            record["guid"] = gold.rows[position]["guid"]
            record.pop("turn", None)  # the gold example's guid names the WoS turn already
        else:
            outside += 1
    beyond = f"; {outside} position(s) are outside the gold's {len(gold.rows)} examples" if outside else ""
    return [Problem(f"{len(positional)} document(s) of the log carry no guid: matched to the gold by their row position "
                    f"(doc_id k = the k-th gold example){beyond}", file=file.name)]


def log_problems(problems: list[Problem], name: str, meta: dict) -> list[Problem]:
    """Problems found in a converted log named after the log itself, whose lines they give."""
    source = meta.get("source") if meta else None
    return [replace(p, file=source) if source and p.file == name else p for p in problems]


def task_hint(records: list[dict], task_names: list[str]) -> str | None:
    """The KLUE task a converted log names in its harness task (`klue_nli_mc` -> nli), for logs whose documents carry
    no guid to detect it from; None when it names none, or several."""
    meta = next((r[LOG_KEY] for r in records[:1] if LOG_KEY in r and isinstance(r[LOG_KEY], dict)), None)
    if not meta or not meta.get("task"):
        return None
    words = set(re.split(r"[^0-9a-z]+", str(meta["task"]).lower()))
    named = [name for name in task_names if name in words]
    return named[0] if len(named) == 1 else None


def log_notes(meta: dict) -> list[str]:
    """What the app and the CLI say about a log beside the run's metrics."""
    if not meta:
        return []
    parts = [f"{meta.get('format')} log {meta.get('source')}"]
    if meta.get("task"):
        parts.append(f"task {meta['task']}")
    if meta.get("filter") not in (None, "none"):
        parts.append(f"filter {meta['filter']}")
    if meta.get("model"):
        parts.append(f"model {meta['model']}")
    notes = [", ".join(str(p) for p in parts)]
    if meta.get("harness_metrics"):
        shown = ", ".join(f"{k} {v:.4f}" for k, v in meta["harness_metrics"].items())
        notes.append(f"the harness's own metrics: {shown} (on its 0..1 scale, with its own targets)")
    return notes


def single_run(name: str, data: bytes) -> tuple[str, bytes]:
    """The one prediction file a file is (a log converted); a log of several runs (filters, epochs) is an error
    naming them, since each is scored on its own (`expand` gives them all)."""
    files = expand(name, data)
    if len(files) > 1:
        shown = ", ".join(Path(f.name).stem for f in files)
        raise InputError(f"{name}: this log holds {len(files)} runs ({shown}); each is scored as its own run "
                         "(klue-viz evaluate and the app's uploads split it)")
    return files[0].name, files[0].data


def results_beside(files: list[tuple[str, Callable[[], bytes]]]) -> dict[str, Siblings]:
    """The results files among uploaded files named by their path in a folder: folder -> {name: reader}."""
    out: dict[str, Siblings] = {}
    for name, read in files:
        if is_results_name(name) and len(PurePosixPath(name).parts) > 1:
            out.setdefault(str(PurePosixPath(name).parent), {})[PurePosixPath(name).name] = read
    return out


def _reader(data: bytes) -> Callable[[], bytes]:
    """A sibling's reader for bytes already read (a member of a zip)."""
    return lambda: data


def log_files(names_and_data: Iterator[tuple[str, bytes]]) -> list[LogFile]:
    """Several files of one folder or zip: each expanded with the folder's results files as its siblings."""
    files = list(names_and_data)
    siblings: Siblings = {PurePosixPath(n).name: _reader(d) for n, d in files if is_results_name(n)}
    out = []
    for name, data in files:
        if not is_results_name(name):
            out.extend(expand(name, data, siblings))
    return out
