"""Task pages with a sweep of runs, through AppTest (issue 28, item 10): vote cross-entropy is a column of the metrics
table, the NLI annotators' expander holds a table, weak-slice names wrap whole. Expected numbers are recounted here
from the files written, not read from the page's own code."""

from __future__ import annotations

import json
import math
import os
import random

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from klue_viz.reading.demo import DEMO_BENCHMARK
from klue_viz.store.annotations import Store
from klue_viz.store.runs import RunStore
from klue_viz.ui.discovery import slice_row_height
from klue_viz.ui.home import PAGE_FILES
from tests.conftest import REPO

pytestmark = pytest.mark.slow  # whole pages in AppTest

LABELS = ("entailment", "neutral", "contradiction")


def nli_gold() -> list[dict]:
    return json.loads((DEMO_BENCHMARK / "klue-nli-v1.1" / "klue-nli-v1.1_dev.json").read_text(encoding="utf-8"))


def nli_run(seed: int) -> tuple[bytes, float]:
    """A run with probabilities ({label: p}), and its vote cross-entropy counted here: the mean over pairs of
    -sum(vote share x log p)."""
    rng = random.Random(seed)
    lines, losses = [], []
    for row in nli_gold():
        weights = [rng.random() + (3.0 if label == row["gold_label"] else 0.0) for label in LABELS]
        probs = [w / sum(weights) for w in weights]
        lines.append(json.dumps({"guid": row["guid"], "label": LABELS[probs.index(max(probs))], "probs": dict(zip(LABELS, probs))}))
        votes = [row[k] for k in ("author", "label2", "label3", "label4", "label5") if row.get(k)]
        losses.append(-sum(votes.count(label) / len(votes) * math.log(p) for label, p in zip(LABELS, probs)))
    return "\n".join(lines).encode(), sum(losses) / len(losses)


@pytest.fixture
def store(tmp_path, monkeypatch) -> RunStore:
    """A new store, seen as a new server sees it: Streamlit's caches outlive an AppTest in one process, so what an earlier
    test of this process cached for the same gold is cleared first."""
    st.cache_data.clear()
    st.cache_resource.clear()
    monkeypatch.setenv("KLUE_VIZ_DB", str(tmp_path / "store.sqlite3"))
    monkeypatch.delenv("KLUE_VIZ_DATA_DIR", raising=False)
    return RunStore(Store(os.environ["KLUE_VIZ_DB"]))


def test_vote_cross_entropy_is_a_column_of_the_metrics_table(store):
    expected = {}
    for k in range(9):  # from MANY_RUNS on, the metrics are one table
        data, loss = nli_run(k)
        run = store.add("nli", f"ckpt-{(k + 1) * 100}.jsonl", data, model="sweep")
        expected[run.name] = loss
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=180).run()
    at.switch_page(PAGE_FILES["nli"]).run()
    assert not at.exception
    table = next(df.value for df in at.dataframe if "vote cross-entropy" in df.value.columns).set_index("run")
    for name, loss in expected.items():
        assert table.loc[name, "vote cross-entropy"] == pytest.approx(loss, rel=1e-6)
    assert table["vote cross-entropy"].isna().sum() == 2  # the demo's two runs give no probabilities
    captions = " ".join(c.value for c in at.caption)
    assert "vote cross-entropy 0." not in captions  # no longer a paragraph of 11 runs
    assert at.selectbox(key="run").value == "ckpt-900"  # the latest step is inspected first
    # the annotators' expander: how many annotators agree with the gold, the inspected run's accuracy on each level
    agreement = next(df.value for df in at.dataframe if "annotators agreeing with the gold" in df.value.columns)
    gold = {row["guid"]: row for row in nli_gold()}
    inspected = {r["guid"]: r["label"] for r in map(json.loads, nli_run(8)[0].decode().splitlines())}
    for level in agreement.to_dict("records"):
        agreeing = int(level["annotators agreeing with the gold"].split("/")[0])
        members = [g for g, row in gold.items()
                   if sum(row[k] == row["gold_label"] for k in ("author", "label2", "label3", "label4", "label5")) == agreeing]
        assert level["pairs"] == len(members)
        assert level["accuracy"] == pytest.approx(100 * sum(inspected[g] == gold[g]["gold_label"] for g in members) / len(members))


def test_long_weak_slice_names_get_rows_tall_enough_to_wrap():
    long = "Particle attached to the entity (경찰+은) = another particle"
    assert slice_row_height(["Entity type = PS"]) is None
    assert slice_row_height([long]) == 10 + 20 * 2
    assert slice_row_height([long * 5]) == 10 + 20 * 4  # at most four lines
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=180).run()
    at.switch_page(PAGE_FILES["ner"]).run()
    at.segmented_control(key="discovery_view").set_value("Weak slices").run()
    assert not at.exception
    table = next(df for df in at.dataframe if "slice" in df.value.columns and "unit" in df.value.columns)
    names = list(table.value["slice"])
    assert table.proto.row_height == (slice_row_height(names) or 0)
    assert max(map(len, names)) > 34 and table.proto.row_height >= 50  # the NER demo's names are long: they wrap
