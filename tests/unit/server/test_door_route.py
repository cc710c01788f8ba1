"""Issue 30, finding 2: with two servers of one user (another CANAL_STATE_DIR, DOCKER_HOST, ...), only the
first got the approval door and an approver of the second's project reached the first. Now each server
has its own door and the shared one sends the approver to the server owning the project (in-process
servers here; tests/integration/approvals/test_two_servers.py runs real ones, with real users)."""

from __future__ import annotations

import os
import secrets
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from canal.client import door
from canal.server.door_route import Doors, listening_doors


def server(name: str, project: str) -> Doors:
    def handler(uid: int, request: dict[str, Any]) -> dict[str, Any]:
        return {"served_by": name, "uid": uid}

    return Doors(secrets.token_hex(8), handler, owner=lambda r: r.get("project") == project)


@pytest.fixture
def two(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Doors, Doors]]:
    monkeypatch.setenv(door.ENV_DOOR, str(tmp_path / "shared.sock"))  # not the host's real shared door
    a, b = server("A", "/p/alpha"), server("B", "/p/beta")
    a.open()
    b.open()
    yield a, b
    a.close()
    b.close()


def test_the_shared_door_sends_the_approver_to_the_owning_server(two: tuple[Doors, Doors]) -> None:
    a, b = two
    assert a.shared.is_open
    assert not b.shared.is_open  # the first server holds it; the second has its own door
    assert a.own.is_open
    assert b.own.is_open
    uid = os.geteuid()
    assert door.knock(uid, {"op": "show", "project": "/p/alpha"})["served_by"] == "A"
    assert door.knock(uid, {"op": "show", "project": "/p/beta"})["served_by"] == "B"
    assert b.own.address in listening_doors(uid)


def test_when_the_holder_stops_another_server_takes_the_shared_door(two: tuple[Doors, Doors]) -> None:
    a, b = two
    a.close()
    deadline = time.monotonic() + 10
    while not b.shared.is_open and time.monotonic() < deadline:
        time.sleep(0.1)
    assert b.shared.is_open
    assert door.knock(os.geteuid(), {"op": "show", "project": "/p/beta"})["served_by"] == "B"


def test_a_redirect_to_a_door_of_another_user_is_refused(monkeypatch: pytest.MonkeyPatch,
                                                          tmp_path: Path) -> None:
    monkeypatch.setenv(door.ENV_DOOR, str(tmp_path / "evil.sock"))
    elsewhere = {"redirect": "@canal-approvals-4242-" + "0" * 16}
    lure = door.Door(str(tmp_path / "evil.sock"), lambda _u, _r: elsewhere)
    assert lure.open()
    try:
        with pytest.raises(PermissionError):
            door.knock(os.geteuid(), {"op": "show", "project": "/p/x"})
    finally:
        lure.close()
