"""Key-encryption keys: load, create, rotate, retire, and derive per-purpose subkeys.

Keys live in ``CANAL_KEY`` (base64 of 32 bytes) or in a key ring file under the user's config folder
(``<config dir>/keys/keyring.json``, 0600 in a 0700 folder). They never enter a container.
"""

from canal.host.keys.errors import (
    KeyEnvInvalidError,
    KeyFileInsecureError,
    KeyFileInvalidError,
    KeyRetireRefusedError,
    KeyRotateUnavailableError,
    KeyStoreError,
    KeyUnknownError,
)
from canal.host.keys.store import KeyInfo, KeyStore, key_id_of

__all__ = [
    "KeyEnvInvalidError",
    "KeyFileInsecureError",
    "KeyFileInvalidError",
    "KeyInfo",
    "KeyRetireRefusedError",
    "KeyRotateUnavailableError",
    "KeyStore",
    "KeyStoreError",
    "KeyUnknownError",
    "key_id_of",
]
