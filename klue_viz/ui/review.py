"""Review the gold, keyboard first: one suspect at a time, decided with a key; the accepted corrections become a gold version.

Keys (Streamlit's own button shortcuts): A accepts the proposed correction, K keeps the gold, T saves the
correction typed in the box, S skips, B goes back. Every decision is an annotation on the gold
(`klue_viz.discovery.review`). Below the unit: the reviewers' agreement (Krippendorff's alpha) and their
disagreements, the gold versions with the one the task's pages score against, and what the newest (or
chosen) version changes in every run's score and rank.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from klue_viz.core.problems import InputError
from klue_viz.discovery.corrected import Correction, Rescored, RunInput, correctors, rescore, version_name
from klue_viz.discovery.corrected_gold import CorrectedGold, make_version
from klue_viz.discovery.review import accepted_corrections, decision_of, disagreements, example_items, outcomes, reviewer_agreement
from klue_viz.discovery.suspects import evidence_frame, suspects, with_text
from klue_viz.drawing.markup import esc, esc_attr, md
from klue_viz.scoring.evaluate import Gold, RunResult
from klue_viz.scoring.filtering import export_frame
from klue_viz.store.annotations import StoreError
from klue_viz.store.gold_marks import ACCEPT, KEEP_GOLD, OTHER, SKIP, record_review
from klue_viz.store.gold_versions import GoldVersion, GoldVersions
from klue_viz.store.kept_scoring import kept_view
from klue_viz.store.runs import RunConflict
from klue_viz.tasks.base import Task
from klue_viz.tasks.kit import KEEP, Evidence, Suspect
from klue_viz.ui.annotate import annotator, store, task_remarks
from klue_viz.ui.key_queue import key_queue
from klue_viz.ui.state import GOLD_VERSIONS, GoldChoice, base_text, chosen_gold, kept_results_or_none, run_store_or_none, runs_for
from klue_viz.ui.tables import show_table

POSITION = "review_position"
TYPED = "review_typed"
REVIEWS_NEEDED = "review_k"
SHOWN_VERSION = "review_version"
BASE_GOLD = "(the gold as chosen, no version)"
#: Session key prefix: the inspected run and the guids of the example list as last filtered (klue_viz.ui.task_page).
REVIEW_LIST = "review_list"
QUEUE, LISTED = "the suspect queue", "the examples listed below"


@st.cache_resource(max_entries=32, show_spinner="Looking for gold that several runs disagree with…")
def suspect_queue(result_keys: tuple[str, ...], _task: Task, _results: list[RunResult], _gold: Gold) -> list[Suspect]:
    """The whole suspect queue of the page's runs, each suspect with the text of its unit (a run's key names its gold);
    kept beside the first run's kept result, so it is computed once for these runs and this gold."""
    found: list[Suspect] = kept_view(kept_results_or_none(), _results, "suspects", f"gold={_gold.sha256}|top=None",
                                     lambda: suspects(_task, _results, top=None, gold_rows=_gold.rows), types=[Suspect, Evidence])
    return found


def review_panel(task: Task, result: RunResult, results: dict[str, RunResult], gold: Gold) -> None:
    """The keyboard review of the suspect queue (or of the filtered example list), then reviewers, gold versions and what
    the corrections change."""
    runs = list(results.values())
    queue = suspect_queue(tuple(r.key for r in runs), task, runs, gold)
    listed = st.session_state.get(f"{REVIEW_LIST}|{task.facts.name}")
    if listed and listed[0] == result.run and listed[1]:
        source = st.radio("Review", [QUEUE, LISTED], horizontal=True, key="review_source",
                          format_func=lambda s: f"{s} ({len(queue) if s == QUEUE else len(listed[1]):,})")
        if source == LISTED:
            queue = _listed(task, result, gold, listed[1])
    db = store()
    remarks = task_remarks(task)
    reviews = int(st.number_input("Reviews needed before a correction counts", 1, 9, 1, key=REVIEWS_NEEDED,
                                  help="Each unit counts once this many people reviewed it and most of them chose the same correction."))
    if not queue:
        st.caption("No unit where the runs agree against the gold: nothing to review.")
    else:
        _review_unit(task, runs, queue, remarks, db is not None)
    _reviewers(task, remarks)
    _versions(task, remarks, reviews)


def _listed(task: Task, result: RunResult, gold: Gold, guids: list[str]) -> list[Suspect]:
    """The filtered examples of the inspected run as review items (its answer proposed where a patch can take it)."""
    examples = result.frames.examples
    rows = examples[examples["guid"].isin(set(guids))].set_index("guid", drop=False).reindex(guids).dropna(subset=["guid"])
    return with_text(task, gold.rows, example_items(task, rows.to_dict("records"), result.run))


def _move(step: int, size: int) -> None:
    st.session_state[POSITION] = min(max(st.session_state.get(POSITION, 0) + step, 0), max(size - 1, 0))
    st.session_state[TYPED] = ""


def _decide(task: Task, suspect: Suspect, action: str, size: int) -> None:
    """A key or a click: store the decision (not for skip) and go to the next unit."""
    if action != SKIP:
        db, who = store(), annotator()
        if db is None or not who:
            return
        try:
            record_review(db, task, suspect, who, action, st.session_state.get(TYPED, ""))
        except ValueError as err:
            st.toast(md(str(err)))
            return
        except StoreError as err:
            st.toast(md(f"Not saved: {err}"))
            return
    _move(1, size)


def _review_unit(task: Task, runs: list[RunResult], queue: list[Suspect], remarks: list, writable: bool) -> None:
    size = len(queue)
    position = min(st.session_state.get(POSITION, 0), size - 1)
    st.session_state[POSITION] = position
    suspect = queue[position]
    decided = {(o.guid, o.turn) for o in outcomes(task, remarks)}
    mine = {(a.guid, a.turn): decision_of(a) for a in remarks if a.run == "gold" and a.annotator == annotator() and decision_of(a)}
    st.progress((position + 1) / size, text=f"Unit {position + 1} of {size} · {sum(1 for s in queue if (s.guid, s.turn) in decided)} "
                                            f"reviewed · {sum(1 for s in queue if (s.guid, s.turn) in mine)} by you")
    turn = f" turn {suspect.turn}" if suspect.turn is not None else ""
    text = "<br>".join(esc(line) for line in (suspect.text or "").split("\n"))
    st.markdown(f"<div class='kv-review' data-guid='{esc_attr(suspect.guid)}' data-position='{position}'>"
                f"<div class='kv-head'>{esc(task.facts.unit)} <code>{esc(suspect.guid)}</code>{esc(turn)} · {esc(suspect.unit)}</div>"
                f"<div>{text}</div><p><b>gold</b> {esc(suspect.gold)} → <b>proposed</b> "
                f"{esc(suspect.proposed) if suspect.proposed not in (None, '') else '(none: keep the gold or type a correction)'}</p></div>",
                unsafe_allow_html=True)
    guid = task.example_guid(suspect.guid, suspect.turn)
    if len(runs[0].frames.positions(guid)):
        st.markdown(task.render(runs[0].frames, guid), unsafe_allow_html=True)  # gold, the first run and, where the gold has them, the votes
    show_table(st, export_frame(evidence_frame(suspect)), hide_index=True, width="stretch",
                 column_config={c: st.column_config.NumberColumn(format="%.3f") for c in ("confidence", "p(gold)", "p(proposed)")})
    own = mine.get((suspect.guid, suspect.turn))
    if own is not None:
        st.caption(md(f"Your review: {'gold kept' if own == KEEP else 'corrected to ' + own}"))
    who = annotator()
    blocked = not who or not writable
    why = "Set your name in the sidebar to review." if not who else None
    st.text_input("Another correction (then T)", key=TYPED, help="In the form the patch reads: a label, a score, start-end:TYPE, index:head:DEPREL")
    keys = st.columns(5)
    proposal = suspect.proposed not in (None, "")
    keys[0].button(f"Accept {md(suspect.proposed)}" if proposal else "Accept (no proposal)", key="review_accept", shortcut="A",
                   type="primary", disabled=blocked or not proposal, help=why, on_click=_decide, args=(task, suspect, ACCEPT, size))
    keys[1].button("Keep the gold", key="review_keep", shortcut="K", disabled=blocked, help=why, on_click=_decide, args=(task, suspect, KEEP_GOLD, size))
    keys[2].button("Save typed", key="review_other", shortcut="T", disabled=blocked, help=why, on_click=_decide, args=(task, suspect, OTHER, size))
    keys[3].button("Skip", key="review_skip", shortcut="S", on_click=_decide, args=(task, suspect, SKIP, size))
    keys[4].button("Back", key="review_back", shortcut="B", disabled=position == 0, on_click=_move, args=(-1, size))
    st.caption("Keys: A accept · K keep the gold · T save the typed correction (type it, press Tab, then T) · S skip · B back")
    key_queue({"review": {"A": "review_accept", "K": "review_keep", "T": "review_other", "S": "review_skip", "B": "review_back"}})


def _reviewers(task: Task, remarks: list) -> None:
    alpha, units = reviewer_agreement(task, remarks)
    differ = disagreements(task, remarks)
    if not units:
        return
    st.markdown(f"**Reviewers' agreement**: Krippendorff's alpha (nominal) {'n/a' if alpha is None else f'{alpha:.3f}'} "
                f"over {units} unit(s) reviewed by two or more")
    if differ:
        st.markdown(f"**{len(differ)} unit(s) to adjudicate** (the reviewers decided differently; a third review settles them)")
        show_table(st, export_frame(pd.DataFrame([{"guid": o.guid, "turn": o.turn, **{f"{who}": d for who, d in o.decisions.items()}}
                                                for o in differ])), hide_index=True, width="stretch")


@st.cache_resource(max_entries=16, show_spinner="Scoring every run on the gold version…")
def _rescored(task_name: str, base_key: str, version: str, run_keys: tuple[str, ...], strict: bool, _task: Task, _before: Gold,
              _after: Gold, _runs: list[RunInput]) -> Rescored:
    return rescore(_task, _before, _after, _runs, strict=strict)


def _versions(task: Task, remarks: list, reviews: int) -> None:
    st.markdown("**Gold versions**")
    base = chosen_gold(task)
    source = base_text(task, base)
    accepted = accepted_corrections(task, remarks, reviews)
    db = run_store_or_none()
    if db is None:
        st.caption("Gold versions are kept in the database, which cannot be opened.")
        return
    versions = GoldVersions(db.store)
    if source is None:
        st.caption("A gold version needs the official gold file; gold from the Hugging Face hub has none.")
    elif accepted:
        text, path = source
        left, right = st.columns([2, 1])
        stem = path.rsplit("/", 1)[-1].rsplit(".", 1)[0].rsplit("_", 1)[-1] or "gold"
        name = left.text_input("Name of the new version", value=version_name(stem, len(accepted)), key=f"version_name|{len(accepted)}")
        right.markdown("<div style='height:1.7rem'></div>", unsafe_allow_html=True)
        if right.button(f"Make a gold version ({len(accepted)} accepted)", key="make_version", width="stretch"):
            try:
                made = make_version(task, path, db.store, remarks, name=name.strip() or None, reviews=reviews, created_by=annotator(), text=text)
            except (StoreError, InputError) as err:
                st.error(md(err))
            else:
                st.session_state[SHOWN_VERSION] = made.name
                st.success(md(f"Kept the gold version {made.name} ({made.records} record(s) corrected)"))
    else:
        st.caption("No accepted correction yet" + (f" with {reviews} reviews per unit" if reviews > 1 else "") + ".")
    kept = versions.for_task(task.facts.name)
    if not kept:
        return
    names = [v.name for v in kept]
    chosen = st.session_state.get(GOLD_VERSIONS, {}).get(task.facts.name)
    options = [BASE_GOLD, *names]
    pick = st.selectbox(f"Score the {task.facts.name.upper()} pages against", options, index=options.index(chosen) if chosen in names else 0,
                        key=f"score_against|{task.facts.name}")
    wanted = None if pick == BASE_GOLD else pick
    if wanted != chosen:
        st.session_state.setdefault(GOLD_VERSIONS, {})[task.facts.name] = wanted
        st.rerun()
    newest = st.session_state.get(SHOWN_VERSION)
    first = names.index(newest) if isinstance(newest, str) and newest in names else 0
    shown = str(st.selectbox("What the corrections change: version", names, index=first, key="change_version"))
    if source is not None:
        _changes(task, base, source, next(v for v in kept if v.name == shown))


def changes_html(table: pd.DataFrame) -> str:
    """The before/after table as escaped HTML (numbers to two decimals, ranks as whole numbers)."""
    def cell(value: object) -> str:
        if value is None or (isinstance(value, float) and value != value):
            return "<td class='num'>n/a</td>"
        if isinstance(value, float):
            return f"<td class='num'>{value:.2f}</td>"
        return f"<td>{esc(str(value))}</td>"

    head = "".join(f"<th>{esc(str(c))}</th>" for c in table.columns)
    moved = list(table["moved"]) if "moved" in table.columns else [""] * len(table)
    # a run whose rank moved stands out (bold, tinted), so the rows the corrections reorder are read first
    rows = "".join(f"<tr data-run='{esc_attr(str(r[0]))}'" + (" class='kv-moved' style='font-weight:600;background:#fff8c5'" if m else "")
                   + f">{''.join(cell(v) for v in r)}</tr>" for r, m in zip(table.itertuples(index=False), moved))
    return f"<table class='kv-changes'><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>"


def _moved(places: int | None) -> str:
    """A rank change in words: "up 2", "down 1", "" when it did not move (or a rank is undefined)."""
    if not places:
        return ""
    return f"{'up' if places > 0 else 'down'} {abs(places)}"


def _changes(task: Task, base: GoldChoice, source: tuple[str, str], version: GoldVersion) -> None:
    """Every run of the task re-scored on the version: metrics before and after, ranks, and Kendall's tau of the orderings."""
    text, path = source
    after = CorrectedGold.from_text(task, text, path, path, [Correction(**c) for c in version.corrections], version.name)
    sources = runs_for(task, base)
    store_of_runs = run_store_or_none()
    runs, unread = [], []
    for name, run in sources.items():
        try:
            runs.append(RunInput(name, run.file_name, run.read(store_of_runs)))
        except RunConflict as err:  # removed meanwhile
            unread.append(f"{name}: {err}")
    for line in unread:
        st.caption(md(line))
    strict = bool(st.session_state.get("strict", False))
    read = {r.name for r in runs}
    digests = tuple(s.digest for n, s in sources.items() if n in read)
    found = _rescored(task.facts.name, base.key, version.name, digests, strict, task, base.gold, after.gold, runs)
    metric = found.metric
    table = pd.DataFrame([{"run": r["run"], f"{metric} before": r["before"][metric], f"{metric} after": r["after"][metric],
                           "change": r["change"][metric], "rank before": r["rank_before"], "rank after": r["rank_after"],
                           "moved": _moved(r["moved"])} for r in found.rows])
    tau = "n/a (fewer than two runs, or one ordering constant)" if found.kendall_tau is None else f"{found.kendall_tau:.3f}"
    made_by = correctors(Correction(**c) for c in version.corrections)
    st.markdown(f"**What the corrections change** ({md(version.name)}; {version.records} record(s) corrected by "
                f"{md(', '.join(made_by) or '(nobody named)')}; accepted into this version by {md(version.created_by or '(anonymous)')}): "
                f"every {task.facts.name.upper()} run re-scored — Kendall's tau of the two rankings by {md(metric)}: {tau}. "
                f"Rows whose rank moved are highlighted.")
    st.markdown(changes_html(table), unsafe_allow_html=True)  # a few rows: drawn as text (a grid's canvas hides them from search)
    for name, reason in found.failures.items():
        st.caption(md(f"{name}: not scored ({reason})"))
