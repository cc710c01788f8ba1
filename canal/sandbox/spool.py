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


class Spool:
    """Collects a stream; memory never holds more than ``cap`` bytes of it."""

    def __init__(self, cap: int, spool_dir: Path | None, label: str) -> None:
        self.cap = cap
        self.spool_dir = spool_dir
        self.label = label
        self.size = 0
        self._sha = hashlib.sha256()  # one pass over the bytes as they arrive: nobody re-reads a spool
        self._mem: io.BytesIO | None = io.BytesIO()
        self._file: BinaryIO | None = None
        self.path: Path | None = None

    def write(self, chunk: bytes | memoryview) -> None:
        self.size += len(chunk)
        self._sha.update(chunk)
        if self._mem is not None and self._mem.tell() + len(chunk) <= self.cap:
            self._mem.write(chunk)
            return
        if self._file is None:
            self._spill()
        assert self._file is not None
        self._file.write(chunk)

    def _spill(self) -> None:
        folder = self.spool_dir if self.spool_dir is not None else private_spool_dir()
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd, name = tempfile.mkstemp(prefix=f"{self.label}-", suffix=".out", dir=folder)
        os.fchmod(fd, 0o600)
        self.path = Path(name)
        self._file = os.fdopen(fd, "wb")
        if self._mem is not None:
            self._file.write(self._mem.getbuffer())
            self._mem = None

    def finish(self) -> CapturedOutput:
        if self._file is not None:
            self._file.close()
            return CapturedOutput(size=self.size, path=self.path, sha256=self._sha.hexdigest())
        data = self._mem.getvalue() if self._mem is not None else b""
        return CapturedOutput(size=self.size, data=data, sha256=self._sha.hexdigest())
