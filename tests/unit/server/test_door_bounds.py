"""The approval door is open to every local user: what one of them can make the server hold is bounded."""

from __future__ import annotations

import socket
import time
from pathlib import Path
from typing import Any

import pytest

from canal.client import door, wire


def _handler(uid: int, request: dict[str, Any]) -> dict[str, Any]:
    return {"echo": request.get("op"), "uid": uid}


@pytest.fixture
def opened(tmp_path: Path) -> door.Door:
    d = door.Door(str(tmp_path / "door.sock"), _handler)
    assert d.open()
    yield d
    d.close()


def _connect(d: door.Door) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(5.0)
    sock.connect(d.address)
    return sock


def _ask(d: door.Door) -> dict[str, Any]:
    with _connect(d) as sock:
        wire.send_json(sock, wire.REQUEST, {"op": "show"})
        return wire.recv_json(sock, wire.DATA)


def test_connections_past_the_limit_are_closed_at_once_and_the_door_still_answers_after(
        opened: door.Door) -> None:
    idle = [_connect(opened) for _ in range(door.MAX_OPEN)]
    time.sleep(0.2)  # let the door accept them all
    try:
        extra = _connect(opened)
        with extra:
            assert extra.recv(1) == b""  # closed by the door, not left waiting for its timeout
    finally:
        for sock in idle:
            sock.close()
    deadline = time.monotonic() + 5
    while True:  # the slots come back as the idle connections' threads see them closed
        try:
            assert _ask(opened)["echo"] == "show"
            break
        except (wire.WireError, OSError):
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def test_a_frame_over_the_request_limit_is_refused_before_it_is_read(opened: door.Door) -> None:
    with _connect(opened) as sock:
        sock.sendall(wire.HEADER.pack(wire.REQUEST, door.MAX_REQUEST + 1))  # the payload never follows
        assert sock.recv(1) == b""  # refused from the header, not waiting for 256 KiB that never come


def test_a_silent_client_is_dropped_after_the_read_timeout(opened: door.Door,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    assert door.READ_TIMEOUT_S <= 10.0  # the shipped value; the test shortens it to stay quick
    monkeypatch.setattr(door, "READ_TIMEOUT_S", 0.5)
    with _connect(opened) as sock:
        started = time.monotonic()
        assert sock.recv(1) == b""
        assert time.monotonic() - started < 4.0
