"""The containers that flow between the layers: a run's per-example frames, its scores and its coverage.

Below the task modules and `klue_viz.scoring.evaluate`, which both import them (a task builds Frames and
Scores; evaluate matches a file and wraps them in its RunResult). `ScoredRun` is what a task's
discovery hooks read of a scored run (its name and frames), so the task modules never import
`klue_viz.scoring.evaluate`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from klue_viz.core.lazy import lazy_module

if TYPE_CHECKING:
    import pandas as pd
else:
    pd = lazy_module("pandas")  # the CLI scores without it

NO_ROWS = np.array([], dtype=np.intp)


@dataclass
class Frames:
    """Per-example results of one run: one row per example, plus finer rows where the task has them."""

    examples: pd.DataFrame
    details: dict[str, pd.DataFrame] = field(default_factory=dict)
    #: (level, column) -> (the frame indexed, value -> its row positions); built on first lookup, so drawing one
    #: example costs the rows of that example and not a scan of the whole run.
    _positions: dict[tuple[str, str], tuple[pd.DataFrame, dict]] = field(default_factory=dict, init=False, repr=False, compare=False)

    def example(self, guid: str) -> pd.Series:
        """The row of one example (KeyError when the run has no such guid)."""
        positions = self.positions(guid)
        if not len(positions):
            raise KeyError(guid)
        return self.examples.iloc[int(positions[0])]

    def rows(self, key: str, level: str = "examples", by: str = "guid") -> pd.DataFrame:
        """The rows of the `level` frame (examples, or a detail frame: entities, words, slots) whose `by` column is `key`."""
        frame = self.examples if level == "examples" else self.details[level]
        return frame.iloc[self.positions(key, level, by)]

    def positions(self, key: str, level: str = "examples", by: str = "guid") -> np.ndarray:
        """Row positions, in frame order, of the rows of the `level` frame whose `by` column is `key`; an index built once per frame."""
        frame = self.examples if level == "examples" else self.details[level]
        indexed = self._positions.get((level, by))
        if indexed is None or indexed[0] is not frame:  # a frame replaced since: index it again
            indexed = (frame, frame.groupby(by, sort=False).indices)
            self._positions[(level, by)] = indexed
        return indexed[1].get(key, NO_ROWS)

    def subset(self, guids: Iterable[str]) -> Frames:
        """The same frames restricted to some examples (a slice, a filter, a bootstrap sample), rows in frame order.

        Through the per-frame guid index (`positions`) rather than `Series.isin`: pandas checks Arrow strings against a
        set one Python object at a time, which made the ten weak slices of a NER run cost about 0.5 CPU s."""
        keep = list(dict.fromkeys(guids))
        return Frames(self._restricted("examples", keep), {level: self._restricted(level, keep) for level in self.details})

    def _restricted(self, level: str, guids: list[str]) -> pd.DataFrame:
        frame = self.examples if level == "examples" else self.details[level]
        found = [self.positions(guid, level) for guid in guids]
        return frame.iloc[np.sort(np.concatenate(found)) if found else NO_ROWS]


@dataclass(frozen=True)
class Repaired:
    """A prediction scored although part of it had to be repaired; each note becomes a problem on its record's line."""

    prediction: Any
    notes: tuple[str, ...]


@dataclass
class Scores:
    """Official metrics on the 0..100 scale; a None value comes with its reason."""

    values: dict[str, float | None]
    reasons: dict[str, str] = field(default_factory=dict)


@dataclass
class Coverage:
    n_gold: int
    n_scored: int
    n_missing: int
    n_extra: int
    n_invalid: int
    #: Generated answers that name no label, or two (scored as wrong, counted among the scored; see klue_viz.scoring.llm_outputs).
    unreadable_answers: int = 0


class ScoredRun(Protocol):
    """A run scored against a gold as the task modules' discovery hooks see it (klue_viz.scoring.evaluate.RunResult is one)."""

    run: str

    @property
    def frames(self) -> Frames: ...
