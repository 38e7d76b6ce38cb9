"""The Behaviour section in headless Chromium: a suite zip and a run on it uploaded on the NLI page, the runs × tests table
shows the planted failure rate, and a click on its cell lists exactly the planted failing pairs, original above perturbed."""

from __future__ import annotations

import json
import os
import zipfile
from pathlib import Path

from scipy.stats import binomtest

from klue_viz.probes.make import Suite, make_suite, write_suite
from klue_viz.reading.demo import DEMO_BENCHMARK
from klue_viz.tasks import get_task
from tests.test_browser import (  # noqa: F401 (fixtures)
    ARTIFACTS,
    browser,
    counting,
    open_task,
    page,
    pytestmark,
    rerun,
    server,
    settled,
    start_server,
    stop_server,
    uploader,
    wait_idle,
)


def suite_zip_and_run(tmp_path: Path) -> tuple[Suite, Path, Path, set[str]]:
    """A suite of the demo NLI set (typo, spacing) zipped as its folder, and a run on it whose first three typo cases are
    flipped (the planted failures), with the sources' predictions in the same file."""
    task = get_task("nli")
    gold = DEMO_BENCHMARK / "klue-nli-v1.1" / "klue-nli-v1.1_dev.json"
    suite = make_suite(task, gold.read_text(encoding="utf-8"), gold.name, tests=["typo", "spacing"], seed=2)
    folder = tmp_path / "suite"
    write_suite(task, suite, folder)
    archive = tmp_path / "nli-suite.zip"
    with zipfile.ZipFile(archive, "w") as out:
        for path in folder.rglob("*"):
            if path.is_file():
                out.write(path, path.relative_to(tmp_path))
    typo = [case for case in suite.cases if case.test == "typo"]
    planted = {case.example.guid for case in typo[:3]}
    flip = {"entailment": "neutral", "neutral": "contradiction", "contradiction": "entailment"}
    records = [{"guid": c.example.guid, "label": flip[c.example.label] if c.example.guid in planted else c.example.label} for c in suite.cases]
    sources = {c.source.guid: c.source.label for c in suite.cases}  # a source of two cases is predicted once
    records += [{"guid": guid, "label": label} for guid, label in sources.items()]
    run = tmp_path / "planted.jsonl"
    run.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return suite, archive, run, planted


def cell_name(failures: int, n: int) -> str:
    """A cell's label: the failure rate, the cases and the 95% Wilson interval as scipy computes it."""
    interval = binomtest(failures, n).proportion_ci(method="wilson")
    return f"{100 * failures / n:.1f}% of {n} [{100 * interval.low:.1f}, {100 * interval.high:.1f}]"


def cell_names(suite: Suite, planted: set[str]) -> tuple[str, str]:
    """The labels of the typo cell (the planted share) and of the spacing cell (none fails)."""
    typo = sum(case.test == "typo" for case in suite.cases)
    return cell_name(len(planted), typo), cell_name(0, sum(case.test == "spacing" for case in suite.cases))


def test_behaviour_table_and_failing_pairs(page, server, tmp_path):  # noqa: F811 (fixtures)
    suite, archive, run, planted = suite_zip_and_run(tmp_path)
    typo = [case for case in suite.cases if case.test == "typo"]
    typo_cell, spacing_cell = cell_names(suite, planted)

    open_task(page, server, "nli")
    uploader(page, "behaviour_zip_nli").set_input_files(str(archive))
    wait_idle(page)
    uploader(page, "behaviour_runs_nli").set_input_files(str(run))
    wait_idle(page)
    page.get_by_role("button", name=spacing_cell).wait_for(timeout=60_000)
    cell = page.get_by_role("button", name=typo_cell)
    cell.click()
    wait_idle(page)
    pairs = page.locator(".kv-pair")
    pairs.first.wait_for(timeout=60_000)
    assert sorted(pairs.nth(k).get_attribute("data-guid") for k in range(pairs.count())) == sorted(planted)
    first = pairs.first.inner_text()
    assert "original" in first and "perturbed" in first
    edit = next(case.edits[0] for case in typo if case.example.guid == pairs.first.get_attribute("data-guid"))
    assert edit["before"] in first and edit["after"] in first


def test_a_kept_suite_and_its_run_come_back_after_a_reload(browser, tmp_path):  # noqa: F811 (fixtures)
    suite, archive, run, planted = suite_zip_and_run(tmp_path)
    typo_cell, spacing_cell = cell_names(suite, planted)
    env = {k: v for k, v in os.environ.items() if k != "KLUE_VIZ_DATA_DIR"}
    env["KLUE_VIZ_DB"] = str(tmp_path / "workspace.sqlite3")  # a workspace of this test alone: nothing stored before
    context = browser.new_context(viewport={"width": 1280, "height": 2400})
    tab = counting(context.new_page())
    process, url = start_server(env)
    try:
        open_task(tab, url, "nli", timeout_ms=180_000)  # a fresh server on an empty workspace: slow under load
        assert tab.locator(".st-key-behaviour_folder_nli").count() == 0  # no suite folder, none stored yet
        rerun(tab, lambda: uploader(tab, "behaviour_zip_nli").set_input_files(str(archive)))
        tab.get_by_text("nli-suite.zip: stored as the suite nli-suite").wait_for(timeout=60_000)
        rerun(tab, lambda: uploader(tab, "behaviour_runs_nli").set_input_files(str(run)))
        tab.get_by_role("button", name=typo_cell).wait_for(timeout=60_000)

        tab.reload()  # a new session: the uploads are gone, the stored suite and its run are not
        wait_idle(tab)
        tab.wait_for_selector(".kv-example", timeout=180_000)
        picker = tab.locator(".st-key-behaviour_folder_nli")
        picker.wait_for(timeout=60_000)
        assert tab.get_by_role("button", name=typo_cell).count() == 0  # nothing picked yet
        picker.locator("input").click()  # opens the list: no run
        option = tab.get_by_role("option", name="stored suite: nli-suite")
        rerun(tab, option.click)
        tab.get_by_role("button", name=spacing_cell).wait_for(timeout=60_000)
        assert tab.get_by_role("button", name=typo_cell).count() == 1
        body = tab.inner_text("body")
        assert "1 run(s) kept on it" in body and "planted" in body  # the run's row, kept without an upload
        assert "problem(s) in these runs' files" not in body  # the run predicts every example once
        settled(tab)
        ARTIFACTS.mkdir(exist_ok=True)
        tab.get_by_role("heading", name="Behaviour").scroll_into_view_if_needed()
        tab.screenshot(path=str(ARTIFACTS / "behaviour-stored-suite.png"))
    finally:
        context.close()
        stop_server(process)
