"""`klue-viz probe score`: a model's behaviour on a suite, test by test.

INV: a case fails when the prediction on the perturbed example is not the prediction on its source carried through
the edit (`ProbeIO.same`: a label equal; NER's entity set moved by the edit), whatever the gold. DIR/MFT: a case fails
when the manifest's expectation is not met (`ProbeIO.met`). A case whose perturbed or source example has no prediction
is not scored and is counted as `unpredicted`. Beside the failure rates, the official metrics of the perturbed examples
and of their sources (the task's first metric), so a drop in score is read next to the behaviour that causes it.
"""

from __future__ import annotations

import io
import json
import math
import zipfile
from collections.abc import Callable, Hashable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from klue_viz.core.problems import InputError, Problem
from klue_viz.core.results import Frames
from klue_viz.probes.catalogue import TESTS
from klue_viz.probes.make import MANIFEST, SOURCES
from klue_viz.reading.prediction_files import read_prediction_file
from klue_viz.reading.suite_files import EXPECTED, MANIFEST_FIELDS, first_case, folder_case, manifest_prefixes
from klue_viz.scoring.evaluate import Gold, gold_from_bytes, match_file
from klue_viz.tasks import TASKS
from klue_viz.tasks.base import Task
from klue_viz.tasks.probing import ProbeIO

#: z of a two-sided 95% interval (the Wilson interval of a failure rate).
Z95 = 1.959963984540054


@dataclass
class ProbeSet:
    """A suite read back: its manifest lines, the perturbed gold and the source gold."""

    task: Task
    folder: str
    manifest: list[dict[str, Any]]
    perturbed: Gold
    sources: Gold
    skipped: dict[str, int] = field(default_factory=dict)
    #: What was wrong in the suite's files: unreadable gold rows, and cases left out because their perturbed example
    #: or their source is not in the gold files (a folder changed after `probe make`).
    problems: list[Problem] = field(default_factory=list)

    @property
    def tests(self) -> list[str]:
        seen: dict[str, None] = {}
        for line in self.manifest:
            seen.setdefault(line["test"], None)
        for test in self.skipped:
            seen.setdefault(test, None)
        return list(seen)


def _probe(task: Task) -> ProbeIO:
    if task.probe is None:
        raise InputError(f"{task.facts.name} has no behavioural tests")
    return task.probe


def read_manifest(text: str, name: str) -> list[dict[str, Any]]:
    """The manifest's lines; InputError naming the line that is not a case."""
    lines = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError as err:
            raise InputError(f"{name}: line {number} is not JSON ({err.msg})") from None
        if not isinstance(item, dict) or not all(isinstance(item.get(k), str) for k in ("guid", "source_guid", "test", "type")):
            raise InputError(f"{name}: line {number} is not a case (expected guid, source_guid, test, type, edits)")
        if item["test"] not in TESTS:
            raise InputError(f"{name}: line {number}: unknown test {item['test']!r}")
        lines.append(item)
    return lines


def skipped_counts(readme: str) -> dict[str, int]:
    """Skipped examples per test, read from the README's table (`| `test` | type | cases | skipped | ... |`)."""
    counts = {}
    for line in readme.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 4 and cells[0].startswith("`") and cells[0].strip("`") in TESTS and cells[3].isdigit():
            counts[cells[0].strip("`")] = int(cells[3])
    return counts


def suite_paths(task: Task) -> dict[str, str]:
    """The files of a suite, relative to its folder: manifest, perturbed gold, source gold."""
    probe = _probe(task)
    return {"manifest": MANIFEST, "perturbed": probe.file_name, "sources": f"{SOURCES}/{probe.file_name}"}


def read_probe_set(task: Task, folder: str | Path) -> ProbeSet:
    """The suite in `folder` (what `klue-viz probe make` wrote); InputError saying which file is missing or wrong."""
    root = Path(folder)
    files = {rel: (root / rel).read_bytes() for rel in [*suite_paths(task).values(), "README.md"] if (root / rel).is_file()}
    return probe_set_from_files(task, files, str(folder))


def suite_tasks(present: Callable[[str], bool], prefix: str = "") -> list[Task]:
    """The tasks whose suite files (the perturbed gold and sources/) a suite folder holds; `present` says whether a path
    (`prefix`, the folder's, then the path in it) is there."""
    return [task for task in TASKS.values() if task.probe is not None
            and all(present(prefix + rel) for rel in (task.probe.file_name, f"{SOURCES}/{task.probe.file_name}"))]


def holds_suite(task: Task, folder: Path) -> bool:
    """Whether `folder` holds a suite of this task: a manifest with the documented fields whose first case is one of
    the task's tests, beside the task's perturbed gold file (klue_viz.reading.suite_files tells the manifest)."""
    if task.probe is None or not (folder / task.probe.file_name).is_file():
        return False
    case = folder_case(folder)
    return case is not None and case["test"] in task.probe.tests


def suite_files_from_zip(data: bytes, name: str, task: Task | None = None) -> tuple[Task, dict[str, bytes]]:
    """The task and the files (by path in the suite's folder) of the suite in a zip: its manifest at the zip's top or in
    one top-level folder (`task`: the suite of that task, when the zip holds several); read in memory, nothing extracted.
    InputError naming the zip and what was expected."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            names = set(archive.namelist())
            prefixes = manifest_prefixes(names)
            if not prefixes:
                raise InputError(f"{name}: no {MANIFEST} in the zip; expected {EXPECTED}")
            found = [(prefix, t) for prefix in prefixes for t in suite_tasks(names.__contains__, prefix)
                     if task is None or t.facts.name == task.facts.name]
            if len(found) != 1:
                of = f"of {task.facts.name.upper()} " if task is not None else ""
                where = ", ".join(p + MANIFEST for p in prefixes)
                raise InputError(f"{name}: {'no' if not found else 'more than one'} suite {of}beside {where}; expected {EXPECTED}")
            prefix, chosen = found[0]
            wanted = [*suite_paths(chosen).values(), "README.md"]
            files = {rel: archive.read(prefix + rel) for rel in wanted if prefix + rel in names}
    except zipfile.BadZipFile:
        raise InputError(f"{name}: not a zip file") from None
    if first_case(files[MANIFEST].decode("utf-8", errors="replace")) is None:
        raise InputError(f"{name}: {prefix}{MANIFEST} is not a suite's manifest (its first line needs {', '.join(MANIFEST_FIELDS)})")
    return chosen, files


def probe_set_from_zip(task: Task, data: bytes, name: str) -> ProbeSet:
    """The suite of this task in a zip of its folder (see `suite_files_from_zip`)."""
    return probe_set_from_files(task, suite_files_from_zip(data, name, task)[1], name)


def probe_set_from_files(task: Task, files: dict[str, bytes], name: str) -> ProbeSet:
    """The suite from its files' bytes, by path relative to its folder; InputError naming a missing file."""
    for what, rel in suite_paths(task).items():
        if rel not in files:
            raise InputError(f"{name}: no {rel} ({what}); give a folder written by `klue-viz probe make --task {task.facts.name}`")
    paths = suite_paths(task)
    manifest = read_manifest(files[paths["manifest"]].decode("utf-8"), f"{name}/{MANIFEST}")
    skipped = skipped_counts(files["README.md"].decode("utf-8")) if "README.md" in files else {}
    perturbed = gold_from_bytes(task, files[paths["perturbed"]], f"{name}/{paths['perturbed']}")
    sources = gold_from_bytes(task, files[paths["sources"]], f"{name}/{paths['sources']}")
    cases, left_out = cases_in_gold(task, manifest, perturbed, sources, f"{name}/{MANIFEST}")
    return ProbeSet(task, name, cases, perturbed, sources, skipped, [*perturbed.problems, *sources.problems, *left_out])


def cases_in_gold(task: Task, manifest: list[dict[str, Any]], perturbed: Gold, sources: Gold,
                  name: str) -> tuple[list[dict[str, Any]], list[Problem]]:
    """The manifest's cases whose perturbed example and source are both in the suite's gold files, and one problem
    counting the others: a case without its examples could only ever be "unpredicted", so it is left out and said
    (a suite whose gold file was edited or cut after `probe make`), never scored."""
    probe = _probe(task)
    in_perturbed, in_sources = units(probe, perturbed), units(probe, sources)
    kept = [case for case in manifest if case["guid"] in in_perturbed and case["source_guid"] in in_sources]
    if len(kept) == len(manifest):
        return kept, []
    missing = [case["guid"] for case in manifest if case["guid"] not in in_perturbed or case["source_guid"] not in in_sources]
    shown = ", ".join(missing[:3]) + (", ..." if len(missing) > 3 else "")
    return kept, [Problem(f"{len(missing)} of {len(manifest)} cases left out: their perturbed example or their source is not "
                          f"in the suite's gold files (e.g. {shown}); was a file of the folder changed after `probe make`?", file=name)]


@dataclass
class Parsed:
    """A prediction file's records matched to one gold of a suite."""

    #: guid -> parsed prediction, for the records whose guid is in this gold.
    predictions: dict[str, Any]
    problems: list[Problem]
    #: The guids of the file that are not in this gold (in the file's order).
    other_guids: list[str]


def parsed_predictions(task: Task, gold: Gold, data: bytes, name: str) -> Parsed:
    """The file's records that are for this gold, parsed (the others are listed, not parsed). The file is read by the
    one reading stage, so an evaluation-harness log (lm-evaluation-harness `--log_samples`) gives its documents'
    answers, parsed by the task's answer parser, as any prediction file does."""
    prediction = read_prediction_file(name, data, task.normalise_record)
    try:
        matched = match_file(task, gold, prediction)
    except InputError:
        return Parsed({}, list(prediction.records.problems), [])
    return Parsed({gold.rows[k]["guid"]: p for k, p in zip(matched.order, matched.predictions)}, matched.problems, matched.extra)


def ignored_guids(name: str, parsed: Parsed, suite: ProbeSet) -> list[Problem]:
    """One problem naming the guids of a run's file that are in neither the suite's perturbed nor its source examples:
    left out, and said, as `evaluate` says of guids not in the gold."""
    known = {row["guid"] for row in suite.perturbed.rows} | {row["guid"] for row in suite.sources.rows}
    ignored = [guid for guid in parsed.other_guids if guid not in known]
    if not ignored:
        return []
    shown = ", ".join(ignored[:5]) + (", ..." if len(ignored) > 5 else "")
    return [Problem(f"{len(ignored)} guid(s) in neither the suite's perturbed nor its source examples were ignored: {shown}",
                    file=name)]


@dataclass
class TestResult:
    """One test of one run: the row of the runs × tests table."""

    test: str
    type: str
    capability: str
    n: int
    failures: int
    failure_rate: float | None
    skipped: int
    unpredicted: int
    interval: tuple[float, float] | None
    metric_source: float | None
    metric_perturbed: float | None
    #: The guids of the failing perturbed cases (what the app lists when a cell is clicked).
    failing: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def rate_text(self) -> str:
        """The failure rate in percent with its cases and its 95% interval (`12.5% of 24 [4.3, 31.0]`), the one wording of
        the CLI's table and the app's cells: on the few cases a name-swap makes, the interval says how little a rate
        means; "n/a" when no case was scored."""
        if self.failure_rate is None or self.interval is None:
            return "n/a"
        low, high = self.interval
        return f"{100 * self.failure_rate:.1f}% of {self.n:,} [{100 * low:.1f}, {100 * high:.1f}]"


@dataclass
class RunBehaviour:
    run: str
    tests: list[TestResult]
    problems: list[Problem] = field(default_factory=list)
    #: The run's parsed predictions by gold guid, on the perturbed examples and on the sources (what the pairs are drawn from).
    perturbed: dict[str, Any] = field(default_factory=dict, repr=False)
    sources: dict[str, Any] = field(default_factory=dict, repr=False)

    def to_dict(self) -> dict[str, Any]:
        return {"run": self.run, "tests": [t.to_dict() for t in self.tests]}


def wilson(failures: int, n: int) -> tuple[float, float] | None:
    """The Wilson score 95% interval of a failure rate (statsmodels' `proportion_confint(method="wilson")`)."""
    if n == 0:
        return None
    p = failures / n
    centre = (p + Z95 ** 2 / (2 * n)) / (1 + Z95 ** 2 / n)
    half = Z95 * math.sqrt(p * (1 - p) / n + Z95 ** 2 / (4 * n * n)) / (1 + Z95 ** 2 / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def units(probe: ProbeIO, gold: Gold) -> dict[str, list[int]]:
    """Manifest guid -> the positions of its gold rows (one row; a WoS dialogue's user turns)."""
    found: dict[str, list[int]] = {}
    for k, row in enumerate(gold.rows):
        found.setdefault(probe.unit_of(row), []).append(k)
    return found


def _answer(probe: ProbeIO, gold: Gold, positions: list[int] | None, predictions: dict[str, Any]) -> Hashable | None:
    """The answer of one example, or None when a row of it has no prediction."""
    if not positions or any(gold.rows[k]["guid"] not in predictions for k in positions):
        return None
    return probe.answer_of([predictions[gold.rows[k]["guid"]] for k in positions])


def _metric(task: Task, gold: Gold, positions: Sequence[int], predictions: dict[str, Any]) -> float | None:
    """The task's first official metric over the rows at these positions (those with a prediction)."""
    rows = [gold.rows[k] for k in positions if gold.rows[k]["guid"] in predictions]
    if not rows:
        return None
    scores = task.scores_of(task.row_statistics(rows, [predictions[r["guid"]] for r in rows]))
    return scores.values.get(task.facts.metrics[0].key)


def holds_sources(probes: ProbeSet, data: bytes, name: str) -> bool:
    """Whether a run's file on the suite holds predictions for its source examples too (else they come from a dev run)."""
    return bool(parsed_predictions(probes.task, probes.sources, data, name).predictions)


def score_run(probes: ProbeSet, run: str, data: bytes, name: str, source_data: bytes | None = None, source_name: str = "") -> RunBehaviour:
    """One run's behaviour: its predictions on the perturbed examples (`data`) and on the sources (from `source_data`,
    a dev-set run, or else from `data` itself when it holds the source guids too)."""
    task, probe = probes.task, _probe(probes.task)
    on_perturbed = parsed_predictions(task, probes.perturbed, data, name)
    perturbed = on_perturbed.predictions
    if source_data is not None:
        on_sources = parsed_predictions(task, probes.sources, source_data, source_name)
        problems = (on_perturbed.problems + ignored_guids(name, on_perturbed, probes)
                    + on_sources.problems + ignored_guids(source_name, on_sources, probes))
    else:  # one file read twice: a problem of its records is said once
        on_sources = parsed_predictions(task, probes.sources, data, name)
        problems = list(dict.fromkeys(on_perturbed.problems + on_sources.problems)) + ignored_guids(name, on_perturbed, probes)
    sources = on_sources.predictions
    if not perturbed:
        raise InputError(f"{name}: no prediction for a perturbed example of {probes.folder} (run the model on its gold file)")
    if not sources:
        raise InputError(f"{name}: no prediction for the source examples; give --source-pred (the run on the dev set) "
                         "or predictions that hold the source guids too")
    results = []
    perturbed_units, source_units = units(probe, probes.perturbed), units(probe, probes.sources)
    outcomes = case_outcomes(probes, perturbed, sources)
    for test in probes.tests:
        lines = [line for line in probes.manifest if line["test"] == test]
        unpredicted = sum(outcomes[line["guid"]] is None for line in lines)
        failing = [line["guid"] for line in lines if outcomes[line["guid"]] is False]
        n = len(lines) - unpredicted
        kind = TESTS[test]
        results.append(TestResult(
            test, kind.type, kind.capability, n, len(failing), len(failing) / n if n else None, probes.skipped.get(test, 0), unpredicted,
            wilson(len(failing), n),
            _metric(task, probes.sources, sorted({k for line in lines for k in source_units.get(line["source_guid"], [])}), sources),
            _metric(task, probes.perturbed, [k for line in lines for k in perturbed_units.get(line["guid"], [])], perturbed), failing))
    return RunBehaviour(run, results, problems, perturbed, sources)


def pair_frames(task: Task, gold: Gold, guid: str, predictions: dict[str, Any]) -> tuple[Frames, list[str]] | None:
    """The frames of one example (all its gold rows: a WoS dialogue's turns) with the run's predictions, and the row
    guids to draw; None when a row has no prediction."""
    positions = units(_probe(task), gold).get(guid)
    if not positions or any(gold.rows[k]["guid"] not in predictions for k in positions):
        return None
    frame = gold.frame.iloc[positions].reset_index(drop=True)
    return task.build_frames(frame, [predictions[gold.rows[k]["guid"]] for k in positions]), [gold.rows[k]["guid"] for k in positions]


def case_outcomes(probes: ProbeSet, perturbed: dict[str, Any], sources: dict[str, Any]) -> dict[str, bool | None]:
    """Perturbed guid -> whether the case passes (INV: the same answer as on its source, carried through the edits;
    DIR/MFT: the expectation met); None when the perturbed example or its source has no prediction."""
    probe = _probe(probes.task)
    perturbed_units, source_units = units(probe, probes.perturbed), units(probe, probes.sources)
    found: dict[str, bool | None] = {}
    for line in probes.manifest:
        answer = _answer(probe, probes.perturbed, perturbed_units.get(line["guid"]), perturbed)
        source = _answer(probe, probes.sources, source_units.get(line["source_guid"]), sources)
        if answer is None or source is None:
            found[line["guid"]] = None
        elif line["type"] == "INV":
            found[line["guid"]] = probe.same(source, answer, line.get("edits") or [])
        else:
            found[line["guid"]] = probe.met(answer, line.get("expect"))
    return found


def paired_outcomes(probes: ProbeSet, baseline: RunBehaviour, candidate: RunBehaviour) -> dict[str, tuple[list[str], list[bool], list[bool]]]:
    """Per test, the cases both runs answered: their source guids and whether each run passes (what the gate tests)."""
    first = case_outcomes(probes, baseline.perturbed, baseline.sources)
    second = case_outcomes(probes, candidate.perturbed, candidate.sources)
    paired: dict[str, tuple[list[str], list[bool], list[bool]]] = {}
    for line in probes.manifest:
        a, b = first[line["guid"]], second[line["guid"]]
        if a is not None and b is not None:
            sources, passes_a, passes_b = paired.setdefault(line["test"], ([], [], []))
            sources.append(line["source_guid"])
            passes_a.append(a)
            passes_b.append(b)
    return paired


def behaviour_payload(task: Task, runs: Sequence[RunBehaviour]) -> dict[str, Any]:
    """The `--out` JSON: {task, runs: [{run, tests: [...]}]}."""
    return {"task": task.facts.name, "metric": task.facts.metrics[0].key, "runs": [r.to_dict() for r in runs]}


def behaviour_table(runs: Sequence[RunBehaviour]) -> str:
    """Runs × tests as plain text: each cell the failure rate with its cases and 95% interval (TestResult.rate_text)."""
    tests = list(dict.fromkeys(t.test for r in runs for t in r.tests))
    cells = [{t.test: t.rate_text() for t in r.tests} for r in runs]
    width = max([len(r.run) for r in runs] + [4])
    widths = [max([len(test)] + [len(row.get(test, "n/a")) for row in cells]) for test in tests]
    lines = [f"{'run':<{width}}  " + "  ".join(f"{test:>{w}}" for test, w in zip(tests, widths))]
    for r, row in zip(runs, cells):
        lines.append(f"{r.run:<{width}}  " + "  ".join(f"{row.get(test, 'n/a'):>{w}}" for test, w in zip(tests, widths)))
    return "\n".join(lines)
