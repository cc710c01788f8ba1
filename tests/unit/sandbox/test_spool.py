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


def test_chunks_past_the_cap_keep_their_order_whatever_their_sizes(tmp_path: Path) -> None:
    # past the cap chunks are gathered before they are written (spool.WRITE_BEHIND): a small chunk
    # after one that did not fit must not slip into memory ahead of it
    chunks = [b"a" * 10, b"b" * 20, b"c" * 3,
              *(bytes([65 + i % 26]) * (i * 7919 % 70_000) for i in range(60))]
    for max_bytes in (None, 300_000):
        spool = Spool(16, tmp_path, "stdout", max_bytes)
        for chunk in chunks:
            spool.write(chunk)
        got = spool.finish()
        whole = b"".join(chunks)
        assert got.sha256 == hashlib.sha256(whole).hexdigest()
        if max_bytes is None:
            assert got.read_bytes() == whole
        else:
            kept = got.read_bytes()
            assert kept.startswith(whole[:150_000])
            assert kept.endswith(whole[-150_000:])
            assert got.dropped == len(whole) - 300_000
