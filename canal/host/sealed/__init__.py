"""Sealed state: JSON documents whose structure stays readable and whose sensitive values are sealed
one by one with AES-256-GCM, bound to their path, under a per-write data key wrapped by a key id."""

from canal.host.sealed.errors import (
    SEALED_ERRORS,
    SealedDeletedError,
    SealedError,
    SealedFieldsChangedError,
    SealedInvalidDocumentError,
    SealedLockTimeoutError,
    SealedNotFoundError,
    SealedRevisionConflictError,
    SealedRolledBackError,
    SealedSwappedError,
    SealedTamperedError,
    SealedTruncatedError,
    SealedUnknownVersionError,
    SealedWrongKeyError,
)
from canal.host.sealed.ledger import FileLedger, MemoryLedger
from canal.host.sealed.store import SealedStore

__all__ = [
    "SEALED_ERRORS", "FileLedger", "MemoryLedger", "SealedDeletedError", "SealedError",
    "SealedFieldsChangedError", "SealedInvalidDocumentError", "SealedLockTimeoutError",
    "SealedNotFoundError", "SealedRevisionConflictError", "SealedRolledBackError", "SealedStore",
    "SealedSwappedError", "SealedTamperedError", "SealedTruncatedError", "SealedUnknownVersionError",
    "SealedWrongKeyError",
]
