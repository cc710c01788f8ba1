"""Saving a long text output redacted while it still arrives, so the save overlaps the transfer.

A spooled text output is saved block by block through ``textclean`` once the command has ended
(``view.save_stream``). Here the same blocks (``chunk_bytes`` each, from the start of the stream) are
cleaned on a thread as the stream's chunks come in (the sandbox layer's ``on_output``), into a file
that has no name yet (``O_TMPFILE``): redacted bytes only, invisible to the sandbox, gone with the
process if nothing adopts it. When the presenter then decides to save the stream as text, it adopts
this work (``resume``): the same cleaner and line index carry on from the first block not yet
cleaned, read from the spool file, so the saved file and the index are those of the whole pass, byte
for byte. Otherwise (binary, short enough to show, held in memory, another presenter config) it is
discarded.

Only the part of the stream that the spool file keeps as it came is cleaned ahead: blocks that end
before ``stop_at`` (the first half of ``storage.output_per_stream``: past it the spool drops its
middle). Memory stays bounded: at most ``MAX_BACKLOG`` bytes wait for the thread; past that it takes
no more, and the save at the end does the rest. Nothing here blocks the reader of the stream.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from canal.core.fsutil import FILE_MODE, private_dir
from canal.host.ports import Redactor
from canal.presenter.config import PresenterConfig
from canal.presenter.scan import Indexer, StreamIndex
from canal.presenter.sniff import classify
from canal.presenter.store import spread_for
from canal.presenter.textclean import TextCleaner, read_blocks

MAX_BACKLOG = 8 * 1024 * 1024  # bytes received but not yet cleaned: past this, no more are taken


@dataclass(frozen=True)
class Resumed:
    index: StreamIndex
    fd: int  # the finished file, still without a name: ``OutputStore.adopt`` names it


class EarlySave:
    """Fed every chunk of one output stream, in order (``feed``, from the thread that reads it)."""

    def __init__(self, folder: Path, redact_lines: Redactor, config: PresenterConfig, *,
                 start_after: int, stop_at: int | None) -> None:
        self.redact_lines = redact_lines
        self._folder = folder
        self._config = config
        limits = config.stdout_limits()
        self.keep = (limits.head_lines, limits.tail_lines)
        self._chunk = config.chunk_bytes
        self._start_after = max(start_after, config.binary_sample_bytes)
        # whole blocks that end at or before this are in the spool file as they came
        self._stop_at = None if stop_at is None else stop_at - stop_at % self._chunk
        self._pending: list[bytes] = []
        self._pending_size = 0
        self._received = 0
        self._taking = True
        self._blocks: deque[bytes] = deque()
        self._cond = threading.Condition()
        self._ended = False
        self._thread: threading.Thread | None = None
        self._fd = -1
        self._failed = False
        self.cleaned = 0  # bytes of the stream cleaned and written so far
        self._cleaner = TextCleaner(redact_lines)
        self._indexer = Indexer(head=self.keep[0], tail=self.keep[1])

    @property
    def backlog(self) -> int:
        """Bytes in whole blocks waiting for the thread."""
        return len(self._blocks) * self._chunk

    def feed(self, data: bytes) -> None:
        if not self._taking or self._failed:
            return
        self._pending.append(data)
        self._pending_size += len(data)
        self._received += len(data)
        if self._thread is None:
            if self._received <= self._start_after:
                return
            if not self._start():
                self._stop_taking()
                return
        if self._pending_size >= self._chunk:
            self._queue()

    def _queue(self) -> None:
        """The whole blocks held, to the thread: as many as the backlog and ``stop_at`` let through
        (then no more are taken)."""
        held = b"".join(self._pending)
        whole = len(held) - len(held) % self._chunk
        self._pending, self._pending_size = [held[whole:]], len(held) - whole
        end = whole
        if self._stop_at is not None:
            end = min(end, max(0, self._stop_at - (self._received - len(held))))
        with self._cond:
            room = max(0, MAX_BACKLOG - self.backlog)
            end = min(end, room - room % self._chunk)
            self._blocks.extend(held[at:at + self._chunk] for at in range(0, end, self._chunk))
            self._cond.notify()
        if end < whole:
            self._stop_taking()

    def _start(self) -> bool:
        """Text (by the presenter's own test of the first bytes) and a file without a name: a thread."""
        sample = b"".join(self._pending)[:self._config.binary_sample_bytes]
        if classify(sample, self._config.binary_threshold) is not None:
            return False
        try:
            flags = os.O_TMPFILE | os.O_WRONLY | os.O_CLOEXEC
            self._fd = os.open(private_dir(self._folder), flags, FILE_MODE)
        except OSError:  # a filesystem without unnamed files: the save at the end does it all
            return False
        self._thread = threading.Thread(target=self._work, name="canal-early-save", daemon=True)
        self._thread.start()
        return True

    def _stop_taking(self) -> None:
        self._taking = False
        self._pending, self._pending_size = [], 0

    def _work(self) -> None:
        try:
            while True:
                with self._cond:
                    while not self._blocks and not self._ended:
                        self._cond.wait()
                    if not self._blocks:
                        return
                    block = self._blocks.popleft()
                self._indexer.add(block)
                _write_all(self._fd, self._cleaner.feed(block))
                self.cleaned += len(block)
        except Exception:  # the save at the end does it again, and meets the same error itself
            self._failed = True
            with self._cond:
                self._blocks.clear()

    def _end(self, *, drop: bool) -> None:
        """No more blocks; the thread stops once it has cleaned those it holds (or at once: ``drop``)."""
        self._stop_taking()
        with self._cond:
            self._ended = True
            if drop:
                self._blocks.clear()
            self._cond.notify()
        if self._thread is not None:
            self._thread.join()

    def resume(self, src: BinaryIO, redact_lines: Redactor | None, keep: tuple[int, int]) -> Resumed | None:
        """Carry the save on from the first block not yet cleaned, reading ``src`` (the spool file:
        its first ``cleaned`` bytes are those already cleaned). None when this work cannot be adopted
        (another redactor or index, no work, a failure): the caller saves the whole stream itself."""
        self._end(drop=False)
        if self._thread is None or self._failed or redact_lines is not self.redact_lines or keep != self.keep:
            return None
        src.seek(self.cleaned)
        rest = read_blocks(src, self._chunk, self._indexer.add)
        for clean in self._cleaner.feed_all(rest, spread_for(self.redact_lines)):
            _write_all(self._fd, clean)
        fd, self._fd = self._fd, -1
        return Resumed(self._indexer.index(), fd)

    def close(self) -> None:
        """Stop and drop whatever was not adopted (its file, having no name, is gone with it)."""
        self._end(drop=True)
        if self._fd >= 0:
            with contextlib.suppress(OSError):
                os.close(self._fd)
            self._fd = -1


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]
