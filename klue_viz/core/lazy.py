"""Modules imported (and regular expressions compiled) on first use, so that `klue-viz evaluate` does not pay for
pandas, or for the answer parsers' patterns, it never touches.

Scoring a prediction file needs numpy only (klue_viz.metrics.official); pandas costs about 0.3 s of every
process, more than the scoring itself. The task modules hold both the numpy scoring path and the
frames the app draws from, so they import pandas through `lazy_module`: it is imported the first
time one of its attributes is read.

The stand-in is deliberately not entered in `sys.modules`. The standard library's
`importlib.util.LazyLoader` puts a half-made module there, and anything that walks `sys.modules`
reading an attribute of each one loads it all: `inspect.getmodule` does, through `inspect.stack()`,
which Streamlit calls on the first element a server draws. That loaded scikit-learn, scipy.stats and
datasets (about 2.5 CPU s) on every server's first page, which draws none of them.

`lazy_pattern` is the same for a regular expression: the LLM answer parsers (klue_viz.reading.answers) compiled a
dozen large patterns whenever a task module loaded, about 5 ms of each `klue-viz evaluate` of a file with no
generated text (issue 28 sets that whole process against a plain numpy scorer); `re` caches compiled patterns only
inside a process.
"""

from __future__ import annotations

import importlib
import importlib.util
import re
import sys
from types import ModuleType
from typing import Any, cast


def lazy_module(name: str) -> ModuleType:
    """The module `name`, imported when one of its attributes is first read (at once if already imported).

    The stand-in returned is not in `sys.modules` (see the module docstring); once the module is imported,
    `import name` elsewhere gives the real module, and the stand-in reads its attributes from it."""
    if name in sys.modules:
        return sys.modules[name]
    if importlib.util.find_spec(name.partition(".")[0]) is None:
        raise ModuleNotFoundError(f"No module named {name!r}", name=name)
    return _ImportedOnUse(name)


class _ImportedOnUse(ModuleType):
    """Stands for a module not imported yet: the first attribute read imports it, every read is the module's own."""

    def __getattr__(self, attribute: str) -> object:
        module = sys.modules.get(self.__name__)
        if module is None:
            module = importlib.import_module(self.__name__)
        return getattr(module, attribute)


def lazy_pattern(pattern: str, flags: int | re.RegexFlag = 0) -> re.Pattern[str]:
    """`re.compile(pattern, flags)`, compiled when one of its methods or attributes is first read.

    Typed as the compiled pattern, which every read gives: after the first read of a name (`search`, `match`, ...) the
    compiled pattern's own bound method is kept on the stand-in, so a pattern used in a loop costs what it did."""
    return cast(re.Pattern[str], _CompiledOnUse(pattern, flags))


class _CompiledOnUse:
    """Stands for a compiled pattern: the first read of a name compiles it; each name read is kept as the pattern's own."""

    def __init__(self, pattern: str, flags: int | re.RegexFlag) -> None:
        self._source = (pattern, flags)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):  # copy, pickle and friends ask for dunders: not the pattern's business
            raise AttributeError(name)
        value = getattr(re.compile(*self._source), name)  # re caches the compiled pattern: compiled once
        setattr(self, name, value)
        return value
