"""The tamper-evident audit log: hash-chained, HMAC-signed JSONL records, verification and checkpoints."""

from runtime.audit.checkpoint import Checkpoint, make_checkpoint, read_checkpoint
from runtime.audit.errors import (
    AuditError,
    AuditKeyError,
    AuditLogCorruptError,
    AuditRecordInvalidError,
    AuditTamperedError,
    AuditWriteError,
    CheckpointInvalidError,
)
from runtime.audit.events import Decision, RunCompleted, RunStarted, summarize
from runtime.audit.log import AuditLog, audit_path
from runtime.audit.record import Record, parse_line
from runtime.audit.verify import Head, Problem, VerifyReport, verify_log

__all__ = [
    "AuditError",
    "AuditKeyError",
    "AuditLog",
    "AuditLogCorruptError",
    "AuditRecordInvalidError",
    "AuditTamperedError",
    "AuditWriteError",
    "Checkpoint",
    "CheckpointInvalidError",
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
