"""A cache shared by every session of a server, bounded in bytes and by time since last use.

Streamlit's own caches bound the number of entries, not their size; a scored run of the real NER
dev set weighs tens of megabytes, so the app keeps its scored runs here instead: least recently
used entries leave when the total passes the budget, and entries nobody used for `ttl` seconds
leave at the next access, so memory comes back after the sessions that needed it are closed.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any

import pandas as pd


class BoundedCache:
    def __init__(self, max_bytes: int, ttl: float, size_of: Callable[[Any], int], clock: Callable[[], float] = time.monotonic) -> None:
        self.max_bytes = max_bytes
        self.ttl = ttl
        self.size_of = size_of
        self.clock = clock
        self._entries: OrderedDict[Hashable, tuple[Any, int, float]] = OrderedDict()  # key -> (value, size, last use)
        self._lock = threading.Lock()
        self._computing: dict[Hashable, threading.Lock] = {}
        self.total = 0

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, key: Hashable) -> bool:
        with self._lock:
            return key in self._entries

    def get(self, key: Hashable, compute: Callable[[], Any]) -> Any:
        """The cached value of `key`, computed once (other sessions asking meanwhile wait for it)."""
        found, value = self._lookup(key)
        if found:
            return value
        with self._lock:
            key_lock = self._computing.setdefault(key, threading.Lock())
        with key_lock:
            found, value = self._lookup(key)
            if not found:
                value = compute()
                self._put(key, value)
        with self._lock:
            self._computing.pop(key, None)
        return value

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self.total = 0

    def _lookup(self, key: Hashable) -> tuple[bool, Any]:
        with self._lock:
            self._expire()
            if key not in self._entries:
                return False, None
            value, size, _ = self._entries.pop(key)
            self._entries[key] = (value, size, self.clock())
            return True, value

    def _put(self, key: Hashable, value: Any) -> None:
        size = self.size_of(value)
        with self._lock:
            if size > self.max_bytes:
                return  # larger than the whole budget: handed back to the caller, not kept
            self._entries[key] = (value, size, self.clock())
            self.total += size
            while self.total > self.max_bytes:
                _, (_, dropped, _) = self._entries.popitem(last=False)
                self.total -= dropped

    def _expire(self) -> None:
        limit = self.clock() - self.ttl
        while self._entries:
            key, (_, size, used) = next(iter(self._entries.items()))
            if used >= limit:
                break
            del self._entries[key]
            self.total -= size


def frame_bytes(frame: pd.DataFrame) -> int:
    return int(frame.memory_usage(deep=True, index=True).sum())
