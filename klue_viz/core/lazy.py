"""Modules imported on first use, so that `klue-viz evaluate` does not pay for pandas it never touches.

Scoring a prediction file needs numpy only (klue_viz.metrics.official); pandas costs about 0.3 s of every
process, more than the scoring itself. The task modules hold both the numpy scoring path and the
frames the app draws from, so they import pandas through `lazy_module`: it is imported the first
time one of its attributes is read.

The stand-in is deliberately not entered in `sys.modules`. The standard library's
`importlib.util.LazyLoader` puts a half-made module there, and anything that walks `sys.modules`
reading an attribute of each one loads it all: `inspect.getmodule` does, through `inspect.stack()`,
which Streamlit calls on the first element a server draws. That loaded scikit-learn, scipy.stats and
datasets (about 2.5 CPU s) on every server's first page, which draws none of them.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from types import ModuleType


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
