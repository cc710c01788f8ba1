"""Errors of the audit log. Codes are public API (docs/audit.md); tests pin them."""

from __future__ import annotations

from canal.core.errors import CanalError, ExitCode, register


class AuditError(CanalError):
    """Root of every audit log error."""

    code = "AUDIT_ERROR"


AUDIT_WRITE_FAILED = register(AuditError, "AUDIT_WRITE_FAILED", """
    A record could not be written durably (full disk, unwritable folder). The caller must not proceed.
    """)

AUDIT_LOG_CORRUPT = register(AuditError, "AUDIT_LOG_CORRUPT", """
    The log's last line is partial or unreadable, so the next record cannot be chained to it.
    """)


AUDIT_TAMPERED = register(AuditError, "AUDIT_TAMPERED", """
    Verification found an edited, deleted, reordered, truncated or forged record.
    """, exit_code=1)


AUDIT_LOG_MISSING = register(AuditError, "AUDIT_LOG_MISSING", """
    The log is missing or empty, yet the project has state that only a log could have recorded.
    """, exit_code=1)

AUDIT_LOG_FOREIGN = register(AuditError, "AUDIT_LOG_FOREIGN", """
    The log opens with another project's id (or opens with no project at all): it was swapped.
    """, exit_code=1)

AUDIT_RECORD_INVALID = register(AuditError, "AUDIT_RECORD_INVALID", """
    The caller passed an event name or data that cannot be written as a record.
    """, exit_code=ExitCode.USAGE)

AUDIT_CHECKPOINT_INVALID = register(AuditError, "AUDIT_CHECKPOINT_INVALID", """
    A checkpoint file is unreadable, or its signature does not match this host's key.
    """, exit_code=ExitCode.USAGE)

AUDIT_KEY_UNAVAILABLE = register(AuditError, "AUDIT_KEY_UNAVAILABLE", """
    No usable host key for the audit log or the approvals.
    """)


class AuditExportError(AuditError):
    """The OTLP collector did not accept records (down, unreachable, or it answered with an error)."""

    code = "AUDIT_EXPORT_FAILED"

