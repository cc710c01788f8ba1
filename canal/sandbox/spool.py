"""Bounded capture of one output stream: bytes in memory up to a cap, then a 0600 spool file."""

from __future__ import annotations

import hashlib
import io
import os
import tempfile
from pathlib import Path
from typing import BinaryIO

from canal.sandbox.result import CapturedOutput


def private_spool_dir(parent: Path | None = None) -> Path:
    """A fresh 0700 folder for spool files (in ``parent`` when given, else the system temp dir)."""
    if parent is not None:
        parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix="canal-spool-", dir=parent))


def kept_as_it_came(max_bytes: int | None) -> int | None:
    """How many bytes at the start of a stream its spool file holds as they came (None: all of it)."""
    return None if max_bytes is None else max(1, max_bytes // 2)


WRITE_BEHIND = 1024 * 1024  # bytes past the memory cap gathered before one digest update and write


class Spool:
    """Collects a stream; memory never holds more than ``cap`` bytes of it (and, past that, up to
    ``WRITE_BEHIND`` bytes on their way to the file), and the spool file never more than ``max_bytes``:
    past that, the first half and the last half are kept (the last in a ring file) and the middle is
    dropped, with a marker line where it was.

    Past the cap, chunks (64 KiB frames) are written a MiB at a time: each digest update and file write
    lets go of the interpreter lock, and getting it back could wait for another thread's time slice
    (the early save's, ``presenter/early.py``), once per frame."""

    def __init__(self, cap: int, spool_dir: Path | None, label: str, max_bytes: int | None = None) -> None:
        self.cap = cap
        self.spool_dir = spool_dir
        self.label = label
        self.size = 0
        self._sha = hashlib.sha256()  # one pass over the bytes as they arrive: nobody re-reads a spool
        self._mem: io.BytesIO | None = io.BytesIO()
        self._file: BinaryIO | None = None
        self.path: Path | None = None
        self._head = kept_as_it_came(max_bytes)
        self._tail = None if max_bytes is None else max(1, max_bytes - max_bytes // 2)
        self._in_file = 0
        self._ring: BinaryIO | None = None
        self._ring_pos = 0
        self._ring_filled = 0
        self._behind: list[bytes] = []
        self._behind_size = 0

    def write(self, chunk: bytes | memoryview) -> None:
        self.size += len(chunk)
        if self._mem is not None and not self._behind and self._mem.tell() + len(chunk) <= self.cap:
            self._sha.update(chunk)
            self._mem.write(chunk)
            return
        self._behind.append(bytes(chunk))
        self._behind_size += len(chunk)
        if self._behind_size >= WRITE_BEHIND:
            self._flush()

    def _flush(self) -> None:
        chunk, self._behind, self._behind_size = b"".join(self._behind), [], 0
        self._sha.update(chunk)
        if self._file is None:
            self._spill()
        assert self._file is not None
        view = memoryview(chunk)
        if self._head is not None:
            room = max(0, self._head - self._in_file)
            if len(view) > room:
                self._to_ring(view[room:])
                view = view[:room]
        self._file.write(view)
        self._in_file += len(view)

    def _to_ring(self, view: memoryview) -> None:
        assert self._tail is not None
        if self._ring is None:
            # closed in _close_ring (finish), like the spool file itself
            self._ring = tempfile.TemporaryFile(dir=self.path.parent if self.path else None)  # noqa: SIM115
        if len(view) >= self._tail:
            view = view[len(view) - self._tail:]
        while view:
            part = view[:self._tail - self._ring_pos]
            self._ring.seek(self._ring_pos)
            self._ring.write(part)
            self._ring_pos = (self._ring_pos + len(part)) % self._tail
            self._ring_filled = min(self._tail, self._ring_filled + len(part))
            view = view[len(part):]

    def _spill(self) -> None:
        folder = self.spool_dir if self.spool_dir is not None else private_spool_dir()
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd, name = tempfile.mkstemp(prefix=f"{self.label}-", suffix=".out", dir=folder)
        os.fchmod(fd, 0o600)
        self.path = Path(name)
        self._file = os.fdopen(fd, "wb")
        if self._mem is not None:
            held = self._mem.getbuffer()
            keep = len(held) if self._head is None else min(len(held), self._head)
            self._file.write(held[:keep])
            self._in_file = keep
            if keep < len(held):
                self._to_ring(held[keep:])
            held.release()
            self._mem = None

    def _close_ring(self) -> int:
        """Append the kept tail after a marker; returns how many bytes were dropped."""
        assert self._file is not None
        if self._ring is None:
            return 0
        dropped = self.size - self._in_file - self._ring_filled
        self._file.write(f"\n[... {dropped} bytes dropped here by Canal: over storage.output_per_stream, "
                         "the first and last parts are kept ...]\n".encode())
        ring = self._ring
        order = ((0, self._ring_filled) if self._ring_filled < (self._tail or 0)
                 else (self._ring_pos, self._ring_filled - self._ring_pos))
        spans = [order] if order[0] == 0 else [order, (0, self._ring_pos)]
        for start, length in spans:
            ring.seek(start)
            while length > 0:
                block = ring.read(min(length, 1 << 20))
                self._file.write(block)
                length -= len(block)
        ring.close()
        return dropped

    def finish(self) -> CapturedOutput:
        if self._behind:
            self._flush()
        if self._file is not None:
            dropped = self._close_ring()
            self._file.close()
            return CapturedOutput(size=self.size, path=self.path, sha256=self._sha.hexdigest(),
                                  dropped=dropped)
        data = self._mem.getvalue() if self._mem is not None else b""
        return CapturedOutput(size=self.size, data=data, sha256=self._sha.hexdigest())
