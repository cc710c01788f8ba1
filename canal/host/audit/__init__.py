"""The tamper-evident audit log: hash-chained, HMAC-signed JSONL records, verification and checkpoints."""

from canal.host.audit.checkpoint import Checkpoint, make_checkpoint, read_checkpoint
from canal.host.audit.errors import (
    AuditError,
    AuditKeyError,
    AuditLogCorruptError,
    AuditLogForeignError,
    AuditLogMissingError,
    AuditRecordInvalidError,
    AuditTamperedError,
    AuditWriteError,
    CheckpointInvalidError,
)
from canal.host.audit.events import Decision, RunCompleted, RunStarted, summarize
from canal.host.audit.log import AuditLog, audit_path
from canal.host.audit.record import OPENED_EVENT, Record, parse_line
from canal.host.audit.verify import Head, Problem, VerifyReport, verify_log

__all__ = [
    "OPENED_EVENT",
    "AuditError",
    "AuditKeyError",
    "AuditLog",
    "AuditLogCorruptError",
    "AuditLogForeignError",
    "AuditLogMissingError",
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
