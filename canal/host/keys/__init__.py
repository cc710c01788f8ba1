"""Key-encryption keys: load, create, rotate, retire, and derive per-purpose subkeys.

Keys live in ``CANAL_KEY`` (base64 of 32 bytes) or in a key ring file under the user's config folder
(``<config dir>/keys/keyring.json``, 0600 in a 0700 folder). They never enter a container.
"""

from canal.host.keys.errors import (
    KEY_ENV_INVALID,
    KEY_FILE_INSECURE,
    KEY_FILE_INVALID,
    KEY_RETIRE_REFUSED,
    KEY_ROTATE_UNAVAILABLE,
    KEY_UNKNOWN,
    KeyStoreError,
)
from canal.host.keys.store import KeyInfo, KeyStore, key_id_of

__all__ = [
    "KEY_ENV_INVALID",
    "KEY_FILE_INSECURE",
    "KEY_FILE_INVALID",
    "KEY_RETIRE_REFUSED",
    "KEY_ROTATE_UNAVAILABLE",
    "KEY_UNKNOWN",
    "KeyInfo",
    "KeyStore",
    "KeyStoreError",
    "key_id_of",
]
