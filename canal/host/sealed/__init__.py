"""Sealed state: JSON documents whose structure stays readable and whose sensitive values are sealed
one by one with AES-256-GCM, bound to their path, under a per-write data key wrapped by a key id."""

from canal.host.sealed.errors import (
    SEALED_DELETED,
    SEALED_ERRORS,
    SEALED_FIELDS_CHANGED,
    SEALED_INVALID_DOCUMENT,
    SEALED_LOCK_TIMEOUT,
    SEALED_SWAPPED,
    SEALED_TAMPERED,
    SEALED_TRUNCATED,
    SEALED_UNKNOWN_VERSION,
    SEALED_WRONG_KEY,
    SealedError,
    SealedNotFoundError,
    SealedRevisionConflictError,
    SealedRolledBackError,
)
from canal.host.sealed.ledger import FileLedger, MemoryLedger
from canal.host.sealed.store import SealedStore

__all__ = [
    "SEALED_DELETED",
    "SEALED_ERRORS",
    "SEALED_FIELDS_CHANGED",
    "SEALED_INVALID_DOCUMENT",
    "SEALED_LOCK_TIMEOUT",
    "SEALED_SWAPPED",
    "SEALED_TAMPERED",
    "SEALED_TRUNCATED",
    "SEALED_UNKNOWN_VERSION",
    "SEALED_WRONG_KEY",
    "FileLedger",
    "MemoryLedger",
    "SealedError",
    "SealedNotFoundError",
    "SealedRevisionConflictError",
    "SealedRolledBackError",
    "SealedStore",
]
