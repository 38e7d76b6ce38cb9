"""Korean in NFD, invisible characters, one stray byte pair (issue 19, items 11 and 12)."""

from __future__ import annotations

import json
import unicodedata

import pandas as pd
import pytest

from klue_viz.core.problems import InputError
from klue_viz.drawing.markup import md, visible
from klue_viz.reading.demo import DEMO_BENCHMARK
from klue_viz.reading.records import decode, read_records
from klue_viz.scoring.evaluate import evaluate_bytes, load_gold
from klue_viz.scoring.filtering import text_mask
from klue_viz.tasks import get_task


def test_a_label_in_decomposed_jamo_is_read_as_the_label_and_the_file_is_said_to_need_it():
    task = get_task("ynat")
    gold = load_gold(task, DEMO_BENCHMARK)
    nfd = unicodedata.normalize("NFD", "IT과학")
    assert nfd != "IT과학" and len(nfd) > len("IT과학")
    records = [{"guid": r["guid"], "label": nfd if r["gold"] == "IT과학" else r["gold"]} for r in gold.rows]
    data = "\n".join(json.dumps(r, ensure_ascii=False) for r in records).encode("utf-8")
    result = evaluate_bytes(task, gold, data, "macos.jsonl")
    assert result.coverage.n_invalid == 0 and result.coverage.n_scored == len(gold.rows)
    assert float(result.frames.examples["correct"].mean()) == 1.0  # every label is the gold one
    assert any("NFC" in p.message and "NFD" in p.message for p in result.problems)


def test_text_search_finds_composed_text_with_a_decomposed_query():
    frame = pd.DataFrame({"guid": ["a", "b"], "title": ["한국어 뉴스", "영어 뉴스"]})
    assert text_mask(frame, ("title",), unicodedata.normalize("NFD", "한국어"), regex=False).tolist() == [True, False]


def test_a_zero_width_space_in_a_guid_is_shown_as_its_code():
    guid = "ynat-v1_dev_\u200b00001"
    assert "\\u200b" in visible(guid) and "\u200b" not in md(guid)
    for hidden in ("\u200c", "\u200d", "\u2060", "\u00ad"):
        assert hidden not in visible(f"a{hidden}b")


def test_one_stray_cp949_pair_in_a_utf8_file_is_named_by_its_line():
    lines = [json.dumps({"guid": f"g{k}", "label": "사회"}, ensure_ascii=False) for k in range(20)]
    data = "\n".join(lines).encode("utf-8").replace(b"g11", b"g11" + "한".encode("cp949"))
    with pytest.raises(InputError, match="line 12 is not UTF-8"):
        decode(data, "mixed.jsonl")


def test_a_whole_cp949_file_is_still_read_as_cp949():
    data = "\n".join(json.dumps({"guid": f"g{k}", "label": "사회"}, ensure_ascii=False) for k in range(3)).encode("cp949")
    text, encoding = decode(data, "korean.jsonl")
    assert encoding == "cp949" and "사회" in text
    assert [r["label"] for _, r in read_records(data, "korean.jsonl").records] == ["사회"] * 3
