"""?source=hf with no network (issue 19, item 17): one quick probe of the hub, and its failure remembered for a while."""

from __future__ import annotations

import socket

import datasets
import pytest

from klue_viz.core.problems import InputError
from klue_viz.reading import hf_hub as hub
from klue_viz.scoring.evaluate import load_hf
from klue_viz.tasks import get_task


@pytest.fixture
def no_network(monkeypatch):
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    port = closed.getsockname()[1]
    closed.close()  # nothing listens there: a connection is refused at once, and no traffic leaves the machine
    for name in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{port}")
    hub.forget()
    loads, probes = [], []
    monkeypatch.setattr(datasets, "load_dataset", lambda *a, **k: loads.append(a) or (_ for _ in ()).throw(ConnectionError("retrying")))
    real = socket.create_connection
    monkeypatch.setattr(socket, "create_connection", lambda *a, **k: probes.append(a[0]) or real(*a, **k))
    yield loads, probes
    hub.forget()


def test_an_unreachable_hub_fails_before_datasets_retries_and_the_failure_is_remembered(no_network, monkeypatch):
    loads, probes = no_network
    with pytest.raises(InputError, match="cannot be reached"):
        load_hf(get_task("ynat"))
    assert loads == [] and len(probes) == 1
    with pytest.raises(InputError, match="cannot be reached"):
        load_hf(get_task("nli"))
    assert loads == [] and len(probes) == 1, "the failure is remembered: no second probe"
    now = hub.time.monotonic()
    monkeypatch.setattr(hub.time, "monotonic", lambda: now + hub.RETRY_AFTER + 1)
    with pytest.raises(InputError):
        load_hf(get_task("ynat"))
    assert len(probes) == 2, "after RETRY_AFTER seconds the hub is tried again"
