"""A log written across a key rotation verifies with the earlier keys, and only with them."""

from __future__ import annotations

from pathlib import Path

from canal.host.audit import AuditLog, verify_log

OLD, NEW = b"o" * 32, b"n" * 32


def test_log_across_rotation_verifies_with_earlier_keys(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    AuditLog(path, OLD, "k-old").append("run.started", {"command": "ls"})
    rotated = AuditLog(path, NEW, "k-new", earlier_keys={"k-old": OLD})
    rotated.append("run.completed", {"exit_code": 0})
    rotated.record_revision("run-1", 1, "d" * 64)
    assert rotated.latest_revision("run-1") == (1, "d" * 64)

    assert verify_log(path, NEW, "k-new", earlier_keys={"k-old": OLD}).ok
    without = verify_log(path, NEW, "k-new")
    assert not without.ok
    assert without.problem is not None
    assert (without.problem.line, without.problem.kind) == (1, "forged")
