"""Errors of the sealed state store. Each bad-input case has its own code (public API, pinned by a test);
none of them is ever answered by accepting or overwriting the file."""

from __future__ import annotations

from canal.core.errors import CanalError, ErrorCode, ExitCode, register


class SealedError(CanalError):
    code = "SEALED_ERROR"
    exit_code = ExitCode.CANAL_ERROR


class SealedNotFoundError(SealedError):
    code = "SEALED_NOT_FOUND"


SEALED_DELETED = register(SealedError, "SEALED_DELETED", """
    The revision ledger knows the document but its file is gone.
    """)

SEALED_WRONG_KEY = register(SealedError, "SEALED_WRONG_KEY", """
    The file was sealed under a key this key store does not hold.
    """)

SEALED_TAMPERED = register(SealedError, "SEALED_TAMPERED", """
    A ciphertext (a value or the wrapped data key) fails authentication.
    """)

SEALED_SWAPPED = register(SealedError, "SEALED_SWAPPED", """
    A sealed value authenticates, but under another field's path: values were moved.
    """)

SEALED_FIELDS_CHANGED = register(SealedError, "SEALED_FIELDS_CHANGED", """
    The HMAC over the plaintext fails: a field was added, deleted or edited.
    """)


class SealedRolledBackError(SealedError):
    """The file is older than the newest revision recorded in the ledger."""

    code = "SEALED_ROLLED_BACK"


SEALED_TRUNCATED = register(SealedError, "SEALED_TRUNCATED", """
    The file is empty, cut short or not JSON at all.
    """)

SEALED_UNKNOWN_VERSION = register(SealedError, "SEALED_UNKNOWN_VERSION", "Sealed unknown version.")


class SealedRevisionConflictError(SealedError):
    """Another writer saved a newer revision first (compare-and-swap lost)."""

    code = "SEALED_REVISION_CONFLICT"
    exit_code = ExitCode.CANAL_ERROR


SEALED_LOCK_TIMEOUT = register(SealedError, "SEALED_LOCK_TIMEOUT", "Sealed lock timeout.")

SEALED_INVALID_DOCUMENT = register(SealedError, "SEALED_INVALID_DOCUMENT", """
    The caller passed something that cannot be sealed (bad id, non-JSON value, bad path).
    """, exit_code=ExitCode.USAGE)


SEALED_ERRORS: tuple[type[SealedError] | ErrorCode[SealedError], ...] = (
    SealedError, SealedNotFoundError, SEALED_DELETED, SEALED_WRONG_KEY, SEALED_TAMPERED,
    SEALED_SWAPPED, SEALED_FIELDS_CHANGED, SealedRolledBackError, SEALED_TRUNCATED,
    SEALED_UNKNOWN_VERSION, SealedRevisionConflictError, SEALED_LOCK_TIMEOUT,
    SEALED_INVALID_DOCUMENT,
)
