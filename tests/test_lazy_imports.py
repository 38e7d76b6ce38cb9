"""Deferred imports (klue_viz/core/lazy.py) stay deferred, also when something walks `sys.modules`.

Streamlit calls `inspect.stack()` on the first element a server draws; `inspect.getmodule` reads an
attribute of every module in `sys.modules`. A LazyLoader module entered there is then loaded, which
put scikit-learn, scipy.stats and datasets on every server's first page. Each check runs in a fresh
interpreter, so what another test imported does not count.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def _run(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=True)
    return done.stdout.strip().splitlines()[-1]


def test_a_lazy_module_is_imported_on_first_attribute_read_only():
    code = ("import inspect, sys\n"
            "from klue_viz.core.lazy import lazy_module\n"
            "colorsys = lazy_module('colorsys')\n"
            "before = 'colorsys' in sys.modules\n"
            "inspect.stack()  # walks sys.modules, as Streamlit does\n"
            "after_walk = 'colorsys' in sys.modules\n"
            "value = colorsys.rgb_to_hsv(1.0, 0.0, 0.0)\n"
            "print(before, after_walk, 'colorsys' in sys.modules, value)")
    assert _run(code) == "False False True (0.0, 1.0, 1.0)"


def test_a_lazy_submodule_and_an_imported_module():
    code = ("import sys, json\n"
            "from klue_viz.core.lazy import lazy_module\n"
            "decoder = lazy_module('json.decoder')  # json is imported: json.decoder too, given back as it is\n"
            "xml_dom = lazy_module('xml.dom.minidom')  # its package is not imported yet\n"
            "print(decoder is sys.modules['json.decoder'], 'xml.dom.minidom' in sys.modules, "
            "xml_dom.parseString('<a/>').documentElement.tagName)")
    assert _run(code) == "True False a"


def test_a_missing_module_is_refused_at_once():
    code = ("from klue_viz.core.lazy import lazy_module\n"
            "try:\n    lazy_module('no_such_package_kv.sub')\nexcept ModuleNotFoundError as err:\n    print('refused', err.name)")
    assert _run(code) == "refused no_such_package_kv.sub"


@pytest.mark.slow
def test_the_home_page_modules_load_no_heavy_library():
    """What the home page imports, with the stack walked as Streamlit walks it: none of the libraries it does not use."""
    heavy = ("sklearn", "scipy.stats", "datasets", "cleanlab", "duckdb", "inspect_ai", "lm_eval", "plotly.express", "krippendorff")
    code = ("import inspect, sys, streamlit\n"
            "import klue_viz.ui.home\n"
            "inspect.stack()\n"
            f"print([m for m in {heavy!r} if m in sys.modules])")
    assert _run(code) == "[]"


def test_a_lazy_pattern_compiles_on_first_use_and_then_is_the_compiled_patterns_own():
    import re

    from klue_viz.core.lazy import lazy_pattern

    broken = lazy_pattern("(unclosed")  # compiling it would fail: making it does not compile
    with pytest.raises(re.error):
        broken.search("x")
    words = lazy_pattern(r"(\w+)-(\d)", re.IGNORECASE)
    compiled = re.compile(r"(\w+)-(\d)", re.IGNORECASE)
    assert words.findall("ab-1 CD-2 x") == compiled.findall("ab-1 CD-2 x") == [("ab", "1"), ("CD", "2")]
    assert words.sub(r"\2", "ab-1") == "1" and words.pattern == compiled.pattern and words.groups == 2
    assert words.search.__self__ is compiled  # the kept bound method is the (re-cached) compiled pattern's


def test_importing_the_answer_parsers_compiles_none_of_their_patterns():
    """`klue-viz evaluate` of a file without generated text loads klue_viz.reading.answers (the task modules use its types)
    but never parses an answer: its patterns are compiled when an answer is first read (issue 28's speed figure)."""
    code = ("import re\n"
            "import collections.abc, dataclasses, json, typing, klue_viz.core.lazy\n"  # what it imports, loaded first
            "before = set(re._cache)\n"
            "import klue_viz.reading.answers\n"
            "print(len(set(re._cache) - before))")
    assert _run(code) == "0"
