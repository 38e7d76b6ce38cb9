"""A report to send: one self-contained HTML file of a task's runs that opens offline.

Pure: runs and annotations in, an HTML string out (no Streamlit, no network, no script). It holds
the official metrics with 95% bootstrap intervals, the confusion matrix and the most frequent
confusions as static tables, every slice table (your own columns' too, klue_viz.scoring.user_features), the errors by
surface form (klue_viz.scoring.surface_forms), the paired comparison when two runs are given, and
the N most instructive errors drawn exactly as the app draws them (`task.render` with
`markup.STYLE`), each with the tags, notes and gold remarks stored for it. Every string that came
from a file or the database goes through `markup.esc`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime, timezone

import pandas as pd

from klue_viz.compare.ranking import MIN_RESAMPLES, complementarity, consecutive_changes, p_text, rank_runs, run_table
from klue_viz.discovery.annotators import human_of, run_crowd
from klue_viz.discovery.calibration import run_calibration
from klue_viz.discovery.slices import FoundSlice, PairedSlice, error_tags, paired_slices, weak_slices
from klue_viz.discovery.suspects import suspects
from klue_viz.drawing.charts import confusion_counts, top_confusions
from klue_viz.drawing.markup import STYLE, esc, esc_attr
from klue_viz.outputs.answer_card import answers_of
from klue_viz.probes.score import RunBehaviour
from klue_viz.scoring.bootstrap import compare_runs, confidence_intervals
from klue_viz.scoring.evaluate import RunResult
from klue_viz.scoring.slicing import slice_table
from klue_viz.scoring.surface_forms import compare_surface, flat_table, surface_errors
from klue_viz.scoring.user_features import user_slices
from klue_viz.store.annotations import Annotation
from klue_viz.tasks.base import Task

GOLD_RUN = "gold"
DEFAULT_ERRORS = 50

REPORT_STYLE = """
<style>
body{font-family:'Noto Sans CJK KR','Noto Sans KR','Malgun Gothic',sans-serif;margin:2rem auto;max-width:1200px;color:#24292f;padding:0 1rem}
table.kv-table{border-collapse:collapse;margin:.5rem 0 1.2rem;font-size:.85rem}
table.kv-table th,table.kv-table td{border:1px solid #d0d7de;padding:.2rem .5rem;text-align:left;vertical-align:top}
table.kv-table td.num{text-align:right;font-variant-numeric:tabular-nums}
.kv-remarks{margin:-.6rem 0 1.2rem 1rem;font-size:.85rem;color:#57606a}
.kv-error{border-top:1px solid #eaeef2;padding-top:.4rem}
h2{border-bottom:1px solid #d0d7de;padding-bottom:.2rem;margin-top:2rem}
</style>
"""


def number(value: float | None) -> str:
    return "n/a" if value is None or (isinstance(value, float) and value != value) else f"{value:.2f}"


def table(frame: pd.DataFrame, numeric: Iterable[str] = ()) -> str:
    """A DataFrame as an escaped HTML table (numbers to two decimals)."""
    numeric = set(numeric)
    head = "".join(f"<th>{esc(str(c))}</th>" for c in frame.columns)
    rows = []
    for record in frame.itertuples(index=False):
        cells = []
        for column, value in zip(frame.columns, record):
            if column in numeric or isinstance(value, float):
                cells.append(f"<td class='num'>{number(value)}</td>")
            else:
                cells.append(f"<td>{esc(str(value))}</td>")
        rows.append(f"<tr>{''.join(cells)}</tr>")
    return f"<table class='kv-table'><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


def metrics_section(task: Task, result: RunResult, intervals: dict) -> str:
    rows = []
    for metric in task.facts.metrics:
        value = result.scores.values.get(metric.key)
        span = intervals.get(metric.key)
        reason = result.scores.reasons.get(metric.key, "")
        rows.append(f"<tr><td>{esc(metric.label)}</td><td class='num' data-metric='{esc_attr(metric.key)}'>{number(value)}</td>"
                    f"<td class='num'>{'[' + number(span[0]) + ', ' + number(span[1]) + ']' if span else 'n/a'}</td><td>{esc(reason)}</td></tr>")
    c = result.coverage
    coverage = (f"{c.n_scored:,} of {c.n_gold:,} gold {task.facts.unit}s scored · {c.n_missing:,} missing · {c.n_extra:,} extra · "
                f"{c.n_invalid:,} records left out" + (f" · {c.unreadable_answers:,} unreadable answers (scored as wrong)" if c.unreadable_answers else ""))
    notes = "".join(f"<li>{esc(note)}</li>" for note in result.notes)
    return (f"<section class='kv-run' data-run='{esc_attr(result.run)}'><h3>{esc(result.run)} <small>({esc(result.file)})</small></h3>"
            f"<table class='kv-table'><thead><tr><th>metric</th><th>value</th><th>95% interval</th><th></th></tr></thead>"
            f"<tbody>{''.join(rows)}</tbody></table><p>{esc(coverage)}</p>{'<ul>' + notes + '</ul>' if notes else ''}</section>")


def confusion_section(task: Task, result: RunResult, pairs: pd.DataFrame | None) -> str:
    if pairs is None or pairs.empty:
        return ""
    counts = confusion_counts(pairs, max_labels=15, outcomes=task.view.outcome_columns)  # as the app: an outcome is a column, never a row
    head = "".join(f"<th>{esc(str(c))}</th>" for c in counts.columns)
    rows = []
    for gold, row in counts.iterrows():
        total = max(int(row.sum()), 1)
        cells = "".join(f"<td class='num' style='background:rgba(33,102,172,{0.85 * int(v) / total:.2f})'>{int(v)}</td>" for v in row)
        rows.append(f"<tr><th>{esc(str(gold))}</th>{cells}</tr>")
    matrix = (f"<p>Rows: gold {esc(task.facts.confusion_label)}; columns: predicted; shading: share of the row. "
              f"Labels beyond the 15 most frequent are pooled as (other).</p>"
              f"<table class='kv-table kv-confusion'><thead><tr><th>gold \\ predicted</th>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>")
    top = top_confusions(pairs)
    return (f"<h3>Confusion matrix: {esc(result.run)}</h3>{matrix}"
            f"<h3>Most frequent confusions: {esc(result.run)}</h3>{table(top) if not top.empty else '<p>None.</p>'}")


def slices_section(task: Task, result: RunResult) -> str:
    parts = []
    for spec in (*task.facts.slices, *user_slices(result.frames)):
        frame = slice_table(task, result.frames, spec)
        parts.append(f"<h4>{esc(spec.label)}</h4>{table(frame)}")
    return f"<h3>Metrics per slice: {esc(result.run)}</h3>{''.join(parts)}"


def comparison_section(task: Task, first: RunResult, second: RunResult, samples: int, seed: int) -> str:
    rows = compare_runs(task, first.frames, second.frames, samples=samples, seed=seed)
    frame = pd.DataFrame([{"metric": c.metric, f"{first.run} − {second.run}": c.difference, "95% low": c.low, "95% high": c.high,
                           f"resamples where {first.run} is higher (%)": 100 * c.first_better} for c in rows])
    return (f"<h2>Paired comparison</h2><p>Paired bootstrap over the {task.facts.unit}s both runs predicted ({samples} resamples): "
            f"an interval that excludes 0 means the difference is unlikely to be chance.</p>{table(frame)}")


def ranking_section(task: Task, results: list[RunResult], samples: int, seed: int) -> str:
    """More than two runs: the ranking on the examples all of them scored, with the paired differences to the best, then
    what each run fixed and broke against the one before it and how much the runs complement each other."""
    compared = run_table(results)
    ranking = rank_runs(compared, samples=max(samples, MIN_RESAMPLES), seed=seed)  # the ranking's standard errors need them
    rows = []
    for run in sorted(ranking.runs, key=lambda r: (r.rank, r.run)):
        low, high = run.rank_ci95
        row: dict = {"rank": str(run.rank), "rank 95%": f"{low}-{high}" if low != high else str(low), "run": run.run}
        for metric in task.facts.metrics:
            ci = run.ci95[metric.key]
            row[metric.key] = run.metrics[metric.key]
            row[f"{metric.key} 95%"] = f"[{ci[0]:.2f}, {ci[1]:.2f}]" if ci else "n/a"
        row["difference to best"] = run.difference[ranking.metric]
        diff_ci = run.difference_ci95[ranking.metric]
        row["difference 95%"] = f"[{diff_ci[0]:+.2f}, {diff_ci[1]:+.2f}]" if diff_ci else "n/a"
        row["p"] = p_text(run.p_value)
        row["tied with best"] = "yes" if run.tied_with_best else "no"
        row["could be best"] = "yes" if run.could_be_best else "no"
        rows.append(row)
    numeric = [m.key for m in task.facts.metrics] + ["difference to best"]
    changes = pd.DataFrame([{"from": c.first, "to": c.second, "fixed": str(len(c.fixed)), "broke": str(len(c.broke))}
                            for c in consecutive_changes(compared)])
    found = complementarity(compared)
    pair = f"; the best pair, {found.best_pair[0]} + {found.best_pair[1]}, {100 * found.best_pair[2]:.1f}%" if found.best_pair else ""
    overlap = (f"Of the {found.n:,} {task.facts.unit}s every run scored, some run gets {100 * found.oracle:.1f}% right (the oracle); "
               f"the best single run, {found.best_single[0]}, {100 * found.best_single[1]:.1f}%{pair}; "
               f"{len(found.common_errors):,} are wrong for every run.")
    return (f"<h2>Ranking</h2>{table(pd.DataFrame(rows), numeric)}<p>{esc(ranking.correction)}</p>"
            f"<h3>What each run fixed and broke against the one before it</h3>{table(changes)}<p>{esc(overlap)}</p>")


def found_section(task: Task, results: list[RunResult], remarks: Iterable[Annotation] = (), top: int = 10,
                  gold_rows: list[dict] | None = None) -> str:
    """What the discovery layer finds (the same functions as the app and the CLI): weak slices (the stored error tags among
    their conditions), calibration, likely gold errors."""
    def conditions(item: FoundSlice) -> str:
        return " & ".join(f"{key} = {value}" for key, value in item.conditions.items())

    def slice_rows(found: Sequence[FoundSlice]) -> pd.DataFrame:
        return pd.DataFrame([{"slice": conditions(s), "unit": s.unit, "size": s.size, "errors": s.errors, "error rate %": s.error_rate,
                              **s.metrics, **({"worse": s.worse} if isinstance(s, PairedSlice) else {})}
                             for s in found])

    parts = []
    for result in results:
        found: Sequence[FoundSlice] = weak_slices(task, result.frames, tags=error_tags(task, result.run, remarks), top=top)
        listed = table(slice_rows(found)) if found else "<p>No slice is worse than the whole run by enough to list.</p>"
        parts.append(f"<h3>Weak slices: {esc(result.run)}</h3>{listed}")
        calibrated = run_calibration(task, result.frames.examples)
        if calibrated is not None:
            parts.append(f"<h3>Calibration: {esc(result.run)}</h3><p>ECE {calibrated.ece:.2f} · MCE {calibrated.mce:.2f} "
                         f"(10 equal-width confidence bins, 0..100; {calibrated.n:,} {esc(task.facts.unit)}s with probabilities)</p>"
                         + table(pd.DataFrame([{**b, "low": 100 * b["low"], "high": 100 * b["high"]} for b in calibrated.bins])))
    if len(results) >= 2:
        found = paired_slices(task, results[0], results[1], tags=error_tags(task, results[0].run, remarks), top=top)
        if found:
            parts.append(f"<h3>Where one run is worse: {esc(results[0].run)} vs {esc(results[1].run)}</h3>" + table(slice_rows(found)))
    queue = suspects(task, results, top=top, gold_rows=gold_rows)
    if queue:
        parts.append("<h3>Likely gold errors</h3><p>Where the runs agree with one another against the gold (and, with probabilities, "
                     "cleanlab's label quality).</p>"
                     + table(pd.DataFrame([{**{k: v for k, v in (("guid", s.guid), ("turn", s.turn), ("unit", s.unit))
                                               if k != "turn" or any(q.turn is not None for q in queue)},
                                            "text": s.text or "", "gold": s.gold, "proposed": s.proposed, "score": s.score} for s in queue])))
    return "".join(parts)


SURFACE_ROWS = 30


def surface_section(task: Task, results: list[RunResult], top: int = SURFACE_ROWS) -> str:
    """The most frequent errors by surface form (klue_viz.scoring.surface_forms), side by side when there are two runs."""
    tables = {r.run: surface_errors(task, r.frames) for r in results}
    found = next(iter(tables.values())) if len(tables) == 1 else compare_surface(tables)
    if found.empty:
        return "<p>No errors to count.</p>"
    shown = flat_table(found.head(top), guid_limit=5)
    return (f"<p>The {min(top, len(found))} most frequent of {len(found):,} rows: each unit by how often it is wrong in each way, and how "
            f"often it occurs in the gold (total); the first example ids of each row.</p>{table(shown)}")


def remarks_by_example(task: Task, run: str, remarks: Iterable[Annotation]) -> dict[str, list[Annotation]]:
    """The stored remarks on this run and on the gold, by example guid (as the app groups them)."""
    grouped: dict[str, list[Annotation]] = {}
    for item in remarks:
        if item.task == task.facts.name and item.run in (run, GOLD_RUN):
            grouped.setdefault(task.example_guid(item.guid, item.turn), []).append(item)
    return grouped


def instructive_errors(task: Task, result: RunResult, pairs: pd.DataFrame | None, annotated: set[str], n: int) -> list[str]:
    """Up to n wrong examples: first those someone annotated, then one from each of the most frequent
    confusions in turn (so each common mistake is shown), then the rest in file order."""
    ex = result.frames.examples
    wrong = [str(g) for g in ex.loc[~ex["correct"].astype(bool), "guid"]]
    wrong_set = set(wrong)
    chosen: list[str] = [g for g in wrong if g in annotated]
    if pairs is not None and not pairs.empty:
        errors = pairs[pairs["gold"].astype(str) != pairs["pred"].astype(str)]
        queues = [list(dict.fromkeys(group["guid"].astype(str))) for _, group in
                  sorted(errors.groupby(["gold", "pred"], observed=True), key=lambda item: -len(item[1]))]
        while len(chosen) < n and any(queues):
            for queue in queues:
                while queue and (queue[0] in chosen or queue[0] not in wrong_set):
                    queue.pop(0)
                if queue:
                    chosen.append(queue.pop(0))
                if len(chosen) >= n:
                    break
    seen = set(chosen)
    chosen += [g for g in wrong if g not in seen]
    return list(dict.fromkeys(chosen))[:n]


def remark_html(item: Annotation) -> str:
    parts = [f"<b>{esc(item.annotator or '(anonymous)')}</b>"]
    if item.run == GOLD_RUN:
        parts.append("on the gold")
    if item.turn is not None:
        parts.append(f"turn {item.turn}")
    if item.tags:
        parts.append("tags: " + ", ".join(esc(t) for t in item.tags))
    if item.gold_wrong:
        parts.append("gold marked wrong" + (f", should be {esc(item.corrected_label)}" if item.corrected_label else ""))
    if item.note:
        parts.append(f"note: {esc(item.note)}")
    parts.append(f"<small>{esc(item.updated_at[:19])}</small>")
    return f"<li>{' · '.join(parts)}</li>"


def errors_section(task: Task, result: RunResult, pairs: pd.DataFrame | None, remarks: list[Annotation], n: int) -> str:
    grouped = remarks_by_example(task, result.run, remarks)
    guids = instructive_errors(task, result, pairs, set(grouped), n)
    total = int((~result.frames.examples["correct"].astype(bool)).sum())
    parts = [f"<h3>The {len(guids)} most instructive errors of {esc(result.run)} (of {total:,})</h3>"
             "<p>Annotated errors first, then one from each of the most frequent confusions in turn, then the rest in file order.</p>"]
    for guid in guids:
        drawn = task.render(result.frames, guid) + answers_of(result.frames, [guid])  # an LLM's generation, when the run has one
        notes = "".join(remark_html(item) for item in grouped.get(guid, []))
        parts.append(f"<div class='kv-error' data-guid='{esc_attr(guid)}'>{drawn}{'<ul class=kv-remarks>' + notes + '</ul>' if notes else ''}</div>")
    return "".join(parts)


def human_section(task: Task, gold_rows: list[dict], results: list[RunResult]) -> str:
    """The gold's annotators beside the runs (the human baseline, each run's vote cross-entropy); empty without annotator labels."""
    human = human_of(task, gold_rows, results) if gold_rows else None
    if human is None:
        return ""
    what = ("the share of the annotators' individual votes equal to the gold label" if human.metric == "accuracy" else
            "Pearson r between each annotator's score and the mean of the others' on the same pair (a run is correlated with "
            "the mean of all the annotators, a less noisy target: not the same comparison)")
    rows = [f"<tr><td>human baseline (the gold's annotators)</td><td>{esc(human.metric)}</td>"
            f"<td class='num' data-human='{esc_attr(human.metric)}'>{number(human.value)}</td><td>{human.n:,} {esc(human.counts)}</td></tr>"]
    held_out = human_of(task, gold_rows, results, held_out=True)
    if held_out is not None and held_out.value != human.value:
        rows.insert(0, f"<tr><td>human baseline, held out (each vote against the others' majority, ties split)</td>"
                       f"<td>{esc(held_out.metric)}</td><td class='num' data-human-held-out='{esc_attr(held_out.metric)}'>"
                       f"{number(held_out.value)}</td><td>{held_out.n:,} votes</td></tr>")
    for result in results:
        crowd = run_crowd(task, result)
        found = crowd.get("vote_cross_entropy")
        if found is not None:
            rows.append(f"<tr><td>{esc(result.run)}</td><td>vote cross-entropy</td><td class='num'>{found['value']:.4f}</td>"
                        f"<td>{found['n']:,} {esc(task.facts.unit)}s with probabilities</td></tr>")
            for key, name in (("kl", "KL to the votes (nats)"), ("jsd", "Jensen-Shannon distance to the votes"),
                              ("vote_entropy", "the votes' own entropy (nats)")):
                rows.append(f"<tr><td>{esc(result.run)}</td><td>{name}</td><td class='num'>{crowd['vote_divergence'][key]:.4f}</td>"
                            f"<td>{found['n']:,} {esc(task.facts.unit)}s with probabilities</td></tr>")
    return (f"<h3>Against the annotators</h3><p>Human baseline: {esc(what)}, over the {esc(task.facts.unit)}s the runs scored, "
            f"on the 0..100 scale of the run metric.</p><table class='kv-table'><thead><tr><th></th><th>measure</th><th>value</th><th>over</th>"
            f"</tr></thead><tbody>{''.join(rows)}</tbody></table>")


def behaviour_section(task: Task, runs: Sequence[RunBehaviour], suite: str) -> str:
    """The runs × tests table of a behavioural test suite: each cell the failure rate, the cases and the 95% interval."""
    if not runs:
        return ""
    tests = list(dict.fromkeys(t.test for r in runs for t in r.tests))
    kinds = {t.test: t.type for r in runs for t in r.tests}
    head = "".join(f"<th>{esc(test)} ({esc(kinds[test])})</th>" for test in tests)
    rows = []
    for r in runs:
        cells = {t.test: t for t in r.tests}
        row = [f"<td>{esc(r.run)}</td>"]
        for test in tests:
            t = cells.get(test)
            if t is None or t.failure_rate is None:
                row.append("<td class='num'>n/a</td>")
                continue
            low, high = t.interval or (0.0, 0.0)
            row.append(f"<td class='num' data-test='{esc_attr(test)}' data-run='{esc_attr(r.run)}'>{100 * t.failure_rate:.1f}% "
                       f"<small>of {t.n:,} [{100 * low:.1f}, {100 * high:.1f}]</small></td>")
        rows.append(f"<tr>{''.join(row)}</tr>")
    return (f"<h2>Behaviour</h2><p>Failure rates on the behavioural test suite {esc(suite)} (INV: the answer changed under an edit that "
            f"keeps the meaning; DIR: it did not move as expected), with the cases scored and the 95% Wilson interval.</p>"
            f"<table class='kv-table'><thead><tr><th>run</th>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>")


def build_report(task: Task, results: list[RunResult], gold_source: str = "", remarks: Iterable[Annotation] = (),
                 errors: int = DEFAULT_ERRORS, samples: int = 1000, seed: int = 0, gold_rows: list[dict] | None = None,
                 behaviour: Sequence[RunBehaviour] = (), suite: str = "") -> str:
    """The whole report as one HTML document (runs of one task: the first two compared pair-wise, more than two ranked);
    `gold_rows` adds the human baseline, `behaviour` the runs' table on the behavioural test suite `suite`."""
    if not results:
        raise ValueError("a report needs at least one run")
    remarks = list(remarks)
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    gold = gold_source.removeprefix("Gold: ") if gold_source else "not stated"  # the app's note already starts with "Gold: "
    body = [f"<h1>{esc(task.facts.title)}</h1>",
            f"<p>klue-viz report · {stamp} · gold: {esc(gold)} · 95% intervals from {samples} bootstrap resamples "
            f"of the {task.facts.unit}s (seed {seed})</p>",
            "<h2>Official metrics</h2>"]
    for result in results:
        body.append(metrics_section(task, result, confidence_intervals(task, result.frames, samples=samples, seed=seed)))
    body.append(human_section(task, gold_rows or [], results))
    body.append(behaviour_section(task, behaviour, suite))
    if len(results) > 2:
        body.append(ranking_section(task, results, samples, seed))
    if len(results) >= 2:
        body.append(comparison_section(task, results[0], results[1], samples, seed))
    pairs_of = [task.confusion(result.frames) for result in results]
    body.append("<h2>Confusions</h2>")
    for result, pairs in zip(results, pairs_of):
        body.append(confusion_section(task, result, pairs) or f"<p>{esc(result.run)}: no confusion matrix for this task.</p>")
    body.append("<h2>Slices</h2>")
    body += [slices_section(task, result) for result in results]
    body.append("<h2>Errors by surface form</h2>")
    body.append(surface_section(task, results))
    body.append("<h2>Found for you</h2>")
    body.append(found_section(task, results, remarks, gold_rows=gold_rows))
    body.append("<h2>Errors</h2>")
    body += [errors_section(task, result, pairs, remarks, errors) for result, pairs in zip(results, pairs_of)]
    title = f"{task.facts.name.upper()} report: " + " vs ".join(r.run for r in results)
    return ("<!DOCTYPE html><html lang='ko'><head><meta charset='utf-8'>"
            "<meta http-equiv='Content-Security-Policy' content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">"
            f"<title>{esc(title)}</title>{STYLE}{REPORT_STYLE}</head><body>{''.join(body)}</body></html>")
