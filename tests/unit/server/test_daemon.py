"""The daemon without Docker: peer check, handshake, build skew, stop, stale socket, idle timeout."""

from __future__ import annotations

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
