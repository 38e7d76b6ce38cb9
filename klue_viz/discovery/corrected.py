"""Corrected gold: the accepted corrections applied to the whole official file, and what they change in every run's score.

A correction is what a "gold looks wrong" remark stores (`klue_viz.discovery.patch`): the unit, the
corrected label in the form the task's patch writer reads, who made it and why. The task's patch
writer turns the corrections into corrected records; this module puts those records back into the
whole official file (a JSON list by guid, MRC's questions by guid, NER/DP sentences by guid), so that
the corrected file is read by the same gold reader as the original, and every run is scored on it
by the same scoring path (`rescore`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from klue_viz.core.lazy import lazy_module
from klue_viz.core.problems import InputError, Problem
from klue_viz.core.steps import natural_key
from klue_viz.discovery.patch import make_patch
from klue_viz.reading.records import JSON_FAILURES, decode, read_bytes
from klue_viz.scoring.evaluate import Gold, RunResult, evaluate_bytes, gold_file, gold_from_bytes
from klue_viz.tasks.base import Task
from klue_viz.tasks.kit import read_json, tsv_blocks

if TYPE_CHECKING:
    from scipy import stats
else:
    stats = lazy_module("scipy.stats")


@dataclass(frozen=True)
class Correction:
    """One accepted correction of one unit of the gold."""

    guid: str
    correction: str
    turn: int | None = None
    annotator: str = ""
    note: str = ""
    updated_at: str = ""

    def to_dict(self) -> dict:
        return asdict(self)


def correction_map(corrections: Iterable[Correction]) -> dict[tuple[str, int | None], list[str]]:
    """(guid, turn) -> correction texts, the form the patch writers read."""
    out: dict[tuple[str, int | None], list[str]] = {}
    for item in corrections:
        out.setdefault((item.guid, item.turn), []).append(item.correction)
    return out


def read_corrections(data: bytes, name: str) -> list[Correction]:
    """Corrections from a JSONL file: annotation export records (`corrected_label`, `gold_wrong`; the gold's only) or plain
    `{"guid", "correction", "turn"?}` lines. A line that is neither is an InputError naming the file and line."""
    out = []
    for number, line in enumerate(data.decode("utf-8-sig").splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except JSON_FAILURES:
            raise InputError(f"{name}, line {number}: not a JSON object") from None
        if not isinstance(record, dict) or "guid" not in record:
            raise InputError(f"{name}, line {number}: expected an object with 'guid' and 'correction' (or an annotation export record)")
        text = record.get("correction", record.get("corrected_label"))
        if "corrected_label" in record and (record.get("run", "gold") != "gold" or not record.get("gold_wrong", True)):
            continue  # a remark on a run, or not a correction
        if text in (None, ""):
            raise InputError(f"{name}, line {number}, guid {record['guid']}: no 'correction' (or 'corrected_label') given")
        turn = record.get("turn")
        if turn is not None and (isinstance(turn, bool) or not isinstance(turn, int)):
            raise InputError(f"{name}, line {number}, guid {record['guid']}: turn must be a whole number or null")
        out.append(Correction(str(record["guid"]), str(text), turn, str(record.get("annotator") or ""), str(record.get("note") or ""),
                              str(record.get("updated_at") or "")))
    if not out:
        raise InputError(f"{name}: no correction found")
    return out


@dataclass
class CorrectedFile:
    """The whole official file with the corrections applied, and the guids of the records it changed.

    `applied`: the corrections in those records; `left_out`: each correction that was not applied, with why (two
    reviewers' different corrections of one unit, a guid the gold has not, one the task's patch writer could not
    read); each of them is also a problem, so every caller that lists problems says so."""

    text: str
    changed: list[str]
    problems: list[Problem] = field(default_factory=list)
    applied: list[Correction] = field(default_factory=list)
    left_out: list[tuple[Correction, str]] = field(default_factory=list)


def settle(task: Task, official_text: str, name: str, corrections: Iterable[Correction]) -> tuple[list[Correction], list[tuple[Correction, str]]]:
    """The corrections to apply and those to leave out with why: a guid the official file has not (read by the task's
    gold reader), and the corrections of one unit (guid, turn) where two or more people gave different ones (none of
    them is applied: no one's correction wins silently; a third person settles it and the export is made again).
    One person's several corrections of a unit (NER entities of one sentence) are applied together, as before."""
    corrections = list(corrections)
    # the guid a correction is stored under (`Task.annotation_key`): WoS's dialogue, whose rows are its turns (`<dialogue>-<turn>`)
    guids = {str(task.annotation_key(row)[0]) for row in gold_from_bytes(task, official_text.encode("utf-8"), name).rows}
    by_unit: dict[tuple[str, int | None], list[Correction]] = {}
    left_out: list[tuple[Correction, str]] = []
    for item in corrections:
        if item.guid not in guids:
            left_out.append((item, f"{item.guid}: not in the gold {name}; the correction {item.correction!r} is not applied"))
        else:
            by_unit.setdefault((item.guid, item.turn), []).append(item)
    usable = []
    for (guid, turn), items in by_unit.items():
        texts = {item.correction.strip() for item in items}
        people = {item.annotator for item in items}
        if len(texts) > 1 and len(people) > 1:
            where = guid if turn is None else f"{guid} turn {turn}"
            listed = [f"{item.annotator or '(anonymous)'}'s{' correction' if k == 0 else ''} {item.correction}" for k, item in enumerate(items)]
            reason = f"{where}: {listed[0]} conflicts with {', '.join(listed[1:])}; neither is applied"
            left_out += [(item, reason) for item in items]
        else:
            usable += items
    order = {id(item): k for k, item in enumerate(corrections)}
    return sorted(usable, key=lambda c: order[id(c)]), sorted(left_out, key=lambda pair: order[id(pair[0])])


def corrected_file(task: Task, official_text: str, name: str, corrections: Iterable[Correction]) -> CorrectedFile:
    """Apply corrections to the whole official file, in its format; corrections that are not applied (`settle`, or that
    the patch writer cannot read) become problems and are listed in `left_out`."""
    usable, left_out = settle(task, official_text, name, corrections)
    patch = make_patch(task, official_text, name, correction_map(usable))
    first = patch.text.lstrip()[:1]
    if first in "[{" and first:
        text, changed = _merge_json(official_text, name, read_json(patch.text, f"{name} (patch)"))
    else:
        text, changed = _merge_tsv(official_text, patch.text)
    done = set(changed)
    refused = {str(p.guid): p.message for p in patch.problems if p.guid is not None}
    applied = [item for item in usable if item.guid in done]
    for item in usable:
        if item.guid not in done:
            why = refused.get(item.guid, "it leaves the record as it was")
            left_out.append((item, f"{item.guid}: the correction {item.correction!r} is not applied: {why}"))
    problems = list(patch.problems) + [Problem(reason, None, item.guid, name) for item, reason in left_out
                                       if not (item.guid in refused and item.guid not in done)]
    return CorrectedFile(text, changed, problems, applied, left_out)


def _merge_json(official_text: str, name: str, patched: list[dict[str, Any]] | dict[str, Any]) -> tuple[str, list[str]]:
    data = read_json(official_text, name)
    if isinstance(patched, list):  # one record per guid (YNAT, NLI, STS, RE, WoS dialogues)
        by_guid = {str(r.get("guid")): r for r in patched}
        merged = [by_guid.get(str(r.get("guid")), r) if isinstance(r, dict) else r for r in data]
        changed = [g for g in (str(r.get("guid")) for r in data if isinstance(r, dict)) if g in by_guid]
        return json.dumps(merged, ensure_ascii=False, indent=2) + "\n", changed
    # SQuAD-like (MRC): questions by guid inside documents and paragraphs
    questions = {str(qa.get("guid")): qa for d in patched.get("data", []) for p in d.get("paragraphs", []) for qa in p.get("qas", [])}
    changed = []
    for document in data.get("data", []):
        for paragraph in document.get("paragraphs", []):
            for k, qa in enumerate(paragraph.get("qas", [])):
                if str(qa.get("guid")) in questions:
                    paragraph["qas"][k] = questions[str(qa.get("guid"))]
                    changed.append(str(qa.get("guid")))
    return json.dumps(data, ensure_ascii=False, indent=2) + "\n", changed


def _merge_tsv(official_text: str, patch_text: str) -> tuple[str, list[str]]:
    """NER/DP: each corrected sentence block (its `## guid` line and its lines up to the blank line) replaces the original."""
    patched = {guid: (header, body) for guid, header, body in tsv_blocks(patch_text)}
    out: list[str] = []
    changed: list[str] = []
    skipping = False
    for line in official_text.split("\n"):
        if line.startswith("## "):
            guid, tab, _ = line[3:].partition("\t")
            if tab and " " not in guid.strip() and guid.strip() in patched:
                header, body = patched[guid.strip()]
                out += [header, *body]
                changed.append(guid.strip())
                skipping = True
                continue
        if skipping and line.strip():
            continue  # the original sentence's lines
        skipping = False
        out.append(line)
    return "\n".join(out), changed


def corrected_gold(task: Task, official_text: str, name: str, corrections: Iterable[Correction]) -> tuple[Gold, CorrectedFile]:
    """The corrected gold, read from the corrected whole file by the task's own reader."""
    found = corrected_file(task, official_text, name, list(corrections))
    return gold_from_bytes(task, found.text.encode("utf-8"), name), found


def official_text(task: Task, source: str | Path) -> tuple[str, str]:
    """The text and file name of the official gold file a source names (a file, or a klue_benchmark/ folder); corrections are
    applied to an official file, so `hf` is refused with what to give instead."""
    text = str(source)
    if text == "hf" or text.startswith("hf:"):
        raise InputError(f"corrections apply to an official file; give --gold path/to/{task.facts.official_folder}_dev.{task.facts.official_ext} "
                         "or a klue_benchmark/ folder instead of the Hugging Face hub")
    path = gold_file(task, Path(source))
    return decode(read_bytes(path), str(path))[0], path.name


def correctors(corrections: Iterable[Correction]) -> list[str]:
    """Who made the corrections, most corrections first ("(anonymous)" for those saved without a name): a version is
    credited to whoever accepted it into the gold, and these are the people whose work it holds."""
    counts: dict[str, int] = {}
    for item in corrections:
        counts[item.annotator or "(anonymous)"] = counts.get(item.annotator or "(anonymous)", 0) + 1
    return [f"{who} ({n})" for who, n in sorted(counts.items(), key=lambda pair: (-pair[1], natural_key(pair[0])))]


def version_name(base: str, records: int, when: datetime | None = None) -> str:
    """The default name of a gold version: "dev + corrections, 17 records, 2026-12-03"."""
    day = (when or datetime.now(timezone.utc)).strftime("%Y-%m-%d")
    return f"{base} + corrections, {records} record{'s' if records != 1 else ''}, {day}"


# ---- what the corrections change ----------------------------------------------------------------

@dataclass(frozen=True)
class RunInput:
    """A run to score: its name, file name and bytes (a stored run, a demo file, a file given to the CLI)."""

    name: str
    file_name: str
    data: bytes


@dataclass
class Rescored:
    """Every run on the gold before and after the corrections: metrics, ranks by the task's first metric (and the places
    each run moved), Kendall's tau; runs in natural order of their names."""

    metric: str
    rows: list[dict]
    kendall_tau: float | None
    failures: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {"metric": self.metric, "runs": self.rows, "kendall_tau": self.kendall_tau, "failed": self.failures}


def ranks(values: list[float | None]) -> list[int | None]:
    """Competition ranks (1 = best, ties share the better rank) of metric values; None for an undefined value."""
    defined = [v for v in values if v is not None]
    return [None if v is None else 1 + sum(other > v for other in defined) for v in values]


def rescore(task: Task, before: Gold, after: Gold, runs: Iterable[RunInput], strict: bool = False) -> Rescored:
    """Score every run on both golds through the one scoring path (`evaluate_bytes`), and compare the two orderings.

    The one place that re-scores runs for a gold version: with kept per-example results it can read those instead.
    """
    metric = task.facts.metrics[0].key
    rows, failures = [], {}
    for run in runs:
        try:
            old = evaluate_bytes(task, before, run.data, run.file_name, strict=strict, run=run.name)
            new = evaluate_bytes(task, after, run.data, run.file_name, strict=strict, run=run.name)
        except InputError as err:
            failures[run.name] = str(err)
            continue
        rows.append(_row(task, old, new))
    for side in ("before", "after"):
        for row, rank in zip(rows, ranks([r[side][metric] for r in rows])):
            row[f"rank_{side}"] = rank
    for row in rows:  # places gained (positive) or lost; None where a rank is undefined
        row["moved"] = None if row["rank_before"] is None or row["rank_after"] is None else row["rank_before"] - row["rank_after"]
    rows.sort(key=lambda row: natural_key(row["run"]))  # ckpt-2000 before ckpt-10000, as every list of runs
    pairs = [(r["before"][metric], r["after"][metric]) for r in rows if r["before"][metric] is not None and r["after"][metric] is not None]
    tau = None
    if len(pairs) >= 2:
        found = stats.kendalltau([a for a, _ in pairs], [b for _, b in pairs]).statistic
        tau = None if found != found else float(found)  # NaN: one side constant
    return Rescored(metric, rows, tau, failures)


def _row(task: Task, old: RunResult, new: RunResult) -> dict:
    change: dict[str, float | None] = {}
    for metric in task.facts.metrics:
        a, b = old.scores.values[metric.key], new.scores.values[metric.key]
        change[metric.key] = None if a is None or b is None else b - a
    return {"run": old.run, "before": dict(old.scores.values), "after": dict(new.scores.values), "change": change}
