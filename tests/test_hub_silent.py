"""?source=hf against an endpoint that accepts the connection and never answers (issue 29 item 5): the whole probe is
bounded, and so is the load; the failure is remembered. The endpoint is a socket server on the loopback interface."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator

import pytest

from klue_viz.core.problems import InputError
from klue_viz.reading import hf_hub as hub
from klue_viz.scoring import evaluate
from klue_viz.scoring.evaluate import load_hf
from klue_viz.tasks import get_task


class Endpoint:
    """A loopback server that accepts every connection; `answer` is what it sends back (None: nothing, ever)."""

    def __init__(self, answer: bytes | None) -> None:
        self.answer = answer
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        self.accepted = 0
        self.held: list[socket.socket] = []
        threading.Thread(target=self.serve, daemon=True).start()

    def serve(self) -> None:
        while True:
            try:
                connection, _ = self.server.accept()
            except OSError:
                return
            self.accepted += 1
            self.held.append(connection)  # kept open, silent
            if self.answer is not None:
                connection.recv(4096)
                connection.sendall(self.answer)

    def close(self) -> None:
        for connection in self.held:
            connection.close()
        self.server.close()


def endpoint_fixture(monkeypatch, answer: bytes | None) -> Iterator[Endpoint]:
    endpoint = Endpoint(answer)
    for name in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{endpoint.port}")
    monkeypatch.setattr(hub, "PROBE_TIMEOUT", 0.5)
    hub.forget()
    yield endpoint
    hub.forget()
    endpoint.close()


@pytest.fixture
def silent(monkeypatch) -> Iterator[Endpoint]:
    yield from endpoint_fixture(monkeypatch, None)


@pytest.fixture
def answering(monkeypatch) -> Iterator[Endpoint]:
    yield from endpoint_fixture(monkeypatch, b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")


def test_a_silent_endpoint_fails_the_probe_at_its_deadline_and_is_remembered(silent, monkeypatch):
    loads: list[tuple] = []
    monkeypatch.setattr(evaluate, "datasets", type("Datasets", (), {"load_dataset": staticmethod(lambda *a, **k: loads.append(a))}))
    start = time.monotonic()
    with pytest.raises(InputError, match=r"cannot be reached: no answer within"):
        load_hf(get_task("ynat"))
    waited = time.monotonic() - start
    assert waited < hub.PROBE_TIMEOUT + 1.0, waited  # the connect succeeds at once: the wait is for an answer that never comes
    assert silent.accepted == 1 and loads == []
    start = time.monotonic()
    with pytest.raises(InputError, match="cannot be reached"):
        load_hf(get_task("nli"))
    assert time.monotonic() - start < 0.2 and silent.accepted == 1, "remembered: no second probe"


def test_an_endpoint_that_answers_passes_the_probe(answering):
    assert hub.unreachable_reason() is None and answering.accepted == 1


def test_a_load_that_never_returns_is_bounded_and_remembered(answering, monkeypatch):
    """The probe is answered, then the load waits on the silent socket of a second server: given up at LOAD_TIMEOUT."""
    silent = Endpoint(None)
    monkeypatch.setattr(hub, "LOAD_TIMEOUT", 1.0)

    def load_dataset(*args, **kwargs):
        with socket.create_connection(("127.0.0.1", silent.port)) as connection:  # no timeout, as a stuck download
            connection.recv(1)

    monkeypatch.setattr(evaluate, "datasets", type("Datasets", (), {"load_dataset": staticmethod(load_dataset)}))
    start = time.monotonic()
    with pytest.raises(InputError, match=r"no answer within 1 s"):
        load_hf(get_task("ynat"))
    assert time.monotonic() - start < hub.LOAD_TIMEOUT + 1.0
    assert hub.unreachable_reason() is not None, "the failed load is remembered like a failed probe"
    silent.close()
