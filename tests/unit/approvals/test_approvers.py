from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from canal.runtime.approvals import (
    ApprovalStoreError,
    ApproverRegistry,
    ApproverUnverifiedError,
    from_terminal,
)

KEY = b"a" * 32


@pytest.fixture
def registry(tmp_path: Path) -> ApproverRegistry:
    return ApproverRegistry(tmp_path / "approvers.json", KEY)


@pytest.mark.parametrize(("stdin", "stdout"), [(False, True), (True, False), (False, False)])
def test_terminal_is_required_on_both_ends(stdin: bool, stdout: bool) -> None:
    with pytest.raises(ApproverUnverifiedError) as info:
        from_terminal(stdin, stdout, "alice")
    assert info.value.code == "APPROVER_UNVERIFIED"
    assert [a.kind for a in info.value.next] == ["approve", "approvals.add_approver"]


def test_terminal_approver() -> None:
    approver = from_terminal(True, True, "alice")
    assert (approver.user, approver.how) == ("alice", "tty")


def test_registered_key_identifies_its_approver(registry: ApproverRegistry, tmp_path: Path) -> None:
    key_file = tmp_path / "alice.key"
    registry.add("alice", key_file, added_by="root")
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    assert registry.names() == ["alice"]
    approver = registry.identify(key_file, "ci")
    assert (approver.user, approver.how, approver.key_name) == ("ci", "approver-key", "alice")
    assert key_file.read_bytes().strip().decode() not in registry.path.read_text()


def test_key_file_is_never_overwritten(registry: ApproverRegistry, tmp_path: Path) -> None:
    key_file = tmp_path / "alice.key"
    key_file.write_text("precious")
    with pytest.raises(ApprovalStoreError):
        registry.add("alice", key_file, added_by="root")
    assert key_file.read_text() == "precious"


def test_unknown_key_is_refused(registry: ApproverRegistry, tmp_path: Path) -> None:
    registry.add("alice", tmp_path / "alice.key", added_by="root")
    other = ApproverRegistry(tmp_path / "other.json", KEY)
    other.add("mallory", tmp_path / "mallory.key", added_by="agent")
    with pytest.raises(ApproverUnverifiedError) as info:
        registry.identify(tmp_path / "mallory.key", "agent")
    assert "not a registered" in info.value.message


def test_loose_key_file_is_refused(registry: ApproverRegistry, tmp_path: Path) -> None:
    key_file = tmp_path / "alice.key"
    registry.add("alice", key_file, added_by="root")
    key_file.chmod(0o644)
    with pytest.raises(ApproverUnverifiedError) as info:
        registry.identify(key_file, "alice")
    assert "chmod 600" in info.value.hint


def test_edited_registry_is_refused(registry: ApproverRegistry, tmp_path: Path) -> None:
    registry.add("alice", tmp_path / "alice.key", added_by="root")
    raw = json.loads(registry.path.read_text())
    raw["approvers"]["mallory"] = {"sha256": "00" * 32, "added_at": 0, "added_by": "agent"}
    registry.path.write_text(json.dumps(raw))
    with pytest.raises(ApproverUnverifiedError) as info:
        registry.identify(tmp_path / "alice.key", "alice")
    assert "signature" in info.value.message


def test_missing_or_garbage_key_file(registry: ApproverRegistry, tmp_path: Path) -> None:
    with pytest.raises(ApproverUnverifiedError):
        registry.identify(tmp_path / "missing.key", "alice")
    bad = tmp_path / "bad.key"
    bad.write_text("!!! not base64")
    bad.chmod(0o600)
    with pytest.raises(ApproverUnverifiedError):
        registry.identify(bad, "alice")
