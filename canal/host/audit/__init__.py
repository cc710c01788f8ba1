"""The tamper-evident audit log: hash-chained, HMAC-signed JSONL records, verification and checkpoints."""

from __future__ import annotations

from typing import TYPE_CHECKING

from canal.core.lazy import exports

if TYPE_CHECKING:
    from canal.host.audit.checkpoint import Checkpoint, make_checkpoint, read_checkpoint
    from canal.host.audit.errors import (
        AUDIT_CHECKPOINT_INVALID,
        AUDIT_KEY_UNAVAILABLE,
        AUDIT_LOG_CORRUPT,
        AUDIT_LOG_FOREIGN,
        AUDIT_LOG_MISSING,
        AUDIT_RECORD_INVALID,
        AUDIT_TAMPERED,
        AUDIT_WRITE_FAILED,
        AuditError,
    )
    from canal.host.audit.events import Decision, RunCompleted, RunStarted, summarize
    from canal.host.audit.log import AuditLog, audit_path
    from canal.host.audit.record import OPENED_EVENT, Record, parse_line
    from canal.host.audit.verify import Head, Problem, VerifyReport, verify_log

__all__ = [
    "AUDIT_CHECKPOINT_INVALID",
    "AUDIT_KEY_UNAVAILABLE",
    "AUDIT_LOG_CORRUPT",
    "AUDIT_LOG_FOREIGN",
    "AUDIT_LOG_MISSING",
    "AUDIT_RECORD_INVALID",
    "AUDIT_TAMPERED",
    "AUDIT_WRITE_FAILED",
    "OPENED_EVENT",
    "AuditError",
    "AuditLog",
    "Checkpoint",
    "Decision",
    "Head",
    "Problem",
    "Record",
    "RunCompleted",
    "RunStarted",
    "VerifyReport",
    "audit_path",
    "make_checkpoint",
    "parse_line",
    "read_checkpoint",
    "summarize",
    "verify_log",
]

# each name is imported from its module when first used (canal.core.lazy)
__getattr__ = exports(__name__, {
    ".checkpoint": ("Checkpoint", "make_checkpoint", "read_checkpoint"),
    ".errors": (
        "AUDIT_CHECKPOINT_INVALID", "AUDIT_KEY_UNAVAILABLE", "AUDIT_LOG_CORRUPT", "AUDIT_LOG_FOREIGN",
        "AUDIT_LOG_MISSING", "AUDIT_RECORD_INVALID", "AUDIT_TAMPERED", "AUDIT_WRITE_FAILED", "AuditError",
    ),
    ".events": ("Decision", "RunCompleted", "RunStarted", "summarize"),
    ".log": ("AuditLog", "audit_path"),
    ".record": ("OPENED_EVENT", "Record", "parse_line"),
    ".verify": ("Head", "Problem", "VerifyReport", "verify_log"),
})
