"""The background agent at the sandbox layer, under runc and gVisor: a task's detached child belongs to
the task (it survives foreground sweeps, it dies with the task), a foreground command's does not, and
relayed connections reach the sandbox's own loopback."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest

from canal.sandbox.docker.backend import DockerBackend
from canal.sandbox.docker.background import TaskEnd, TaskSpec
from canal.sandbox.spec import SandboxSpec
from tests.integration.sandbox.conftest import SMALL, unique


class TaskSink:
    def __init__(self) -> None:
        self.received = b""
        self.end: TaskEnd | None = None
        self.done = threading.Event()

    def output(self, stream: str, data: bytes) -> None:
        self.received += data

    def ended(self, end: TaskEnd) -> None:
        self.end = end
        self.done.set()


class StreamSink:
    def __init__(self) -> None:
        self.received = b""
        self.events: list[str] = []
        self.done = threading.Event()

    def opened(self) -> None:
        self.events.append("opened")

    def failed(self, error: str, code: str) -> None:
        self.events.append(f"failed {code}")
        self.done.set()

    def data(self, data: bytes) -> None:
        self.received += data

    def acked(self, n: int) -> None:
        return None

    def eof(self) -> None:
        self.events.append("eof")

    def closed(self, error: str | None) -> None:
        self.events.append("closed")
        self.done.set()


@pytest.fixture(scope="module")
def box(docker_backend: DockerBackend, sandbox_image: str, runtime: str) -> Iterator[str]:
    name = unique()
    docker_backend.create(name, SandboxSpec(image=sandbox_image, limits=SMALL,  # type: ignore[arg-type]
                                            runtime=runtime))
    yield name
    docker_backend.remove(name)


def processes(backend: DockerBackend, box: str) -> list[str]:
    return backend.exec(box, "ps -eo args=").stdout.read_bytes().decode().splitlines()


def test_a_detached_child_belongs_to_its_task(docker_backend: DockerBackend, box: str) -> None:
    sink = TaskSink()
    docker_backend.start_task(box, 1, TaskSpec("setsid -f sleep 998; echo started; sleep 997", 60, 1 << 20),
                              sink)
    deadline = time.monotonic() + 30
    while not {"sleep 998", "sleep 997"} <= set(processes(docker_backend, box)):
        assert time.monotonic() < deadline
        time.sleep(0.2)
    ran = docker_backend.exec(box, "setsid sleep 996 & sleep 995 &")  # a foreground command's leftovers
    assert ran.exit_code == 0
    left = processes(docker_backend, box)
    assert {"sleep 998", "sleep 997"} <= set(left)  # the task's, even the detached one
    assert not {"sleep 996", "sleep 995"} & set(left)  # the foreground command's are gone
    assert docker_backend.cancel_task(box, 1, "cancelled")
    assert sink.done.wait(30)
    assert sink.end is not None
    assert sink.end.reason == "cancelled"
    assert sink.received == b"started\n"
    assert not {"sleep 998", "sleep 997"} & set(processes(docker_backend, box))


def test_a_task_ending_takes_what_it_left_running(docker_backend: DockerBackend, box: str) -> None:
    sink = TaskSink()
    docker_backend.start_task(box, 2, TaskSpec("setsid -f sleep 994; exit 5", 60, 1 << 20), sink)
    assert sink.done.wait(30)
    assert sink.end is not None
    assert (sink.end.reason, sink.end.exit_code) == ("exited", 5)
    assert sink.end.left >= 1
    assert "sleep 994" not in processes(docker_backend, box)


def test_a_relayed_connection_reaches_the_sandboxs_loopback(docker_backend: DockerBackend, box: str) -> None:
    refused = StreamSink()
    docker_backend.open_stream(box, 9, refused)
    assert refused.done.wait(30)
    assert refused.events == ["failed ECONNREFUSED"]
    server = TaskSink()
    echo = "import socket; s=socket.socket(); s.bind(('127.0.0.1', 7007)); s.listen(); c,_=s.accept(); " \
           "c.sendall(c.recv(100).upper()); c.close()"
    docker_backend.start_task(box, 3, TaskSpec(f"python3 -c \"{echo}\"", 60, 1 << 20), server)
    deadline = time.monotonic() + 30
    while True:
        stream = StreamSink()
        relay = docker_backend.open_stream(box, 7007, stream)
        time.sleep(0.3)
        if stream.events and stream.events[0] == "opened":
            break
        assert time.monotonic() < deadline, stream.events
        stream.done.wait(5)
    relay.send(b"hello")
    relay.close_write()
    assert stream.done.wait(30)
    assert stream.received == b"HELLO"
    assert stream.events[0] == "opened"
    assert stream.events[-1] == "closed"
    assert server.done.wait(30)
