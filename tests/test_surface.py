"""Errors by surface form, counted against what was planted, read from the official files by the test itself."""

from __future__ import annotations

import csv
import io
import json
import re
from collections import Counter
from pathlib import Path

import pytest

from klue_viz.cli.main import main
from klue_viz.scoring.evaluate import evaluate_bytes, load_gold
from klue_viz.scoring.surface_forms import compare_surface, surface_errors, text_words
from klue_viz.tasks import get_task
from klue_viz.tasks.ner import tag_list
from tests.conftest import jsonl

OTHER_TYPE = {"PS": "LC", "LC": "OG", "OG": "PS", "DT": "TI", "TI": "DT", "QT": "DT"}


def read_tsv(path) -> list[tuple[str, list[str], list[str]]]:
    """(guid, characters, tags) of each sentence of the official NER TSV, read here without klue_viz."""
    sentences, guid, chars, tags = [], None, [], []
    for line in path.read_text(encoding="utf-8").split("\n"):
        if line.startswith("## "):
            if "\t" in line and line[3:].split("\t", 1)[0].startswith("klue-ner"):
                guid = line[3:].split("\t", 1)[0]
            continue
        if not line:
            if guid is not None and chars:
                sentences.append((guid, chars, tags))
            if chars:
                guid, chars, tags = None, [], []
            continue
        char, tag = line.rsplit("\t", 1)
        chars.append(char)
        tags.append(tag)
    if guid is not None and chars:
        sentences.append((guid, chars, tags))
    return sentences


def entities(chars: list[str], tags: list[str]) -> list[tuple[list[int], str]]:
    """Entities as (character positions without spaces, type): strict IOB2 over the non-space characters, as the
    official metric reads them."""
    found, current, kind = [], [], None
    for k, (char, tag) in enumerate(zip(chars, tags)):
        if char == " ":
            continue
        if tag.startswith("B-"):
            if current:
                found.append((current, kind))
            current, kind = [k], tag[2:]
        elif tag.startswith("I-") and current and tag[2:] == kind:
            current.append(k)
        else:
            if current:
                found.append((current, kind))
            current, kind = [], None
    if current:
        found.append((current, kind))
    return found


@pytest.fixture(scope="module")
def planted(shared):
    """A run made from the real NER dev gold: of each sentence's entities, the 1st of every 5 dropped (missed), the 2nd
    retyped (wrong type), the 3rd cut by its last character when it has two or more (wrong boundary); and one
    spurious QT on a lone character far from any entity in every 7th sentence. The expected table is what was planted."""
    path = shared / "klue-ner-v1.1" / "klue-ner-v1.1_dev.tsv"
    expected: Counter = Counter()
    records = []
    for n, (guid, chars, tags) in enumerate(read_tsv(path)):
        pred = list(tags)
        for k, (positions, kind) in enumerate(entities(chars, tags)):
            text = "".join(chars[positions[0]:positions[-1] + 1])
            if k % 5 == 0:
                for p in range(positions[0], positions[-1] + 1):
                    pred[p] = "O"
                expected[(text, kind, "missed")] += 1
            elif k % 5 == 1:
                for p in range(positions[0], positions[-1] + 1):
                    pred[p] = pred[p][:2] + OTHER_TYPE[kind] if pred[p] != "O" else "O"
                expected[(text, kind, f"wrong type as {OTHER_TYPE[kind]}")] += 1
            elif k % 5 == 2 and len(positions) >= 2:
                for p in range(positions[-1], positions[-2], -1):
                    pred[p] = "O"
                expected[(text, kind, "wrong boundary")] += 1
        if n % 7 == 0:
            for p in range(2, len(chars) - 2):
                window = range(p - 2, p + 3)
                if chars[p] != " " and all(tags[q] == "O" and pred[q] == "O" for q in window):
                    pred[p] = "B-QT"
                    expected[(chars[p], "QT", "spurious")] += 1
                    break
        records.append({"guid": guid, "tags": pred})
    task = get_task("ner")
    gold = load_gold(task, path)
    return task, gold, jsonl(records), expected


@pytest.mark.slow
def test_ner_surface_counts_match_what_was_planted(planted):
    task, gold, run, expected = planted
    result = evaluate_bytes(task, gold, run, "planted.jsonl")
    table = surface_errors(task, result.frames)
    got = Counter({(r.form, r.type, r.error): r.count for r in table.itertuples()})
    assert sum(expected.values()) > 5000  # the real dev set: thousands of planted errors
    assert got == expected
    top = table.iloc[0]
    assert top["count"] == max(expected.values())
    # the guids of a row are the sentences holding that error
    row = table[table["error"] == "missed"].iloc[0]
    ents = result.frames.details["entities"]
    hit = ents[(ents["text"] == row["form"]) & (ents["label"] == row["type"]) & (ents["error_type"] == "missed")]
    assert set(row["guids"]) == set(hit["guid"])


@pytest.mark.slow
def test_comparing_two_runs_counts_each(planted):
    task, gold, run, expected = planted
    first = evaluate_bytes(task, gold, run, "planted.jsonl")
    perfect = evaluate_bytes(task, gold, jsonl([{"guid": r["guid"], "tags": tag_list(r["tags"])} for r in gold.rows]), "perfect.jsonl")
    both = compare_surface({"planted": surface_errors(task, first.frames), "perfect": surface_errors(task, perfect.frames)})
    assert both["count: perfect"].sum() == 0
    assert both["count: planted"].sum() == sum(expected.values())


@pytest.mark.slow
def test_text_words_against_a_hand_count(shared):
    task = get_task("nli")
    gold = load_gold(task, shared)
    rows = gold.rows
    raw = json.loads((shared / "klue-nli-v1.1" / "klue-nli-v1.1_dev.json").read_text(encoding="utf-8"))

    def words(text: str) -> set[str]:
        return {re.sub(r"^\W+|\W+$", "", token) for token in text.split()}

    holding = [r["guid"] for r in raw if "있다" in words(r["premise"]) | words(r["hypothesis"])]
    wrong = set(holding[::2]) | {r["guid"] for r in rows[::10]}  # half the pairs holding 있다 wrong, and one in ten of all
    labels = ("entailment", "neutral", "contradiction")
    run = jsonl([{"guid": r["guid"], "label": next(x for x in labels if x != r["gold"]) if r["guid"] in wrong else r["gold"]} for r in rows])
    table = surface_errors(task, evaluate_bytes(task, gold, run, "p.jsonl").frames).set_index("form")
    assert table.loc["있다", "total"] == len(holding)
    assert table.loc["있다", "count"] == sum(g in wrong for g in holding)
    assert table.loc["있다", "excess"] == pytest.approx(sum(g in wrong for g in holding) - len(holding) * len(wrong) / len(rows))
    assert "있다" in list(table.index[:3])  # the word planted with the errors is among those with the most excess errors


def test_text_words_trim_punctuation():
    assert text_words("서울, 부산. (대구) 서울!") == {"서울", "부산", "대구"}


@pytest.mark.slow
def test_cli_errors_writes_json_and_csv(planted, tmp_path, shared):
    task, gold, run, expected = planted
    pred = tmp_path / "planted.jsonl"
    pred.write_bytes(run)
    out = tmp_path / "errors.json"
    assert main(["errors", "--task", "ner", "--gold", str(shared), "--pred", str(pred), "--out", str(out), "--top", "0"]) == 0
    rows = json.loads(out.read_text(encoding="utf-8"))["errors"]
    assert Counter({(r["form"], r["type"], r["error"]): r["count"] for r in rows}) == expected
    as_csv = tmp_path / "errors.csv"
    assert main(["errors", "--task", "ner", "--gold", str(shared), "--pred", str(pred), "--out", str(as_csv), "--top", "5"]) == 0
    read = list(csv.DictReader(io.StringIO(as_csv.read_text(encoding="utf-8-sig"))))
    assert len(read) == 5 and int(read[0]["count"]) == max(expected.values())



def test_wos_slot_values_against_a_hand_count():
    """A demo run: missing, wrong and extra slot values counted here from the gold file and the prediction file."""
    demo = Path(__file__).resolve().parents[1] / "klue_viz" / "demo"
    task = get_task("wos")
    gold_path = demo / "klue_benchmark" / "wos-v1.1" / "wos-v1.1_dev.json"
    gold = load_gold(task, gold_path)
    dialogues = json.loads(gold_path.read_text(encoding="utf-8"))
    states = {f"{d['guid']}-{k}": turn["state"] for d in dialogues for k, turn in enumerate(t for t in d["dialogue"] if t["role"] == "user")}
    records = [json.loads(line) for line in (demo / "runs" / "wos" / "trade.jsonl").read_text(encoding="utf-8").splitlines()]
    records[0]["state"] = records[0]["state"] + ["관광-종류-박물관"]  # one extra and one wrong slot value besides the run's own errors
    records[1]["state"] = [s.replace("식당-종류-한식당", "식당-종류-중식당") for s in records[1]["state"]]
    predicted = {f"{r['guid']}-{r['turn']}": r["state"] for r in records}
    expected: Counter = Counter()
    for guid, state in states.items():
        g = {s.rsplit("-", 1)[0]: s.rsplit("-", 1)[1] for s in state}
        p = {s.rsplit("-", 1)[0]: s.rsplit("-", 1)[1] for s in predicted.get(guid, [])}
        for slot in g.keys() - p.keys():
            expected[(g[slot], slot, "missing")] += 1
        for slot in p.keys() - g.keys():
            expected[(p[slot], slot, "extra")] += 1
        for slot in g.keys() & p.keys():
            if g[slot] != p[slot]:
                expected[(g[slot], slot, f"wrong value: {p[slot]}")] += 1
    result = evaluate_bytes(task, gold, jsonl(records), "trade.jsonl")
    table = surface_errors(task, result.frames)
    assert Counter({(r.form, r.type, r.error): r.count for r in table.itertuples()}) == expected
    assert {e.split(":")[0] for _, _, e in expected} == {"missing", "extra", "wrong value"}
