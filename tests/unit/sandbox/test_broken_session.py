"""What a command's result says when its session broke: the sandbox went, or its processes were swept.

A fake engine (the race it reproduces is one of timing: the engine still calls a container running a
moment after gVisor's Sentry was OOM-killed by the host, and a sweep run there fails)."""

from __future__ import annotations

from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any, ClassVar

from canal.sandbox.backend import LABEL_OWNER, LABEL_SANDBOX
from canal.sandbox.docker import backend as docker_backend
from canal.sandbox.docker.backend import DockerBackend, _Handle
from canal.sandbox.protocol import SessionBroken
from canal.sandbox.result import EndReason


class Container:
    labels: ClassVar[dict[str, str]] = {LABEL_SANDBOX: "box", LABEL_OWNER: "t"}

    def __init__(self, statuses: list[str], sweep_exit: int) -> None:
        self._statuses: Iterator[str] = iter(statuses)
        self._last = statuses[-1]
        self.sweep_exit = sweep_exit
        self.sweeps = 0

    @property
    def status(self) -> str:
        self._last = next(self._statuses, self._last)
        return self._last

    def exec_run(self, cmd: list[str], user: str, **_: Any) -> Any:
        self.sweeps += 1
        return SimpleNamespace(exit_code=self.sweep_exit, output=b"")


def broken(container: Container) -> Any:
    client = SimpleNamespace(containers=SimpleNamespace(get=lambda name: container))
    backend = DockerBackend(client, owner="t")  # type: ignore[arg-type]
    handle = _Handle(container_id="c", user="1000:1000", workdir="/workspace", init=True, memory=None)
    return backend._after_broken_session("box", handle, SessionBroken("the session ended"))


def test_a_failed_sweep_in_a_sandbox_that_then_stops_is_a_vanished_sandbox(monkeypatch: Any) -> None:
    monkeypatch.setattr(docker_backend.time, "sleep", lambda _: None)
    container = Container(["running", "running", "running", "exited"], sweep_exit=1)
    reply = broken(container)
    assert reply.reason is EndReason.SANDBOX_VANISHED
    assert reply.detail == "the session ended: the sandbox stopped"
    assert container.sweeps == 1


def test_a_sweep_that_ran_is_a_killed_command() -> None:
    reply = broken(Container(["running"], sweep_exit=0))
    assert reply.reason is EndReason.KILLED
    assert "every process in the sandbox was killed" in reply.detail


def test_a_failed_sweep_in_a_sandbox_that_stays_up_is_still_a_killed_command(monkeypatch: Any) -> None:
    clock = iter(range(0, 100))
    monkeypatch.setattr(docker_backend.time, "monotonic", lambda: float(next(clock)))
    monkeypatch.setattr(docker_backend.time, "sleep", lambda _: None)
    reply = broken(Container(["running"], sweep_exit=1))
    assert reply.reason is EndReason.KILLED
