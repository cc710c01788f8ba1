"""Secrets in a long text output: the detector runs over it block by block, line numbers kept.

A text output too large to hold in memory (spooled to disk by the sandbox layer) is saved through
this, so no secret in it reaches the host in clear. Blocks are cut at line breaks; around each cut the
detector sees ``OVERLAP`` bytes of lines on either side again (lines already written stay in its view,
the last lines of a block wait for the next one), so a secret of up to ``OVERLAP`` bytes that crosses
a cut, a private key's lines included, is seen whole. The redactor keeps every line break (a secret
becomes its placeholder followed by the line breaks it had), so line N of the saved file is line N of
the output and the hints that name line numbers stay true.

A line still without its line break after ``MAX_LINE`` bytes is redacted in pieces of at most that
much, each cut after a space (a token has no space in it); a keyword-and-value secret cut exactly there
may pass. Memory holds one block, its margins and at most one such piece.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import BinaryIO

from canal.host.ports import Redactor
from canal.presenter.binclean import NotRedactable

OVERLAP = 64 * 1024
MAX_LINE = 4 * 1024 * 1024


def _tail_cut(data: bytes, at_least: int) -> int:
    """Where the last whole lines of ``data`` that hold at least ``at_least`` bytes begin (0: all)."""
    if len(data) <= at_least:
        return 0
    return data.rfind(b"\n", 0, len(data) - at_least) + 1


def _lines(clean: str, skip: int, drop: int, any_written: bool) -> str:
    """``clean`` without its first ``skip`` lines and its last ``drop`` ones (each of those ending
    in a line break); splitting only those costs less than splitting every line of a block."""
    if not any_written:
        return ""
    body = clean.split("\n", skip)[-1] if skip else clean
    if drop:
        body = body.rsplit("\n", drop + 1)[0] + "\n"
    return body


class _Window:
    """Lines already written (``context``) and lines read but not yet written (``pending``)."""

    def __init__(self, redact_lines: Redactor) -> None:
        self.redact_lines = redact_lines
        self.context = b""
        self.pending = b""

    def push(self, lines: bytes, *, final: bool = False) -> bytes:
        """Redact ``context + pending + lines``; returns the clean bytes of what may be written now."""
        raw = self.pending + lines
        if not raw:
            return b""
        text = (self.context + raw).decode("utf-8", "surrogateescape")
        clean = self.redact_lines(text)
        if clean is not text and clean.count("\n") != text.count("\n"):
            msg = "the redactor changed the number of lines"
            raise NotRedactable(msg)
        cut = len(raw) if final else _tail_cut(raw, OVERLAP)
        written, self.pending = raw[:cut], raw[cut:]
        body = _lines(clean, self.context.count(b"\n"), self.pending.count(b"\n"), bool(written))
        # the lines just written stay in view (a whole line of their own or of the context before)
        cut = _tail_cut(written, OVERLAP)
        self.context = written[cut:] if cut else self.context + written
        self.context = self.context[_tail_cut(self.context, OVERLAP):]
        return body.encode("utf-8", "surrogateescape")

    def restart(self) -> None:
        """After a piece of an over-long line: what follows is not at a line start."""
        self.context = b""


class TextCleaner:
    """The same cleaning pushed block by block (a task's log as its output arrives): ``feed`` returns
    the clean bytes that may be written now, ``flush`` the whole lines held back for the overlap (a
    quiet stream), ``finish`` the rest. Unredacted bytes stay in memory only: never written."""

    def __init__(self, redact_lines: Redactor) -> None:
        self._redact_lines = redact_lines
        self._window = _Window(redact_lines)
        self._carry = b""

    @property
    def held(self) -> int:
        """Bytes read but not yet written (lines held for the overlap, the partial last line)."""
        return len(self._window.pending) + len(self._carry)

    def feed(self, block: bytes) -> bytes:
        data, out = self._carry + block, []
        cut = data.rfind(b"\n") + 1
        if cut:
            out.append(self._window.push(data[:cut]))
            data = data[cut:]
        while len(data) > MAX_LINE:  # one line, still without its line break
            out.append(self._window.push(b"", final=True))
            space = data.rfind(b" ", 0, MAX_LINE) + 1 or MAX_LINE
            out.append(_piece(data[:space], self._redact_lines))
            self._window.restart()
            data = data[space:]
        self._carry = data
        return b"".join(out)

    def flush(self) -> bytes:
        """The whole lines held back; the partial last line still waits for its line break."""
        return self._window.push(b"", final=True)

    def finish(self) -> bytes:
        carry, self._carry = self._carry, b""
        return self._window.push(carry, final=True)


def clean_text_stream(src: BinaryIO, redact_lines: Redactor, chunk: int,
                      seen: Callable[[bytes], None] | None = None) -> Iterator[bytes]:
    """The clean bytes of ``src``, block by block (same number of lines, every secret replaced);
    ``seen`` is given each block as read (to index the stream in the same pass)."""
    cleaner = TextCleaner(redact_lines)
    while block := src.read(chunk):
        if seen is not None:
            seen(block)
        yield cleaner.feed(block)
    yield cleaner.finish()


def _piece(raw: bytes, redact_lines: Redactor) -> bytes:
    text = raw.decode("utf-8", "surrogateescape")
    clean = redact_lines(text)
    if "\n" in clean:
        msg = "the redactor added a line break"
        raise NotRedactable(msg)
    return clean.encode("utf-8", "surrogateescape")
