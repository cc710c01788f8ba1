"""Reading the log file: whole lines with their byte offsets, and the last line, without loading it all."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from canal.host.audit.record import MalformedRecord, Record, parse_line

CHUNK = 64 * 1024


@dataclass(frozen=True)
class Line:
    number: int  # 1-based line number in the file
    offset: int  # byte offset of the line's first byte
    text: bytes  # without the trailing newline
    complete: bool  # False for a last line with no newline (a torn write)

    @property
    def end(self) -> int:
        return self.offset + len(self.text) + (1 if self.complete else 0)


def iter_lines(path: Path, *, start: int = 0, first_number: int = 1) -> Iterator[Line]:
    """Every line from byte ``start``; a file that does not exist has none."""
    try:
        fh = path.open("rb")
    except FileNotFoundError:
        return
    with fh:
        fh.seek(start)
        offset, number = start, first_number
        for text in fh:
            complete = text.endswith(b"\n")
            body = text[:-1] if complete else text
            yield Line(number=number, offset=offset, text=body, complete=complete)
            offset += len(text)
            number += 1


def last_line(fd: int, size: int) -> Line | None:
    """The last line of an open file of ``size`` bytes (``number`` is unknown there and set to 0)."""
    if size == 0:
        return None
    end = size
    tail = b""
    while True:
        start = max(0, end - CHUNK)
        tail = os.pread(fd, end - start, start) + tail
        end = start
        cut = tail.rfind(b"\n", 0, len(tail) - 1)
        if cut >= 0 or start == 0:
            break
    begin = cut + 1 if cut >= 0 else 0
    text = tail[begin:]
    complete = text.endswith(b"\n")
    return Line(number=0, offset=size - len(text), text=text[:-1] if complete else text, complete=complete)


def line_before(fd: int, offset: int) -> Line | None:
    """The complete line that ends exactly at ``offset`` (its newline is the byte before ``offset``)."""
    if offset <= 0 or os.pread(fd, 1, offset - 1) != b"\n":
        return None
    found = last_line(fd, offset)
    return found if found is not None and found.complete else None


def record_ending_at(path: Path, offset: int, *, follow: bool = True) -> Record | None:
    """The record whose line ends exactly at byte ``offset`` of the log at ``path``: None when the file
    is missing or holds no complete, well-formed record there (other ``OSError`` propagates);
    ``follow=False`` refuses a log that is a symbolic link."""
    flags = os.O_RDONLY | os.O_CLOEXEC | (0 if follow else os.O_NOFOLLOW)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        return None
    try:
        line = line_before(fd, offset)
    finally:
        os.close(fd)
    try:
        return parse_line(line.text) if line is not None else None
    except MalformedRecord:
        return None
