"""Errors of the audit log. Codes are public API (docs/audit.md); tests pin them."""

from __future__ import annotations

from typing import ClassVar

from canal.core.errors import CanalError, ExitCode


class AuditError(CanalError):
    """Root of every audit log error."""

    code: ClassVar[str] = "AUDIT_ERROR"


class AuditWriteError(AuditError):
    """A record could not be written durably (full disk, unwritable folder). The caller must not proceed."""

    code = "AUDIT_WRITE_FAILED"


class AuditLogCorruptError(AuditError):
    """The log's last line is partial or unreadable, so the next record cannot be chained to it."""

    code = "AUDIT_LOG_CORRUPT"


class AuditTamperedError(AuditError):
    """Verification found an edited, deleted, reordered, truncated or forged record."""

    code = "AUDIT_TAMPERED"
    exit_code = 1  # like a checker: 0 intact, 1 tampered, 125 Canal failed


class AuditLogMissingError(AuditTamperedError):
    """The log is missing or empty, yet the project has state that only a log could have recorded."""

    code = "AUDIT_LOG_MISSING"


class AuditLogForeignError(AuditTamperedError):
    """The log opens with another project's id (or opens with no project at all): it was swapped."""

    code = "AUDIT_LOG_FOREIGN"


class AuditRecordInvalidError(AuditError):
    """The caller passed an event name or data that cannot be written as a record."""

    code = "AUDIT_RECORD_INVALID"
    exit_code = ExitCode.USAGE


class CheckpointInvalidError(AuditError):
    """A checkpoint file is unreadable, or its signature does not match this host's key."""

    code = "AUDIT_CHECKPOINT_INVALID"
    exit_code = ExitCode.USAGE


class AuditKeyError(AuditError):
    """No usable host key for the audit log or the approvals."""

    code = "AUDIT_KEY_UNAVAILABLE"


class AuditExportError(AuditError):
    """The OTLP collector did not accept records (down, unreachable, or it answered with an error)."""

    code = "AUDIT_EXPORT_FAILED"
