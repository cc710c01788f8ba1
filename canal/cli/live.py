"""A command's output shown as it arrives (``canal run`` on a terminal, or ``--stream``).

Whole lines only, each cleaned of terminal escapes and passed through the redactor before it is shown,
in batches of what arrived together. A private key block is held back until its end line (or 64 KiB),
so the redactor sees it whole. A stream that turns out to be binary stops being shown; the presenter's
description of it follows the footer.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TextIO

from canal.presenter.text import clean_line, decode

HOLD_MAX = 64 * 1024
BEGIN, END = b"-----BEGIN", b"-----END"


class LiveOutput:
    def __init__(self, redact: Callable[[str], str], stdout: TextIO, stderr: TextIO) -> None:
        self.redact = redact
        self.sinks = {"stdout": stdout, "stderr": stderr}
        self.pending = {"stdout": bytearray(), "stderr": bytearray()}
        self.binary: set[str] = set()
        self.shown: set[str] = set()

    def __call__(self, stream: str, chunk: bytes) -> None:
        if stream in self.binary or stream not in self.pending:
            return
        if b"\0" in chunk:
            self.binary.add(stream)
            self.pending[stream].clear()
            return
        buf = self.pending[stream]
        buf += chunk
        cut = _cut(buf)
        if cut:
            self._show(stream, bytes(buf[:cut]))
            del buf[:cut]

    def finish(self) -> None:
        """Show what is left (a last line without its newline)."""
        for stream, buf in self.pending.items():
            if buf and stream not in self.binary:
                self._show(stream, bytes(buf) + b"\n")
            buf.clear()

    def _show(self, stream: str, data: bytes) -> None:
        lines = decode(data).split("\n")[:-1]
        text = self.redact("\n".join(clean_line(line) for line in lines))
        sink = self.sinks[stream]
        sink.write(text + "\n")
        sink.flush()
        self.shown.add(stream)


def _cut(buf: bytearray) -> int:
    """How many bytes of ``buf`` can be shown now: up to the last newline, but not into an open key block."""
    end = buf.rfind(b"\n") + 1
    begin = buf.rfind(BEGIN, 0, end)
    if begin >= 0 and buf.find(END, begin) < 0 and len(buf) <= HOLD_MAX:
        end = buf.rfind(b"\n", 0, begin) + 1
    if end == 0 and len(buf) > HOLD_MAX:
        return len(buf)
    return end
