"""Errors of the key store. Codes are public API (a test pins them)."""

from __future__ import annotations

from canal.core.errors import CanalError, ErrorCode, ExitCode, register


class KeyStoreError(CanalError):
    code = "KEY_ERROR"
    exit_code = ExitCode.CANAL_ERROR


KEY_ENV_INVALID = register(KeyStoreError, "KEY_ENV_INVALID", """
    CANAL_KEY is set but is not base64 of exactly 32 bytes.
    """, exit_code=ExitCode.USAGE)

KEY_FILE_INSECURE = register(KeyStoreError, "KEY_FILE_INSECURE", """
    The key file (or its folder) is readable or writable by others, or owned by another user.
    """)

KEY_FILE_INVALID = register(KeyStoreError, "KEY_FILE_INVALID", """
    The key ring file cannot be parsed (truncated, edited by hand, unknown version).
    """)

KEY_UNKNOWN = register(KeyStoreError, "KEY_UNKNOWN", """
    A key id that the key store does not hold (retired, or another machine's key).
    """)

KEY_ROTATE_UNAVAILABLE = register(KeyStoreError, "KEY_ROTATE_UNAVAILABLE", """
    Rotation needs the key ring file; a key from CANAL_KEY is rotated by its owner.
    """, exit_code=ExitCode.USAGE)

KEY_RETIRE_REFUSED = register(KeyStoreError, "KEY_RETIRE_REFUSED", """
    Retiring the primary key, or a key that sealed files still use.
    """, exit_code=ExitCode.USAGE)


KEY_ERROR_CODES: dict[str, type[KeyStoreError] | ErrorCode[KeyStoreError]] = {
    cls.code: cls
    for cls in (KeyStoreError, KEY_ENV_INVALID, KEY_FILE_INSECURE, KEY_FILE_INVALID,
                KEY_UNKNOWN, KEY_ROTATE_UNAVAILABLE, KEY_RETIRE_REFUSED)
}
