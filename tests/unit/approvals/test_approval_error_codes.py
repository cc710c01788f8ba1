"""Error codes and exit codes are public API: this table pins them."""

from __future__ import annotations

from canal.core.errors import CanalError
from canal.host import approvals, audit

TABLE = {
    audit.AuditError: ("AUDIT_ERROR", 125),
    audit.AuditWriteError: ("AUDIT_WRITE_FAILED", 125),
    audit.AuditLogCorruptError: ("AUDIT_LOG_CORRUPT", 125),
    audit.AuditTamperedError: ("AUDIT_TAMPERED", 1),
    audit.AuditRecordInvalidError: ("AUDIT_RECORD_INVALID", 2),
    audit.CheckpointInvalidError: ("AUDIT_CHECKPOINT_INVALID", 2),
    audit.AuditKeyError: ("AUDIT_KEY_UNAVAILABLE", 125),
    approvals.ApprovalError: ("APPROVAL_INVALID", 122),
    approvals.ApprovalExpiredError: ("APPROVAL_EXPIRED", 122),
    approvals.ApprovalReusedError: ("APPROVAL_REUSED", 122),
    approvals.ApprovalForgedError: ("APPROVAL_FORGED", 122),
    approvals.ApprovalMismatchError: ("APPROVAL_MISMATCH", 122),
    approvals.ApprovalPendingError: ("APPROVAL_PENDING", 120),
    approvals.ApproverUnverifiedError: ("APPROVER_UNVERIFIED", 122),
    approvals.ApprovalStoreError: ("APPROVAL_STORE_FAILED", 125),
    approvals.ApprovalDeniedError: ("APPROVAL_DENIED", 122),
    approvals.ApproverIsAgentError: ("APPROVER_IS_AGENT", 122),
    approvals.ApproverUnknownError: ("APPROVER_UNKNOWN", 122),
    approvals.ApproversNotConfiguredError: ("APPROVERS_NOT_CONFIGURED", 122),
    approvals.SignatureInvalidError: ("SIGNATURE_INVALID", 122),
    approvals.SignerNotAllowedError: ("SIGNER_NOT_ALLOWED", 122),
    approvals.SignatureReplayedError: ("SIGNATURE_REPLAYED", 122),
}


def test_codes_are_pinned() -> None:
    assert {cls: (cls.code, cls.exit_code) for cls in TABLE} == TABLE


def test_every_error_renders_as_a_canal_error() -> None:
    for cls in TABLE:
        assert isinstance(cls("message", hint="next"), CanalError)
