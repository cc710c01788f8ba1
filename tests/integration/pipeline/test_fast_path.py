"""The engine is asked only when the session says something is wrong."""

from __future__ import annotations

import time
from typing import Any

import pytest

from canal.runtime.api import Canal
from canal.sandbox.docker.backend import DockerBackend


def test_warm_commands_do_not_inspect_and_a_removed_sandbox_comes_back(
        canal: Canal, docker_client: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    assert canal.run("true").status == "ok"
    backend = canal.backend
    assert isinstance(backend, DockerBackend)
    inspected: list[str] = []
    collection = type(backend.client.containers)  # a new collection object on every access: patch its class
    real = collection.get
    monkeypatch.setattr(collection, "get", lambda self, name: (inspected.append(name), real(self, name))[1])
    backend.client.containers.get(canal.ref().container)
    assert inspected == [canal.ref().container]  # the counter sees an inspect
    inspected.clear()
    for _ in range(5):
        assert canal.run("true").status == "ok"
    assert inspected == []
    docker_client.containers.get(canal.ref().container).remove(force=True)  # behind Canal's back
    deadline = time.monotonic() + 10
    while backend.ready(canal.ref().container) is not None and time.monotonic() < deadline:
        time.sleep(0.01)  # the engine closes the session's stream as the container goes
    again = canal.run("echo back")
    assert again.status == "ok", again.text
    assert again.output == "back"
    assert inspected  # the closed session sent Canal to the engine, which had no such sandbox: made anew
