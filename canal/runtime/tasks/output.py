"""A task's output as it arrives: one file, stdout and stderr together in arrival order (as a terminal
shows them), in the sandbox's output folder, so the agent can also read it from inside the sandbox
(read-only, at the path the task's record names).

The file is redacted as it is written, as saved outputs are (``presenter.textclean``): whole lines go
through the redactor with the lines around them in view. Output waits in memory, in batches, until
``BATCH`` bytes came, it waited ``HOLD_S``, or the end (and the last lines of a batch for the overlap),
so a secret that reaches the host in two writes (two frames of the background channel) within that
time is seen whole. No unredacted byte is ever written: offsets, marks and ``size``
are of the clean file, which is what readers read; ``received`` and ``sha`` are of what the task printed
(the audit record's). A partial last line waits for its line break, as it does for readers.

On the host the file is 0600, created with O_EXCL (never following a link); when Canal runs as root it
belongs to the sandbox's user, like the presenter's saved outputs. Readers wait on the log's condition
for more bytes or the end.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path

from canal.core.fsutil import FILE_MODE, private_dir
from canal.host.ports import Redactor
from canal.presenter.binclean import NotRedactable
from canal.presenter.textclean import OVERLAP, TextCleaner

_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
MARK_EVERY_S = 1.0
MAX_MARKS = 4096
HOLD_S = 0.5  # how long output may wait, unwritten, for the output after it
BATCH = OVERLAP  # bytes given to the redactor at once, at most every HOLD_S otherwise


def log_name(task_id: str) -> str:
    return f"task-{task_id}.log"


class TaskLog:
    def __init__(self, folder: Path, task_id: str, file_owner: tuple[int, int] | None,
                 redact_lines: Redactor) -> None:
        folder = private_dir(folder)
        if file_owner is not None:
            os.chown(folder, *file_owner)
        self.path = folder / log_name(task_id)
        self._fd = os.open(self.path, _FLAGS, FILE_MODE)
        if file_owner is not None:
            os.fchown(self._fd, *file_owner)
        self._redact_lines = redact_lines
        self._cleaner = TextCleaner(redact_lines)
        self._waiting = bytearray()  # received, not yet given to the cleaner
        self._oldest: float | None = None  # when the oldest byte not yet written came
        self.size = 0  # bytes in the file (redacted)
        self.received = 0  # bytes the task printed
        self.stderr_bytes = 0
        self.sha = hashlib.sha256()
        self.marks: list[tuple[float, int]] = [(time.time(), 0)]
        self.cond = threading.Condition()
        self.ended = False
        self.write_error = ""

    def write(self, stream: str, data: bytes) -> None:
        with self.cond:
            self.received += len(data)
            self.sha.update(data)
            if stream == "stderr":
                self.stderr_bytes += len(data)
            before = self.size
            self._waiting += data
            self._oldest = time.monotonic() if self._oldest is None else self._oldest
            self._drain()
            now = time.time()
            if now - self.marks[-1][0] >= MARK_EVERY_S:
                self.marks.append((now, before))
                if len(self.marks) > MAX_MARKS:
                    del self.marks[1::2]  # thin out evenly, keep the first
            self.cond.notify_all()

    def settle(self) -> None:
        """Write what has waited ``HOLD_S`` (a reader asks: the output may have gone quiet)."""
        with self.cond:
            if not self.ended and self._drain():
                self.cond.notify_all()

    def _drain(self) -> bool:
        """Redact and write: a batch once ``BATCH`` bytes wait (the last lines held for the overlap),
        everything but a partial line once the oldest byte has waited ``HOLD_S``. Batching keeps the
        redactor's work per byte bounded however small the writes (it sees the overlap again each time)."""
        now, wrote = time.monotonic(), False
        if len(self._waiting) >= BATCH:
            self._put(self._clean(self._cleaner.feed, bytes(self._waiting)))
            self._waiting.clear()
            self._oldest, wrote = (now if self._cleaner.held else None), True
        if self._oldest is not None and now - self._oldest >= HOLD_S:
            self._write_waiting(final=False)
            self._oldest, wrote = (now if self._cleaner.held else None), True
        return wrote

    def close(self) -> None:
        with self.cond:
            if self.ended:
                return
            self._write_waiting(final=True)
            self.ended = True
            with contextlib.suppress(OSError):
                os.close(self._fd)
            self.cond.notify_all()

    def _write_waiting(self, *, final: bool) -> None:
        """Everything waiting and held, but a partial last line unless ``final``."""
        clean = self._clean(self._cleaner.feed, bytes(self._waiting))
        self._waiting.clear()
        self._put(clean + self._clean(self._cleaner.finish if final else self._cleaner.flush))

    def _clean(self, step: Callable[..., bytes], *data: bytes) -> bytes:
        """Clean bytes to write; when the redactor fails, what it held is dropped (fail closed)."""
        try:
            return step(*data)
        except NotRedactable as exc:
            self._cleaner = TextCleaner(self._redact_lines)
            return f"[canal: output not kept, it could not be redacted: {exc}]\n".encode()

    def _put(self, clean: bytes) -> None:
        view = memoryview(clean)
        try:
            while view:
                view = view[os.write(self._fd, view):]
        except OSError as exc:  # a full disk: the task goes on; what could not be kept is counted
            self.write_error = exc.strerror or str(exc)
        self.size += len(clean) - len(view)

    def wait(self, offset: int, timeout_s: float) -> bool:
        """Until the log holds more than ``offset`` bytes or has ended; False on timeout."""
        def more() -> bool:
            return self.size > offset or self.ended

        with self.cond:
            if self.cond.wait_for(more, timeout_s):
                return True
            self.settle()
            return more()


def read_range(path: Path, offset: int, limit: int) -> bytes:
    """Up to ``limit`` bytes of a task's log from ``offset`` (b"" past its end or when it is gone)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return b""
    try:
        return os.pread(fd, limit, offset)
    finally:
        os.close(fd)


def offset_at(marks: list[tuple[float, int]], since: float, end: int) -> int:
    """The log offset of the first output at or after the unix time ``since`` (by the samples taken,
    about one a second); ``end`` when nothing came since."""
    for ts, offset in marks:
        if ts >= since:
            return offset
    return end
