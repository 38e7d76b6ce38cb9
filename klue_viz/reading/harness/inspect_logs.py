"""Inspect AI logs: the JSON log (`inspect eval --log-format json`) and the `.eval` zip, each sample one record; each
epoch is one run.

The `.eval` zip is read here, member by member, rather than by inspect_ai's `read_eval_log`: that reader builds
every sample (messages, events) as pydantic objects at once (20,000 samples took 165 CPU s and 2 GB) and reads a
member whatever its unpacked size (a 1.5 MB log padded inside reached 3.2 GB). Here only `header.json` and the
`samples/*.json` members are read, one at a time, each refused before reading when its declared size is over the
upload limit and while reading when it unpacks to more (zipfile stops at the declared size and then fails the CRC),
all of them together at most `UNPACKED_TIMES` the limit; of a sample only its id, epoch, input, output and turn are
kept. Inspect writes its members with Zstandard (zip method 93), which the standard library reads with the
`zipfile-zstd` patch that inspect_ai itself uses (the `harness` extra).
"""

from __future__ import annotations

import io
import json
import zlib
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from klue_viz.core.lazy import lazy_module
from klue_viz.core.problems import InputError
from klue_viz.reading.harness.formats import POSITION, PROMPT, SOURCE_LINE, Format, HarnessLog, LogFile, Siblings, converted, stem
from klue_viz.reading.records import JSON_FAILURES, decode, json_failure
from klue_viz.reading.uploads import check_size, human_size, max_upload_bytes

if TYPE_CHECKING:
    import zipfile
else:  # only an Inspect `.eval` log is a zip: `klue-viz evaluate` of any other file does not import it
    zipfile = lazy_module("zipfile")
zstd_zip: Any
try:
    zstd_zip = lazy_module("zipfile_zstd")  # optional (the `harness` extra); imported when a Zstandard member is read
except ModuleNotFoundError:
    zstd_zip = None

#: How many times the upload limit all the members read from one `.eval` log may unpack to together.
UNPACKED_TIMES = 10
#: Zip's compression method number of Zstandard (APPNOTE.TXT 4.4.5), what Inspect writes.
ZIP_ZSTANDARD = 93
SAMPLES_DIR = "samples/"
HEADERS = ("header.json", "_journal/start.json")  # a finished log's header; a log still being written has only its start
ATTACHMENT = "attachment://"


def read_json_log(base: str, data: bytes, siblings: Siblings) -> list[LogFile] | None:
    """The runs of a JSON log; None when the document is not one (no `eval` object and `samples` list)."""
    if b'"samples"' not in data:
        return None
    try:
        whole = json.loads(decode(data, base)[0])
    except JSON_FAILURES:
        return None
    if not (isinstance(whole, dict) and isinstance(whole.get("eval"), dict) and isinstance(whole.get("samples"), list)):
        return None
    return _runs(base, whole, [_sample(s) for s in whole["samples"] if isinstance(s, dict)])


def read_eval_zip(base: str, data: bytes, siblings: Siblings) -> list[LogFile]:
    """The runs of an `.eval` log, its header and samples read member by member within the size limits."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, ValueError, EOFError) as err:
        raise InputError(f"{base}: not a readable Inspect AI .eval log (a zip): {err}") from None
    with archive:
        members = {info.filename: info for info in archive.infolist()}  # a name written twice: the last one, as Inspect reads it
        header = next((members[name] for name in HEADERS if name in members), None)
        wanted = [info for name, info in members.items() if name.startswith(SAMPLES_DIR) and name.endswith(".json")]
        _check_sizes(base, ([header] if header else []) + wanted)
        if any(info.compress_type == ZIP_ZSTANDARD for info in members.values()):
            _zstandard(base)
        read = _Reader(base, archive)
        log = read.json(header) if header is not None else {}
        samples = sorted((_sample(sample) for sample in read.samples(wanted)), key=_inspect_order)
    return _runs(base, log if isinstance(log, dict) else {}, samples)


JSON_FORMAT = Format("Inspect AI", read_json_log, first_keys=(frozenset({"eval", "samples"}),), opening_key="eval")
EVAL_FORMAT = Format("Inspect AI .eval", read_eval_zip, suffixes=(".eval",), magic=b"PK\x03\x04")


def _check_sizes(base: str, infos: list[zipfile.ZipInfo]) -> None:
    """Refuse a log before reading it when one member, or all together, declare more than they may unpack to."""
    limit = max_upload_bytes()
    for info in infos:
        check_size(f"{base}/{info.filename} (unpacked)", info.file_size)
    declared = sum(info.file_size for info in infos)
    if declared > UNPACKED_TIMES * limit:
        raise InputError(f"{base}: its samples unpack to {human_size(declared)}, over {UNPACKED_TIMES} times the "
                         f"{human_size(limit)} upload limit; nothing was read. Split the log (inspect eval --limit) or raise "
                         "KLUE_VIZ_MAX_UPLOAD_MB")


def _zstandard(base: str) -> None:
    """Make zipfile read Zstandard members (zipfile-zstd patches it, as inspect_ai does); an InputError without it."""
    if zstd_zip is None:
        raise InputError(f"{base}: an Inspect AI .eval log is compressed with Zstandard, which needs the zipfile-zstd package "
                         "(pip install 'klue-viz[harness]'), or write the log as JSON (inspect eval --log-format json)")
    zstd_zip.ZIP_ZSTANDARD  # noqa: B018  # reading an attribute imports the module, which patches zipfile


class _Reader:
    """Reads members of one `.eval` zip as JSON, each within the upload limit and all within `UNPACKED_TIMES` it."""

    def __init__(self, base: str, archive: zipfile.ZipFile) -> None:
        self.base, self.archive = base, archive
        self.limit = max_upload_bytes()
        self.unpacked = 0

    def json(self, info: zipfile.ZipInfo) -> Any:
        name = f"{self.base}/{info.filename}"
        try:
            with self.archive.open(info) as member:
                content = member.read(self.limit + 1)
        except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError, RuntimeError, ValueError, OSError) as err:
            # a header that understates the size fails the CRC; encrypted members and unknown methods fail too
            raise InputError(f"{name}: damaged inside the .eval log ({str(err)[:160]}); nothing was read") from None
        check_size(f"{name} (unpacked)", len(content))
        self.unpacked += len(content)
        if self.unpacked > UNPACKED_TIMES * self.limit:
            raise InputError(f"{self.base}: its samples unpack to more than {UNPACKED_TIMES} times the {human_size(self.limit)} "
                             "upload limit; nothing was read")
        try:
            return json.loads(content)
        except JSON_FAILURES as err:
            raise InputError(f"{name}: not JSON ({json_failure(err)}); nothing was read") from None

    def samples(self, infos: list[zipfile.ZipInfo]) -> Iterator[dict]:
        """Each sample member's JSON, one at a time (the next is read once the last one's record is taken)."""
        for info in infos:
            sample = self.json(info)
            if isinstance(sample, dict):
                yield sample


def _inspect_order(sample: tuple[Any, int, dict]) -> tuple[int, str]:
    """inspect_ai's own order of samples (as inspect_ai.log._log.sort_samples sorts them): by epoch, then id, numbers zero-filled."""
    sample_id, epoch, _ = sample
    return epoch, sample_id if isinstance(sample_id, str) else str(sample_id).zfill(20)


def _sample(sample: dict) -> tuple[Any, int, dict]:
    """A sample's id, epoch and prediction record (its number in the run is set later): what is kept of it."""
    given = sample.get("attachments")
    attachments: dict = given if isinstance(given, dict) else {}
    record: dict[str, Any] = {}
    guid = sample.get("id")
    if isinstance(guid, int):
        record[POSITION] = guid if not isinstance(guid, bool) else None
    else:
        record["guid"] = str(guid)
    metadata = sample.get("metadata") or {}
    if isinstance(metadata, dict) and metadata.get("turn") not in (None, ""):
        record["turn"] = metadata["turn"]
    output = sample.get("output") or {}
    record["generation"] = _resolved(str(output.get("completion") or "") if isinstance(output, dict) else "", attachments)
    prompt = _inspect_input(sample.get("input"))
    record[PROMPT] = None if prompt is None else _resolved(prompt, attachments)
    epoch = sample.get("epoch")
    return guid, epoch if isinstance(epoch, int) and epoch > 0 else 1, record


def _resolved(text: str, attachments: dict) -> str:
    """A text Inspect moved out to the sample's attachments (`attachment://<hash>`), put back."""
    if text.startswith(ATTACHMENT) and isinstance(attachments.get(text[len(ATTACHMENT):]), str):
        return attachments[text[len(ATTACHMENT):]]
    return text


def _runs(base: str, log: dict, samples: list[tuple[Any, int, dict]]) -> list[LogFile]:
    evaluation = log.get("eval") or {}
    metrics = {}
    for score in (log.get("results") or {}).get("scores") or []:
        for metric in (score.get("metrics") or {}).values():
            if isinstance(metric.get("value"), (int, float)):
                metrics[f"{score.get('name')}/{metric.get('name')}"] = float(metric["value"])
    by_epoch: dict[int, list[dict]] = {}
    for k, (_, epoch, record) in enumerate(samples):
        by_epoch.setdefault(epoch, []).append({SOURCE_LINE: k + 1, **record})
    if not by_epoch:
        raise InputError(f"{base}: the Inspect AI log holds no samples (status {log.get('status')!r})")
    out = []
    for epoch, records in by_epoch.items():
        model = evaluation.get("model")
        task = evaluation.get("task")
        log_facts = HarnessLog("Inspect AI", base, None if task is None else str(task), None, None if model is None else str(model), metrics, (), epoch)
        out.append(LogFile(f"{stem(base) if len(by_epoch) == 1 else f'{stem(base)}-epoch{epoch}'}.jsonl", converted(log_facts, records)))
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
