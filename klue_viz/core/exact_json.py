"""JSON that reads back as the same Python values: what kept results (klue_viz/store/kept_results.py) and parsed golds
(klue_viz/store/parsed_golds.py) store.

JSON has lists and string keys only, so a tuple would come back a list, bytes would not be written at all and a dict
key 1 would come back "1". `exact` tags a tuple and bytes as an object with one reserved key (read back by
`untagged`) and refuses what cannot come back the same (a dict with keys that are not strings, a set, any other
object) with TypeError, so a caller can decide not to keep it. The standard library's `json` has no hook for
tuples (they are encoded as lists before `default` is asked), hence this small layer over it.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from typing import Any

#: The one key of the object a tuple, or bytes (base64), is written as.
TUPLE = "\u0000tuple"
BYTES = "\u0000bytes"


def exact(value: Any, convert: Callable[[Any], Any] | None = None) -> Any:
    """`value` with tuples and bytes tagged, ready for `encode`; TypeError for a dict whose keys are not all strings.

    `convert`, when given, first turns each value (at every depth) of a kind a caller keeps in its own way into one
    this function knows: kept views turn their dataclasses into tagged objects and numpy scalars into Python numbers."""
    if convert is not None:
        value = convert(value)
    if isinstance(value, list):
        return [exact(v, convert) for v in value]
    if isinstance(value, tuple):
        return {TUPLE: [exact(v, convert) for v in value]}
    if isinstance(value, dict):
        if not all(isinstance(k, str) for k in value) or TUPLE in value or BYTES in value:
            raise TypeError("a dict with keys that are not strings cannot be kept exactly")
        return {k: exact(v, convert) for k, v in value.items()}
    if isinstance(value, bytes):
        return {BYTES: base64.b64encode(value).decode("ascii")}
    return value


def _refuse(value: Any) -> Any:
    raise TypeError(f"a {type(value).__name__} value cannot be kept exactly")


#: JSON text of an `exact` value (TypeError for a value JSON has no form for); text stays text (no \\u escapes).
encode = json.JSONEncoder(ensure_ascii=False, default=_refuse).encode


def untagged(item: dict) -> Any:
    """A decoded object back as the tuple or bytes `exact` tagged, any other object as it is."""
    if len(item) == 1:
        if TUPLE in item:
            return tuple(item[TUPLE])
        if BYTES in item:
            return base64.b64decode(item[BYTES])
    return item


def decoder(hook: Callable[[dict], Any] = untagged) -> Callable[[str], Any]:
    """A function from a JSON text `encode` wrote to its value; `hook` reads each object (a caller's own tags, then
    `untagged`)."""
    return json.JSONDecoder(object_hook=hook).decode


#: The value of a JSON text `encode` wrote.
decode = decoder()
