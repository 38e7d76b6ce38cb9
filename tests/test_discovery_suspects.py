"""Suspect queue: gold labels flipped on purpose come first (with and without probabilities), and the
corrections marked from the queue export as a patch that restores the original records."""

from __future__ import annotations

import json
import random

import pytest

from klue_viz.cli.main import main
from klue_viz.discovery.patch import corrections_from, make_patch
from klue_viz.discovery.suspects import suspects
from klue_viz.scoring.evaluate import evaluate_bytes, load_gold
from klue_viz.store.annotations import Store
from klue_viz.store.gold_marks import mark_gold_wrong
from klue_viz.tasks import get_task
from klue_viz.tasks.ner import tag_list
from tests.conftest import jsonl

NLI_LABELS = ("entailment", "neutral", "contradiction")


@pytest.fixture(scope="module")
def nli_flipped(shared, tmp_path_factory):
    """The real NLI dev file with 20 gold labels changed, and the guids of those."""
    records = json.loads((shared / "klue-nli-v1.1" / "klue-nli-v1.1_dev.json").read_text(encoding="utf-8"))
    rng = random.Random(7)
    flipped = {}
    for record in rng.sample(records, 20):
        flipped[record["guid"]] = record["gold_label"]
        record["gold_label"] = NLI_LABELS[(NLI_LABELS.index(record["gold_label"]) + 1) % 3]
    path = tmp_path_factory.mktemp("nli") / "klue-nli-v1.1_dev.json"
    path.write_text(json.dumps(records, ensure_ascii=False), encoding="utf-8")
    return path, flipped


def _noisy_runs(truth: dict[str, str], seeds, noise: float, probs: bool) -> list[bytes]:
    """Runs that know the original labels, each wrong on its own random `noise` share (less confident there)."""
    out = []
    for seed in seeds:
        rng = random.Random(seed)
        records = []
        for guid, label in truth.items():
            wrong = rng.random() < noise
            pred = rng.choice([l for l in NLI_LABELS if l != label]) if wrong else label
            record = {"guid": guid, "label": pred}
            if probs:
                top = rng.uniform(0.35, 0.6) if wrong else rng.uniform(0.7, 0.99)
                record["probs"] = {l: top if l == pred else (1 - top) / 2 for l in NLI_LABELS}
            records.append(record)
        out.append(jsonl(records))
    return out


@pytest.mark.slow
@pytest.mark.parametrize("probs, seeds", [(False, (1, 2, 3)), (True, (4,)), (True, (5, 6))])
def test_flipped_nli_labels_top_the_queue(shared, nli_flipped, probs, seeds):
    path, flipped = nli_flipped
    task = get_task("nli")
    gold = load_gold(task, path)
    truth = {r["guid"]: flipped.get(r["guid"], r["gold"]) for r in gold.rows}
    runs = [evaluate_bytes(task, gold, data, f"run{k}.jsonl") for k, data in enumerate(_noisy_runs(truth, seeds, 0.1, probs))]
    # The flipped examples every run got right (the others carry a run's own noise, so weaker evidence) come first.
    known = {g for g in flipped if all(r.frames.examples.set_index("guid").at[g, "pred"] == flipped[g] for r in runs)}
    assert len(known) >= 10
    queue = suspects(task, runs, top=len(known))
    assert {s.guid for s in queue} == known
    assert all(s.proposed == flipped[s.guid] for s in queue)
    if probs:
        assert all("cleanlab" in s.evidence.extra for s in queue)


@pytest.mark.slow
def test_cleanlab_runs_in_the_calling_process(shared, nli_flipped, monkeypatch):
    """The queue is built inside the Streamlit server: cleanlab must not fork a process pool from it (a fork of a
    threaded server can deadlock; a CI run hung for 90 s on the suspects panel and the server ignored SIGTERM)."""
    import multiprocessing

    def no_pool(*args, **kwargs):
        raise AssertionError("cleanlab started a multiprocessing pool")

    monkeypatch.setattr(multiprocessing, "Pool", no_pool)
    monkeypatch.setattr(multiprocessing, "cpu_count", lambda: 4)  # cleanlab's default n_jobs without psutil
    path, flipped = nli_flipped
    task = get_task("nli")
    gold = load_gold(task, path)
    truth = {r["guid"]: flipped.get(r["guid"], r["gold"]) for r in gold.rows}
    runs = [evaluate_bytes(task, gold, data, f"run{k}.jsonl") for k, data in enumerate(_noisy_runs(truth, (5, 6), 0.1, True))]
    assert any("cleanlab" in s.evidence.extra for s in suspects(task, runs, top=20))


@pytest.mark.slow
def test_marked_corrections_export_a_patch_that_restores_the_original(shared, nli_flipped, tmp_path):
    path, flipped = nli_flipped
    task = get_task("nli")
    gold = load_gold(task, path)
    truth = {r["guid"]: flipped.get(r["guid"], r["gold"]) for r in gold.rows}
    runs = [evaluate_bytes(task, gold, data, f"run{k}.jsonl") for k, data in enumerate(_noisy_runs(truth, (1, 2, 3), 0.1, False))]
    db = Store(str(tmp_path / "notes.sqlite3"))
    queue = [s for s in suspects(task, runs, top=None) if flipped.get(s.guid) == s.proposed]  # what a reviewer confirms
    for suspect in queue:
        mark_gold_wrong(db, task, suspect, "검토자")
    stored = db.find(task="nli", run="gold")
    assert len(stored) == len(queue) >= 15 and all(a.gold_wrong for a in stored)
    patch = make_patch(task, path.read_text(encoding="utf-8"), path.name, corrections_from(stored, task))
    original = {r["guid"]: r for r in json.loads((shared / "klue-nli-v1.1" / "klue-nli-v1.1_dev.json").read_text(encoding="utf-8"))}
    patched = json.loads(patch.text)
    assert patch.records == len(queue) and not patch.problems
    assert [r["guid"] for r in patched] == sorted((s.guid for s in queue), key=list(original).index)
    assert all(record == original[record["guid"]] for record in patched)


def _ner_blocks(text: str) -> dict[str, str]:
    blocks = {}
    for block in text.split("\n\n"):
        lines = [l for l in block.split("\n") if l]
        heads = [k for k, l in enumerate(lines) if l.startswith("## klue-ner")]
        if heads:
            blocks[lines[heads[0]].split("\t")[0][3:]] = "\n".join(lines[heads[0]:]) + "\n"
    return blocks


@pytest.mark.slow
def test_ner_entities_retyped_in_the_gold_are_found_and_patched_back(shared, tmp_path):
    task = get_task("ner")
    source = (shared / "klue-ner-v1.1" / "klue-ner-v1.1_dev.tsv").read_text(encoding="utf-8")
    original = load_gold(task, shared)
    rng = random.Random(3)
    chosen = {r["guid"] for r in rng.sample([r for r in original.rows if "B-PS" in tag_list(r["tags"])], 15)}
    lines, guid, done = [], None, False
    for line in source.split("\n"):
        if line.startswith("## klue-ner"):
            guid, done = line.split("\t")[0][3:], False
        elif guid in chosen and not done and line.endswith("\tB-PS"):
            line, done = line[:-4] + "B-OG", True
        elif guid in chosen and done and line.endswith("\tI-PS") and not lines[-1].endswith("-PS"):
            pass
        if guid in chosen and done and line.endswith("\tI-PS") and (lines[-1].endswith("B-OG") or lines[-1].endswith("I-OG")):
            line = line[:-4] + "I-OG"
        lines.append(line)
    edited = tmp_path / "klue-ner-v1.1_dev.tsv"
    edited.write_text("\n".join(lines), encoding="utf-8")
    gold = load_gold(task, edited)
    runs = []
    for seed in (1, 2, 3):
        rng = random.Random(seed)
        tags = ["B-DT", "I-DT", "B-LC", "I-LC", "B-OG", "I-OG", "B-PS", "I-PS", "O"]
        runs.append(evaluate_bytes(task, gold, jsonl([{"guid": r["guid"], "tags": [t if rng.random() > 0.02 else rng.choice(tags) for t in tag_list(r["tags"])]}
                                                      for r in original.rows]), f"run{seed}.jsonl"))
    # Retyped entities that every run reproduces exactly come first (a run's own noise can hit the others).
    known = set()
    for guid in chosen:
        moved = [e for e in runs[0].frames.details["entities"].itertuples() if e.guid == guid and e.side == "gold" and e.label == "OG" and e.error_type == "wrong type"]
        if moved and all(((r.frames.details["entities"]["guid"] == guid) & (r.frames.details["entities"]["start"] == moved[0].start)
                          & (r.frames.details["entities"]["end"] == moved[0].end) & (r.frames.details["entities"]["label"] == "PS")
                          & (r.frames.details["entities"]["side"] == "pred")).any() for r in runs):
            known.add(guid)
    assert len(known) >= 10
    queue = suspects(task, runs, top=len(known))
    assert {s.guid for s in queue} == known
    assert all(s.unit == "entity" and s.proposed.endswith(":PS") and s.gold.endswith(":OG") for s in queue)
    db = Store(str(tmp_path / "notes.sqlite3"))
    for suspect in queue:
        mark_gold_wrong(db, task, suspect, "reviewer")
    patch = make_patch(task, edited.read_text(encoding="utf-8"), edited.name, corrections_from(db.find(task="ner"), task))
    expected = _ner_blocks(source)
    assert patch.records == len(known) and not patch.problems
    assert _ner_blocks(patch.text) == {g: expected[g] for g in known}


@pytest.mark.slow
def test_suspects_command_writes_the_documented_json(shared, nli_flipped, tmp_path, capsys):
    path, flipped = nli_flipped
    truth = {**{r["guid"]: r["gold"] for r in load_gold(get_task("nli"), path).rows}, **flipped}
    files = []
    for k, data in enumerate(_noisy_runs(truth, (1, 2, 3), 0.05, False)):
        files += ["--pred", str(tmp_path / f"r{k}.jsonl")]
        (tmp_path / f"r{k}.jsonl").write_bytes(data)
    out = tmp_path / "suspects.json"
    assert main(["suspects", "--task", "nli", "--gold", str(path), *files, "--top", "5", "--out", str(out)]) == 0
    written = json.loads(out.read_text(encoding="utf-8"))
    assert written["task"] == "nli" and len(written["suspects"]) == 5
    assert set(written["suspects"][0]) == {"guid", "turn", "unit", "gold", "proposed", "score", "confidence", "label_quality", "text", "evidence"}
    assert written["suspects"][0]["guid"] in flipped


@pytest.mark.slow
def test_dp_heads_moved_in_the_gold_are_found_and_patched_back(shared, tmp_path):
    task = get_task("dp")
    source = (shared / "klue-dp-v1.1" / "klue-dp-v1.1_dev.tsv").read_text(encoding="utf-8")
    original = load_gold(task, shared)
    chosen = {r["guid"]: r for r in random.Random(5).sample([r for r in original.rows if r["n_words"] >= 4], 12)}
    moved = {}
    lines, guid = [], None
    for line in source.split("\n"):
        if line.startswith("## klue-dp") and "\t" in line:
            guid = line.split("\t")[0][3:]
        elif guid in chosen and guid not in moved and line[:1].isdigit():
            fields = line.split("\t")
            if fields[4] != "0":  # move the first non-root word's head to the word after it (or before, at the end)
                index, head = int(fields[0]), int(fields[4])
                n = chosen[guid]["n_words"]
                new = next(h for h in (head + 1, head - 1, head + 2, head - 2) if 1 <= h <= n and h not in (head, index))
                fields[4] = str(new)
                moved[guid] = (index, head, fields[5])
                line = "\t".join(fields)
        lines.append(line)
    edited = tmp_path / "klue-dp-v1.1_dev.tsv"
    edited.write_text("\n".join(lines), encoding="utf-8")
    gold = load_gold(task, edited)
    runs = [evaluate_bytes(task, gold, jsonl([{"guid": r["guid"], "head": r["heads"], "deprel": r["deprels"]} for r in original.rows]), f"run{k}.jsonl")
            for k in range(2)]
    queue = suspects(task, runs, top=None)
    assert {s.guid for s in queue} == set(moved)
    assert {(s.guid, s.proposed) for s in queue} == {(g, f"{i}:{h}:{rel}") for g, (i, h, rel) in moved.items()}
    db = Store(str(tmp_path / "notes.sqlite3"))
    for suspect in queue:
        mark_gold_wrong(db, task, suspect, "reviewer")
    patch = make_patch(task, edited.read_text(encoding="utf-8"), edited.name, corrections_from(db.find(task="dp"), task))
    assert patch.records == len(moved) and not patch.problems
    blocks = {b.split("\n")[0].split("\t")[0]: b.strip("\n") for b in source.split("\n\n") if b.startswith("## klue-dp")}
    assert sorted(b.strip("\n") for b in patch.text.split("\n\n") if b.strip()) == sorted(blocks[f"## {g}"] for g in moved)


def test_wos_slot_value_changed_in_one_turn_is_found_and_patched_back(shared, tmp_path):
    task = get_task("wos")
    path = shared / "wos-v1.1" / "wos-v1.1_dev_sample_10.json"
    dialogues = json.loads(path.read_text(encoding="utf-8"))
    original = load_gold(task, path)
    edited_dialogues = json.loads(path.read_text(encoding="utf-8"))
    user_turns = [t for t in edited_dialogues[0]["dialogue"] if t["role"] == "user"]
    user_turns[1]["state"] = [s.replace("식당-지역-서울 동쪽", "식당-지역-서울 서쪽") for s in user_turns[1]["state"]]
    edited = tmp_path / "wos-v1.1_dev.json"
    edited.write_text(json.dumps(edited_dialogues, ensure_ascii=False), encoding="utf-8")
    gold = load_gold(task, edited)
    runs = [evaluate_bytes(task, gold, jsonl([{"guid": r["dialogue"], "turn": r["turn"], "state": r["gold_state"]} for r in original.rows]),
                           f"run{k}.jsonl") for k in range(2)]
    queue = suspects(task, runs, top=None)
    assert [(s.guid, s.turn, s.gold, s.proposed) for s in queue] == [
        (dialogues[0]["guid"], 1, "식당-지역-서울 서쪽", "식당-지역-서울 동쪽")]
    db = Store(str(tmp_path / "notes.sqlite3"))
    mark_gold_wrong(db, task, queue[0], "reviewer")
    patch = make_patch(task, edited.read_text(encoding="utf-8"), edited.name, corrections_from(db.find(task="wos"), task))
    assert patch.records == 1 and json.loads(patch.text) == [dialogues[0]]


def test_wos_slot_added_to_the_gold_is_proposed_as_none_and_patched_away(shared, tmp_path):
    """Every run leaves out a slot the gold has: the proposal is 'none' (never pandas' missing 'nan') and the patch drops it."""
    task = get_task("wos")
    path = shared / "wos-v1.1" / "wos-v1.1_dev_sample_10.json"
    dialogues = json.loads(path.read_text(encoding="utf-8"))
    original = load_gold(task, path)
    edited_dialogues = json.loads(path.read_text(encoding="utf-8"))
    user_turns = [t for t in edited_dialogues[0]["dialogue"] if t["role"] == "user"]
    assert not any(s.startswith("숙소-지역-") for s in user_turns[1]["state"])
    user_turns[1]["state"] = user_turns[1]["state"] + ["숙소-지역-서울 남쪽"]
    edited = tmp_path / "wos-v1.1_dev.json"
    edited.write_text(json.dumps(edited_dialogues, ensure_ascii=False), encoding="utf-8")
    gold = load_gold(task, edited)
    runs = [evaluate_bytes(task, gold, jsonl([{"guid": r["dialogue"], "turn": r["turn"], "state": r["gold_state"]} for r in original.rows]),
                           f"run{k}.jsonl") for k in range(2)]
    queue = suspects(task, runs, top=None)
    assert [(s.guid, s.turn, s.gold, s.proposed) for s in queue] == [
        (dialogues[0]["guid"], 1, "숙소-지역-서울 남쪽", "숙소-지역-none")]
    db = Store(str(tmp_path / "notes.sqlite3"))
    mark_gold_wrong(db, task, queue[0], "reviewer")
    patch = make_patch(task, edited.read_text(encoding="utf-8"), edited.name, corrections_from(db.find(task="wos"), task))
    assert patch.records == 1 and json.loads(patch.text) == [dialogues[0]]


def test_mrc_runs_agreeing_there_is_no_answer_propose_unanswerable_and_the_patch_says_so(tmp_path):
    """Every run answers nothing where the gold has an answer: the marked correction is stored (not an empty text that
    the store keeps as none) and the patch writes the question as unanswerable, its old answers as plausible_answers."""
    from klue_viz.reading.demo import DEMO_BENCHMARK

    task = get_task("mrc")
    gold = load_gold(task, DEMO_BENCHMARK)
    target = next(r for r in gold.rows if r["answers"])
    data = jsonl([{"guid": r["guid"], "answer": "" if r["guid"] == target["guid"] else (r["answers"][0] if r["answers"] else "")}
                  for r in gold.rows])
    runs = [evaluate_bytes(task, gold, data, f"run{k}.jsonl") for k in range(2)]
    queue = suspects(task, runs, top=None)
    assert [(s.guid, s.proposed) for s in queue] == [(target["guid"], "(unanswerable)")]
    db = Store(str(tmp_path / "notes.sqlite3"))
    mark_gold_wrong(db, task, queue[0], "reviewer")
    source = next(DEMO_BENCHMARK.rglob("klue-mrc-v1.1_dev.json"))
    patch = make_patch(task, source.read_text(encoding="utf-8"), source.name, corrections_from(db.find(task="mrc"), task))
    assert patch.records == 1 and not patch.problems
    qa = json.loads(patch.text)["data"][0]["paragraphs"][0]["qas"][0]
    original = next(q for d in json.loads(source.read_text(encoding="utf-8"))["data"] for p in d["paragraphs"] for q in p["qas"]
                    if q["guid"] == target["guid"])
    assert qa == {**original, "answers": [], "plausible_answers": original["answers"], "is_impossible": True, "question_type": 3}


def test_mrc_runs_agreeing_on_an_answer_to_an_unanswerable_gold_patch_it_answerable(tmp_path):
    from klue_viz.reading.demo import DEMO_BENCHMARK

    task = get_task("mrc")
    gold = load_gold(task, DEMO_BENCHMARK)
    source = next(DEMO_BENCHMARK.rglob("klue-mrc-v1.1_dev.json"))
    records = {q["guid"]: q for d in json.loads(source.read_text(encoding="utf-8"))["data"] for p in d["paragraphs"] for q in p["qas"]}
    target = next(g for g, q in records.items() if q["is_impossible"] and q.get("plausible_answers"))
    distractor = records[target]["plausible_answers"][0]
    data = jsonl([{"guid": r["guid"], "answer": distractor["text"] if r["guid"] == target else (r["answers"][0] if r["answers"] else "")}
                  for r in gold.rows])
    queue = suspects(task, [evaluate_bytes(task, gold, data, f"run{k}.jsonl") for k in range(2)], top=None)
    assert [(s.guid, s.proposed) for s in queue] == [(target, distractor["text"])]
    db = Store(str(tmp_path / "notes.sqlite3"))
    mark_gold_wrong(db, task, queue[0], "reviewer")
    patch = make_patch(task, source.read_text(encoding="utf-8"), source.name, corrections_from(db.find(task="mrc"), task))
    qa = json.loads(patch.text)["data"][0]["paragraphs"][0]["qas"][0]
    expected = {k: v for k, v in records[target].items() if k != "plausible_answers"}
    assert qa == {**expected, "answers": [{"text": distractor["text"], "answer_start": qa["answers"][0]["answer_start"]}], "is_impossible": False}
    context = next(p["context"] for d in json.loads(source.read_text(encoding="utf-8"))["data"] for p in d["paragraphs"]
                   if any(q["guid"] == target for q in p["qas"]))
    assert context[qa["answers"][0]["answer_start"]:].startswith(distractor["text"])
