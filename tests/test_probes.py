"""Korean behavioural test suites (klue_viz.probes, issue 30): the suites written from the real dev sets read back as
gold with no problem, every swapped name's particle follows the final-consonant rule (checked against the table of
/work/shared/docs/korean-probes.md, not the analyzer), every moved span holds its new text, perturbed guids never meet
real ones, and scoring reports exactly the failures planted in predictions."""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import zipfile
from collections.abc import Sequence
from pathlib import Path

import pytest
from scipy.stats import binomtest

from klue_viz.cli import probes as probes_cli
from klue_viz.cli.main import main
from klue_viz.core.problems import InputError
from klue_viz.probes import korean, make
from klue_viz.probes.catalogue import NAME_KINDS
from klue_viz.probes.make import make_suite, probe_guid, write_suite
from klue_viz.probes.score import (
    RunBehaviour,
    behaviour_table,
    probe_set_from_zip,
    read_manifest,
    read_probe_set,
    score_run,
    wilson,
)
from klue_viz.probes.score import (
    TestResult as ProbeResult,  # not Test...: pytest would try to collect it
)
from klue_viz.scoring.evaluate import load_gold
from klue_viz.tasks import get_task
from klue_viz.tasks.ner import tag_list
from klue_viz.tasks.probing import Edit, ProbeExample, Span, SpanCut, apply_edits

REPO = Path(__file__).resolve().parents[1]
NER_DEV = "klue-ner-v1.1/klue-ner-v1.1_dev.tsv"
NLI_DEV = "klue-nli-v1.1/klue-nli-v1.1_dev.json"
#: Every kind of name `--name-kinds` can ask for: the tests of name-swap's mechanics (particles, spans, the meaning and
#: title rules, WoS states) run on the opt-in suite too, which makes four times the cases of the people-only default.
ALL_KINDS = tuple(NAME_KINDS)

#: korean-probes.md's table: (form after a final consonant, form after none); 으로/로 takes 로 after ㄹ too.
PARTICLE_PAIRS = [("이", "가"), ("은", "는"), ("을", "를"), ("과", "와"), ("으로", "로"), ("이나", "나"), ("이랑", "랑"), ("이며", "며"), ("아", "야")]
PUNCTUATION = ".,!?\"')]}”’…"


def batchim(char: str) -> int:
    """The final consonant index of a Hangul syllable, by the arithmetic of the docs (0 none, 8 ㄹ)."""
    return (ord(char) - 0xAC00) % 28


def expected_particle(name: str, particle: str) -> str | None:
    """The form of `particle`'s pair that must follow `name`; None when `particle` is in no pair."""
    for with_final, without in PARTICLE_PAIRS:
        if particle in (with_final, without):
            final = batchim(name[-1])
            if with_final == "으로":
                return "으로" if final not in (0, 8) else "로"
            return with_final if final else without
    return None


def entities(sentence: str, tags: list[str]) -> list[tuple[int, int, str]]:
    """(start, end, type) of BIO tags, read here by a plain loop."""
    out, k = [], 0
    while k < len(tags):
        if tags[k].startswith("B-"):
            end = k + 1
            while end < len(tags) and tags[end] == "I-" + tags[k][2:]:
                end += 1
            out.append((k, end, tags[k][2:]))
            k = end
        else:
            k += 1
    return out


def read_ner_tsv(path: Path) -> dict[str, tuple[str, list[str]]]:
    """guid -> (sentence, tags) of an official NER TSV, read line by line here (not by the task)."""
    found: dict[str, tuple[str, list[str]]] = {}
    guid, chars, tags = None, [], []
    for line in path.read_text(encoding="utf-8").split("\n") + ["## end\tx"]:
        if line.startswith("## ") and "\t" in line and " " not in line[3:line.index("\t")]:
            if guid is not None:
                found[guid] = ("".join(chars), tags)
            guid, chars, tags = line[3:line.index("\t")], [], []
        elif guid is not None and line and not line.startswith("## "):
            chars.append(line[0])
            tags.append(line[2:])
    return found


def written_suite(folder: Path, task_name: str, dev: Path, relative: str, **options) -> tuple[Path, object]:
    """A suite made from a real dev file (seed 3) and written to `folder`, as `probe make` does: (folder, suite)."""
    task = get_task(task_name)
    suite = make_suite(task, dev.read_text(encoding="utf-8"), relative, seed=3, **options)
    write_suite(task, suite, folder)
    return folder, suite


@pytest.fixture(scope="module")
def ner_suite(tmp_path_factory, shared):
    return written_suite(tmp_path_factory.mktemp("ner-suite"), "ner", shared / NER_DEV, NER_DEV, per_test=300)


@pytest.fixture(scope="module")
def nli_suite(tmp_path_factory, shared):
    # the NER dev set beside it tells its proper nouns their kind, as `probe make` reads it from the data folder
    ner = (get_task("ner"), (shared / NER_DEV).read_text(encoding="utf-8"), NER_DEV)
    return written_suite(tmp_path_factory.mktemp("nli-suite"), "nli", shared / NLI_DEV, NLI_DEV, per_test=300, names_from=[ner])


@pytest.fixture(scope="module")
def ner_all_kinds_suite(tmp_path_factory, shared):
    return written_suite(tmp_path_factory.mktemp("ner-all-kinds"), "ner", shared / NER_DEV, NER_DEV, tests=["name-swap"], name_kinds=ALL_KINDS)


def manifest(folder: Path) -> list[dict]:
    return [json.loads(line) for line in (folder / "manifest.jsonl").read_text(encoding="utf-8").splitlines()]


# ---- making -----------------------------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("which", ["ner", "nli"])
def test_written_gold_reads_back_with_no_problem(which, ner_suite, nli_suite):
    folder, suite = ner_suite if which == "ner" else nli_suite
    task = get_task(which)
    name = "klue-ner-v1.1_dev.tsv" if which == "ner" else "klue-nli-v1.1_dev.json"
    for path in (folder / name, folder / "sources" / name):
        gold = load_gold(task, path)
        assert gold.problems == []
    assert len(load_gold(task, folder / name).rows) == len(manifest(folder)) == len(suite.cases)
    assert {line["test"] for line in manifest(folder)} == set(task.probe.tests)


@pytest.mark.slow
def test_every_swapped_name_takes_the_particle_its_final_consonant_wants(ner_suite, nli_suite, ner_all_kinds_suite):
    checked = 0
    for folder, name in ((ner_suite[0], "klue-ner-v1.1_dev.tsv"), (nli_suite[0], "klue-nli-v1.1_dev.json"),
                         (ner_all_kinds_suite[0], "klue-ner-v1.1_dev.tsv")):
        if name.endswith(".tsv"):
            texts = {g: {"sentence": s} for g, (s, _) in read_ner_tsv(folder / name).items()}
        else:
            texts = {r["guid"]: r for r in json.loads((folder / name).read_text(encoding="utf-8"))}
        for line in manifest(folder):
            if line["test"] != "name-swap":
                continue
            name = line["edits"][0]["before"]  # the first edit writes the new name; the others, that name again or a particle
            for edit in line["edits"]:
                if edit["before"] != name:
                    continue
                text = texts[line["guid"]][edit["field"]]
                new = text[edit["new_start"]:edit["new_end"]]
                assert new == edit["after"]
                rest = text[edit["new_end"]:].split(" ", 1)[0].rstrip(PUNCTUATION)
                want = expected_particle(new, rest)
                if want is not None:
                    assert rest == want, (line["guid"], new, rest)
                    checked += 1
    # the rule was applied to many particles, not to none: 20 + 3 on the people-only suites, 85 with every kind of name
    assert checked >= 50


@pytest.mark.slow
def test_every_moved_span_holds_its_new_text(ner_suite, shared):
    folder, _ = ner_suite
    perturbed = read_ner_tsv(folder / "klue-ner-v1.1_dev.tsv")
    sources = read_ner_tsv(shared / NER_DEV)
    for line in manifest(folder):
        sentence, tags = sources[line["source_guid"]]
        edits = sorted(line["edits"], key=lambda e: e["start"])
        expected_sentence, pos = "", 0
        for e in edits:
            expected_sentence += sentence[pos:e["start"]] + e["after"]
            pos = e["end"]
        expected_sentence += sentence[pos:]
        new_sentence, new_tags = perturbed[line["guid"]]
        assert new_sentence == expected_sentence
        expected = []
        for start, end, kind in entities(sentence, tags):
            text = sentence[start:end]
            for e in sorted(edits, key=lambda e: -e["start"]):  # edits inside the entity, right to left
                if start <= e["start"] and e["end"] <= end and not (e["start"] == e["end"] == end):
                    text = text[:e["start"] - start] + e["after"] + text[e["end"] - start:]
            expected.append((kind, text))
        assert [(kind, new_sentence[s:e]) for s, e, kind in entities(new_sentence, new_tags)] == expected, line["guid"]


@pytest.mark.slow
def test_perturbed_guids_never_collide_with_real_ones(ner_suite, nli_suite, shared):
    for folder, dev, task in ((ner_suite[0], NER_DEV, "ner"), (nli_suite[0], NLI_DEV, "nli")):
        real = {row["guid"] for row in load_gold(get_task(task), shared / dev).rows}
        guids = [line["guid"] for line in manifest(folder)]
        assert len(set(guids)) == len(guids)
        assert not set(guids) & real
        assert {line["source_guid"] for line in manifest(folder)} <= real
        for line in manifest(folder):
            assert line["guid"].replace(f"_{line['test']}~", "_", 1) == line["source_guid"]


def test_guid_scheme():
    assert probe_guid("klue-ner-v1", "klue-ner-v1_dev_00000-wikitree", "name-swap") == "klue-ner-v1_name-swap~dev_00000-wikitree"
    assert probe_guid("klue-nli-v1", "other-7", "typo") == "typo~other-7"


@pytest.mark.slow
def test_negation_cases_come_from_entailment_and_expect_otherwise(nli_suite, shared):
    folder, _ = nli_suite
    source = {r["guid"]: r for r in json.loads((shared / NLI_DEV).read_text(encoding="utf-8"))}
    written = {r["guid"]: r for r in json.loads((folder / "klue-nli-v1.1_dev.json").read_text(encoding="utf-8"))}
    lines = [line for line in manifest(folder) if line["test"] == "negation"]
    assert lines
    for line in lines:
        assert source[line["source_guid"]]["gold_label"] == "entailment"
        assert line["type"] == "DIR" and line["expect"] == "not:entailment"
        assert written[line["guid"]]["gold_label"] == "contradiction"
        after = line["edits"][0]["after"]
        assert any(word in after for word in ("않", "아니", "아닙", "아녜", "없")), after


# ---- the Korean edits, by hand --------------------------------------------------------------------

def test_typo_neighbours_follow_the_two_set_layout():
    # 가 = ㄱ + ㅏ; ㄱ sits between ㄷ and ㅅ, ㅏ between ㅓ and ㅣ (두벌식)
    assert sorted(korean.typo_syllables("가")) == sorted(["다", "사", "거", "기"])
    # 밥 = ㅂ + ㅏ + ㅂ: ㅂ has ㅈ on its right only; the final consonant stays
    assert sorted(korean.typo_syllables("밥")) == sorted(["잡", "법", "빕"])


@pytest.mark.slow
def test_particles_are_rechosen_after_a_swapped_name():
    text = "손흥민은 서울로 갔다."
    edits = korean.name_edits("s", text, 0, 3, "차두리", [])
    assert [(e.before, e.after) for e in edits] == [("손흥민", "차두리"), ("은", "는")]
    edits = korean.name_edits("s", "서울로 갔다.", 0, 2, "부산", [])
    assert [(e.before, e.after) for e in edits] == [("서울", "부산"), ("로", "으로")]
    # the analyzer reads 이 after a name as the suffix -이 (XSN): alone it is the subject particle, before one it goes
    edits = korean.name_edits("s", "식물 채집을 갔던 지영이 심장판막증으로 쓰러지고", 10, 12, "희수", [])
    assert [(e.before, e.after) for e in edits] == [("지영", "희수"), ("이", "가")]
    edits = korean.name_edits("s", "승연이가 왜 울어", 0, 2, "차두리", [])
    assert [(e.before, e.after) for e in edits] == [("승연", "차두리"), ("이가", "가")]
    edits = korean.name_edits("s", "초원이는 달리는 게 좋은 게 아니라", 0, 2, "다이", [])  # 이 read as JKS before 는
    assert [(e.before, e.after) for e in edits] == [("초원", "다이"), ("이는", "는")]


#: The Korean names of the Latin letters, from the brief of issue 30 (국립국어원's 외래어 표기 usage), written here apart
#: from klue_viz's own table so that the test reads the rewritten names independently.
LETTER_NAMES = dict(zip("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "에이 비 씨 디 이 에프 지 에이치 아이 제이 케이 엘 엠 엔 오 피 큐 알 에스 티 유 브이 더블유 엑스 와이 제트".split()))


def hangul_reading(name: str) -> str:
    """A name as it is read in Hangul: an initialism letter by letter, a Hangul name as written."""
    return "".join(LETTER_NAMES[c] for c in name) if name.isascii() else name


@pytest.mark.slow
def test_a_name_changes_script_letter_by_letter_and_keeps_the_particle_its_reading_takes():
    assert korean.script_counterpart("LG") == ("엘지", "엘지")
    assert korean.script_counterpart("KBS") == ("케이비에스", "케이비에스")
    assert korean.script_counterpart("엘지") == ("LG", "엘지")
    assert korean.script_counterpart("엠비시") == ("MBC", "엠비시")  # the dictionary's 시 for C is read back too
    for name, reason in (("FIFA", "read as a word"), ("Samsung", "not all in capitals"), ("2NE1", "digits"), ("A", "single Latin"),
                         ("LG전자", "mixing"), ("삼성", "not the letter names"), ("KOREAN", "more than five")):
        with pytest.raises(korean.Unmade, match=reason):
            korean.script_counterpart(name)
    cases = (("LG가 이겼다.", 0, 2, "엘지", [("LG", "엘지"), ("가", "가")]),
             ("엘지가 이겼다.", 0, 2, "LG", [("엘지", "LG"), ("가", "가")]),
             ("어제 KBS는 말했다.", 3, 6, "케이비에스", [("KBS", "케이비에스"), ("는", "는")]),
             ("UN는 결의했다.", 0, 2, "유엔", [("UN", "유엔"), ("는", "은")]),  # a writer's particle re-chosen for 유엔
             ("문화방송(엠비씨)이 보도했다.", 5, 8, "MBC", [("엠비씨", "MBC")]))  # after the bracket the particle follows 문화방송
    for text, start, end, new, expected in cases:
        reading = new if not new.isascii() else text[start:end]
        assert [(e.before, e.after) for e in korean.script_edits("s", text, start, end, new, reading, [])] == expected, text
    with pytest.raises(korean.Unmade, match="longer word"):
        korean.script_edits("s", "LG전자가 이겼다.", 0, 2, "엘지", "엘지", [])
    with pytest.raises(korean.Unmade, match="gloss in brackets"):  # 유엔식량계획(더블유에프피) glosses nothing
        korean.script_edits("s", "유엔식량계획(WFP)에 잠입했다.", 7, 10, "더블유에프피", "더블유에프피", [])


def ner_tsv(sentences: list[tuple[str, str, list[tuple[int, int, str]]]]) -> str:
    """The official NER TSV of (guid, sentence, entities as (start, end, type)), written here character by character."""
    lines = []
    for guid, sentence, spans in sentences:
        tags = ["O"] * len(sentence)
        for start, end, kind in spans:
            tags[start:end] = [f"B-{kind}"] + [f"I-{kind}"] * (end - start - 1)
        lines.append(f"## {guid}\t{sentence}")
        lines.extend(f"{char}\t{tag}" for char, tag in zip(sentence, tags))
        lines.append("")
    return "\n".join(lines) + "\n"


@pytest.mark.slow
def test_a_name_also_written_inside_a_longer_word_keeps_its_script():
    """YG엔터테인먼트와 양현석 YG 대표: rewriting the standalone YG as 와이지 would leave one company in both scripts in one
    sentence (two of 50 read cases did so), so the example is skipped with that reason; LG alone is still rewritten."""
    text = ner_tsv([("klue-ner-v1_dev_90001-wikitree", "YG엔터테인먼트와 양현석 YG 대표가 말했다.", [(0, 8, "OG"), (14, 16, "OG")]),
                    ("klue-ner-v1_dev_90002-wikitree", "LG가 이겼다.", [(0, 2, "OG")])])
    suite = make_suite(get_task("ner"), text, "klue-ner-v1.1_dev.tsv", tests=["name-script"])
    assert suite.made("name-script") == 1
    assert list(suite.skipped["name-script"]) == [korean.ALSO_IN_LONGER_WORD]


@pytest.mark.slow
def test_every_rewritten_script_keeps_its_entity_and_the_particle_of_its_reading(ner_suite, shared):
    folder, suite = ner_suite
    perturbed = read_ner_tsv(folder / "klue-ner-v1.1_dev.tsv")
    sources = read_ner_tsv(shared / NER_DEV)
    lines = [line for line in manifest(folder) if line["test"] == "name-script"]
    assert len(lines) >= 100
    checked = 0
    for line in lines:
        sentence, tags = perturbed[line["guid"]]
        source_sentence, source_tags = sources[line["source_guid"]]
        name, new = line["edits"][0]["before"], line["edits"][0]["after"]
        assert hangul_reading(name) == hangul_reading(new) and name.isascii() != new.isascii(), (name, new)
        assert new.isascii() or "".join(LETTER_NAMES[c] for c in name) == new
        kinds = {(s, e): kind for s, e, kind in entities(source_sentence, source_tags)}
        assert any(e["before"] == name and kinds.get((e["start"], e["end"])) in ("OG", "LC") for e in line["edits"])
        new_entities = {(s, e): kind for s, e, kind in entities(sentence, tags)}
        for edit in line["edits"]:
            if edit["before"] != name:
                continue
            assert sentence[edit["new_start"]:edit["new_end"]] == new
            if (edit["start"], edit["end"]) in kinds:
                assert new_entities[(edit["new_start"], edit["new_end"])] == kinds[(edit["start"], edit["end"])]
            rest = sentence[edit["new_end"]:].split(" ", 1)[0].rstrip(PUNCTUATION)
            want = expected_particle(hangul_reading(new), rest)
            if want is not None:
                assert rest == want, (line["guid"], new, rest)
                checked += 1
    assert checked >= 25  # particles were checked (31 on the real dev set), not none


@pytest.mark.slow
def test_re_name_script_moves_the_entity_it_rewrites(tmp_path):
    task = get_task("re")
    gold = DEMO / "klue-re-v1.1" / "klue-re-v1.1_dev.json"
    suite = make_suite(task, gold.read_text(encoding="utf-8"), gold.name, tests=["name-script"])
    write_suite(task, suite, tmp_path)
    written = json.loads((tmp_path / "klue-re-v1.1_dev.json").read_text(encoding="utf-8"))
    source = {r["guid"]: r for r in json.loads(gold.read_text(encoding="utf-8"))}
    assert written and len(written) == len(manifest(tmp_path))
    for record, line in zip(written, manifest(tmp_path)):
        before = source[line["source_guid"]]
        renamed = [k for k in ("subject_entity", "object_entity") if before[k]["word"] == line["edits"][0]["before"]]
        assert renamed
        for key in ("subject_entity", "object_entity"):
            entity = record[key]
            assert record["sentence"][entity["start_idx"]:entity["end_idx"] + 1] == entity["word"]
            assert entity["word"] == (line["edits"][0]["after"] if key in renamed else before[key]["word"])
        assert record["label"] == before["label"]


@pytest.mark.slow
def test_register_and_negation_of_a_final_predicate():
    edit, before, after = korean.register_edit("h", "나는 밥을 먹었다.", [])
    assert (before, after, edit.after) == ("한다체", "합니다체", "먹었습니다")
    edit, _, _ = korean.register_edit("h", "그는 학교에 갑니다.", [])
    assert edit.after == "가요"
    assert korean.negation_edit("h", "나는 밥을 먹었다.", []).after == "먹지 않았다"
    assert korean.negation_edit("h", "그것은 학생이다.", []).after == "학생이 아니다"
    with pytest.raises(korean.Unmade):
        korean.negation_edit("h", "나는 밥을 먹지 않았다.", [])


@pytest.mark.slow
def test_number_rewrites():
    assert korean.number_rewrites("3,000", "원") == ["3000", "3천"]
    assert korean.number_rewrites("3000", "명") == ["3,000", "3천"]
    assert korean.number_rewrites("12345", "") == ["12,345"]
    assert korean.number_rewrites("2021", "년") == []
    assert korean.number_rewrites("2015", "") == [] and korean.number_rewrites("20140919", "") == []  # a year, a date
    assert korean.number_rewrites("2310", "원") == ["2,310"]
    rng = random.Random(0)
    assert korean.number_edit("s", "8만 5600명과 1200명", [], rng).before == "1200"  # not the lower part of 8만 5600
    with pytest.raises(korean.Unmade):
        korean.number_edit("s", "문의 031-8060-2560", [], rng)
    with pytest.raises(korean.Unmade):
        korean.number_edit("s", "주소는 서울 중구 38345입니다.", [], rng)


def test_spans_move_stretch_or_block():
    example = ProbeExample("g", {"s": "가나 다라마 바사"}, (Span("s", 3, 6, "PS"), Span("s", 7, 9, "QT")))
    texts, spans, starts = apply_edits(example, [Edit("s", 2, 3, " ", ""), Edit("s", 7, 8, "바", "바바")])
    assert texts["s"] == "가나다라마 바바사"
    assert [(s.start, s.end) for s in spans] == [(2, 5), (6, 9)]
    assert [texts["s"][s.start:s.end] for s in spans] == ["다라마", "바바사"]
    assert starts == [2, 6]
    with pytest.raises(SpanCut):
        apply_edits(example, [Edit("s", 5, 7, "마 ", "")])


# ---- scoring ----------------------------------------------------------------------------------------

def ner_predictions(path: Path, out: Path) -> Path:
    rows = read_ner_tsv(path)
    out.write_text("".join(json.dumps({"guid": g, "tags": t}, ensure_ascii=False) + "\n" for g, (_, t) in rows.items()), encoding="utf-8")
    return out


@pytest.mark.slow
def test_gold_as_predictions_fails_no_invariance(ner_suite, nli_suite, tmp_path):
    folder, _ = ner_suite
    pred = ner_predictions(folder / "klue-ner-v1.1_dev.tsv", tmp_path / "p.jsonl")
    source = ner_predictions(folder / "sources" / "klue-ner-v1.1_dev.tsv", tmp_path / "s.jsonl")
    result = score_run(read_probe_set(get_task("ner"), folder), "gold", pred.read_bytes(), "p", source.read_bytes(), "s")
    assert [t.failures for t in result.tests] == [0] * len(result.tests)
    assert all(t.n > 0 and t.metric_source == t.metric_perturbed == 100.0 for t in result.tests)
    folder, _ = nli_suite
    records = json.loads((folder / "klue-nli-v1.1_dev.json").read_text(encoding="utf-8"))
    records += json.loads((folder / "sources" / "klue-nli-v1.1_dev.json").read_text(encoding="utf-8"))
    data = "".join(json.dumps({"guid": r["guid"], "label": r["gold_label"]}) + "\n" for r in records).encode()
    result = score_run(read_probe_set(get_task("nli"), folder), "gold", data, "p")
    assert {t.test: t.failures for t in result.tests} == dict.fromkeys(get_task("nli").probe.tests, 0)


@pytest.mark.slow
def test_a_planted_failure_is_reported_exactly_and_nowhere_else(nli_suite, ner_suite, tmp_path):
    folder, _ = nli_suite
    lines = manifest(folder)
    gold = {r["guid"]: r["gold_label"] for r in json.loads((folder / "klue-nli-v1.1_dev.json").read_text(encoding="utf-8"))}
    gold.update({r["guid"]: r["gold_label"] for r in json.loads((folder / "sources" / "klue-nli-v1.1_dev.json").read_text(encoding="utf-8"))})
    typo = [line["guid"] for line in lines if line["test"] == "typo"]
    planted = set(typo[::7])
    other = {"entailment": "neutral", "neutral": "contradiction", "contradiction": "entailment"}
    data = "".join(json.dumps({"guid": g, "label": other[label] if g in planted else label}) + "\n" for g, label in gold.items()).encode()
    rates = {t.test: (t.failures, t.n) for t in score_run(read_probe_set(get_task("nli"), folder), "planted", data, "p").tests}
    assert rates.pop("typo") == (len(planted), len(typo))
    assert all(failures == 0 for failures, _ in rates.values())
    # NER: a planted entity dropped from the perturbed prediction of every fifth spacing case
    folder, _ = ner_suite
    perturbed = read_ner_tsv(folder / "klue-ner-v1.1_dev.tsv")
    spacing = [line["guid"] for line in manifest(folder) if line["test"] == "spacing"]
    planted = {g for g in spacing[::5] if "B-" in "".join(perturbed[g][1])}
    records = []
    for guid, (_, tags) in perturbed.items():
        if guid in planted:
            tags = ["O"] * len(tags)
        records.append(json.dumps({"guid": guid, "tags": tags}, ensure_ascii=False))
    pred = tmp_path / "ner.jsonl"
    pred.write_text("\n".join(records) + "\n", encoding="utf-8")
    source = ner_predictions(folder / "sources" / "klue-ner-v1.1_dev.tsv", tmp_path / "s.jsonl")
    rates = {t.test: (t.failures, t.n) for t in score_run(read_probe_set(get_task("ner"), folder), "p", pred.read_bytes(), "p",
                                                           source.read_bytes(), "s").tests}
    assert rates.pop("spacing") == (len(planted), len(spacing))
    assert all(failures == 0 for failures, _ in rates.values())


def test_wilson_interval_matches_scipy():
    for failures, n in ((0, 10), (3, 40), (25, 25), (17, 300)):
        ci = binomtest(failures, n).proportion_ci(method="wilson")
        assert wilson(failures, n) == pytest.approx((ci.low, ci.high), abs=1e-9)
    assert wilson(0, 0) is None


def test_a_rate_is_written_with_its_cases_and_interval_in_the_table():
    def result(test: str, failures: int, n: int) -> ProbeResult:
        return ProbeResult(test, "INV", "names", n, failures, failures / n if n else None, 0, 0, wilson(failures, n), None, None)
    swap, spacing, unscored = result("name-swap", 0, 3), result("spacing", 3, 1000), result("typo", 0, 0)
    # the intervals as scipy's binomtest(...).proportion_ci(method="wilson") gives them, rounded by hand
    assert swap.rate_text() == "0.0% of 3 [0.0, 56.1]" and spacing.rate_text() == "0.3% of 1,000 [0.1, 0.9]"
    assert unscored.rate_text() == "n/a"
    table = behaviour_table([RunBehaviour("ckpt-100", [swap, spacing, unscored]), RunBehaviour("b", [result("spacing", 4, 44)])])
    assert table.splitlines() == [
        "run                   name-swap                   spacing  typo",
        "ckpt-100  0.0% of 3 [0.0, 56.1]  0.3% of 1,000 [0.1, 0.9]   n/a",
        "b                           n/a    9.1% of 44 [3.6, 21.2]   n/a",
    ]


@pytest.mark.slow
def test_cli_make_and_score(shared, tmp_path, capsys):
    out = tmp_path / "suite"
    assert main(["probe", "make", "--task", "nli", "--gold", str(shared / NLI_DEV), "--out", str(out), "--per-test", "20",
                 "--tests", "typo,negation", "--format", "lm-eval"]) == 0
    assert {line["test"] for line in manifest(out)} == {"typo", "negation"}
    yaml = (out / "lm_eval" / "klue_nli_probes.yaml").read_text(encoding="utf-8")
    assert "task: klue_nli_probes" in yaml and str((out / "lm_eval" / "nli_probes.jsonl").resolve()) in yaml
    docs = [json.loads(line) for line in (out / "lm_eval" / "nli_probes.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [d["guid"] for d in docs] == [line["guid"] for line in manifest(out)]
    records = json.loads((out / "klue-nli-v1.1_dev.json").read_text(encoding="utf-8"))
    pred = tmp_path / "p.jsonl"
    pred.write_text("".join(json.dumps({"guid": r["guid"], "label": "entailment"}) + "\n" for r in records), encoding="utf-8")
    dev = tmp_path / "dev.jsonl"
    dev.write_text("".join(json.dumps({"guid": r["guid"], "label": r["gold_label"]}) + "\n"
                           for r in json.loads((shared / NLI_DEV).read_text(encoding="utf-8"))), encoding="utf-8")
    report = tmp_path / "probe.json"
    assert main(["probe", "score", "--task", "nli", "--probes", str(out), "--pred", str(pred), "--source-pred", str(dev), "--out", str(report)]) == 0
    payload = json.loads(report.read_text(encoding="utf-8"))
    tests = {t["test"]: t for t in payload["runs"][0]["tests"]}
    # every perturbed case answered entailment: every negation case fails (DIR), typo cases fail where the source was not entailment
    assert tests["negation"]["failures"] == tests["negation"]["n"] == 20
    sources = {r["guid"]: r["gold_label"] for r in json.loads((shared / NLI_DEV).read_text(encoding="utf-8"))}
    assert tests["typo"]["failures"] == sum(sources[line["source_guid"]] != "entailment" for line in manifest(out) if line["test"] == "typo")
    assert main(["probe", "score", "--task", "nli", "--probes", str(tmp_path), "--pred", str(pred)]) == 2
    assert "manifest.jsonl" in capsys.readouterr().err


@pytest.mark.slow
def test_evaluate_never_loads_the_analyzer(shared, tmp_path):
    pred = tmp_path / "p.jsonl"
    pred.write_text(json.dumps({"guid": "klue-nli-v1_dev_00000", "label": "neutral"}) + "\n", encoding="utf-8")
    code = ("import sys; from klue_viz.cli.main import main; "
            f"main(['evaluate', '--task', 'nli', '--gold', {str(shared / NLI_DEV)!r}, '--pred', {str(pred)!r}]); "
            "print('kiwipiepy' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=True)
    assert done.stdout.strip().splitlines()[-1] == "False"


# ---- every task ---------------------------------------------------------------------------------------

DEMO = REPO / "klue_viz" / "demo" / "klue_benchmark"
#: Each task's dev file here: the real KLUE dev set where there is one, else the demo.
DEV_FILES = {"ner": ("shared", NER_DEV), "nli": ("shared", NLI_DEV), "sts": ("shared", "klue-sts-v1.1/klue-sts-v1.1_dev.json"),
             "dp": ("shared", "klue-dp-v1.1/klue-dp-v1.1_dev.tsv"), "wos": ("shared", "wos-v1.1/wos-v1.1_dev_sample_10.json"),
             "ynat": ("demo", "ynat-v1.1/ynat-v1.1_dev.json"), "re": ("demo", "klue-re-v1.1/klue-re-v1.1_dev.json"),
             "mrc": ("demo", "klue-mrc-v1.1/klue-mrc-v1.1_dev.json")}


def gold_records(task_name: str, path: Path) -> list[dict]:
    """Prediction records equal to the gold of a file, in each task's prediction format (docs/prediction-formats.md)."""
    task = get_task(task_name)
    rows = load_gold(task, path).rows
    make = {
        "ner": lambda r: {"guid": r["guid"], "tags": tag_list(r["tags"])},
        "nli": lambda r: {"guid": r["guid"], "label": r["gold"]}, "ynat": lambda r: {"guid": r["guid"], "label": r["gold"]},
        "re": lambda r: {"guid": r["guid"], "label": r["gold"]}, "sts": lambda r: {"guid": r["guid"], "score": r["gold"]},
        "dp": lambda r: {"guid": r["guid"], "head": r["heads"], "deprel": r["deprels"]},
        "mrc": lambda r: {"guid": r["guid"], "answer": (r["answers"] or [""])[0]},
        "wos": lambda r: {"guid": r["dialogue"], "turn": r["turn"], "state": r["gold_state"]},
    }[task_name]
    return [make(r) for r in rows]


def suite_for(task_name: str, shared: Path, out: Path, per_test: int | None = 40, name_kinds: Sequence[str] = ("people",)):
    where, rel = DEV_FILES[task_name]
    path = (shared if where == "shared" else DEMO) / rel
    task = get_task(task_name)
    suite = make_suite(task, path.read_text(encoding="utf-8"), rel, per_test=per_test, seed=1, name_kinds=name_kinds)
    write_suite(task, suite, out)
    return task, suite


@pytest.mark.slow
@pytest.mark.parametrize("task_name", sorted(DEV_FILES))
def test_every_task_writes_gold_that_reads_back_and_gold_predictions_keep_every_invariance(task_name, shared, tmp_path):
    task, suite = suite_for(task_name, shared, tmp_path / "suite")
    name = task.probe.file_name
    perturbed, sources = tmp_path / "suite" / name, tmp_path / "suite" / "sources" / name
    assert load_gold(task, perturbed).problems == [] and load_gold(task, sources).problems == []
    assert suite.cases, "no case made"
    records = gold_records(task_name, perturbed) + gold_records(task_name, sources)
    data = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records).encode()
    result = score_run(read_probe_set(task, tmp_path / "suite"), "gold", data, "gold.jsonl")
    assert sum(t.n for t in result.tests) == len(suite.cases)
    assert [(t.test, t.failures) for t in result.tests if t.type == "INV"] == [(t.test, 0) for t in result.tests if t.type == "INV"]


@pytest.mark.slow
def test_a_run_file_problem_is_said_once_and_a_stray_guid_is_counted(shared, tmp_path):
    task, _ = suite_for("ynat", shared, tmp_path / "suite")
    name = task.probe.file_name
    records = gold_records("ynat", tmp_path / "suite" / name) + gold_records("ynat", tmp_path / "suite" / "sources" / name)
    lines = [json.dumps(r, ensure_ascii=False) for r in records]
    one_file = "\n".join(lines + ['{"guid": "stray-1", "label": "사회"}', "{broken"]).encode()
    suite = read_probe_set(task, tmp_path / "suite")
    said = [str(p) for p in score_run(suite, "run", one_file, "run.jsonl").problems]
    assert said == [f"run.jsonl, line {len(lines) + 2}: invalid JSON: Expecting property name enclosed in double quotes (column 2)",
                    "run.jsonl: 1 guid(s) in neither the suite's perturbed nor its source examples were ignored: stray-1"]
    # two files: the perturbed file's source guids are not strays; each file's own strays are named with its name
    perturbed_file = "\n".join(lines + ['{"guid": "stray-2", "label": "사회"}']).encode()
    strays = [json.dumps({"guid": f"stray-{k}", "label": "사회"}) for k in range(3, 9)]
    source_file = "\n".join(lines[len(lines) // 2:] + strays[:2]).encode()
    said = [str(p) for p in score_run(suite, "run", perturbed_file, "p.jsonl", source_file, "dev.jsonl").problems]
    assert said == ["p.jsonl: 1 guid(s) in neither the suite's perturbed nor its source examples were ignored: stray-2",
                    "dev.jsonl: 2 guid(s) in neither the suite's perturbed nor its source examples were ignored: stray-3, stray-4"]
    # five strays are all named; a sixth is said as "..."
    said = [str(p) for p in score_run(suite, "run", "\n".join(lines + strays[:5]).encode(), "five.jsonl").problems]
    assert said == ["five.jsonl: 5 guid(s) in neither the suite's perturbed nor its source examples were ignored: "
                    "stray-3, stray-4, stray-5, stray-6, stray-7"]
    said = [str(p) for p in score_run(suite, "run", "\n".join(lines + strays).encode(), "six.jsonl").problems]
    assert said == ["six.jsonl: 6 guid(s) in neither the suite's perturbed nor its source examples were ignored: "
                    "stray-3, stray-4, stray-5, stray-6, stray-7, ..."]


@pytest.mark.slow
def test_cases_whose_examples_left_the_gold_files_are_left_out_and_counted(shared, tmp_path):
    task, _ = suite_for("ynat", shared, tmp_path / "suite")
    folder = tmp_path / "suite"
    perturbed_path = folder / task.probe.file_name
    perturbed = json.loads(perturbed_path.read_text(encoding="utf-8"))
    cut = {r["guid"] for r in perturbed[::4]}  # a quarter of the perturbed examples removed by hand, one record broken
    broken = perturbed[1]["guid"]
    kept = [r for r in perturbed if r["guid"] not in cut]
    kept[0] = {k: v for k, v in kept[0].items() if k != "title"}
    perturbed_path.write_text(json.dumps(kept, ensure_ascii=False), encoding="utf-8")
    cases = manifest(folder)
    gone = [c["guid"] for c in cases if c["guid"] in cut or c["guid"] == broken]
    suite = read_probe_set(task, folder)
    assert [c["guid"] for c in suite.manifest] == [c["guid"] for c in cases if c["guid"] not in gone]
    said = [str(p) for p in suite.problems]
    assert said[0] == f"{folder}/{task.probe.file_name}, guid {broken}: gold record #1: missing field 'title'"
    assert len(gone) > 3 and said[1] == (f"{folder}/manifest.jsonl: {len(gone)} of {len(cases)} cases left out: their perturbed "
                                         f"example or their source is not in the suite's gold files (e.g. {', '.join(gone[:3])}, ...); "
                                         "was a file of the folder changed after `probe make`?")
    assert len(said) == 2
    records = gold_records("ynat", perturbed_path) + gold_records("ynat", folder / "sources" / task.probe.file_name)
    data = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records).encode()
    result = score_run(suite, "gold", data, "gold.jsonl")
    assert sum(t.n for t in result.tests) == len(cases) - len(gone) and sum(t.unpredicted for t in result.tests) == 0


@pytest.mark.slow
def test_wos_name_swap_rewrites_the_state_alike(shared, tmp_path):
    # WoS's slot values are places (hotels, restaurants): swapped only when places are asked for
    default = suite_for("wos", shared, tmp_path / "default", per_test=None)[1]
    assert default.made("name-swap") == 0 and make.SLOT_NOT_CHOSEN in default.skipped["name-swap"]
    task, suite = suite_for("wos", shared, tmp_path / "suite", per_test=None, name_kinds=ALL_KINDS)
    written = {d["guid"]: d for d in json.loads((tmp_path / "suite" / "wos-v1.1_dev.json").read_text(encoding="utf-8"))}
    source = {d["guid"]: d for d in json.loads((shared / DEV_FILES["wos"][1]).read_text(encoding="utf-8"))}
    swaps = [line for line in manifest(tmp_path / "suite") if line["test"] == "name-swap"]
    assert swaps
    for line in swaps:
        old, new = line["edits"][0]["before"], line["edits"][0]["after"]
        before = [item for turn in source[line["source_guid"]]["dialogue"] for item in turn.get("state", [])]
        after = [item for turn in written[line["guid"]]["dialogue"] for item in turn.get("state", [])]
        assert any(item.endswith("-" + old) for item in before)
        assert after == [item[:-len(old)] + new if item.endswith("-" + old) else item for item in before]
        assert not any(old in turn["text"] for turn in written[line["guid"]]["dialogue"])


@pytest.mark.slow
def test_a_distractor_shares_the_question_but_not_the_answer(tmp_path):
    task = get_task("mrc")
    documents = [
        {"title": "a", "source": "t", "paragraphs": [{"context": "환경부는 올해 전기차 충전기 3천 기를 설치한다. 설치 지역은 수도권이 우선이다.",
                                                    "qas": [{"question": "환경부가 올해 설치하는 전기차 충전기는 몇 기인가?", "guid": "klue-mrc-v1_dev_00001",
                                                             "answers": [{"text": "3천 기", "answer_start": 16}], "is_impossible": False}]}]},
        {"title": "b", "source": "t", "paragraphs": [{"context": "국토부는 작년 전기차 충전기 500기를 고속도로에 설치했다. 환경부는 예산을 늘린다.",
                                                    "qas": [{"question": "국토부는 어디에 설치했나?", "guid": "klue-mrc-v1_dev_00002",
                                                             "answers": [{"text": "고속도로", "answer_start": 22}], "is_impossible": False}]}]},
    ]
    text = json.dumps({"version": "v1.1", "data": documents}, ensure_ascii=False)
    suite = make_suite(task, text, "mrc.json", tests=["distractor"])
    made = {case.source.guid: case for case in suite.cases}
    first = made["klue-mrc-v1_dev_00001"]
    assert first.example.texts["context"] == documents[0]["paragraphs"][0]["context"] + " 국토부는 작년 전기차 충전기 500기를 고속도로에 설치했다."
    assert first.example.record["qa"]["answers"] == [{"text": "3천 기", "answer_start": 16}]


@pytest.mark.slow
def test_gate_fails_when_a_behaviour_regresses_and_only_then(nli_suite, shared, tmp_path):
    folder, _ = nli_suite
    dev = [{"guid": r["guid"], "label": r["gold_label"]} for r in json.loads((shared / NLI_DEV).read_text(encoding="utf-8"))]
    perturbed = {r["guid"]: r["gold_label"] for r in json.loads((folder / "klue-nli-v1.1_dev.json").read_text(encoding="utf-8"))}
    typo = [line["guid"] for line in manifest(folder) if line["test"] == "typo"]
    flip = {"entailment": "neutral", "neutral": "contradiction", "contradiction": "entailment"}

    def run(name: str, broken: set[str]) -> Path:
        path = tmp_path / f"{name}.jsonl"
        records = dev + [{"guid": g, "label": flip[label] if g in broken else label} for g, label in perturbed.items()]
        path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
        return path

    baseline, same, worse = run("baseline", set()), run("same", set()), run("worse", set(typo[: len(typo) * 2 // 5]))
    common = ["gate", "--task", "nli", "--gold", str(shared / NLI_DEV), "--probes", str(folder), "--bootstrap", "200", "--baseline", str(baseline)]
    out = tmp_path / "gate.json"
    assert main(common + ["--candidate", str(same), "--out", str(out)]) == 0
    assert json.loads(out.read_text())["verdict"] == "pass"
    assert main(common + ["--candidate", str(worse), "--out", str(out)]) == 1
    regressions = json.loads(out.read_text())["regressions"]
    assert [(r["slice"], r["metric"]) for r in regressions] == [({"behaviour": "typo"}, "pass rate")]
    assert regressions[0]["baseline"] == 100.0
    assert regressions[0]["candidate"] == pytest.approx(100 * (1 - (len(typo) * 2 // 5) / len(typo)))


@pytest.mark.slow
def test_report_gets_the_behaviour_table(tmp_path):
    task = get_task("nli")
    gold = DEMO / "klue-nli-v1.1" / "klue-nli-v1.1_dev.json"
    suite = make_suite(task, gold.read_text(encoding="utf-8"), gold.name, tests=["typo", "register"], seed=4)
    write_suite(task, suite, tmp_path / "suite")
    typo = [c for c in suite.cases if c.test == "typo"]
    flip = {"entailment": "neutral", "neutral": "contradiction", "contradiction": "entailment"}
    records = [{"guid": r["guid"], "label": r["gold_label"]} for r in json.loads(gold.read_text(encoding="utf-8"))]
    records += [{"guid": c.example.guid, "label": flip[c.example.label] if c is typo[0] else c.example.label} for c in suite.cases]
    pred = tmp_path / "run.jsonl"
    pred.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    out = tmp_path / "report.html"
    assert main(["report", "--task", "nli", "--gold", str(gold), "--pred", str(pred), "--out", str(out), "--bootstrap", "20",
                 "--probes", str(tmp_path / "suite")]) == 0
    html = out.read_text(encoding="utf-8")
    assert "<h2>Behaviour</h2>" in html
    assert f"data-test='typo' data-run='run'>{100 / len(typo):.1f}% <small>of {len(typo)} " in html
    assert f"data-test='register' data-run='run'>0.0% <small>of {sum(c.test == 'register' for c in suite.cases)} " in html


def test_a_bad_suite_is_named_not_a_traceback(tmp_path):
    task = get_task("nli")
    with pytest.raises(InputError, match="bad.zip: not a zip file"):
        probe_set_from_zip(task, b"not a zip", "bad.zip")
    with zipfile.ZipFile(tmp_path / "empty.zip", "w") as out:
        out.writestr("suite/README.md", "nothing")
    with pytest.raises(InputError, match="no manifest.jsonl in the zip"):
        probe_set_from_zip(task, (tmp_path / "empty.zip").read_bytes(), "empty.zip")
    with pytest.raises(InputError, match=r"m.jsonl: line 2 is not JSON"):
        read_manifest('{"guid": "a", "source_guid": "b", "test": "typo", "type": "INV"}\n{oops\n', "m.jsonl")
    with pytest.raises(InputError, match=r"line 1: unknown test 'shout'"):
        read_manifest('{"guid": "a", "source_guid": "b", "test": "shout", "type": "INV"}\n', "m.jsonl")
    (tmp_path / "half").mkdir()
    (tmp_path / "half" / "manifest.jsonl").write_text("", encoding="utf-8")
    with pytest.raises(InputError, match=r"no klue-nli-v1.1_dev.json \(perturbed\)"):
        read_probe_set(task, tmp_path / "half")


@pytest.mark.slow
def test_a_swapped_name_is_near_the_old_one_in_meaning():
    # judged by hand: a country for a country, a district for a district; never a city of another world, a district for
    # a country, an institution for a bank, nor a name the analyzer does not know (its one unknown-noun embedding)
    pool = korean.NamePool(["프랑스", "이탈리아", "쿠이아바", "서초구", "송파구", "대구", "하나금융", "갓하균", "굽네치킨", "일본", "독일"])
    near_spain = pool.nearest("스페인")  # 스페인 ends in ㄴ: only names without a final consonant may follow it
    assert near_spain and set(near_spain) <= {"프랑스", "이탈리아"}
    assert pool.nearest("부산") == ["대구"]  # a city for a city; not 서초구 or 송파구 (districts), nor 쿠이아바
    assert pool.nearest("국회") == []  # nothing of the pool is near it: 하나금융 is a bank, 일본 a country
    assert korean.name_morpheme("갓하균") is None and korean.name_morpheme("굽네치킨") is None
    assert korean.name_morpheme("송중기") is None  # known, but too rarely seen for its embedding to place it
    assert korean.name_morpheme("서초구") is not None


@pytest.mark.slow
def test_ner_name_swaps_stay_of_the_same_kind_on_the_dev_set(shared):
    # every swap of the dev set: old and new name are each one noun of the analyzer's dictionary, and its embedding
    # (asked here directly of kiwipiepy) puts them at cosine 0.73 or more; before, any name of the type was drawn
    # (미국 -> 쿠이아바, 국회 -> 하나금융, and unknown words such as 갓하균, docs/probes-validity/)
    kiwi = korean.kiwipiepy.Kiwi()
    suite = make_suite(get_task("ner"), (shared / NER_DEV).read_text(encoding="utf-8"), NER_DEV, tests=["name-swap"], seed=7,
                       name_kinds=ALL_KINDS)
    assert len(suite.cases) > 100
    for case in suite.cases:
        old, new = (kiwi.tokenize(case.edits[0][key]) for key in ("before", "after"))
        assert len(old) == len(new) == 1 and kiwi.morpheme(new[0].id).form == new[0].form, case.edits[0]
        assert kiwi.morpheme_similarity(old[0].id, new[0].id) >= 0.73, case.edits[0]


@pytest.mark.slow
def test_a_particle_after_a_bracket_belongs_to_the_word_before_it():
    # 에덴 아자르(첼시)가: the particle agrees with 아자르, outside the brackets, so a name swapped inside them keeps it
    text = "에덴 아자르(첼시)가 정면으로 치고 들어갔다."
    edits = korean.name_edits("s", text, 7, 9, "리버풀", [])
    assert [(e.before, e.after) for e in edits if e.before != e.after] == [("첼시", "리버풀")]


@pytest.mark.slow
def test_a_swapped_name_is_one_the_data_says_of_the_same_title(shared):
    # 케리 장관 -> 유승준 장관 (a singer) and 올랑드 대통령 -> 미경 대통령 were read as unnatural: a name written right before
    # a common noun (a title, 여사, 감독) is replaced only by one the dev set also writes before that noun (checked here
    # on the raw sentences, the noun found by kiwipiepy directly)
    kiwi = korean.kiwipiepy.Kiwi()
    sentences = [sentence for sentence, _ in read_ner_tsv(shared / NER_DEV).values()]
    suite = make_suite(get_task("ner"), (shared / NER_DEV).read_text(encoding="utf-8"), NER_DEV, tests=["name-swap"], seed=11,
                       name_kinds=ALL_KINDS)
    checked = 0
    for case in suite.cases:
        text, edit = case.source.texts["sentence"], case.edits[0]
        if text[edit["end"]:edit["end"] + 1] != " ":
            continue
        following = kiwi.tokenize(text[edit["end"] + 1:].split(" ")[0])
        if following and following[0].tag == "NNG" and following[0].start == 0:
            checked += 1
            assert any(f"{edit['after']} {following[0].form}" in s for s in sentences), (edit, following[0].form)
    assert checked >= 2  # few swapped names stand before a title (fewer since the language-model fit); the rule holds for each
    assert korean.head_noun_after("케리 장관은 말했다.", 2) == "장관"
    assert korean.head_noun_after("케리는 말했다.", 2) is None


@pytest.mark.slow
def test_negation_leaves_obligations_and_conjectures_alone():
    # read as unnatural in the NLI negation sample: 내야 한다 -> 내야 하지 않는다, 찬성할 것이다 -> 찬성할 것이 아니다
    for sentence in ("보험료를 1년이상 내야 한다.", "청소비를 지불해야합니다.", "수신료 인상에 찬성할 것이다."):
        with pytest.raises(korean.Unmade):
            korean.negation_edit("h", sentence, [])
    assert korean.negation_edit("h", "경찰청 시설을 이전할 예정이었다.", []).after == "예정이 아니었다"


@pytest.mark.slow
def test_the_polite_copula_is_yeyo_after_a_vowel():
    # read in the STS register sample: 숙소입니다 -> 숙소에요 and 위해서입니다 -> 위해서에요 (standard: 예요 after a vowel)
    assert korean.register_edit("s", "흠 잡을 곳이 없는 숙소입니다.", [])[0].after == "숙소예요"
    assert korean.register_edit("s", "건강권을 보호하기 위해서입니다.", [])[0].after == "위해서예요"
    assert korean.register_edit("s", "매우 아름다운 집입니다.", [])[0].after == "집이에요"


@pytest.mark.slow
def test_a_regnal_number_binds_the_name_before_it():
    # read as unnatural in the NLI sample (seed 17): 헨리 7세 -> 제인 7세. The number's noun is what the name is said of,
    # so a new name must be one the data also writes before a regnal number, like a title
    text = "장미 전쟁은 리처드 3세가 전투 중 사망하여 막을 내렸고 헨리 7세가 튜더 왕조 시대를 열었다."
    assert korean.head_noun_after(text, text.index("헨리") + 2) == "세"
    assert korean.head_noun_after(text, text.index("리처드") + 3) == "세"
    assert korean.head_noun_after("헨리가 7세를 낳았다.", 2) is None  # a particle ends the name's word: nothing binds it


@pytest.mark.slow
def test_a_name_beside_another_proper_noun_is_half_of_one_name():
    # read as unnatural (NLI seed 17): 제인 윌킨슨 -> 헨리 윌킨슨, a man's given name for an actress's
    text = "미모의 배우 제인 윌킨슨으로부터 이혼에 동의해주지 않는 남편 에지웨어 경을 설득해 달라는 부탁을 받은 푸아로는 에지웨어 경을 찾아간다."
    at = text.index("제인")
    assert korean.name_part_beside(text, at, at + 2) == (text.index("윌킨슨"), text.index("윌킨슨") + 3)
    example = ProbeExample("g", {"premise": text, "hypothesis": "제인 윌킨슨은 남편 에지웨어 경으로부터 이혼을 원한다."}, (), "entailment", {})
    with pytest.raises(korean.Unmade, match="part of a longer name"):
        make._fitting_swap(example, ("premise", "hypothesis"), "제인", ["헨리"], random.Random(0))
    # a name with a particle, or beside a common noun, stands alone
    alone = "1997년 작고한 다이애나비는 두 아들인 윌리엄과 해리 왕자에게 유산을 남겼다."
    assert korean.name_part_beside(alone, alone.index("윌리엄"), alone.index("윌리엄") + 3) is None
    # in NER the proper noun beside it may be a gold entity of its own (민주통합당 문희상): then the name stands alone
    party = "민주통합당 문희상 비상대책위원장이 의원총회에서 발언했다."
    spans = (Span("sentence", 0, 5, "OG"), Span("sentence", 6, 9, "PS"))
    swapped = make._fitting_swap(ProbeExample("g", {"sentence": party}, spans, None, {}), ("sentence",), "민주통합당", ["더민주"], random.Random(0))
    assert [e.after for e in swapped][0] == "더민주"


@pytest.mark.slow
def test_a_swap_the_language_model_finds_out_of_place_is_not_made():
    # 헨리 7세 -> 제인 7세 (read as unnatural): the analyzer's model finds the sentences far less likely with 제인 than the
    # names alone explain; 영국 -> 프랑스 in a sentence either fits (read as natural) is made
    king = ProbeExample("g", {"premise": "장미 전쟁은 리처드 3세가 전투 중 사망하여 막을 내렸고 헨리 7세가 튜더 왕조 시대를 열었다.",
                              "hypothesis": "헨리 7세는 리처드 3세의 아들이다."}, (), "neutral", {})
    with pytest.raises(korean.Unmade, match="fits the sentence much less well"):
        make._fitting_swap(king, ("premise", "hypothesis"), "헨리", ["제인"], random.Random(0))
    before, after = (f"{name}에서 선거 결과에 따라 연립내각이 출범한 것은 역사상 처음 있는 일이었다." for name in ("영국", "프랑스"))
    assert korean.context_fit(before, after, "영국", "프랑스") >= korean.FITS_CONTEXT
    fit = korean.context_fit(king.texts["premise"], king.texts["premise"].replace("헨리", "제인"), "헨리", "제인")
    assert fit < korean.FITS_CONTEXT, fit


@pytest.mark.slow
def test_re_name_swap_draws_names_from_the_ner_gold_beside_it(shared, tmp_path, capsys):
    # the RE demo's 28 sentences hold too few names for any two to be near in meaning; the real NER dev set's gold names
    # (given with --names) give swaps of the same kind: a person for a person (PER <- PS), a city for a city
    demo = REPO / "klue_viz" / "demo" / "klue_benchmark"
    main(["probe", "make", "--task", "re", "--gold", str(demo), "--out", str(tmp_path / "alone"), "--tests", "name-swap"])
    assert manifest(tmp_path / "alone") == []
    main(["probe", "make", "--task", "re", "--gold", str(demo), "--out", str(tmp_path / "suite"), "--tests", "name-swap",
          "--names", str(shared)])
    lines = manifest(tmp_path / "suite")
    assert len(lines) >= 5
    # people only by default; with every kind, a city (런던 -> 파리) and a company (네이버 -> 구글) as well
    main(["probe", "make", "--task", "re", "--gold", str(demo), "--out", str(tmp_path / "every"), "--tests", "name-swap",
          "--names", str(shared), "--name-kinds", "people,places,organisations"])
    every = {line["edits"][0]["before"] for line in manifest(tmp_path / "every")}
    assert {line["edits"][0]["before"] for line in lines} < every and {"런던", "네이버"} <= every
    written = {r["guid"]: r for r in json.loads((tmp_path / "suite" / "klue-re-v1.1_dev.json").read_text(encoding="utf-8"))}
    ner_names = {sentence[start:end] for sentence, tags in read_ner_tsv(shared / NER_DEV).values()
                 for start, end, _ in entities(sentence, tags)}
    for line in lines:
        record, swap = written[line["guid"]], line["edits"][0]
        assert swap["after"] in ner_names  # the new name is a gold name of the NER dev set
        entity = next(record[key] for key in ("subject_entity", "object_entity") if record[key]["word"] == swap["after"])
        assert record["sentence"][entity["start_idx"]:entity["end_idx"] + 1] == swap["after"]
    code = main(["probe", "make", "--task", "re", "--gold", str(demo), "--out", str(tmp_path / "x"), "--names", str(tmp_path / "missing")])
    assert code != 0 and "missing: no such file or folder" in capsys.readouterr().err
    # a names file with a record that cannot be read: its problem is the suite's, named by file and record
    bad = json.dumps([{"guid": "x-1", "sentence": "김구는 활동했다."}], ensure_ascii=False)
    re_task, demo_re = get_task("re"), (demo / "klue-re-v1.1" / "klue-re-v1.1_dev.json").read_text(encoding="utf-8")
    suite = make_suite(re_task, demo_re, "dev.json", tests=["name-swap"], names_from=[(re_task, bad, "names.json")])
    assert any("names.json" in problem and "x-1" in problem for problem in suite.problems), suite.problems


@pytest.mark.slow
def test_a_new_name_is_among_the_old_ones_nearest_words():
    # read as unnatural (NER seed 19): 레바논 -> 카이로 (a national team beating a city), 경향신문 -> 서강대 (a university
    # reporting the news), both at cosine 0.73 or more; and 여주, which the NLI data writes for 여자 주인공, -> 고양, 철원.
    # kiwipiepy's own nearest morphemes (asked here directly) do not hold the new names among the old one's first 100
    kiwi = korean.kiwipiepy.Kiwi()
    for old, new in (("레바논", "카이로"), ("경향신문", "서강대"), ("여주", "고양"), ("여주", "철원")):
        old_id, new_id = (kiwi.tokenize(name)[0].id for name in (old, new))
        if old != "여주":
            assert kiwi.morpheme_similarity(old_id, new_id) >= korean.SIMILAR_ENOUGH  # the cosine alone lets them through
        assert new_id not in {m.id for m in kiwi.most_similar_morphemes(old_id, top_n=100)}
    assert korean.NamePool(["카이로"]).nearest("레바논") == []
    assert korean.NamePool(["서강대", "한국일보"]).nearest("경향신문") == ["한국일보"]  # a paper for a paper
    assert korean.NamePool(["고양", "철원"]).nearest("여주") == []
    assert korean.NamePool(["이탈리아", "카이로"]).nearest("스페인") == ["이탈리아"]


def ner_record(shared: Path, guid: str) -> str:
    """One sentence of the NER dev set as an official TSV of its own: its `## guid` line to the blank line after it."""
    text = (shared / NER_DEV).read_text(encoding="utf-8")
    start = text.index(f"## {guid}\t")
    return text[start:text.index("\n\n", start) + 2]


@pytest.mark.slow
def test_name_swap_swaps_people_only_unless_other_kinds_are_asked_for(shared, nli_suite):
    # read as unnatural on the code before this default: 애플 -> 마이크로소프트 in a sentence about iOS 7. Places and
    # organisations read natural in 40 of 45 and 20 of 24 cases, people in 19 of 19, so by default only people are
    # swapped and the rest skipped with their measured validity; `name_kinds` asks for them again
    task = get_task("ner")
    names = [(task, (shared / NER_DEV).read_text(encoding="utf-8"), NER_DEV)]
    apple = ner_record(shared, "klue-ner-v1_dev_03524-wikitree")
    default = make_suite(task, apple, "one.tsv", tests=["name-swap"], names_from=names)
    assert default.cases == [] and default.skipped["name-swap"] == {make.KIND_NOT_CHOSEN["organisation"]: 1}
    assert "20 of 24" in make.KIND_NOT_CHOSEN["organisation"] and "40 of 45" in make.KIND_NOT_CHOSEN["place"]
    asked = make_suite(task, apple, "one.tsv", tests=["name-swap"], names_from=names, name_kinds=["people", "organisations"])
    assert [(e["before"], e["after"]) for e in asked.cases[0].edits] == [("애플", "마이크로소프트"), ("은", "는")]
    # a sentence with a person, a place and an organisation: the person is the one swapped (박지성은 -> 히딩크는)
    mixed = make_suite(task, ner_record(shared, "klue-ner-v1_dev_03974-wikitree"), "one.tsv", tests=["name-swap"], names_from=names)
    assert [(e["before"], e["after"]) for e in mixed.cases[0].edits] == [("박지성", "히딩크"), ("은", "는")]
    with pytest.raises(KeyError, match="towns"):
        make_suite(task, apple, "one.tsv", tests=["name-swap"], name_kinds=["towns"])
    # NLI has no gold types: a proper noun's kind is the NER gold's, or that of the gold name nearest it in meaning.
    # 마이클 is in no NER gold span but near names that are people; 독일 is a place (LC) there
    folder, suite = nli_suite
    swaps = [case for case in suite.cases if case.test == "name-swap"]
    assert {(case.edits[0]["before"], case.edits[0]["after"]) for case in swaps} == {("마이클", "리처드")}
    assert suite.skipped["name-swap"][make.KIND_NOT_CHOSEN["place"]] > 100
    nli = get_task("nli")
    pools = make.NamePools([], nli.probe, [(task.probe, task.probe.read(names[0][1], NER_DEV)[0])])
    assert "마이클" not in pools.labelled
    assert (pools.kind_of_proper("마이클"), pools.kind_of_proper("독일"), pools.kind_of_proper("구글")) == ("person", "place", "organisation")
    assert "name-swap swaps the names of people." in (folder / "README.md").read_text(encoding="utf-8")


def test_name_kinds_flag_takes_the_three_kinds_and_names_a_wrong_one(tmp_path, capsys):
    assert probes_cli.kind_list("places, people,places") == ["places", "people"]
    with pytest.raises(argparse.ArgumentTypeError, match="towns: give one or more of people, places, organisations"):
        probes_cli.kind_list("people,towns")
    demo = REPO / "klue_viz" / "demo" / "klue_benchmark"
    with pytest.raises(SystemExit):
        main(["probe", "make", "--task", "re", "--gold", str(demo), "--out", str(tmp_path / "x"), "--name-kinds", "towns"])
    assert "--name-kinds" in capsys.readouterr().err
