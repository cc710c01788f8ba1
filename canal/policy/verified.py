"""Which policies already passed their inline examples, remembered across processes and projects.

Running every rule's examples is most of a policy's load (about 0.3 s for the standard profile: each
example is parsed and decided), and a new project's first command paid it although the same rules had
passed in the project next door. A policy that passed leaves a mark in a private folder of the user's,
named by the digest of everything the examples exercise (each file's rules and examples as parsed, the
profile chain, fork or not, and the policy engine's own code and data); a later load of the same
policy finds the mark and skips only the examples: its rules are still compiled from the text at hand.

A mark is trusted only when it holds the HMAC of its name under a key of the user's key store
(``canal.host.keys``): a file planted or copied there without that key, truncated, or made under
another key counts as never written, and the examples run again. Nothing else is read from it.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import re
from pathlib import Path

from canal.core.fsutil import atomic_write

_NAME = re.compile(r"^[0-9a-f]{64}$")
MAX_MARK = 128  # a mark is 64 hex digits: anything longer is not one


class VerifiedMarks:
    """Marks of policies whose examples passed, one file per policy digest, each an HMAC of its name."""

    def __init__(self, folder: Path, key: bytes) -> None:
        if len(key) < 16:
            msg = "the key of the verified policies must be at least 16 bytes"
            raise ValueError(msg)
        self.folder = folder
        self._key = key

    def _mac(self, name: str) -> bytes:
        message = b"policy-examples-passed\0" + name.encode()
        return hmac.new(self._key, message, hashlib.sha256).hexdigest().encode()

    def passed(self, name: str) -> bool:
        """True only when the mark of ``name`` is there and carries this key's HMAC of it."""
        if not _NAME.match(name):
            return False
        try:
            fd = os.open(self.folder / name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError:
            return False
        try:
            held = os.read(fd, MAX_MARK + 1)
        except OSError:
            return False
        finally:
            os.close(fd)
        return hmac.compare_digest(held, self._mac(name))

    def remember(self, name: str) -> None:
        """Leave the mark (0600, in a 0700 folder, written whole); a failure only costs the next load."""
        if not _NAME.match(name):
            msg = f"not a policy digest: {name!r}"
            raise ValueError(msg)
        try:
            atomic_write(self.folder / name, self._mac(name), durable=False)
        except OSError:
            return
