"""Whether the Hugging Face hub can be reached, asked once and remembered for a while.

Without a network, `datasets.load_dataset` retries for about 25 s before it gives up, and the app
asked again on every page. One HTTP request to the hub's endpoint (HF_ENDPOINT, default
huggingface.co:443) answers in a moment: connecting, the TLS handshake, sending and the first bytes
of the answer all within PROBE_TIMEOUT seconds together (an endpoint that accepts the connection and
never answers kept the first page waiting over 400 s when only the connect was timed). The load
itself is bounded too (`bounded`, LOAD_TIMEOUT). A failure is remembered for RETRY_AFTER seconds, so
every page and session in that time fails at once with the same reason. With HF_HUB_OFFLINE or
HF_DATASETS_OFFLINE set, nothing is probed (datasets reads its local cache).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar
from urllib.parse import urlparse

from klue_viz.core.lazy import lazy_module

if TYPE_CHECKING:
    import socket
    import ssl
else:  # scoring a local file never probes the hub: `klue-viz evaluate` does not import them
    socket = lazy_module("socket")
    ssl = lazy_module("ssl")

T = TypeVar("T")

DEFAULT_ENDPOINT = "https://huggingface.co"
#: Seconds a probe may take before the hub counts as unreachable.
PROBE_TIMEOUT = 3.0
#: Seconds an unreachable hub is remembered before it is probed again.
RETRY_AFTER = 300.0
#: Seconds loading a split from the hub may take in all (downloads included) before it counts as failed.
LOAD_TIMEOUT = 120.0

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
    url = urlparse(where)
    host, port = url.hostname or "huggingface.co", url.port or (80 if url.scheme == "http" else 443)
    try:
        _ask(host, port, url.scheme != "http")
    except OSError as err:  # socket.timeout and ssl.SSLError are OSErrors
        why = f"no answer within {PROBE_TIMEOUT:g} s" if isinstance(err, TimeoutError) else err.strerror or str(err) or type(err).__name__
        reason = f"the Hugging Face hub ({host}) cannot be reached: {why}"
        mark_down(reason)
        return reason
    with _lock:
        _down.pop(where, None)
    return None


def _ask(host: str, port: int, tls: bool) -> None:
    """One HEAD request to the endpoint, answered (any status) within PROBE_TIMEOUT seconds in all, else an OSError.

    Each step gets the time left of the one deadline, so an endpoint that accepts and then stays silent, or answers a
    byte at a time, is given up on at the deadline (a timeout per step would let it hold the page for each step)."""
    deadline = time.monotonic() + PROBE_TIMEOUT

    def left() -> float:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError("the probe's time is up")
        return remaining

    with socket.create_connection((host, port), timeout=left()) as raw:
        sock = raw
        if tls:
            raw.settimeout(left())
            sock = ssl.create_default_context().wrap_socket(raw, server_hostname=host)
        sock.settimeout(left())
        sock.sendall(f"HEAD / HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n".encode("ascii"))
        answer = b""
        while len(answer) < 5:
            sock.settimeout(left())
            chunk = sock.recv(5 - len(answer))
            if not chunk:
                raise ConnectionError("the connection was closed without an answer")
            answer += chunk
        if answer != b"HTTP/":
            raise ConnectionError("the answer is not HTTP")


def bounded(call: Callable[[], T], seconds: float) -> T:
    """`call()`, or TimeoutError once it has run `seconds` without returning (it goes on in a daemon thread, its result
    dropped). For a library call without a deadline of its own (datasets' load, whose requests each have a timeout
    but whose retries and downloads together have none)."""
    result: list[T] = []
    failure: list[BaseException] = []

    def run() -> None:
        try:
            result.append(call())
        except BaseException as err:  # handed to the caller's thread, whatever it is
            failure.append(err)

    worker = threading.Thread(target=run, name="klue-viz hub load", daemon=True)
    worker.start()
    worker.join(seconds)
    if worker.is_alive():
        raise TimeoutError(f"no answer within {seconds:g} s")
    if failure:
        raise failure[0]
    return result[0]


def mark_down(reason: str) -> None:
    """Remember that loading from the hub failed (a probe, or datasets itself), so the next tries fail at once."""
    with _lock:
        _down[endpoint()] = (time.monotonic(), reason)


def forget() -> None:
    """Drop what is remembered (tests; an operator's reload)."""
    with _lock:
        _down.clear()
