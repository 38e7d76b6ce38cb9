"""Parsed gold files kept in the database, so a server start reads a gold back instead of parsing it again.

Every server parses the gold of each task on its first page: 0.2 CPU s for the NER dev set's TSV, about 0.4 s for
the five real dev sets the home page shows. Like kept results (klue_viz/store/kept_results.py), a parsed gold is keyed by what it
was made from: the task, the sha256 of the file's bytes, the name it was read under (its problems name the file) and
the code that parses (`kept_format.layout()`, a hash of the scoring code, tasks/ included; `kept_format.gold_key`). A
gold kept by other code is another row, left to that code; a damaged one (its checksum fails) is parsed again and
replaced; a gold that cannot be kept exactly (a value JSON would change) is used and not kept. The rows are JSON with
tuples and bytes tagged (klue_viz/core/exact_json.py), so they come back of the same types, equal to a fresh parse.
"""

from __future__ import annotations

import hashlib

import sqlalchemy as sa

from klue_viz.core.exact_json import decode, encode, exact
from klue_viz.core.gc_pause import bulk_reading
from klue_viz.core.problems import Problem
from klue_viz.scoring.evaluate import Gold, gold_from_bytes
from klue_viz.store.annotations import Store, StoreError
from klue_viz.store.kept_format import gold_key, layout, seal, unseal
from klue_viz.store.schema import kept_golds
from klue_viz.tasks.base import Task


def gold_json(gold: Gold) -> str:
    """The parsed rows, problems and positional flag of a gold as JSON text; TypeError when they cannot be kept exactly."""
    text: str = encode(exact({"rows": gold.rows, "problems": [p.to_dict() for p in gold.problems], "positional": gold.positional}))
    return text


def gold_from_json(task: Task, text: str, name: str, digest: str) -> Gold:
    """The gold `gold_json` wrote (ValueError, KeyError or TypeError when the text is not one)."""
    with bulk_reading():  # thousands of small objects at once: no collection passes meanwhile
        data = decode(text)
    problems = [Problem(**p) for p in data["problems"]]
    if not isinstance(data["rows"], list) or not isinstance(data["positional"], bool):
        raise TypeError("not a kept gold")
    gold = Gold(task, data["rows"], name, problems, data["positional"])
    gold.sha256 = digest
    return gold


#: Golds smaller than this are parsed on every start, not kept: they parse in about the time reading one back takes
#: (the STS dev set, 0.45 MB: 0.02 CPU s either way), and keeping one costs its encoding and a write on top.
KEEP_FROM_BYTES = 512 * 1024


class ParsedGolds:
    """Parsed golds in a store's database, one row per (task, gold bytes, name); only golds of `keep_from_bytes` or more."""

    def __init__(self, store: Store, keep_from_bytes: int = KEEP_FROM_BYTES) -> None:
        self.store = store
        self.keep_from_bytes = keep_from_bytes

    def gold(self, task: Task, data: bytes, name: str) -> Gold:
        """The gold of these bytes: read back when this code parsed them before, otherwise parsed (InputError as
        `gold_from_bytes`) and kept. A damaged row (its checksum fails, or it decodes to no gold) is parsed again and
        replaced; a row of another layout is another key, left to the klue-viz that wrote it. A database that fails
        meanwhile only costs the parse."""
        if len(data) < self.keep_from_bytes:
            return gold_from_bytes(task, data, name)
        digest = hashlib.sha256(data).hexdigest()
        key = gold_key(task.facts.name, digest, name)
        kept_layout = layout()
        query = sa.select(kept_golds.c.layout, kept_golds.c.data).where(kept_golds.c.key == key)
        try:
            found = self.store.read(lambda connection: connection.execute(query).first())
        except StoreError:
            found = None
        if found is not None and found.layout == kept_layout:
            try:
                return gold_from_json(task, unseal(found.data, key, kept_layout), name, digest)
            except (ValueError, KeyError, TypeError):  # Unsealed is a ValueError
                pass  # damaged: parsed again and replaced
        gold = gold_from_bytes(task, data, name)
        try:
            text = seal(gold_json(gold), key, kept_layout)

            def work(connection: sa.Connection) -> None:
                connection.execute(kept_golds.delete().where(kept_golds.c.key == key))
                connection.execute(kept_golds.insert().values(key=key, layout=kept_layout, data=text))

            self.store.write(work, "another server kept writing this parsed gold")
        except (TypeError, StoreError):
            pass  # used now, parsed again next time
        return gold
