"""The daemon without Docker: peer check, handshake, build skew, stop, stale socket, idle timeout."""

from __future__ import annotations

import gc
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from canal.client import wire
from canal.client.lifecycle import connect, hello, holds_lock
from canal.client.paths import ServerPaths, ensure_private_dir
from canal.server.conn import Connection
from canal.server.daemon import Daemon

BUILD = "test-build"


def echo(conn: Connection, request: dict[str, Any]) -> int:
    conn.send(wire.STDOUT, " ".join(request["argv"]).encode())
    return 7


@pytest.fixture
def paths(tmp_path: Path) -> ServerPaths:
    return ServerPaths(ensure_private_dir(tmp_path / "rt"), "server-test")


def start(paths: ServerPaths, idle_s: float = 60.0) -> tuple[Daemon, threading.Thread]:
    daemon = Daemon(paths, BUILD, {"cli": echo}, idle_timeout_s=idle_s)
    assert daemon.acquire()
    thread = threading.Thread(target=daemon.serve, daemon=True)
    thread.start()
    return daemon, thread


@pytest.fixture
def running(paths: ServerPaths) -> Iterator[Daemon]:
    daemon, thread = start(paths)
    yield daemon
    daemon.stop("test over")
    thread.join(10)


def call(paths: ServerPaths, request: dict[str, Any], build: str = BUILD) -> list[tuple[bytes, bytes]]:
    sock = connect(paths)
    assert sock is not None
    with sock:
        assert hello(sock, build)["build"] == BUILD
        wire.send_json(sock, wire.REQUEST, request)
        frames = []
        while True:
            try:
                frames.append(wire.recv(sock))
            except wire.WireError:
                return frames


def test_a_request_runs_its_handler_and_ends_with_the_exit_code(paths: ServerPaths, running: Daemon) -> None:
    frames = call(paths, {"op": "cli", "argv": ["run", "true"]})
    assert frames[0] == (wire.STDOUT, b"run true")
    assert frames[-1][0] == wire.EXIT
    assert wire.loads(frames[-1][1]) == {"exit": 7}
    assert (paths.socket.stat().st_mode & 0o777) == 0o600


def test_a_client_of_another_build_is_refused_work_but_may_stop_it(paths: ServerPaths,
                                                                    running: Daemon) -> None:
    frames = call(paths, {"op": "cli", "argv": ["run"]}, build="older")
    assert [k for k, _ in frames] == [wire.DATA]
    assert "refused" in wire.loads(frames[0][1])["error"]
    call(paths, {"op": "stop", "why": "replaced"}, build="older")
    deadline = time.monotonic() + 5
    while holds_lock(paths) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not holds_lock(paths)
    assert not paths.socket.exists()


def test_one_server_per_identity(paths: ServerPaths, running: Daemon) -> None:
    assert not Daemon(paths, BUILD, {}).acquire()


def test_a_stale_socket_is_replaced(paths: ServerPaths) -> None:
    dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dead.bind(str(paths.socket))
    paths.socket.chmod(0o600)
    dead.close()  # the file stays: what a crashed server leaves
    assert connect(paths) is None
    daemon, thread = start(paths)
    try:
        assert call(paths, {"op": "cli", "argv": ["x"]})[-1][0] == wire.EXIT
    finally:
        daemon.stop("test over")
        thread.join(10)


def test_idle_server_stops_by_itself(paths: ServerPaths) -> None:
    _daemon, thread = start(paths, idle_s=0.2)
    thread.join(10)
    assert not thread.is_alive()
    assert not holds_lock(paths)


def answer(conn: Connection, request: dict[str, Any]) -> int:
    conn.send_json(wire.DATA, {"result": request["n"]})
    return 0


def start_api(paths: ServerPaths, idle_s: float = 60.0) -> tuple[Daemon, threading.Thread, list[int]]:
    seen: list[int] = []

    def handler(conn: Connection, request: dict[str, Any]) -> int:
        seen.append(request["n"])
        return answer(conn, request)

    daemon = Daemon(paths, BUILD, {"api": handler}, idle_timeout_s=idle_s)
    assert daemon.acquire()
    thread = threading.Thread(target=daemon.serve, daemon=True)
    thread.start()
    return daemon, thread, seen


def kept_socket(paths: ServerPaths) -> socket.socket:
    sock = connect(paths)
    assert sock is not None
    hello(sock, BUILD)
    return sock


def ask(sock: socket.socket, n: int) -> dict[str, Any]:
    wire.send_json(sock, wire.REQUEST, {"op": "api", "keep": True, "n": n})
    data = wire.recv_json(sock, wire.DATA)
    if "bye" not in data:
        assert wire.recv_json(sock, wire.EXIT) == {"exit": 0}
    return data


def test_a_kept_api_connection_carries_one_request_after_another(paths: ServerPaths) -> None:
    """Issue 33: the Python API's client keeps its connection: no connect, handshake and thread per call."""
    daemon, thread, seen = start_api(paths)
    try:
        with kept_socket(paths) as sock:
            assert [ask(sock, n)["result"] for n in range(5)] == list(range(5))
        assert seen == list(range(5))
        assert daemon.status()["accepted"] == 1
    finally:
        daemon.stop("test over")
        thread.join(10)


def test_a_waiting_kept_connection_lets_the_server_idle_out_and_hears_bye(paths: ServerPaths) -> None:
    _daemon, thread, seen = start_api(paths, idle_s=0.2)
    with kept_socket(paths) as sock:
        assert ask(sock, 1)["result"] == 1
        thread.join(10)
        assert not thread.is_alive()  # waiting for its next request is not being busy
        # the client finds it before its next call, and takes that call to the next server
        assert "stopped" in wire.recv_json(sock, wire.DATA)["bye"]
    assert seen == [1]


def test_a_request_arriving_as_the_server_stops_is_served_or_refused_never_both(paths: ServerPaths) -> None:
    for _round in range(20):
        daemon, thread, seen = start_api(paths)
        with kept_socket(paths) as sock:
            ask(sock, 0)
            stopper = threading.Thread(target=daemon.stop, args=("test",))
            stopper.start()
            try:
                wire.send_json(sock, wire.REQUEST, {"op": "api", "keep": True, "n": 1})
            except OSError:  # the server closed before the request reached it: it did not run
                data = {"bye": "unsent"}
            else:
                try:
                    data = wire.recv_json(sock, wire.DATA)
                    if "bye" not in data:
                        assert wire.recv_json(sock, wire.EXIT) == {"exit": 0}
                except (wire.WireError, OSError):
                    data = {}
            stopper.join(10)
        thread.join(10)
        assert data, "the client heard nothing: it cannot know whether the request ran"
        assert ("result" in data) == (seen == [0, 1]), (data, seen)


@pytest.fixture
def api_client(paths: ServerPaths, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Daemon, Any]]:
    """The Python API's client (``Canal.connect``'s connection) against a daemon that answers each call
    with its name; every connection it makes is counted by the daemon's ``accepted``."""
    from canal.runtime import remote  # the client under test

    def handler(conn: Connection, request: dict[str, Any]) -> int:
        conn.send_json(wire.DATA, {"result": request["call"]})
        return 0

    daemon = Daemon(paths, BUILD, {"api": handler}, idle_timeout_s=60.0)
    assert daemon.acquire()
    thread = threading.Thread(target=daemon.serve, daemon=True)
    thread.start()

    def to_test_server(_paths: ServerPaths, _build: str) -> socket.socket:
        sock = kept_socket(paths)
        return sock

    monkeypatch.setattr(remote, "connect_or_start", to_test_server)
    try:
        yield daemon, remote._Connection(Path("/p"), "default", "agent")
    finally:
        daemon.stop("test over")
        thread.join(10)


def test_the_api_client_makes_a_connection_again_after_close(api_client: tuple[Daemon, Any]) -> None:
    daemon, client = api_client
    assert [client(f"call{n}", {}) for n in range(3)] == ["call0", "call1", "call2"]
    assert daemon.accepted == 1
    client.close()
    assert client("after", {}) == "after"  # a closed object is not broken: the next call connects
    assert daemon.accepted == 2
    client.close()


def test_the_api_client_closes_the_connections_of_threads_that_ended(api_client: tuple[Daemon, Any]) -> None:
    """A program making a thread per call must not leak a connection (and a server thread) per thread."""
    daemon, client = api_client
    for n in range(5):
        worker = threading.Thread(target=client, args=(f"t{n}", {}))
        worker.start()
        worker.join(10)
    assert daemon.accepted == 5
    assert len(client._open) == 1  # each new connection closed those of the threads gone before it
    client.close()


def test_an_api_client_dropped_without_close_closes_its_connection(api_client: tuple[Daemon, Any],
                                                                   recwarn: pytest.WarningsRecorder) -> None:
    daemon, client = api_client
    dropped = type(client)(Path("/p"), "default", "agent")
    assert dropped("once", {}) == "once"
    assert daemon.accepted == 1
    del dropped
    gc.collect()
    assert not [w for w in recwarn if issubclass(w.category, ResourceWarning)]
    deadline = time.monotonic() + 5
    while daemon._waiting and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not daemon._waiting  # the server saw the connection end: its thread is gone


def test_a_request_arriving_while_a_load_step_runs_waits_for_it(paths: ServerPaths) -> None:
    """The server loads modules ahead in a thread, one step at a time while no request runs; a request
    arriving during a step starts its handler only once the step is over, so two threads never import
    the same packages at once (Python can then hand one of them a partly imported package)."""
    order: list[str] = []
    release = threading.Event()

    def handler(conn: Connection, request: dict[str, Any]) -> int:
        order.append("handler")
        return 0

    def step() -> None:
        order.append("step started")
        release.wait(10)
        order.append("step done")

    daemon = Daemon(paths, BUILD, {"cli": handler})
    assert daemon.acquire()
    serving = threading.Thread(target=daemon.serve, daemon=True)
    serving.start()
    loading = threading.Thread(target=lambda: daemon.when_quiet(step), daemon=True)
    loading.start()
    try:
        while "step started" not in order:
            time.sleep(0.01)
        caller = threading.Thread(target=call, args=(paths, {"op": "cli", "argv": []}), daemon=True)
        caller.start()
        time.sleep(0.3)  # the request is in: its handler must not run beside the step
        assert order == ["step started"]
        release.set()
        caller.join(10)
        assert order == ["step started", "step done", "handler"]
        deadline = time.monotonic() + 10  # the server counts the request done just after it answers
        while not daemon.quiet() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert daemon.when_quiet(step) is True  # quiet again: a step runs
    finally:
        release.set()
        daemon.stop("test over")
        serving.join(10)


def test_no_load_step_starts_while_a_request_runs(paths: ServerPaths) -> None:
    inside = threading.Event()
    release = threading.Event()

    def handler(conn: Connection, request: dict[str, Any]) -> int:
        inside.set()
        release.wait(10)
        return 0

    daemon = Daemon(paths, BUILD, {"cli": handler})
    assert daemon.acquire()
    serving = threading.Thread(target=daemon.serve, daemon=True)
    serving.start()
    try:
        caller = threading.Thread(target=call, args=(paths, {"op": "cli", "argv": []}), daemon=True)
        caller.start()
        assert inside.wait(10)
        ran: list[str] = []
        assert daemon.when_quiet(lambda: ran.append("step")) is False
        assert ran == []
        release.set()
        caller.join(10)
    finally:
        release.set()
        daemon.stop("test over")
        serving.join(10)
