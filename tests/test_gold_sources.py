"""Gold from official files, klue_benchmark/ folders, Hugging Face exports and `datasets` itself."""

from __future__ import annotations

import json

import datasets
import pytest

from klue_viz.core.problems import InputError
from klue_viz.scoring.evaluate import evaluate_bytes, load_gold, load_hf
from klue_viz.tasks import TASKS, get_task
from klue_viz.tasks.ner import tag_list
from tests.conftest import jsonl


def test_every_task_finds_its_dev_file_in_a_benchmark_folder(shared):
    from klue_viz.reading.demo import DEMO_BENCHMARK

    for task in TASKS.values():
        assert len(load_gold(task, DEMO_BENCHMARK).frame) >= 18
    for name, n in {"ner": 5000, "dp": 2000, "nli": 3000, "sts": 519, "wos": 76}.items():
        assert len(load_gold(get_task(name), shared).frame) == n


def test_missing_gold_paths_are_one_line_errors(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        load_gold(get_task("nli"), tmp_path / "nope.json")
    with pytest.raises(InputError, match="klue-mrc-v1.1_dev.json"):
        load_gold(get_task("mrc"), tmp_path)


def ner_hf_records(shared):
    """The real NER dev set in the Hugging Face schema: markup, characters, integer tags, no guid."""
    gold = load_gold(get_task("ner"), shared / "klue-ner-v1.1" / "klue-ner-v1.1_dev.tsv")
    return gold, [{"sentence": r["sentence"], "tokens": list(r["sentence"]), "ner_tags": list(r["tags"])} for r in gold.rows]


def test_hf_ner_export_matches_official_guids_by_number(shared, tmp_path):
    official, records = ner_hf_records(shared)
    path = tmp_path / "ner-validation.jsonl"
    path.write_bytes(jsonl(records))
    gold = load_gold(get_task("ner"), path)
    assert gold.positional and gold.frame.loc[12, "guid"] == "klue-ner-v1_dev_00012"
    preds = [{"guid": r["guid"], "tags": tag_list(r["tags"])} for r in official.rows]  # official guids with source suffix
    result = evaluate_bytes(get_task("ner"), gold, jsonl(preds), "p.jsonl")
    assert result.coverage.n_scored == 5000 and result.scores.values["character_macro_f1"] == 100.0


def test_datasets_records_with_class_labels_load_through_the_real_code(shared):
    """A local stand-in for the hub: a `datasets.Dataset` with the klue/klue NLI features."""
    raw = json.loads((shared / "klue-nli-v1.1" / "klue-nli-v1.1_dev.json").read_text(encoding="utf-8"))[:60]
    features = datasets.Features({
        "guid": datasets.Value("string"), "source": datasets.Value("string"), "premise": datasets.Value("string"),
        "hypothesis": datasets.Value("string"), "label": datasets.ClassLabel(names=["entailment", "neutral", "contradiction"]),
    })
    table = [{"guid": r["guid"], "source": r["source"], "premise": r["premise"], "hypothesis": r["hypothesis"],
              "label": ["entailment", "neutral", "contradiction"].index(r["gold_label"])} for r in raw]
    dataset = datasets.Dataset.from_list(table, features=features)
    calls = []

    def loader(path, name, split):
        calls.append((path, name, split))
        return dataset

    gold = load_gold(get_task("nli"), "hf:validation", loader=loader)
    assert calls == [("klue/klue", "nli", "validation")]
    assert gold.frame["gold"].tolist() == [r["gold_label"] for r in raw]


def test_unreachable_hub_gives_one_actionable_line():
    with pytest.raises(InputError) as info:
        load_hf(get_task("ynat"))
    message = str(info.value)
    assert "klue/klue 'ynat'" in message and "ynat-v1.1_dev.json" in message and "\n" not in message


def test_hf_dp_and_re_exports(shared, tmp_path):
    dp = get_task("dp")
    official = load_gold(dp, shared / "klue-dp-v1.1" / "klue-dp-v1.1_dev.tsv")
    records = [{"sentence": r["sentence"], "index": list(range(1, r["n_words"] + 1)), "word_form": r["words"], "lemma": r["lemmas"],
                "pos": r["pos"], "head": r["heads"], "deprel": r["deprels"]} for r in official.rows[:50]]
    path = tmp_path / "dp.json"
    path.write_text(json.dumps(records, ensure_ascii=False), encoding="utf-8")
    gold = load_gold(dp, path)
    preds = [{"head": r["heads"], "deprel": r["deprels"]} for r in official.rows[:50]]  # keyless, in order
    assert evaluate_bytes(dp, gold, jsonl(preds), "p.jsonl").scores.values["las_micro_f1"] == 100.0


def test_broken_sentence_in_an_official_tsv_is_reported_and_the_rest_kept():
    from klue_viz.scoring.evaluate import gold_from_bytes

    tsv = ("## 칼럼명 : CHAR\tNE_TAG\n## klue-ner-v1_dev_00000-nsmc\t<철수:PS>\n철\tB-PS\n수\tI-PS\n\n"
           "## klue-ner-v1_dev_00001-nsmc\t좋다\n좋\tO\n다\tX-YY\n\n")
    gold = gold_from_bytes(get_task("ner"), tsv.encode("utf-8-sig").replace(b"\n", b"\r\n"), "ner.tsv")
    assert gold.frame["guid"].tolist() == ["klue-ner-v1_dev_00000-nsmc"]
    (problem,) = gold.problems
    assert problem.line == 8 and problem.guid == "klue-ner-v1_dev_00001-nsmc" and "X-YY" in problem.message
