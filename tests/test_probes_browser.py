"""The Behaviour section in headless Chromium: a suite zip and a run on it uploaded on the NLI page, the runs × tests table
shows the planted failure rate, and a click on its cell lists exactly the planted failing pairs, original above perturbed."""

from __future__ import annotations

import json
import zipfile

from klue_viz.probes.make import make_suite, write_suite
from klue_viz.reading.demo import DEMO_BENCHMARK
from klue_viz.tasks import get_task
from tests.test_browser import browser, open_task, page, pytestmark, server, uploader, wait_idle  # noqa: F401 (fixtures)


def test_behaviour_table_and_failing_pairs(page, server, tmp_path):  # noqa: F811 (fixtures)
    task = get_task("nli")
    gold = DEMO_BENCHMARK / "klue-nli-v1.1" / "klue-nli-v1.1_dev.json"
    suite = make_suite(task, gold.read_text(encoding="utf-8"), gold.name, tests=["typo", "spacing"], seed=2)
    folder = tmp_path / "suite"
    write_suite(task, suite, folder)
    archive = tmp_path / "suite.zip"
    with zipfile.ZipFile(archive, "w") as out:
        for path in folder.rglob("*"):
            if path.is_file():
                out.write(path, path.relative_to(tmp_path))
    typo = [case for case in suite.cases if case.test == "typo"]
    planted = {case.example.guid for case in typo[:3]}
    flip = {"entailment": "neutral", "neutral": "contradiction", "contradiction": "entailment"}
    records = [{"guid": c.example.guid, "label": flip[c.example.label] if c.example.guid in planted else c.example.label} for c in suite.cases]
    records += [{"guid": c.source.guid, "label": c.source.label} for c in suite.cases]
    run = tmp_path / "planted.jsonl"
    run.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")

    open_task(page, server, "nli")
    uploader(page, "behaviour_zip_nli").set_input_files(str(archive))
    wait_idle(page)
    uploader(page, "behaviour_runs_nli").set_input_files(str(run))
    wait_idle(page)
    spacing = sum(case.test == "spacing" for case in suite.cases)
    page.get_by_role("button", name=f"0.0% of {spacing}").wait_for(timeout=60_000)
    cell = page.get_by_role("button", name=f"{100 * len(planted) / len(typo):.1f}% of {len(typo)}")
    cell.click()
    wait_idle(page)
    pairs = page.locator(".kv-pair")
    pairs.first.wait_for(timeout=60_000)
    assert sorted(pairs.nth(k).get_attribute("data-guid") for k in range(pairs.count())) == sorted(planted)
    first = pairs.first.inner_text()
    assert "original" in first and "perturbed" in first
    edit = next(case.edits[0] for case in typo if case.example.guid == pairs.first.get_attribute("data-guid"))
    assert edit["before"] in first and edit["after"] in first
