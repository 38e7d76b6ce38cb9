"""Whether the Hugging Face hub can be reached, asked once and remembered for a while.

Without a network, `datasets.load_dataset` retries for about 25 s before it gives up, and the app
asked again on every page. One TCP connection to the hub's endpoint (HF_ENDPOINT, default
huggingface.co:443) with a short timeout answers in a moment; a failure is remembered for
RETRY_AFTER seconds, so every page and session in that time fails at once with the same reason.
With HF_HUB_OFFLINE or HF_DATASETS_OFFLINE set, nothing is probed (datasets reads its local cache).
"""

from __future__ import annotations

import os
import threading
import time
from typing import TYPE_CHECKING

from klue_viz.core.lazy import lazy_module

if TYPE_CHECKING:
    import socket
    from urllib import parse as urllib_parse
else:  # scoring a local file never probes the hub: `klue-viz evaluate` does not import them
    socket = lazy_module("socket")
    urllib_parse = lazy_module("urllib.parse")

DEFAULT_ENDPOINT = "https://huggingface.co"
#: Seconds a probe may take before the hub counts as unreachable.
PROBE_TIMEOUT = 3.0
#: Seconds an unreachable hub is remembered before it is probed again.
RETRY_AFTER = 300.0

_lock = threading.Lock()
_down: dict[str, tuple[float, str]] = {}  # endpoint -> (when it was found unreachable, why)


def offline_mode() -> bool:
    """Whether the user asked datasets to stay offline (it then reads only its cache, and fails fast by itself)."""
    return any(os.environ.get(name, "").strip().lower() in ("1", "true", "yes", "on") for name in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE"))


def endpoint() -> str:
    return os.environ.get("HF_ENDPOINT", "").strip() or DEFAULT_ENDPOINT


def unreachable_reason() -> str | None:
    """None when the hub answers (or offline mode is on); else why not, from a probe at most every RETRY_AFTER seconds."""
    if offline_mode():
        return None
    where = endpoint()
    with _lock:
        known = _down.get(where)
        if known is not None and time.monotonic() - known[0] < RETRY_AFTER:
            return known[1]
    url = urllib_parse.urlparse(where)
    host, port = url.hostname or "huggingface.co", url.port or (80 if url.scheme == "http" else 443)
    try:
        socket.create_connection((host, port), timeout=PROBE_TIMEOUT).close()
    except OSError as err:
        reason = f"the Hugging Face hub ({host}) cannot be reached: {err.strerror or type(err).__name__}"
        mark_down(reason)
        return reason
    with _lock:
        _down.pop(where, None)
    return None


def mark_down(reason: str) -> None:
    """Remember that loading from the hub failed (a probe, or datasets itself), so the next tries fail at once."""
    with _lock:
        _down[endpoint()] = (time.monotonic(), reason)


def forget() -> None:
    """Drop what is remembered (tests; an operator's reload)."""
    with _lock:
        _down.clear()
