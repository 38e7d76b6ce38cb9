"""Corrected gold: a planted correction changes every run's score and order by what a hand count says; exports read back."""

from __future__ import annotations

import json
from pathlib import Path

import datasets
import pytest
from markdown_it import MarkdownIt

from klue_viz.cli.main import main
from klue_viz.core.problems import InputError
from klue_viz.discovery.corrected import Correction, corrected_file, read_corrections
from klue_viz.discovery.corrected_gold import CorrectedGold, make_version
from klue_viz.discovery.hf_export import check_dataset_folder
from klue_viz.store.annotations import Annotation, Store
from klue_viz.store.gold_versions import GoldVersions
from klue_viz.tasks import get_task
from tests.cases import ner_tsv, nli
from tests.conftest import jsonl

E, N, C = "entailment", "neutral", "contradiction"
#: Pair 5's gold says contradiction; it is an entailment (the planted gold error).
GOLD = [E, N, C, E, N, C]
RUN_A = [E, N, C, N, N, E]  # right on 0, 1, 2, 4 = 4/6; after the fix also on 5 = 5/6
RUN_B = [E, N, C, E, C, C]  # right on 0, 1, 2, 3, 5 = 5/6; after the fix 5 is wrong = 4/6


@pytest.fixture
def files(tmp_path):
    gold = tmp_path / "klue-nli-v1.1_dev.json"
    gold.write_text(json.dumps(nli(GOLD), ensure_ascii=False), encoding="utf-8")
    paths = []
    for name, labels in (("run_a", RUN_A), ("run_b", RUN_B)):
        path = tmp_path / f"{name}.jsonl"
        path.write_bytes(jsonl({"guid": f"klue-nli-v1_dev_{k:05d}", "label": label} for k, label in enumerate(labels)))
        paths.append(path)
    corrections = tmp_path / "corrections.jsonl"
    corrections.write_text(json.dumps({"guid": "klue-nli-v1_dev_00005", "correction": E, "annotator": "kim", "note": "hypothesis follows"}) + "\n",
                           encoding="utf-8")
    return gold, paths, corrections


def test_a_planted_correction_changes_each_score_and_reorders_two_runs(files, tmp_path, capsys):
    gold, (a, b), corrections = files
    out = tmp_path / "out.json"
    assert main(["evaluate", "--task", "nli", "--gold", str(gold), "--pred", str(a), "--pred", str(b), "--corrections", str(corrections),
                 "--out", str(out)]) == 0
    written = json.loads(out.read_text(encoding="utf-8"))
    block = written["corrections"]
    assert block["records"] == 1 and block["changed"] == ["klue-nli-v1_dev_00005"]
    rows = {r["run"]: r for r in block["runs"]}
    assert rows["run_a"]["before"]["accuracy"] == pytest.approx(100 * 4 / 6)
    assert rows["run_a"]["after"]["accuracy"] == pytest.approx(100 * 5 / 6)
    assert rows["run_a"]["change"]["accuracy"] == pytest.approx(100 / 6)
    assert rows["run_b"]["change"]["accuracy"] == pytest.approx(-100 / 6)
    assert (rows["run_a"]["rank_before"], rows["run_b"]["rank_before"]) == (2, 1)
    assert (rows["run_a"]["rank_after"], rows["run_b"]["rank_after"]) == (1, 2)
    assert block["kendall_tau"] == pytest.approx(-1.0)
    # The runs of --out are scored on the corrected gold
    assert {r["run"]: r["metrics"]["accuracy"] for r in written["runs"]} == pytest.approx({"run_a": 100 * 5 / 6, "run_b": 100 * 4 / 6})
    printed = capsys.readouterr().out
    assert "run_a: accuracy 66.67 -> 83.33 (+16.67), rank 2 -> 1" in printed


def test_the_corrected_file_is_whole_and_only_the_corrected_record_differs(files):
    gold, _, _ = files
    task = get_task("nli")
    found = corrected_file(task, gold.read_text(encoding="utf-8"), gold.name, [Correction("klue-nli-v1_dev_00005", E)])
    before, after = json.loads(gold.read_text(encoding="utf-8")), json.loads(found.text)
    assert len(after) == len(before) == 6
    assert [r["gold_label"] for r in after] == GOLD[:5] + [E]
    assert after[:5] == before[:5] and {k: v for k, v in after[5].items() if k != "gold_label"} == {k: v for k, v in before[5].items() if k != "gold_label"}


def test_a_ner_correction_replaces_its_sentence_in_the_whole_tsv(tmp_path):
    task = get_task("ner")
    first = list(zip("서울에 간다", ["B-LC", "I-LC", "O", "O", "O", "O"]))
    second = list(zip("김씨가 왔다", ["B-PS", "I-PS", "O", "O", "O", "O"]))
    text = ner_tsv([("klue-ner-v1_dev_00000-nsmc", first), ("klue-ner-v1_dev_00001-nsmc", second)])
    found = corrected_file(task, text, "klue-ner-v1.1_dev.tsv", [Correction("klue-ner-v1_dev_00001-nsmc", "0-1:PS")])
    assert found.changed == ["klue-ner-v1_dev_00001-nsmc"]
    lines = found.text.split("\n")
    assert lines[:9] == text.split("\n")[:9]  # the header and the first sentence as they were
    assert "김\tB-PS" in lines and "씨\tO" in lines and "씨\tI-PS" not in lines


def test_gold_versions_are_kept_and_scored_by_name(files, tmp_path, capsys):
    gold, (a, b), _ = files
    task = get_task("nli")
    store = Store()
    store.save(Annotation("nli", "klue-nli-v1_dev_00005", "gold", "kim", gold_wrong=True, corrected_label=E, note="follows"))
    version = make_version(task, gold, store, store.find(task="nli"), created_by="kim")
    assert version.name.startswith("dev + corrections, 1 record, ") and version.records == 1
    assert [v.name for v in GoldVersions(Store()).for_task("nli")] == [version.name]
    out = tmp_path / "out.json"
    assert main(["evaluate", "--task", "nli", "--gold", str(gold), "--pred", str(a), "--gold-version", version.name, "--out", str(out)]) == 0
    assert json.loads(out.read_text(encoding="utf-8"))["runs"][0]["metrics"]["accuracy"] == pytest.approx(100 * 5 / 6)
    assert main(["evaluate", "--task", "nli", "--gold", str(gold), "--pred", str(a), "--gold-version", "nope"]) == 2
    assert "no NLI gold version named 'nope'" in capsys.readouterr().err


def test_export_writes_the_whole_file_and_a_dataset_that_reads_back(files, tmp_path):
    gold, _, corrections = files
    whole, folder = tmp_path / "corrected.json", tmp_path / "dataset"
    assert main(["gold", "export", "--task", "nli", "--gold", str(gold), "--corrections", str(corrections), "--file", str(whole),
                 "--dataset", str(folder)]) == 0
    assert [r["gold_label"] for r in json.loads(whole.read_text(encoding="utf-8"))] == GOLD[:5] + [E]
    split = datasets.load_from_disk(str(folder))["validation"]
    assert split.num_rows == 6 and split["gold_label"] == GOLD[:5] + [E] and split["corrected"] == [False] * 5 + [True]
    parquet = datasets.load_dataset("parquet", data_files=str(folder / "data" / "validation-00000-of-00001.parquet"), split="train")
    assert parquet["gold_label"] == split["gold_label"]
    card = (folder / "README.md").read_text(encoding="utf-8")
    assert "license: cc-by-sa-4.0" in card
    assert card_rows(card) == [["klue-nli-v1_dev_00005", "", "entailment", "kim", "hypothesis follows"]]


#: A hub renders a card as GitHub-flavoured Markdown with HTML allowed: CommonMark, tables and autolinks.
CARD = MarkdownIt("gfm-like", {"html": True})


def card_rows(card: str) -> list[list[str]]:
    """The rendered card's table rows (text of each cell) below the header, as a hub shows them."""
    tokens = CARD.parse(card.split("\n---\n", 1)[1])
    rows, row, inside = [], [], False
    for token in tokens:
        if token.type == "tbody_open":
            inside = True
        elif inside and token.type == "tr_open":
            row = []
        elif inside and token.type == "inline":
            row.append("".join(child.content for child in token.children or [] if child.type == "text").replace("\u2060", ""))
        elif inside and token.type == "tr_close":
            rows.append(row)
    return rows


def test_bad_corrections_files_name_the_line():
    with pytest.raises(InputError, match=r"c.jsonl, line 2: not a JSON object"):
        read_corrections(b'{"guid": "g", "correction": "x"}\nnot json\n', "c.jsonl")
    with pytest.raises(InputError, match=r"line 1, guid g: no 'correction'"):
        read_corrections(b'{"guid": "g"}\n', "c.jsonl")
    assert read_corrections(b'{"guid": "g", "run": "bert", "gold_wrong": true, "corrected_label": "x"}\n{"guid": "h", "correction": "y"}\n',
                            "c.jsonl") == [Correction("h", "y")]


def test_hf_gold_is_refused_for_corrections(files):
    _, _, corrections = files
    with pytest.raises(InputError, match="official file"):
        CorrectedGold.from_file(get_task("nli"), "hf", corrections)


def test_gold_export_never_overwrites_the_gold_or_an_existing_file_without_force(files, tmp_path, capsys):
    gold, _, corrections = files
    before = gold.read_bytes()
    export = ["gold", "export", "--task", "nli", "--gold", str(gold), "--corrections", str(corrections)]
    assert main([*export, "--file", str(gold)]) == 2
    assert "is the gold file this export reads" in capsys.readouterr().err and gold.read_bytes() == before
    assert main([*export, "--file", str(gold), "--force"]) == 2 and gold.read_bytes() == before  # not even with --force
    other = tmp_path / "kept.json"
    other.write_text("mine", encoding="utf-8")
    assert main([*export, "--file", str(other)]) == 2
    assert "already exists; add --force to replace it" in capsys.readouterr().err and other.read_text(encoding="utf-8") == "mine"
    assert main([*export, "--file", str(other), "--force"]) == 0
    assert [r["gold_label"] for r in json.loads(other.read_text(encoding="utf-8"))] == GOLD[:5] + [E]


@pytest.mark.parametrize("where", ["non-empty", "a file"])
def test_a_dataset_goes_only_into_a_new_or_empty_folder(files, tmp_path, capsys, where):
    gold, _, corrections = files
    target = {"non-empty": tmp_path, "a file": gold}[where]
    listing = sorted(p.name for p in target.iterdir()) if target.is_dir() else None
    whole = tmp_path / "whole.json"
    assert main(["gold", "export", "--task", "nli", "--gold", str(gold), "--corrections", str(corrections), "--file", str(whole),
                 "--dataset", str(target), "--force"]) == 2
    err = capsys.readouterr().err
    assert "a dataset is written only into a new or empty folder" in err and str(target) in err
    assert not whole.exists()  # refused before anything is written
    assert (sorted(p.name for p in target.iterdir()) if target.is_dir() else None) == listing


def test_the_root_folder_is_refused_before_anything_is_written():
    """`/` is checked by the function alone: a regression must not write a dataset into the machine's root."""
    with pytest.raises(InputError, match="a dataset is written only into a new or empty folder"):
        check_dataset_folder(Path(Path.cwd().anchor))


def test_a_dataset_goes_into_an_empty_folder(files, tmp_path):
    gold, _, corrections = files
    folder = tmp_path / "empty"
    folder.mkdir()
    assert main(["gold", "export", "--task", "nli", "--gold", str(gold), "--corrections", str(corrections), "--dataset", str(folder)]) == 0
    assert datasets.load_from_disk(str(folder))["validation"].num_rows == 6


def test_the_dataset_card_escapes_names_and_notes_and_lists_only_applied_corrections(files, tmp_path, capsys):
    gold, _, _ = files
    lines = [
        {"guid": "klue-nli-v1_dev_00005", "correction": E, "annotator": "<img src=https://t.example/p.png>",
         "note": "[see](https://evil.example) **now** ![x](https://t.example/y.png) | <script>alert(1)</script>"},
        {"guid": "klue-nli-v1_dev_00003", "correction": N, "annotator": "kim", "note": "neutral"},
        {"guid": "klue-nli-v1_dev_00003", "correction": C, "annotator": "lee", "note": "contradiction"},
        {"guid": "klue-nli-v1_dev_09999", "correction": N, "annotator": "kim"},
        {"guid": "klue-nli-v1_dev_00001", "correction": "maybe", "annotator": "kim"},
    ]
    corrections = tmp_path / "mixed.jsonl"
    corrections.write_bytes(jsonl(lines))
    folder = tmp_path / "dataset"
    assert main(["gold", "export", "--task", "nli", "--gold", str(gold), "--corrections", str(corrections), "--dataset", str(folder)]) == 0
    card = (folder / "README.md").read_text(encoding="utf-8")
    html = CARD.render(card)
    for markup in ("<img", "<script", "<a ", "<strong", "<em"):
        assert markup not in html, markup
    rows = card_rows(card)  # only the applied correction, its text as typed (a word joiner after "https:" keeps it unlinked)
    assert [(r[0], r[3], r[4]) for r in rows] == [("klue-nli-v1_dev_00005", lines[0]["annotator"], lines[0]["note"])]
    assert "with 1 record(s) corrected" in card
    assert "4 correction(s) were not applied" in card  # two conflicting, one unknown guid, one unreadable
    split = datasets.load_from_disk(str(folder))["validation"]
    assert split["gold_label"] == GOLD[:5] + [E]  # the conflict on 3 settled by nobody: the gold stays
    out = capsys.readouterr()
    said = out.out + out.err
    assert "klue-nli-v1_dev_00003: kim's correction neutral conflicts with lee's contradiction; neither is applied" in said
    assert "klue-nli-v1_dev_09999: not in the gold" in said
    assert "klue-nli-v1_dev_00001" in said and "maybe" in said
