"""Run names read as checkpoints of a training run: natural order and the step a name carries.

Training scripts name checkpoints with their step (`ckpt-2000`, `checkpoint-500`, `step012`, `epoch-2`): read as text
`ckpt-10000` sorts before `ckpt-2000`, so every listing of runs (the run picker, the comparison, the home table, the
corrected-gold table) sorts with `natural_key`, and every step range or axis reads `step_of`. Written here rather than
taken from a library (natsort) because both are a few lines and every floor above needs the same reading.
"""

from __future__ import annotations

import re

NUMBER = re.compile(r"(\d+)")
#: A number right after a word that says it counts training: the checkpoint's own number, not a suffix added after it.
STEP = re.compile(r"(?:checkpoint|ckpt|global[-_ ]?step|steps?|iter(?:ation)?s?|epochs?|ep)[-_ .]?(\d+)", re.IGNORECASE)


def natural_key(name: str) -> tuple[tuple[str | int, ...], str]:
    """A sort key reading the numbers in a name as numbers (`ckpt-2000` before `ckpt-10000`), case ignored, the name
    itself last so names differing in case only still sort the same way every time."""
    parts = NUMBER.split(name)
    return tuple(int(p) if k % 2 else p.casefold() for k, p in enumerate(parts)), name


def step_of(name: str) -> int | None:
    """The checkpoint step a run's name carries, or None: the number after `checkpoint`, `ckpt`, `step`, `iter` or
    `epoch` when there is one (the last such), so `ckpt-500-2` (a second run of that checkpoint) is step 500; else the
    last number in the name (`run012` is 12)."""
    marked = STEP.findall(name)
    if marked:
        return int(marked[-1])
    numbers = NUMBER.findall(name)
    return int(numbers[-1]) if numbers else None
