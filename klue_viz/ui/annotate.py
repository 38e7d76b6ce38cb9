"""Tagging examples in the app: the per-example editor (a fragment), bulk tagging, tag views, agreement, files.

Writes go straight to the store in one transaction each; a save made against an older version of
the record is refused and the newer one (who, when) is shown, with the choice to overwrite it.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd
import streamlit as st

from klue_viz.core.lazy import lazy_module
from klue_viz.core.problems import InputError
from klue_viz.discovery.tags import agreement, tag_rows, tag_table
from klue_viz.drawing.markup import chart_text, md
from klue_viz.scoring.evaluate import RunResult
from klue_viz.store.annotation_files import parse, to_csv, to_jsonl
from klue_viz.store.annotations import (
    Annotation,
    ConflictError,
    ImportPlan,
    InvalidRecord,
    Store,
    StoreBusy,
    StoreCorrupt,
    StoreError,
    database_url,
    set_aside,
)
from klue_viz.store.gold_marks import add_tags
from klue_viz.tasks.base import Task
from klue_viz.ui.common import database_notice, guard, metric_text, problem_table
from klue_viz.ui.tables import show_table

if TYPE_CHECKING:
    import plotly.express as px
else:
    px = lazy_module("plotly.express")  # one chart of the tag views: not loaded for the home page

GOLD = "gold"


@st.cache_resource(show_spinner=False)
def _open_store(url: str) -> Store:
    return Store(url)


def store() -> Store | None:
    """The session's store, or None after telling the user why it cannot be opened (once per page run)."""
    try:
        return _open_store(database_url())
    except StoreBusy as err:
        database_notice(str(err), warning=True)
    except StoreError as err:
        database_notice(str(err))
    return None


def annotator() -> str:
    return st.session_state.get("annotator_name", "")


def taxonomy(task: Task, db: Store) -> list[str]:
    """The task's tags and the ones added to its list (only the task's own while the database is down)."""
    try:
        custom = db.custom_tags(task.facts.name)
    except StoreError as err:
        database_notice(str(err))
        custom = []
    return list(dict.fromkeys(list(task.facts.error_tags) + custom))


def task_remarks(task: Task) -> list[Annotation]:
    """Every stored record of a task: read once per page run and shared by the views below (none while the database is down)."""
    db = store()
    try:
        return db.find(task=task.facts.name) if db else []
    except StoreError as err:
        database_notice(str(err))
        return []


def annotations_by_example(task: Task, run: str, items: list[Annotation]) -> dict[str, list[Annotation]]:
    """The remarks on this run and its gold, by example guid."""
    grouped: dict[str, list[Annotation]] = {}
    for item in items:
        if item.run in (run, GOLD):
            grouped.setdefault(task.example_guid(item.guid, item.turn), []).append(item)
    return grouped


def editor(task: Task, result: RunResult, example: dict, existing: list[Annotation]) -> None:
    """The annotation switch and form of one example, with its own error guard. Not a fragment of its own: nested in
    the example list's fragment, overlapping reruns made Streamlit's frontend blank the page ("Bad delta path
    index", bench/bench_sessions.py); the list around it reruns in a few hundredths of a second."""
    _editor_box(task, result.run, example, existing)


@guard
def _editor_box(task: Task, run: str, example: dict, existing: list[Annotation]) -> None:
    slot = f"{example['guid']}|{run}"
    left, right = st.columns([1, 5])
    opened = left.toggle("Annotate", key=f"annotate|{slot}")
    if existing and not opened:
        right.caption(md(" · ".join(f"{a.annotator}: {', '.join(a.tags) or 'note'}" for a in existing)))
    if not opened:
        return
    db = store()
    if db is None:
        return
    guid, turn = task.annotation_key(example)
    name = annotator()
    about = st.radio("About", ["this run", "the gold"], horizontal=True, key=f"about|{slot}")
    target_run = GOLD if about == "the gold" else run
    try:
        stored = db.find(task=task.facts.name, guid=guid)
        mine = db.get(task.facts.name, guid, target_run, name, turn=turn) if name else None
        # "Gold looks wrong" and the corrected label are about the gold whatever About says: they live on the gold record,
        # the one the review queue and gold versions read (a correction kept on a run's record was never counted).
        mine_gold = mine if target_run == GOLD else (db.get(task.facts.name, guid, GOLD, name, turn=turn) if name else None)
        listed = list(dict.fromkeys(list(task.facts.error_tags) + db.custom_tags(task.facts.name)))
        reachable = True
    except StoreError as err:
        # The form is still drawn from what this session holds, so a typed note stays until a save succeeds.
        database_notice(str(err))
        stored, mine, mine_gold, listed, reachable = [], None, None, list(task.facts.error_tags), False
    others = [a for a in stored if a.turn == turn and a.run in (run, GOLD) and a.annotator != name]
    for other in others:
        st.caption(md(f"{other.annotator} ({'gold' if other.run == GOLD else other.run}, {other.updated_at[:19].replace('T', ' ')} UTC): "
                      f"{', '.join(other.tags) or 'no tags'}{' · gold looks wrong' if other.gold_wrong else ''}{' · ' + other.note if other.note else ''}"))
    if not name:
        st.info("Set your name in the sidebar to annotate.")
        return
    key = f"{slot}|{target_run}"
    version_key = f"version|{key}"
    gold_version_key = version_key if target_run == GOLD else f"version|{key}|gold"
    # A stored tag outside the list (imported, or from a list that changed) is an option too: a save keeps it.
    options = list(dict.fromkeys(listed + (mine.tags if mine else []) + st.session_state.get(f"tags|{key}", [])))
    if f"tags|{key}" not in st.session_state and reachable:
        # Widget values are seeded from the stored record when the form opens and then belong to the user:
        # a save made elsewhere meanwhile must not replace what they type (it surfaces as a conflict instead).
        st.session_state[version_key] = mine.version if mine else 0
        st.session_state[gold_version_key] = mine_gold.version if mine_gold else 0
        st.session_state[f"tags|{key}"] = list(mine.tags) if mine else []
        st.session_state[f"note|{key}"] = mine.note if mine else ""
        # A correction saved on the run's record before it moved to the gold one is shown, and moves there on Save.
        marked = mine_gold or (mine if mine is not None and (mine.gold_wrong or mine.corrected_label) else None)
        st.session_state[f"wrong|{key}"] = marked.gold_wrong if marked else False
        st.session_state[f"fix|{key}"] = (marked.corrected_label or "") if marked else ""
    with st.form(f"form|{key}", border=False):
        tags = st.multiselect("Error tags", options, key=f"tags|{key}")
        note_text = st.text_area("Note", height=68, key=f"note|{key}")
        left, right = st.columns(2)
        gold_wrong = left.checkbox("Gold looks wrong", key=f"wrong|{key}")
        corrected = right.text_input("Corrected label (optional)", key=f"fix|{key}")
        if target_run != GOLD:
            st.caption(GOLD_FIELDS_NOTE)
        saved = st.form_submit_button("Save")
    if saved and _save_form(db, task, guid, turn, run, target_run, (tags, note_text, gold_wrong, corrected or None), mine, mine_gold,
                            (version_key, gold_version_key)):
        st.rerun()  # the whole page: the tag slice and the tag filter above must show the save at once
    for key_of_record in dict.fromkeys((version_key, gold_version_key)):
        conflict = st.session_state.get(f"conflict|{key_of_record}")
        if conflict is None:
            continue
        theirs, pending = conflict
        st.warning(md(f"{theirs.annotator} saved this{' (the gold record)' if key_of_record != version_key else ''} at "
                      f"{theirs.updated_at[:19].replace('T', ' ')} UTC (tags: {', '.join(theirs.tags) or 'none'}; note: {theirs.note or '-'}"
                      f"{'; gold looks wrong' if theirs.gold_wrong else ''}).") + " Your version was not saved.")
        if st.button("Overwrite with mine", key=f"overwrite|{key_of_record}") and _overwrite(db, theirs, pending, key_of_record):
            st.rerun()
        return
    if mine is not None:
        st.caption(md(f"Saved by you at {mine.updated_at[:19].replace('T', ' ')} UTC."))


#: Under the gold fields when About is "this run": where they are saved, so no one expects them on the run.
GOLD_FIELDS_NOTE = ("\"Gold looks wrong\" and the corrected label are about the gold: they are saved on your gold record (as with "
                    "About: the gold), where the review queue and gold versions count them.")


def _save_form(db: Store, task: Task, guid: str, turn: int | None, run: str, target_run: str,
               fields: tuple[list[str], str, bool, str | None], mine: Annotation | None, mine_gold: Annotation | None,
               version_keys: tuple[str, str]) -> bool:
    """Save what the form holds: everything on the record About names, except that with About "this run" the gold fields
    go to the annotator's gold record (its tags and note kept) and the run's record keeps the tags and note. Each write
    has its own version check; True when every write needed was made."""
    tags, note_text, gold_wrong, corrected = fields
    name = annotator()
    version_key, gold_version_key = version_keys
    if target_run == GOLD:
        return _save(db, Annotation(task.facts.name, guid, GOLD, name, tags=tags, note=note_text, gold_wrong=gold_wrong,
                                    corrected_label=corrected, turn=turn), version_key)
    ok = True
    if tags or note_text or mine is not None:
        ok = _save(db, Annotation(task.facts.name, guid, run, name, tags=tags, note=note_text, turn=turn), version_key)
    gold_changed = (gold_wrong, corrected) != ((mine_gold.gold_wrong, mine_gold.corrected_label) if mine_gold else (False, None))
    if ok and gold_changed:
        ok = _save(db, Annotation(task.facts.name, guid, GOLD, name, tags=list(mine_gold.tags) if mine_gold else [],
                                  note=mine_gold.note if mine_gold else "", gold_wrong=gold_wrong, corrected_label=corrected, turn=turn),
                   gold_version_key)
    return ok


def _overwrite(db: Store, theirs: Annotation, pending: Annotation, version_key: str) -> bool:
    """The user chose their version over the newer one they were shown."""
    st.session_state[version_key] = theirs.version
    st.session_state.pop(f"conflict|{version_key}", None)
    return _save(db, pending, version_key)


def _save(db: Store, item: Annotation, version_key: str) -> bool:
    """Whether the record was written; waits (with a message) while another writer holds the database.

    A conflict is kept in the session and shown instead; on failure the form keeps what was typed.
    """
    try:
        with st.spinner("Saving… (waiting if another save or import is writing)"):
            saved = db.save(item, expected_version=st.session_state.get(version_key, 0))
    except ConflictError as err:
        st.session_state[f"conflict|{version_key}"] = (err.current, item)
        return False
    except (StoreError, InvalidRecord) as err:
        st.error(f"Not saved: {md(err)}. What you typed is still in the form; press Save again.")
        return False
    except Exception as err:  # noqa: BLE001 - a database that went away mid-session (server stopped, file removed)
        st.error(f"Not saved ({md(type(err).__name__)}: {md(str(err).splitlines()[0] if str(err) else '')}). "
                 "What you typed is still in the form; press Save again.")
        return False
    st.session_state[version_key] = saved.version
    st.session_state.pop(f"conflict|{version_key}", None)
    st.toast(md(f"Saved {', '.join(item.tags) or 'annotation'}"))
    return True


def bulk_tagger(task: Task, result: RunResult, shown: pd.DataFrame) -> None:
    """Add tags (and optionally a note) to every example the filters currently show."""
    db = store()
    if db is None:
        return
    with st.expander(f"Tag all {len(shown)} filtered {task.facts.unit}s, or extend the tag list"):
        if not annotator():
            st.info("Set your name in the sidebar to annotate.")
        with st.form("bulk_tags", border=False):
            tags = st.multiselect("Add these tags", taxonomy(task, db), key="bulk_tag_values")
            note_text = st.text_input("Note (added to each)", key="bulk_note")
            apply = st.form_submit_button(f"Tag {len(shown)} {task.facts.unit}s", disabled=not annotator())
        if apply and tags:
            done = 0
            try:
                with st.spinner(f"Tagging {len(shown)} {task.facts.unit}s…"):
                    for row in shown.to_dict("records"):
                        add_tags(db, task, [task.annotation_key(row)], result.run, annotator(), tags, note_text)
                        done += 1
            except (StoreError, InvalidRecord) as err:
                st.error(md(f"Tagged {done} of {len(shown)} {task.facts.unit}s, then: {err}"))
            else:
                st.toast(md(f"Tagged {len(shown)} {task.facts.unit}s with {', '.join(tags)}."))
                st.rerun()  # the whole page, so the tag slice shows the new tags
        new_tag = st.text_input("New tag for this task's list", key="new_tag")
        if st.button("Add tag", key="add_tag") and new_tag.strip():
            try:
                db.add_tag(task.facts.name, new_tag)
                st.success(md(f"Added '{new_tag.strip()}' to the {task.facts.name.upper()} tags."))
            except StoreError as err:
                st.error(md(err))


def tagged_guids(task: Task, run: str, tags: list[str], items: list[Annotation]) -> frozenset[str] | None:
    """Example guids carrying any of `tags` (by any annotator) on this run or its gold."""
    if not tags:
        return None
    return frozenset(task.example_guid(a.guid, a.turn) for a in items if a.run in (run, GOLD) and set(a.tags) & set(tags))


def run_tags(task: Task, run: str, items: list[Annotation]) -> pd.DataFrame:
    return tag_rows(task, [a for a in items if a.run in (run, GOLD)])


def tag_views(task: Task, result: RunResult, results: dict[str, RunResult]) -> None:
    """Tags as a slice: per tag the examples, errors, share of all errors and metrics; and the tags of every run."""
    items = task_remarks(task)
    rows = run_tags(task, result.run, items)
    if rows.empty:
        st.caption("No error tags on this run yet: tag examples below (Annotate) and they appear here as a slice.")
        return
    st.markdown("**Error tags as a slice** (all annotators)")
    table = tag_table(task, result.frames, rows)
    for metric in task.facts.metrics:
        if metric.key in table:
            table[metric.key] = [metric_text(None if pd.isna(v) else float(v)) for v in table[metric.key]]
    table["share_of_errors"] = ["n/a" if pd.isna(v) else f"{v:.1f}%" for v in table["share_of_errors"]]
    show_table(st, table, hide_index=True, width="stretch")
    per_run = []
    for name in results:
        counts = run_tags(task, name, items).drop_duplicates(["guid", "tag"]).groupby("tag").size()
        per_run += [{"run": name, "tag": tag, "examples": int(n)} for tag, n in counts.items()]
    if per_run:
        shown = pd.DataFrame(per_run).assign(tag=lambda f: f["tag"].map(chart_text), run=lambda f: f["run"].map(chart_text))
        figure = px.bar(shown, x="examples", y="tag", color="run", barmode="group", orientation="h", height=260)
        figure.update_layout(margin={"l": 10, "r": 10, "t": 10, "b": 10})
        st.plotly_chart(figure, key="tag_chart", config={"displayModeBar": False})
    annotators = sorted({a for a in rows["annotator"]})
    if len(annotators) >= 2:
        _agreement(result, annotators, [a for a in items if a.run in (result.run, GOLD)])


def _agreement(result: RunResult, annotators: list[str], items: list[Annotation]) -> None:
    with st.expander("Agreement between two annotators (Cohen's kappa)"):
        left, right = st.columns(2)
        first = left.selectbox("First annotator", annotators, key="kappa_a")
        second = right.selectbox("Second annotator", [a for a in annotators if a != first], key="kappa_b")
        table, differ = agreement([a for a in items if a.annotator == first], [a for a in items if a.annotator == second])
        show_table(st, table, hide_index=True, width="stretch")
        st.markdown(f"**{len(differ)} example(s) where they disagree**")
        show_table(st, differ, hide_index=True, width="stretch")


def home_section() -> None:
    """Where annotations live; export them all or per task; import an export (with the plan shown first)."""
    st.subheader("Annotations")
    url = database_url()
    try:
        db = _open_store(url)
    except StoreBusy as err:
        st.warning(md(err))
        st.button("Try again", key="store_retry")
        return
    except StoreCorrupt as err:
        st.error(md(err))
        if url.startswith("sqlite:///") and st.button("Start a new database (the unreadable file is kept aside)", key="new_db"):
            try:
                kept = set_aside(Path(url.removeprefix("sqlite:///")))
            except StoreError as refused:
                st.warning(md(refused))
                return
            _open_store.clear()
            st.success(md(f"The old file is kept as {kept}. A new database is used from now on: {_open_store(url).location}"))
        return
    except StoreError as err:
        database_notice(str(err))
        return
    try:
        everything = db.find()
    except StoreError as err:
        database_notice(str(err))
        return
    st.caption(f"Stored in {md(db.public_location)} (set KLUE\\_VIZ\\_DB to use another file or a postgresql URL) · {len(everything)} record(s)")
    tasks = ["all tasks"] + sorted({a.task for a in everything})
    chosen = st.selectbox("Export", tasks, key="export_task")
    items = everything if chosen == "all tasks" else [a for a in everything if a.task == chosen]
    stem = "klue-viz-annotations" + ("" if chosen == "all tasks" else f"-{chosen}")
    left, right = st.columns(2)
    left.download_button("Download JSONL", to_jsonl(items).encode("utf-8"), file_name=f"{stem}.jsonl", key="export_jsonl", on_click="ignore")
    right.download_button("Download CSV", to_csv(items).encode("utf-8-sig"), file_name=f"{stem}.csv", key="export_csv", on_click="ignore")
    upload = st.file_uploader("Import annotations (.jsonl or .csv exported by klue-viz)", key="import_annotations")
    if upload is not None:
        try:
            incoming, problems = parse(upload.getvalue(), upload.name)
        except InputError as err:
            st.error(md(err))
            return
        if problems:
            problem_table(problems)
        plan = db.plan_import(incoming)
        st.info(f"{md(upload.name)}: {plan.summary()}.")
        if plan.added or plan.updated or plan.conflicting:
            show_table(st, plan_table(plan), hide_index=True, width="stretch")
        overwrite = st.checkbox("Also overwrite the conflicting (newer) stored records", key="import_overwrite") if plan.conflicting else False
        if st.button("Apply the import", key="apply_import"):
            try:
                with st.spinner("Importing… (waiting if another save or import is writing)"):
                    written = db.apply_import(plan, overwrite_conflicts=overwrite)
            except StoreError as err:
                st.error(md(err))
                return
            changed = f" The annotations changed meanwhile, so the import was planned again: {plan.summary()}." if plan.replanned else ""
            st.success(f"Imported {written} record(s).{changed}")


def plan_table(plan: ImportPlan) -> pd.DataFrame:
    """The records an import would add, update or leave in conflict (with the newer stored record's author and time)."""
    rows = []
    for change, pairs in (("add", [(a, None) for a in plan.added]), ("update", [(a, None) for a in plan.updated]), ("conflict", plan.conflicting)):
        for item, stored in pairs:
            rows.append({"change": change, "task": item.task, "guid": item.guid, "turn": item.turn, "run": item.run,
                         "annotator": item.annotator, "tags": ", ".join(item.tags), "note": item.note,
                         "stored (newer)": "" if stored is None else f"{stored.annotator}, {stored.updated_at[:19].replace('T', ' ')} UTC: "
                                                                      f"{', '.join(stored.tags) or 'no tags'}"})
    return pd.DataFrame(rows)
