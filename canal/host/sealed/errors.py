"""Errors of the sealed state store. Each bad-input case has its own code (public API, pinned by a test);
none of them is ever answered by accepting or overwriting the file."""

from __future__ import annotations

from canal.core.errors import CanalError, ExitCode


class SealedError(CanalError):
    code = "SEALED_ERROR"
    exit_code = ExitCode.CANAL_ERROR


class SealedNotFoundError(SealedError):
    code = "SEALED_NOT_FOUND"


class SealedDeletedError(SealedError):
    """The revision ledger knows the document but its file is gone."""

    code = "SEALED_DELETED"


class SealedWrongKeyError(SealedError):
    """The file was sealed under a key this key store does not hold."""

    code = "SEALED_WRONG_KEY"


class SealedTamperedError(SealedError):
    """A ciphertext (a value or the wrapped data key) fails authentication."""

    code = "SEALED_TAMPERED"


class SealedSwappedError(SealedError):
    """A sealed value authenticates, but under another field's path: values were moved."""

    code = "SEALED_SWAPPED"


class SealedFieldsChangedError(SealedError):
    """The HMAC over the plaintext fails: a field was added, deleted or edited."""

    code = "SEALED_FIELDS_CHANGED"


class SealedRolledBackError(SealedError):
    """The file is older than the newest revision recorded in the ledger."""

    code = "SEALED_ROLLED_BACK"


class SealedTruncatedError(SealedError):
    """The file is empty, cut short or not JSON at all."""

    code = "SEALED_TRUNCATED"


class SealedUnknownVersionError(SealedError):
    code = "SEALED_UNKNOWN_VERSION"


class SealedRevisionConflictError(SealedError):
    """Another writer saved a newer revision first (compare-and-swap lost)."""

    code = "SEALED_REVISION_CONFLICT"
    exit_code = ExitCode.CANAL_ERROR


class SealedLockTimeoutError(SealedError):
    code = "SEALED_LOCK_TIMEOUT"


class SealedInvalidDocumentError(SealedError):
    """The caller passed something that cannot be sealed (bad id, non-JSON value, bad path)."""

    code = "SEALED_INVALID_DOCUMENT"
    exit_code = ExitCode.USAGE


SEALED_ERRORS: tuple[type[SealedError], ...] = (
    SealedError, SealedNotFoundError, SealedDeletedError, SealedWrongKeyError, SealedTamperedError,
    SealedSwappedError, SealedFieldsChangedError, SealedRolledBackError, SealedTruncatedError,
    SealedUnknownVersionError, SealedRevisionConflictError, SealedLockTimeoutError,
    SealedInvalidDocumentError,
)
