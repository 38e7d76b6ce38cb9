"""Modules imported on first use, so that `klue-viz evaluate` does not pay for pandas it never touches.

Scoring a prediction file needs numpy only (klue_viz.metrics); pandas costs about 0.3 s of every
process, more than the scoring itself. The task modules hold both the numpy scoring path and the
frames the app draws from, so they import pandas through `lazy_module`: it is loaded the first time
one of its attributes is read (standard library `importlib.util.LazyLoader`).

A submodule of a package not yet imported (`cleanlab.filter`, `plotly.graph_objects`) cannot be found
without importing its package, which is the cost to avoid: it is imported whole on first attribute read.
"""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType


def lazy_module(name: str) -> ModuleType:
    """The module `name`, executed when one of its attributes is first read (at once if already imported)."""
    if name in sys.modules:
        return sys.modules[name]
    package = name.rpartition(".")[0]
    if package and package not in sys.modules:
        return _ImportedOnUse(name)
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None:
        raise ModuleNotFoundError(f"No module named {name!r}", name=name)
    loader = importlib.util.LazyLoader(spec.loader)
    spec.loader = loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    loader.exec_module(module)
    return module


class _ImportedOnUse(ModuleType):
    """Stands for a submodule whose package is not imported yet: the first attribute read imports it."""

    def __getattr__(self, attribute: str) -> object:
        return getattr(importlib.import_module(self.__name__), attribute)
