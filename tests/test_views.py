"""What a researcher sees on a task page (issue 11, and the links of issue 9), through Streamlit's AppTest.

Expected values are read from the demo files directly (json, seqeval), never from the code under test.
"""

from __future__ import annotations

import html
import json
import re
from collections import Counter
from pathlib import Path

import pytest
from seqeval.metrics.sequence_labeling import get_entities

from klue_viz.drawing.markup import esc
from klue_viz.reading.demo import DEMO_BENCHMARK, demo_runs
from klue_viz.scoring.evaluate import evaluate_file, load_gold
from klue_viz.tasks import TASKS
from klue_viz.ui.home import PAGE_FILES
from tests.conftest import REPO
from tests.test_app import drawn, open_page, shown_count


def demo_file(task: str) -> Path:
    return next((DEMO_BENCHMARK / TASKS[task].facts.official_folder).glob("*_dev.*"))


def jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


# ---- WoS: one card per dialogue --------------------------------------------------------------

def wos_turns() -> tuple[dict, dict]:
    """Gold user turns {(dialogue, turn): (state, previous state)} and the first run's states, read by hand."""
    gold = {}
    for dialogue in json.loads(demo_file("wos").read_text(encoding="utf-8")):
        previous, k = [], 0
        for turn in dialogue["dialogue"]:
            if turn["role"] == "user":
                gold[(dialogue["guid"], k)] = (turn["state"], previous)
                previous, k = turn["state"], k + 1
    run = next(demo_runs("wos"))
    data = json.loads(run.read_text(encoding="utf-8"))
    pred = {(key.rsplit("-", 1)[0], int(key.rsplit("-", 1)[1])): state for key, state in data.items()}
    return gold, pred


@pytest.mark.slow
def test_wos_draws_each_dialogue_once_with_its_matching_turns_highlighted():
    gold, pred = wos_turns()
    wrong = {key for key, (state, _) in gold.items() if set(state) != set(pred[key])}
    at = open_page(PAGE_FILES["wos"])
    at.radio(key="f_status").set_value("wrong").run()
    assert shown_count(at)[0] == len(wrong)
    cards = drawn(at)
    dialogues = [re.search(r'data-guid="(wos-v1_dev_\d+-demo)', card).group(1) for card in cards]
    assert sorted(dialogues) == sorted({d for d, _ in wrong}), "one card per dialogue with a wrong turn, none twice"
    for card, dialogue in zip(cards, dialogues):
        selected = sorted(int(t) for t in re.findall(r'data-turn="(\d+)" data-selected="true"', card))
        assert selected == sorted(t for d, t in wrong if d == dialogue)
        turns = re.findall(r'data-turn="(\d+)"', card)
        assert turns == [str(t) for t in range(len(turns))], "every user turn, in order"
        first_break = min(t for d, t in wrong if d == dialogue)
        marked = re.search(r'data-turn="(\d+)"[^>]*>(?:(?!data-turn=).)*?joint goal breaks here', card, re.S)
        assert marked and int(marked.group(1)) == first_break
        assert f'id="kv-{dialogue}-{first_break}"' in card  # the anchor of a highlighted turn


@pytest.mark.slow
def test_wos_turns_show_what_changed_in_the_gold_state():
    gold, _ = wos_turns()
    (dialogue, turn), (state, previous) = next((k, v) for k, v in gold.items() if k[1] > 0 and set(v[0]) - set(v[1]))
    added = sorted(set(state) - set(previous))[0]
    domain, slot, value = added.split("-", 2)
    at = open_page(PAGE_FILES["wos"])
    card = next(c for c in drawn(at) if f'data-guid="{dialogue}' in c)
    block = html.unescape(card.split(f'data-turn="{turn}"')[1].split("data-turn=")[0])
    assert f"+ {domain}-{slot} = {value}" in block
    for kept in set(state) & set(previous):
        d, s, v = kept.split("-", 2)
        assert f"+ {d}-{s} = {v}" not in block, "a carried-over slot is not a change"


# ---- confusion matrices: the diagonal is exact success only ------------------------------------

def ner_entities(tags: list[str], sentence: str) -> set[tuple[int, int, str]]:
    """Strict IOB2 entities over the non-space characters, by seqeval."""
    kept = [t for t, c in zip(tags, sentence) if c != " "]
    return {(start, end, label) for label, start, end in get_entities(kept)}


def ner_expected() -> tuple[Counter, Counter, dict[str, set[str]]]:
    """Per gold type: exact matches, and same-type entities found with the wrong span (with their sentences)."""
    gold = {}
    text = demo_file("ner").read_text(encoding="utf-8")
    for block in text.split("## ")[1:]:
        header, *lines = block.strip("\n").split("\n")
        guid = header.split("\t")[0]
        if " " in guid or not lines:
            continue
        chars = [line.split("\t")[0] for line in lines if "\t" in line]
        tags = [line.split("\t")[1] for line in lines if "\t" in line]
        gold[guid] = ("".join(chars), tags)
    exact, boundary, sentences = Counter(), Counter(), {}
    for record in jsonl(next(demo_runs("ner"))):
        sentence, gold_tags = gold[record["guid"]]
        pred_tags = record.get("tags") or ["O"] * len(sentence)
        if "entities" in record:
            pred_tags = ["O"] * len(sentence)
            for e in record["entities"]:
                pred_tags[e["start"]] = "B-" + e["label"]
                for k in range(e["start"] + 1, e["end"]):
                    pred_tags[k] = "I-" + e["label"]
        g, p = ner_entities(gold_tags, sentence), ner_entities(pred_tags, sentence)
        for start, end, label in g:
            if (start, end, label) in p:
                exact[label] += 1
            elif any(pl == label and ps <= end and start <= pe for ps, pe, pl in p):
                boundary[label] += 1
                sentences.setdefault(label, set()).add(record["guid"])
    return exact, boundary, sentences


def test_ner_confusion_counts_exact_matches_on_the_diagonal_and_boundary_errors_apart():
    from klue_viz.drawing.charts import confusion_counts

    exact, boundary, _ = ner_expected()
    assert sum(boundary.values()) > 0, "the demo run has boundary errors"
    task = TASKS["ner"]
    result = evaluate_file(task, load_gold(task, DEMO_BENCHMARK), next(demo_runs("ner")))
    counts = confusion_counts(task.confusion(result.frames), max_labels=40, outcomes=task.view.outcome_columns)
    for label in ("DT", "LC", "OG", "PS", "QT", "TI"):
        if label in counts.index:
            assert counts.loc[label, label] == exact[label]
            assert counts.loc[label].get("wrong boundary", 0) == boundary[label]
    assert "wrong boundary" not in counts.index, "an outcome column has no row"


@pytest.mark.slow
def test_clicking_the_wrong_boundary_cell_lists_those_sentences():
    _, boundary, sentences = ner_expected()
    label = max(boundary, key=boundary.get)
    at = open_page(PAGE_FILES["ner"])
    at.multiselect(key="f_gold").set_value([label]).run()
    at.multiselect(key="f_pred").set_value(["wrong boundary"]).run()
    assert shown_count(at)[0] == len(sentences[label])
    assert {re.search(r'data-guid="([^"]+)"', c).group(1) for c in drawn(at)} == sentences[label]


def test_dp_confusion_puts_a_right_relation_on_a_wrong_head_in_its_own_column():
    gold = {}
    for block in demo_file("dp").read_text(encoding="utf-8").split("\n## ")[1:]:
        header, *lines = block.strip("\n").split("\n")
        guid = header.split("\t")[0]
        words = [line.split("\t") for line in lines if line.strip() and not line.startswith("#")]
        if " " not in guid and words:
            gold[guid] = [(int(w[4]), w[5]) for w in words]
    diagonal, wrong_head = Counter(), Counter()
    for record in jsonl(next(demo_runs("dp"))):
        for (head, rel), p_head, p_rel in zip(gold[record["guid"]], record["head"], record["deprel"]):
            if rel == p_rel:
                (diagonal if head == int(p_head) else wrong_head)[rel] += 1
    assert sum(wrong_head.values()) > 0
    from klue_viz.drawing.charts import confusion_counts

    task = TASKS["dp"]
    result = evaluate_file(task, load_gold(task, DEMO_BENCHMARK), next(demo_runs("dp")))
    counts = confusion_counts(task.confusion(result.frames), max_labels=60, outcomes=task.view.outcome_columns)
    for rel in counts.index:
        assert counts.loc[rel, rel] == diagonal[rel]
        assert counts.loc[rel].get("wrong head", 0) == wrong_head[rel]


# ---- undefined is not zero -----------------------------------------------------------------------

@pytest.mark.slow
def test_an_undefined_slice_metric_shows_n_a_with_its_reason():
    at = open_page(PAGE_FILES["sts"])
    at.selectbox(key="slice_by").set_value("Gold score").run()
    table = next(df.value for df in at.dataframe if "value" in df.value.columns and "pearsonr" in df.value.columns)
    single = table[table["n"] == 1].iloc[0]  # one pair: Pearson r is undefined
    assert single["pearsonr"] == "n/a"
    assert "fewer than 2 pairs" in single["n/a because"]
    defined = table[table["n"] > 2].iloc[0]
    assert re.fullmatch(r"-?\d+\.\d\d", defined["pearsonr"]) and defined["n/a because"] == ""


# ---- ids, links and settings -------------------------------------------------------------------

@pytest.mark.slow
def test_every_example_shows_its_guid_and_a_link_to_itself():
    at = open_page(PAGE_FILES["ynat"])
    at.radio(key="f_status").set_value("wrong").run()
    for card in drawn(at):
        guid = re.search(r'class="kv-example" data-guid="([^"]+)"', card).group(1)
        assert f'<code class="kv-guid">{esc(guid)}</code>' in card
        link = html.unescape(re.search(r'class="kv-link" href="([^"]+)"', card).group(1))
        assert f"guid={guid}" in link and "run=" in link and "show=wrong" in link


@pytest.mark.slow
def test_the_url_carries_the_view_and_a_link_restores_it():
    at = open_page(PAGE_FILES["ner"])
    run = at.selectbox(key="run").value
    at.radio(key="f_status").set_value("wrong").run()
    at.text_input(key="f_text").set_value("서울").run()
    assert at.query_params["show"] == "wrong" and at.query_params["q"] == "서울" and at.query_params["run"] == run
    shown = shown_count(at)[0]

    other = open_page()
    other.switch_page(PAGE_FILES["ner"])
    other.query_params = {"run": ["char-bilstm"], "show": "wrong", "q": "서울"}
    other.run()
    assert other.selectbox(key="run").value == "char-bilstm"
    assert other.radio(key="f_status").value == "wrong" and other.text_input(key="f_text").value == "서울"
    task = TASKS["ner"]
    result = evaluate_file(task, load_gold(task, DEMO_BENCHMARK), REPO / "klue_viz/demo/runs/ner/char-bilstm.jsonl")
    ex = result.frames.examples
    assert shown_count(other)[0] == int((~ex["correct"] & ex["sentence"].str.contains("서울")).sum())
    assert shown > 0


@pytest.mark.slow
def test_a_link_to_one_wos_turn_shows_that_dialogue_with_the_turn_highlighted():
    at = open_page()
    at.switch_page(PAGE_FILES["wos"])
    at.query_params = {"run": ["trade"], "guid": "wos-v1_dev_00001-demo", "turn": "1"}
    at.run()
    cards = drawn(at)
    assert len(cards) == 1 and 'data-guid="wos-v1_dev_00001-demo-1"' in cards[0]
    assert re.findall(r'data-turn="(\d+)" data-selected="true"', cards[0]) == ["1"]


@pytest.mark.slow
def test_strict_chosen_on_the_home_page_holds_on_every_page():
    def strict_box(at):
        return next(c for c in at.checkbox if c.label.startswith("Strict"))

    at = open_page()
    strict_box(at).check().run()
    at.switch_page(PAGE_FILES["ner"]).run()
    assert any("strict" in c.value for c in at.caption)
    assert at.query_params.get("strict") == "1"
    at.switch_page("app.py").run()
    assert strict_box(at).value is True


@pytest.mark.slow
def test_strict_ticked_on_the_home_page_is_how_the_task_page_scores():
    """A run missing five pairs: its accuracy counts them wrong once Strict is ticked on the home page (by hand: json)."""
    lines = next(demo_runs("nli")).read_text(encoding="utf-8").splitlines()
    predicted = {r["guid"]: r["label"] for r in map(json.loads, lines[5:])}
    gold = {r["guid"]: r["gold_label"] for r in json.loads(demo_file("nli").read_text(encoding="utf-8"))}
    right = sum(predicted.get(guid) == label for guid, label in gold.items())

    def accuracy(at) -> str:
        runs = [re.match(r"<b>(.*?)</b>", m.value).group(1) for m in at.markdown if m.value.startswith("<b>")]
        return [m.value for m in at.metric if m.label == "Accuracy"][runs.index("partial")]

    at = open_page(PAGE_FILES["nli"])
    at.file_uploader(key="pred_upload").set_value([("partial.jsonl", "\n".join(lines[5:]).encode("utf-8"), "application/json")]).run()
    assert accuracy(at) == f"{100 * right / len(predicted):.2f}"
    scored = [m.value for m in at.metric if m.label == "Gold scored"]
    assert f"{100 * (len(gold) - 5) / len(gold):.1f}%" in scored and "100.0%" in scored  # the partial run, the full demo runs
    at.switch_page("app.py").run()
    next(c for c in at.checkbox if c.label.startswith("Strict")).check().run()
    at.switch_page(PAGE_FILES["nli"]).run()
    assert accuracy(at) == f"{100 * right / len(gold):.2f}"


# ---- compare mode ----------------------------------------------------------------------------------

@pytest.mark.slow
def test_compare_mode_follows_the_filters_keeps_the_annotation_box_and_names_its_radios():
    at = open_page(PAGE_FILES["wos"])
    at.selectbox(key="compare").set_value(at.selectbox(key="compare").options[1]).run()
    cards = drawn(at)
    dialogues = [re.search(r'data-guid="(wos-v1_dev_\d+-demo)', c).group(1) for c in cards]
    assert len(dialogues) == 2 * len(set(dialogues)), "each dialogue once per run"
    assert any(t.key.startswith("annotate|") for t in at.toggle), "the annotation box stays in compare mode"
    labels = [r.label for r in at.radio]
    assert len(labels) == len(set(labels)) == 2
    at.radio(key="f_status").set_value("wrong").run()
    cases = next(df.value for df in at.dataframe if "examples" in df.value.columns)
    gold, pred = wos_turns()
    assert int(cases["examples"].sum()) == sum(set(s) != set(pred[k]) for k, (s, _) in gold.items())


@pytest.mark.slow
def test_compare_mode_draws_dp_parses_one_under_the_other_at_the_full_width():
    at = open_page(PAGE_FILES["dp"])
    at.selectbox(key="compare").set_value(at.selectbox(key="compare").options[1]).run()
    first, second = at.selectbox(key="run").value, at.selectbox(key="compare").value
    cards = drawn(at)
    assert cards and all(card.count('class="kv-arcs-wrap"') == 2 for card in cards), "both parses in one full-width block"
    assert all(f"<div class='kv-kv'>{esc(first)}</div>" in card and f"<div class='kv-kv'>{esc(second)}</div>" in card for card in cards)
    assert not any("kv-arcs" in m.value for column in at.columns for m in column.markdown), "no parse squeezed into a half column"


# ---- the page has no task-specific branches -----------------------------------------------------

@pytest.mark.slow
def test_task_pages_take_their_task_specific_parts_from_the_task_module():
    for page in (REPO / "klue_viz/ui").glob("*.py"):  # a ninth task needs no edit here
        source = page.read_text(encoding="utf-8")
        assert not re.search(r"task\.name\s*([!=]=|(not\s+)?in\s+[A-Z_(\[{])", source), page.name  # a name list or test
    at = open_page(PAGE_FILES["re"])
    assert any(t.label == "Leave out no_relation" for t in at.toggle)


def test_discovery_takes_its_task_specific_parts_from_the_task_module():
    names = "|".join(map(re.escape, TASKS))
    name_test = re.compile(r"task\.facts\.name\s*([!=]=|(not\s+)?in\b)"  # a test of the name
                           rf"|[\"']({names})[\"']\s*(:|==)"  # a dict keyed by task names, or a name compared
                           r"|[}\]]\s*(\.get\(|\[)task\.facts\.name")  # a table looked up by the name
    found = [(module.name, line.strip()) for module in (REPO / "klue_viz/discovery").glob("*.py")  # a ninth task needs no edit here
             for line in module.read_text(encoding="utf-8").splitlines() if name_test.search(line)]
    assert found == []


def test_a_ninth_task_gets_sort_orders_suspects_and_a_patch_from_discovery_unchanged():
    from klue_viz.discovery.patch import make_patch
    from klue_viz.discovery.sorting import sort_examples, sort_keys
    from klue_viz.discovery.suspects import suspects
    from klue_viz.metrics.official import nli_aggregate
    from klue_viz.scoring.evaluate import evaluate_bytes, gold_from_bytes
    from klue_viz.tasks.base import Metric, TaskFacts
    from klue_viz.tasks.classification import LabelTask
    from tests.conftest import jsonl

    class Ninth(LabelTask):  # in no module of klue_viz/tasks: only what a label task must say
        facts = TaskFacts(name="ninth", title="A ninth task", guid_prefix="ninth-v1", metrics=(Metric("accuracy", "Accuracy"),))
        labels, aggregate_for = ("yes", "no"), staticmethod(nli_aggregate)

        def looks_like_hf(self, record):
            return False

        def hf_row(self, record):
            return {"guid": record["guid"], "text": record["text"], "gold": self.label_of(record["label"])}

        def render(self, frames, guid):
            return esc(frames.example(guid)["text"])

    task = Ninth()
    assert task.facts.name not in TASKS
    records = [{"guid": f"g{k}", "text": f"<b>{k}</b>", "label": ("yes", "no")[k % 2]} for k in range(6)]
    official = json.dumps(records)
    gold = gold_from_bytes(task, official.encode(), "ninth_dev.json")
    answers = [{"g0": "no", "g3": "yes"}, {"g0": "no", "g5": "yes"}]  # both runs say g0 is "no"; each has one error of its own
    runs = [evaluate_bytes(task, gold, jsonl([{"guid": r["guid"], "label": wrong.get(r["guid"], r["label"])} for r in records]), f"run{k}.jsonl")
            for k, wrong in enumerate(answers)]
    keys = sort_keys(task, runs[0].frames)
    assert list(keys) == ["file order", "wrong first"]
    ordered = sort_examples(task, runs[0].frames, runs[0].frames.examples, "wrong first")
    assert ordered["guid"].tolist() == ["g0", "g3", "g1", "g2", "g4", "g5"]
    queue = suspects(task, runs, top=None)
    assert [(s.guid, s.unit, s.gold, s.proposed, s.score) for s in queue] == [("g0", "label", "yes", "no", 2.0)]
    patch = make_patch(task, official, "ninth_dev.json", {("g0", None): ["no"], ("g1", None): ["maybe"]})
    assert json.loads(patch.text) == [{**records[0], "label": "no"}] and patch.records == 1
    assert [(p.guid, "maybe" in p.message) for p in patch.problems] == [("g1", True)]


def test_a_task_offers_training_slices_exactly_when_discovery_can_count_its_training_file():
    from klue_viz.discovery.features import training_counts

    for task in TASKS.values():
        try:
            training_counts(task, [])
            counted = True
        except KeyError:
            counted = False
        assert (task.training is not None) == counted, task.facts.name
    assert [t.facts.name for t in TASKS.values() if t.view.compact_table] == ["ynat", "sts", "nli"]


def test_readme_says_when_the_postgresql_tests_run_and_that_the_app_listens_on_loopback_only():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    ci = (REPO / ".ci/run").read_text(encoding="utf-8") + (REPO / ".ci/postgres.sh").read_text(encoding="utf-8")
    assert re.search(r"skipped unless `KLUE_VIZ_TEST_PG`", readme) and "export KLUE_VIZ_TEST_PG=" in ci
    config = (REPO / ".streamlit/config.toml").read_text(encoding="utf-8")
    assert re.search(r'^address = "127\.0\.0\.1"', config, re.M), "loopback is the default (issue 19, item 19)"
    assert 'server.address = "127.0.0.1"' in readme and "--server.address 0.0.0.0" in readme  # and how to open it up


@pytest.mark.slow
def test_metrics_in_drawings_and_slice_tables_have_two_decimals():
    patterns = {"dp": r"UAS (\S+) · LAS (\S+)", "mrc": r"EM (\S+) · ROUGE-W ([^<\s]+)", "wos": r"slot F1 ([^<\s]+)"}
    for task, pattern in patterns.items():
        at = open_page(PAGE_FILES[task])
        values = [v for card in drawn(at) for found in re.findall(pattern, card) for v in (found if isinstance(found, tuple) else (found,))]
        assert values and all(re.fullmatch(r"\d+\.\d\d", v) for v in values), (task, values[:5])
        table = next(df.value for df in at.dataframe if "error_rate" in df.value.columns)
        metrics = [c for c in table.columns if c not in ("value", "n", "errors", "error_rate", "n/a because")]
        assert all(re.fullmatch(r"-?\d+\.\d\d|n/a", v) for v in table[metrics].to_numpy().ravel())


@pytest.mark.slow
def test_home_links_open_the_run_with_the_sessions_settings():
    at = open_page()
    next(c for c in at.checkbox if c.label.startswith("Strict")).check().run()
    table = next(m.value for m in at.markdown if "kv-model-table" in m.value)
    links = [html.unescape(href) for href in re.findall(r'<a href="([^"]+)"', table)]
    assert "/ner?strict=1&run=char-bilstm" in links
    at.switch_page(PAGE_FILES["ner"])
    at.query_params = {"run": "char-bilstm", "strict": "1"}
    at.run()
    assert at.selectbox(key="run").value == "char-bilstm"


@pytest.mark.slow
def test_a_gold_source_in_the_url_is_the_sessions_until_changed():
    at = open_page()
    at.switch_page(PAGE_FILES["sts"])
    at.query_params = {"source": "upload"}
    at.run()
    assert any("No gold file uploaded for STS" in c.value.replace("\\", "") for c in at.caption)
    at.switch_page("app.py").run()
    assert at.radio(key="gold_source_widget").value == "upload"


@pytest.mark.slow
def test_a_gold_folder_chosen_on_the_home_page_is_in_the_url_and_a_fresh_session_scores_against_it(monkeypatch, shared):
    """The server allows gold under shared/'s parent but has no default folder: the folder typed is part of the view."""
    monkeypatch.delenv("KLUE_VIZ_DATA_DIR", raising=False)
    monkeypatch.setenv("KLUE_VIZ_GOLD_ROOTS", str(shared.parent))
    at = open_page()
    at.radio(key="gold_source_widget").set_value("folder").run()
    at.text_input(key="data_dir_widget").set_value(str(shared)).run()
    assert at.query_params.get("folder") == str(shared) and at.query_params.get("source") == "folder"
    table = html.unescape(next(m.value for m in at.markdown if "kv-model-table" in m.value))
    assert f"/ynat?source=folder&folder={str(shared).replace('/', '%2F')}&run=bert-base" in table  # YNAT: the demo stands in

    fresh = open_page()  # a colleague opening the link in a new browser
    fresh.switch_page(PAGE_FILES["nli"])
    fresh.query_params = {"source": "folder", "folder": str(shared)}
    fresh.run()
    assert any(c.value.replace("\\", "").startswith("Gold: ") and "/klue-nli-v1.1/klue-nli-v1.1_dev.json · 3,000 gold pairs" in c.value.replace("\\", "")
               for c in fresh.caption), "the dev set, not the embedded demo"


@pytest.mark.slow
def test_a_hostile_or_stale_link_is_shown_as_text_and_falls_back_to_what_is_loaded():
    hostile = "<img src=x onerror=alert(1)>![x](http://e.vil)"
    at = open_page()
    at.switch_page(PAGE_FILES["ynat"])
    at.query_params = {"run": [hostile, "bert-base"], "show": "sideways", "gold_label": hostile, "page": "999", "guid": hostile}
    at.run()
    assert not at.exception and at.radio(key="f_status").value == "all"
    texts = [w.value for w in at.warning] + [i.value for i in at.info]
    assert any("this server does not have for this gold" in t for t in texts) and any("linked example" in t for t in texts)
    assert not any("<img src=x" in t and "\\<img" not in t for t in texts)
    assert shown_count(at)[0] == shown_count(at)[1], "the filters fall back to the whole run"
