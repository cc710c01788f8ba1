"""Secrets in binary output: the detector runs over the printable runs of the bytes.

A binary stream is never shown, but it is saved for ``file``/``xxd``; a token printed after a NUL
byte must not reach the host in clear. The printable runs (ASCII text between other bytes) are joined
one per line, redacted with line breaks kept (so a multi-line secret such as a PEM key, split into
runs by its newlines, is still recognised), and each run that changed is put back in place of the
original run. Only those runs change length; every other byte stays where it was.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import BinaryIO

from canal.host.ports import Redactor

_RUN = re.compile(rb"[\x20-\x7e\t]{6,}")
_TEXT_BYTES = bytes(range(0x20, 0x7F)) + b"\t\r\n"
MAX_CARRY = 4 * 1024 * 1024  # a text stretch longer than this with no binary byte is cut anyway


class NotRedactable(ValueError):
    """The redactor did not keep one line per run: the bytes cannot be cleaned, so are not saved."""


def clean_binary(data: bytes, redact_lines: Redactor) -> bytes:
    runs = list(_RUN.finditer(data))
    if not runs:
        return data
    text = "\n".join(m.group().decode("ascii") for m in runs)
    clean = redact_lines(text)
    if clean == text:
        return data
    pieces = clean.split("\n")
    if len(pieces) != len(runs):
        msg = "the redactor changed the number of printable runs"
        raise NotRedactable(msg)
    out, pos = bytearray(), 0
    for match, piece in zip(runs, pieces, strict=True):
        out += data[pos:match.start()]
        out += piece.encode("ascii", "replace")
        pos = match.end()
    out += data[pos:]
    return bytes(out)


def clean_binary_stream(src: BinaryIO, redact_lines: Redactor, chunk: int) -> Iterator[bytes]:
    """``clean_binary`` over a stream of any size, in blocks cut at a binary byte, so no printable
    stretch (nor a secret in it) is split between two blocks."""
    carry = b""
    while block := src.read(chunk):
        data = carry + block
        cut = _last_separator(data)
        if cut < 0 and len(data) > MAX_CARRY:
            cut = data.rfind(b"\n")
        if cut < 0:
            carry = data
            continue
        yield clean_binary(data[:cut + 1], redact_lines)
        carry = data[cut + 1:]
    if carry:
        yield clean_binary(carry, redact_lines)


def _last_separator(data: bytes) -> int:
    """Index of the last byte that is neither printable nor a line break (-1 when none)."""
    return len(data.rstrip(_TEXT_BYTES)) - 1
