"""Issue 35: the audit log's project binding was caught only by integration tests. A log opens with
``audit.opened`` naming its project; verifying it for another project, or a log without that record,
fails as ``foreign`` / ``unbound``."""

from __future__ import annotations

from pathlib import Path

from canal.host.audit import AuditLog, verify_log

KEY = b"k" * 32
KEY_ID = "k-test"


def _log(path: Path, project_id: str | None) -> None:
    log = AuditLog(path, KEY, KEY_ID, project_id=project_id)
    log.append("test.event", {"n": 1})
    log.append("test.event", {"n": 2})


def test_a_log_verifies_for_its_own_project_only(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    _log(path, "proj-a")
    assert verify_log(path, KEY, KEY_ID, project_id="proj-a").ok
    other = verify_log(path, KEY, KEY_ID, project_id="proj-b")
    assert not other.ok
    assert other.problem is not None
    assert other.problem.kind == "foreign"


def test_a_log_that_names_no_project_is_unbound(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    _log(path, None)
    report = verify_log(path, KEY, KEY_ID, project_id="proj-a")
    assert report.problem is not None
    assert report.problem.kind == "unbound"
