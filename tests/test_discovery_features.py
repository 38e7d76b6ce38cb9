"""Korean-aware slice features: known answers by hand, on the real NER dev set, and seen-in-training."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from klue_viz.cli.main import main
from klue_viz.core.problems import InputError
from klue_viz.discovery.features import load_training, training_features, with_training
from klue_viz.discovery.slices import weak_slices
from klue_viz.scoring.evaluate import evaluate_bytes, load_gold
from klue_viz.scoring.slicing import slice_table
from klue_viz.tasks import get_task
from klue_viz.tasks.kit import WHOLE, attached_particle, eojeol_bucket, script_mix
from klue_viz.tasks.ner import tag_list
from tests.conftest import jsonl


@pytest.mark.parametrize("text, expected", [("경찰", "Hangul"), ("16명", "Hangul+digits"), ("LG전자", "Hangul+Latin"),
                                            ("金正恩", "Hanja"), ("2017", "digits"), ("(…)", "other"), ("朴 대통령 iPhone 7", "Hangul+Hanja+Latin+digits")])
def test_script_mix(text, expected):
    assert script_mix(text) == expected


@pytest.mark.parametrize("sentence, end, expected", [("경찰은 또", 2, "+은"), ("서울에서 만나", 2, "+에서"), ("박씨의 딸", 1, "+other"),
                                                     ("김 모씨", 1, WHOLE), ("부산.", 2, WHOLE), ("부산", 2, WHOLE)])
def test_attached_particle(sentence, end, expected):
    assert attached_particle(sentence, end) == expected


def test_eojeol_buckets():
    import pandas as pd

    assert eojeol_bucket(pd.Series(["하나", "a b c d e f", " ".join("x" * 25)])).tolist() == ["1-5 eojeols", "6-10 eojeols", "21+ eojeols"]


@pytest.fixture(scope="module")
def ner(shared):
    task = get_task("ner")
    gold = load_gold(task, shared)
    run = evaluate_bytes(task, gold, jsonl([{"guid": r["guid"], "tags": tag_list(r["tags"])} for r in gold.rows]), "perfect.jsonl")
    return task, gold, run


@pytest.mark.slow
def test_ner_frames_carry_the_korean_features(ner):
    task, gold, run = ner
    ents = run.frames.details["entities"]
    first = ents[ents["guid"] == gold.rows[0]["guid"]].set_index(["side", "text"])
    assert first.loc[("gold", "경찰"), "particle"] == "+은" and first.loc[("gold", "16명"), "script"] == "Hangul+digits"
    table = slice_table(task, run.frames, next(s for s in task.facts.slices if s.key == "particle"))
    # independent count: entities in the official markup directly followed by 은, closing punctuation, then a space or the end
    text = Path(gold.source).read_text(encoding="utf-8")
    headers = re.findall(r"^## klue-ner\S*\t(.*)$", text, re.MULTILINE)
    by_hand = sum(len(re.findall(r":[A-Z]{2}>은(?=[.,!?\"')\]}”’…]*(?: |$))", h)) for h in headers)
    assert int(table.set_index("value").at["+은", "n"]) == 2 * by_hand  # gold and predicted rows of a perfect run


@pytest.mark.slow
def test_seen_in_training_counts_and_feeds_the_slice_table_and_the_finder(ner, tmp_path):
    task, gold, run = ner
    source = Path(gold.source).read_text(encoding="utf-8")
    blocks = source.split("\n\n")
    train = tmp_path / "klue-ner-v1.1_train.tsv"
    train.write_text("\n\n".join(blocks[:300]), encoding="utf-8")
    train_gold = load_gold(task, train)
    headers = re.findall(r"^## klue-ner\S*\t(.*)$", train.read_text(encoding="utf-8"), re.MULTILINE)
    times = sum(len(re.findall(r"<경찰:[A-Z]{2}>", h)) for h in headers)
    assert times >= 2
    frames, spec = with_training(task, run.frames, train_gold.rows)
    ents = frames.details["entities"]
    assert set(ents.loc[ents["text"] == "경찰", "seen_in_training"]) == {"seen 2-9 times" if times < 10 else "seen 10+ times"}
    table = slice_table(task, frames, spec)
    assert set(table["value"]) <= {"not in training", "seen once", "seen 2-9 times", "seen 10+ times"} and table["n"].sum() == len(ents)
    extra = training_features(task, run.frames, train_gold)
    assert len(extra) == len(ents)
    # A run that misses exactly the entities never seen in training: that slice comes first.
    unseen = set(ents.loc[(ents["side"] == "gold") & (ents["seen_in_training"] == "not in training"), "text"])
    records = []
    for row in gold.rows:
        tags = tag_list(row["tags"])
        k = 0
        while k < len(tags):
            if tags[k].startswith("B-"):
                end = k + 1
                while end < len(tags) and tags[end] == "I-" + tags[k][2:]:
                    end += 1
                if row["sentence"][k:end] in unseen:
                    tags[k:end] = ["O"] * (end - k)
                k = end
            else:
                k += 1
        records.append({"guid": row["guid"], "tags": tags})
    spoilt = evaluate_bytes(task, gold, jsonl(records), "spoilt.jsonl")
    found = weak_slices(task, spoilt.frames, extra=training_features(task, spoilt.frames, train_gold), top=1)
    assert found[0].conditions == {"seen_in_training": "not in training"}
    pred = tmp_path / "spoilt.jsonl"
    pred.write_bytes(jsonl(records))
    out = tmp_path / "slices.json"
    assert main(["slices", "--task", "ner", "--gold", gold.source, "--pred", str(pred), "--train", str(train), "--top", "1",
                 "--bootstrap", "0", "--out", str(out)]) == 0
    assert json.loads(out.read_text(encoding="utf-8"))["slices"][0]["conditions"] == {"seen_in_training": "not in training"}


@pytest.mark.slow
def test_a_training_folder_gives_its_train_file_not_the_dev_file(ner, tmp_path):
    """--train with a klue_benchmark/-like folder reads <task>_train (the dev file beside it is not training data)."""
    task, gold, run = ner
    blocks = Path(gold.source).read_text(encoding="utf-8").split("\n\n")
    folder = tmp_path / "klue_benchmark" / "klue-ner-v1.1"
    folder.mkdir(parents=True)
    (folder / "klue-ner-v1.1_dev.tsv").write_text("\n\n".join(blocks), encoding="utf-8")
    (folder / "klue-ner-v1.1_train.tsv").write_text("\n\n".join(blocks[:300]), encoding="utf-8")
    ents = run.frames.details["entities"]
    from_train = training_features(task, run.frames, load_gold(task, folder / "klue-ner-v1.1_train.tsv"))
    assert training_features(task, run.frames, load_training(task, tmp_path / "klue_benchmark")).equals(from_train)
    unseen = set(ents.loc[(from_train["seen_in_training"] == "not in training").to_numpy() & (ents["side"] == "gold").to_numpy(), "text"])
    assert unseen
    records = []  # a run that leaves out every entity never seen in the train file
    for row in gold.rows:
        tags, k = tag_list(row["tags"]), 0
        while k < len(tags):
            end = k + 1
            if tags[k].startswith("B-"):
                while end < len(tags) and tags[end] == "I-" + tags[k][2:]:
                    end += 1
                if row["sentence"][k:end] in unseen:
                    tags[k:end] = ["O"] * (end - k)
            k = end
        records.append({"guid": row["guid"], "tags": tags})
    pred = tmp_path / "run.jsonl"
    pred.write_bytes(jsonl(records))
    out = tmp_path / "slices.json"
    assert main(["slices", "--task", "ner", "--gold", str(tmp_path / "klue_benchmark"), "--pred", str(pred),
                 "--train", str(tmp_path / "klue_benchmark"), "--bootstrap", "0", "--top", "1", "--out", str(out)]) == 0
    assert json.loads(out.read_text(encoding="utf-8"))["slices"][0]["conditions"] == {"seen_in_training": "not in training"}


def test_a_training_folder_without_a_train_file_is_refused(tmp_path):
    folder = tmp_path / "klue-ner-v1.1"
    folder.mkdir()
    (folder / "klue-ner-v1.1_dev.tsv").write_text("## x\tx\nx\tO\n", encoding="utf-8")
    with pytest.raises(InputError, match="klue-ner-v1.1_train"):
        load_training(get_task("ner"), tmp_path)
