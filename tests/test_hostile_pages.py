"""A hostile payload in gold text, file names, guids and stored notes reaches every page as text.

Each page is opened through AppTest with gold whose text fields carry the payload and a prediction
file whose name carries it; every element Streamlit reads as Markdown (markdown, captions, alerts,
expander and radio labels) is then rendered with a CommonMark parser (raw HTML allowed, as
Streamlit does) and must contain no link, image, script, emphasis, maths or colour from the payload.
"""

from __future__ import annotations

import html
import json
import re
import shutil

import pytest
from markdown_it import MarkdownIt
from mdit_py_plugins.dollarmath import dollarmath_plugin
from streamlit.testing.v1 import AppTest

from klue_viz.reading.demo import DEMO_BENCHMARK, demo_runs
from klue_viz.store.annotations import Annotation, Store
from klue_viz.tasks import TASKS
from klue_viz.ui.home import PAGE_FILES
from tests.conftest import REPO

pytestmark = pytest.mark.slow  # every test here opens whole pages in AppTest

#: One line of everything Markdown, Streamlit and HTML would read as markup, plus bidi and control characters.
LINE = ("**bold** _em_ ~~del~~ [link](http://evil.example/l) ![img](http://evil.example/i.png) <mailto:x@evil.example> "
        "x@evil.example $e^x$ :red[colour] :smile: <img src=http://evil.example/h.png> <script>alert(1)</script> "
        "<a href='http://evil.example/a'>a</a> &lt;b&gt; http://evil.example/bare www.evil.example \u202eRTL\u202c \x07bell")
#: The same with blank lines, which end an HTML block in Markdown.
PAYLOAD = f"{LINE}\n\n{LINE}\n\n    indented {LINE}"
#: A tag is at most 100 characters.
TAG = "**t** [x](http://evil.example/t) :red[c] <img src=x> x@evil.example"
#: A file name cannot hold '/' or a newline.
NAME = "**b** _e_ ![i](mailto:x@evil.example) [l](javascript:alert(1)) $x^2$ :red[c] <img src=x onerror=alert(1)> www.evil.example"

PARSER = MarkdownIt("commonmark", {"html": True}).enable("strikethrough").use(dollarmath_plugin)
#: The app's own links to a view of the app (`href="?..."` or `href="/<task>?..."`, relative, escaped) or to a part of a
#: drawing on the page (`href="#kv-..."`, a WoS turn) are not from file text.
LIVE = re.compile(r"<a(?![^>]*href=\"(?:\?|/[a-z]+\?|#kv-))[\s>]|<img|<script|<strong>(?:bold|b)</|<em>(?:em|e)</|<s>del</|class=\"math|<code>\s*indented")
#: Streamlit's colours and emoji short codes, read from the Markdown source.
DIRECTIVE = re.compile(r"(?<!\\):red\[|(?<!\\):smile:")
#: Streamlit autolinks URLs and e-mail addresses in the text after escapes and entities are resolved.
AUTOLINK = re.compile(r"(?i)https?://|www\.|[\w.+-]@[\w-]|[\u202e\x07]")


def live_markup(source: str) -> list[str]:
    rendered = PARSER.render(source)
    text = html.unescape(re.sub(r"<[^>]*>", " ", rendered))
    return LIVE.findall(rendered) + DIRECTIVE.findall(source) + AUTOLINK.findall(text)


def markdown_elements(at: AppTest) -> list[str]:
    values = [e.value for kind in ("markdown", "caption", "error", "warning", "info", "success", "toast") for e in getattr(at, kind)]
    values += [e.label for e in at.expander]
    values += [option for radio in at.radio for option in radio.options]
    return values


def hostile_gold(folder) -> None:
    """The demo gold with the payload appended to the text fields (offsets before it stay valid) and as the source."""
    def edit(path, change):
        data = json.loads(path.read_text(encoding="utf-8"))
        change(data)
        path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")

    def each(field, source=True):
        def change(records):
            for record in records[:3]:
                record[field] += PAYLOAD
                if source:
                    record["source"] = LINE
        return change

    edit(folder / "ynat-v1.1" / "ynat-v1.1_dev.json", each("title"))
    edit(folder / "klue-sts-v1.1" / "klue-sts-v1.1_dev.json", each("sentence1"))
    edit(folder / "klue-nli-v1.1" / "klue-nli-v1.1_dev.json", each("premise"))
    edit(folder / "klue-re-v1.1" / "klue-re-v1.1_dev.json", each("sentence"))

    def mrc(data):
        for document in data["data"]:
            for paragraph in document["paragraphs"]:
                paragraph["context"] += PAYLOAD
                for qa in paragraph["qas"]:
                    qa["question"] += PAYLOAD
    edit(folder / "klue-mrc-v1.1" / "klue-mrc-v1.1_dev.json", mrc)

    def wos(data):
        for dialogue in data[:3]:
            for turn in dialogue["dialogue"]:
                turn["text"] += PAYLOAD
    edit(folder / "wos-v1.1" / "wos-v1.1_dev.json", wos)


@pytest.fixture(scope="module")
def hostile_dir(tmp_path_factory):
    folder = tmp_path_factory.mktemp("hostile") / "klue_benchmark"
    shutil.copytree(DEMO_BENCHMARK, folder)
    hostile_gold(folder)
    return folder


def hostile_run(task_name: str) -> bytes:
    run = next(p for p in demo_runs(task_name) if p.suffix == ".jsonl")
    extra = json.dumps({"guid": LINE}, ensure_ascii=False)  # a guid not in the gold: listed in the notes
    return run.read_bytes().rstrip(b"\n") + b"\n" + extra.encode("utf-8") + b"\n"


@pytest.mark.parametrize("task_name", list(TASKS))
def test_no_file_text_becomes_markup_on_a_task_page(task_name, hostile_dir, monkeypatch):
    monkeypatch.setenv("KLUE_VIZ_DATA_DIR", str(hostile_dir))
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=120).run()
    at.switch_page(PAGE_FILES[task_name]).run()
    at.file_uploader(key="pred_upload").set_value([(f"{NAME}.jsonl", hostile_run(task_name), "application/json")]).run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert any("kv-example" in m.value for m in at.markdown), "examples are drawn"
    shown = markdown_elements(at)
    assert any("evil" in value for value in shown), "the payload reached the page"
    assert [(value[:120], live_markup(value)) for value in shown if live_markup(value)] == []


def test_no_file_text_becomes_markup_on_the_home_page_or_in_the_annotate_box(hostile_dir, monkeypatch, tmp_path):
    monkeypatch.setenv("KLUE_VIZ_DATA_DIR", str(hostile_dir))
    monkeypatch.setenv("KLUE_VIZ_DB", str(tmp_path / "hostile.sqlite3"))
    store = Store()
    store.add_tag("ynat", TAG)
    store.save(Annotation("ynat", "ynat-v1_dev_00000-demo", NAME, LINE[:100], tags=[TAG], note=PAYLOAD, gold_wrong=True, corrected_label=LINE))
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=120).run()
    files = [(f"{NAME}.jsonl", hostile_run("ynat"), "application/json"), (f"{NAME}.csv", b"a,b\n1,2\n", "text/csv")]
    at.file_uploader(key="home_upload").set_value(files).run()
    export = json.dumps(Annotation("ynat", LINE[:200], LINE[:200], LINE[:100], tags=[TAG], note=PAYLOAD).to_record(), ensure_ascii=False)
    at.file_uploader(key="import_annotations").set_value([(f"{NAME}.jsonl", export.encode("utf-8"), "application/json")]).run()
    assert not at.exception
    home = markdown_elements(at)
    at.switch_page(PAGE_FILES["ynat"]).run()
    at.text_input(key="annotator_widget").set_value("me").run()
    at.toggle(key=f"annotate|ynat-v1_dev_00000-demo|{NAME}").set_value(True).run()
    assert not at.exception
    page = markdown_elements(at)
    assert any("evil" in value for value in home) and any("bell" in value for value in page)
    assert [(value[:120], live_markup(value)) for value in home + page if live_markup(value)] == []


@pytest.mark.parametrize("typed", ["/", "/proc", "/etc"])
def test_the_gold_folder_box_refuses_paths_outside_the_allowed_folders(typed, monkeypatch):
    monkeypatch.setenv("KLUE_VIZ_DATA_DIR", str(DEMO_BENCHMARK))
    monkeypatch.delenv("KLUE_VIZ_GOLD_ROOTS", raising=False)
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=120).run()
    at.text_input(key="data_dir_widget").set_value(typed).run()
    assert not at.exception and not at.error
    assert any("not under a folder" in w.value.replace("\\", "") or "root of the file system" in w.value.replace("\\", "") or
               "/proc" in w.value.replace("\\", "") for w in at.warning)
    at.switch_page(PAGE_FILES["ner"]).run()
    assert not at.exception and not at.error
    assert any("embedded demo" in c.value.replace("\\", "") for c in at.caption)


def test_a_broken_gold_file_and_a_broken_upload_leave_the_session_intact(tmp_path, monkeypatch):
    folder = tmp_path / "klue_benchmark"
    shutil.copytree(DEMO_BENCHMARK, folder)
    (folder / "ynat-v1.1" / "ynat-v1.1_dev.json").write_bytes(b"[" * 100_000)  # official name, garbage inside
    (folder / "klue-ner-v1.1" / "klue-ner-v1.1_dev.tsv").write_bytes(b"42")
    monkeypatch.setenv("KLUE_VIZ_DATA_DIR", str(folder))
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=120).run()
    assert not at.exception and not any("Something went wrong" in e.value for e in at.error)
    assert any(h.value == "Annotations" for h in at.subheader), "the home page is drawn to its end"
    at.switch_page(PAGE_FILES["ynat"]).run()
    assert not at.exception and not at.error
    assert any("nested too deeply" in c.value.replace("\\", "") and "embedded demo" in c.value for c in at.caption)
    at.file_uploader(key="pred_upload").set_value([
        ("deep.jsonl", b'{"guid": ' + b"[" * 100_000, "application/json"),
        ("number.json", b"1e999", "application/json"),
        ("big.csv", b"guid,label\nynat-v1_dev_00000-demo," + b"x" * 200_000 + b"\n", "text/csv"),
    ]).run()
    assert not at.exception and not any("Something went wrong" in e.value for e in at.error)
    assert len(at.error) == 3 and any("kv-example" in m.value for m in at.markdown)
    at.switch_page(PAGE_FILES["ner"]).run()
    assert not at.exception and not any("Something went wrong" in e.value for e in at.error)
