"""One pass over an output stream: count lines and note where the first and last lines are.

Memory stays bounded for any size: one reusable chunk buffer plus a fixed number of line offsets.
Nothing is decoded here; the few lines that will be shown are read again later by offset.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import BinaryIO, Protocol, cast

NL = b"\n"


class _ReadInto(Protocol):
    """Files and BytesIO have ``readinto``; ``typing.BinaryIO`` does not declare it."""

    def readinto(self, buffer: memoryview, /) -> int | None: ...


@dataclass(frozen=True)
class StreamIndex:
    """Offsets of the newlines that end the first ``head`` lines and the last ``tail + 1`` lines."""

    total_bytes: int
    newlines: int
    head_newlines: tuple[int, ...]
    tail_newlines: tuple[int, ...]

    @property
    def total_lines(self) -> int:
        if self.total_bytes == 0:
            return 0
        ends_open = not self.tail_newlines or self.tail_newlines[-1] != self.total_bytes - 1
        return self.newlines + (1 if ends_open else 0)

    def _newline(self, k: int) -> int:
        """Offset of the k-th newline (1-based); only the first and last few are known."""
        if k <= len(self.head_newlines):
            return self.head_newlines[k - 1]
        back = self.newlines - k
        if back < len(self.tail_newlines):
            return self.tail_newlines[len(self.tail_newlines) - 1 - back]
        msg = f"offset of newline {k} was not kept"
        raise IndexError(msg)

    def span(self, line: int) -> tuple[int, int]:
        """``(start, end)`` byte offsets of a line (1-based), without its newline."""
        start = 0 if line == 1 else self._newline(line - 1) + 1
        end = self._newline(line) if line <= self.newlines else self.total_bytes
        return start, end


class Indexer:
    """``scan`` fed block by block, by a pass that reads the stream anyway (saving it redacted)."""

    def __init__(self, *, head: int, tail: int) -> None:
        self._head, self._tail = head, tail
        self._head_nl: list[int] = []
        self._tail_nl: deque[int] = deque(maxlen=tail + 1)
        self._base = self._newlines = 0

    def add(self, buf: bytes | bytearray, n: int | None = None) -> None:
        """The next ``n`` bytes of the stream (all of ``buf`` by default)."""
        n = len(buf) if n is None else n
        self._newlines += _count_newlines(buf, n)
        if len(self._head_nl) < self._head:
            _find_first(buf, n, self._base, self._head - len(self._head_nl), self._head_nl)
        self._tail_nl.extend(_find_last(buf, n, self._base, self._tail + 1))
        self._base += n

    def index(self) -> StreamIndex:
        return StreamIndex(self._base, self._newlines, tuple(self._head_nl), tuple(self._tail_nl))


def scan(src: BinaryIO, *, head: int, tail: int, chunk_bytes: int) -> StreamIndex:
    """Read ``src`` from where it is to its end, once."""
    buf = bytearray(chunk_bytes)
    view = memoryview(buf)
    indexer = Indexer(head=head, tail=tail)
    reader = cast(_ReadInto, src)
    while n := reader.readinto(view):
        indexer.add(buf, n)
    view.release()
    return indexer.index()


def _count_newlines(buf: bytes | bytearray, n: int) -> int:
    # bytes.replace skips from newline to newline with memchr: 3-4x faster than bytearray.count,
    # which compares byte by byte (measured on CPython 3.11 with log-like lines).
    chunk = buf if n == len(buf) else buf[:n]
    return n - len(chunk.replace(NL, b""))


def _find_first(buf: bytes | bytearray, n: int, base: int, want: int, out: list[int]) -> None:
    pos = 0
    while want > 0 and (i := buf.find(NL, pos, n)) >= 0:
        out.append(base + i)
        pos = i + 1
        want -= 1


def _find_last(buf: bytes | bytearray, n: int, base: int, want: int) -> list[int]:
    found: list[int] = []
    end = n
    while len(found) < want and (i := buf.rfind(NL, 0, end)) >= 0:
        found.append(base + i)
        end = i
    found.reverse()
    return found
