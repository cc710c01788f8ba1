"""Errors of the key store. Codes are public API (a test pins them)."""

from __future__ import annotations

from canal.core.errors import CanalError, ExitCode


class KeyStoreError(CanalError):
    code = "KEY_ERROR"
    exit_code = ExitCode.CANAL_ERROR


class KeyEnvInvalidError(KeyStoreError):
    """CANAL_KEY is set but is not base64 of exactly 32 bytes."""

    code = "KEY_ENV_INVALID"
    exit_code = ExitCode.USAGE


class KeyFileInsecureError(KeyStoreError):
    """The key file (or its folder) is readable or writable by others, or owned by another user."""

    code = "KEY_FILE_INSECURE"


class KeyFileInvalidError(KeyStoreError):
    """The key ring file cannot be parsed (truncated, edited by hand, unknown version)."""

    code = "KEY_FILE_INVALID"


class KeyUnknownError(KeyStoreError):
    """A key id that the key store does not hold (retired, or another machine's key)."""

    code = "KEY_UNKNOWN"


class KeyRotateUnavailableError(KeyStoreError):
    """Rotation needs the key ring file; a key from CANAL_KEY is rotated by its owner."""

    code = "KEY_ROTATE_UNAVAILABLE"
    exit_code = ExitCode.USAGE


class KeyRetireRefusedError(KeyStoreError):
    """Retiring the primary key, or a key that sealed files still use."""

    code = "KEY_RETIRE_REFUSED"
    exit_code = ExitCode.USAGE


KEY_ERROR_CODES: dict[str, type[KeyStoreError]] = {
    cls.code: cls
    for cls in (KeyStoreError, KeyEnvInvalidError, KeyFileInsecureError, KeyFileInvalidError,
                KeyUnknownError, KeyRotateUnavailableError, KeyRetireRefusedError)
}
