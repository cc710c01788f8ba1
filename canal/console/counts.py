"""The last sign count seen of each passkey (WebAuthn clone detection), in the project's state folder.

An authenticator that counts signs each one with a higher count; a count that does not go up means a
copy of the key signed (``PASSKEY_INVALID``). Authenticators that do not count always say 0.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path

from canal.core.fsutil import atomic_write, private_dir


class SignCounts:
    def __init__(self, folder: Path) -> None:
        self.path = folder / "passkey-sign-counts.json"
        self._lock = threading.Lock()

    def _read(self) -> dict[str, int]:
        try:
            data = json.loads(self.path.read_text())
        except (FileNotFoundError, ValueError):
            return {}
        return {str(k): int(v) for k, v in data.items()} if isinstance(data, dict) else {}

    def get(self, credential_id: str) -> int:
        with self._lock:
            return self._read().get(credential_id, 0)

    def set(self, credential_id: str, count: int) -> None:
        with self._lock:
            data = self._read()
            data[credential_id] = count
            private_dir(self.path.parent)
            atomic_write(self.path, json.dumps(data, sort_keys=True).encode())
