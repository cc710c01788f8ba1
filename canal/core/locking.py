"""An advisory file lock (``flock``) with a deadline on ``time.monotonic()``.

Locks are unreliable on some bind mounts (docker/for-mac#7004), so callers pair this lock with a
revision compare-and-swap; the lock only makes the common case wait instead of fail.
"""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from canal.core.fsutil import FILE_MODE, private_dir


class LockTimeout(Exception):
    def __init__(self, path: Path, waited: float) -> None:
        super().__init__(f"lock {path} still held after {waited:.1f}s")
        self.path = path
        self.waited = waited


@contextmanager
def file_lock(path: Path, timeout: float = 10.0) -> Iterator[None]:
    private_dir(path.parent)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, FILE_MODE)
    try:
        _acquire(fd, path, timeout)
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def _acquire(fd: int, path: Path, timeout: float) -> None:
    start = time.monotonic()
    delay = 0.001
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            waited = time.monotonic() - start
            if waited >= timeout:
                raise LockTimeout(path, waited) from None
            time.sleep(delay)
            delay = min(delay * 2, 0.05)
