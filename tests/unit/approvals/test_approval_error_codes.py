"""Error codes and exit codes are public API: this table pins them."""

from __future__ import annotations

from canal.core.errors import CanalError
from canal.host import approvals, audit

TABLE = {
    audit.AuditError: ("AUDIT_ERROR", 125),
    audit.AUDIT_WRITE_FAILED: ("AUDIT_WRITE_FAILED", 125),
    audit.AUDIT_LOG_CORRUPT: ("AUDIT_LOG_CORRUPT", 125),
    audit.AUDIT_TAMPERED: ("AUDIT_TAMPERED", 1),
    audit.AUDIT_RECORD_INVALID: ("AUDIT_RECORD_INVALID", 2),
    audit.AUDIT_CHECKPOINT_INVALID: ("AUDIT_CHECKPOINT_INVALID", 2),
    audit.AUDIT_KEY_UNAVAILABLE: ("AUDIT_KEY_UNAVAILABLE", 125),
    approvals.ApprovalError: ("APPROVAL_INVALID", 122),
    approvals.APPROVAL_EXPIRED: ("APPROVAL_EXPIRED", 122),
    approvals.APPROVAL_REUSED: ("APPROVAL_REUSED", 122),
    approvals.ApprovalForgedError: ("APPROVAL_FORGED", 122),
    approvals.APPROVAL_MISMATCH: ("APPROVAL_MISMATCH", 122),
    approvals.APPROVAL_PENDING: ("APPROVAL_PENDING", 120),
    approvals.APPROVER_UNVERIFIED: ("APPROVER_UNVERIFIED", 122),
    approvals.APPROVAL_STORE_FAILED: ("APPROVAL_STORE_FAILED", 125),
    approvals.APPROVAL_DENIED: ("APPROVAL_DENIED", 122),
    approvals.APPROVER_IS_AGENT: ("APPROVER_IS_AGENT", 122),
    approvals.APPROVER_UNKNOWN: ("APPROVER_UNKNOWN", 122),
    approvals.APPROVERS_NOT_CONFIGURED: ("APPROVERS_NOT_CONFIGURED", 122),
    approvals.SIGNATURE_INVALID: ("SIGNATURE_INVALID", 122),
    approvals.SIGNER_NOT_ALLOWED: ("SIGNER_NOT_ALLOWED", 122),
    approvals.SIGNATURE_REPLAYED: ("SIGNATURE_REPLAYED", 122),
}


def test_codes_are_pinned() -> None:
    assert {cls: (cls.code, cls.exit_code) for cls in TABLE} == TABLE


def test_every_error_renders_as_a_canal_error() -> None:
    for cls in TABLE:
        assert isinstance(cls("message", hint="next"), CanalError)
