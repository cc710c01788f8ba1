"""Issue 30, finding 2: a door that cannot be opened was a line in the server's log only. ``canal
doctor``'s door check says whether an approver reaches this server, and the fix when not."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from canal.client import door
from canal.client.paths import server_paths
from canal.runtime.admin.doctor import check_door
from canal.server.door_route import Doors


@pytest.fixture
def served(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.delenv("CANAL_NO_SERVER", raising=False)
    monkeypatch.setenv("CANAL_RUNTIME_DIR", str(tmp_path / "rt"))
    monkeypatch.setenv(door.ENV_DOOR, str(tmp_path / "shared.sock"))  # not the host's real shared door
    return server_paths().name.removeprefix("server-")


def _handler(_uid: int, _request: dict[str, Any]) -> dict[str, Any]:
    return {}


def test_a_closed_door_fails_the_check_with_its_fix(served: str) -> None:
    found = check_door()
    assert not found.ok
    assert "is not open" in found.detail
    assert [a.kind for a in found.next] == ["server.logs", "server.stop"]


def test_open_doors_pass_and_are_named(served: str) -> None:
    doors = Doors(served, _handler, owner=lambda _r: False)
    doors.open()
    try:
        found = check_door()
    finally:
        doors.close()
    assert found.ok, found.detail
    assert f"-{served}" in found.detail
    assert "held by this server" in found.detail


def test_a_shared_door_held_by_an_older_server_fails(served: str, tmp_path: Path) -> None:
    old = door.Door(str(tmp_path / "shared.sock"), lambda _u, _r: {"error": {"code": "APPROVAL_FORGED"}})
    assert old.open()
    doors = Doors(served, _handler, owner=lambda _r: False)
    doors.open()
    try:
        found = check_door()
    finally:
        doors.close()
        old.close()
    assert not found.ok
    assert "older canal" in found.detail
    assert [(a.kind, dict(a.args)) for a in found.next] == [("server.stop", {"all": True})]


def test_in_process_there_is_no_door_to_check(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CANAL_NO_SERVER", "1")
    assert check_door().ok
