"""The spool takes the stream's digest as the bytes arrive, in memory and once spilled to disk."""

from __future__ import annotations

import hashlib
from pathlib import Path

from canal.sandbox.spool import Spool


def test_digest_is_taken_as_bytes_arrive_in_memory_and_spooled(tmp_path: Path) -> None:
    small, big = Spool(16, tmp_path, "stdout"), Spool(16, tmp_path, "stdout")
    small.write(b"hello")
    for _ in range(10):
        big.write(b"0123456789")
    assert small.finish().sha256 == hashlib.sha256(b"hello").hexdigest()
    spooled = big.finish()
    assert spooled.spooled
    assert spooled.sha256 == hashlib.sha256(b"0123456789" * 10).hexdigest()
