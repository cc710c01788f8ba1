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

import contextlib
import itertools
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import BinaryIO

from canal.host.ports import PLACEHOLDER_START, Redactor, Spread, SpreadFailed
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


@dataclass(frozen=True)
class _Job:
    """One text for the redactor, and how its clean text becomes the bytes written: a window's (its
    first ``skip`` lines and last ``drop`` lines are the overlap, not written now) or a piece of an
    over-long line (``piece``: it must come back without a line break)."""

    text: str
    skip: int = 0
    drop: int = 0
    writes: bool = True
    piece: bool = False

    def finish(self, clean: str) -> bytes:
        if self.piece:
            if "\n" in clean:
                msg = "the redactor added a line break"
                raise NotRedactable(msg)
        elif clean is not self.text and clean.count("\n") != self.text.count("\n"):
            msg = "the redactor changed the number of lines"
            raise NotRedactable(msg)
        else:
            clean = _lines(clean, self.skip, self.drop, self.writes)
        return clean.encode("utf-8", "surrogateescape")


class _Window:
    """Lines already written (``context``) and lines read but not yet written (``pending``)."""

    def __init__(self) -> None:
        self.context = b""
        self.pending = b""

    def plan(self, lines: bytes, *, final: bool = False) -> _Job | None:
        """The job that redacts ``context + pending + lines`` and gives the clean bytes of what may be
        written now (None: nothing to redact). The window moves on at once: where it cuts depends on
        the bytes read only, never on the redactor's answer, so jobs may be redacted ahead."""
        raw = self.pending + lines
        if not raw:
            return None
        text = (self.context + raw).decode("utf-8", "surrogateescape")
        cut = len(raw) if final else _tail_cut(raw, OVERLAP)
        written, self.pending = raw[:cut], raw[cut:]
        job = _Job(text, self.context.count(b"\n"), self.pending.count(b"\n"), bool(written))
        # the lines just written stay in view (a whole line of their own or of the context before)
        cut = _tail_cut(written, OVERLAP)
        self.context = written[cut:] if cut else self.context + written
        self.context = self.context[_tail_cut(self.context, OVERLAP):]
        return job

    def restart(self) -> None:
        """After a piece of an over-long line: what follows is not at a line start."""
        self.context = b""


DENSE_S_PER_MIB = 0.015  # CPU seconds a MiB: a text redacted faster is not worth sending
DENSE_MIN = 256 * 1024  # characters: a shorter text does not tell
DENSE_FINDINGS = 1000  # findings a MiB (base64: ~14,000; log output: a few)


class TextCleaner:
    """The same cleaning pushed block by block (a task's log as its output arrives): ``feed`` returns
    the clean bytes that may be written now, ``flush`` the whole lines held back for the overlap (a
    quiet stream), ``finish`` the rest. Unredacted bytes stay in memory only: never written."""

    def __init__(self, redact_lines: Redactor) -> None:
        self._redact_lines = redact_lines
        self._window = _Window()
        self._carry = b""

    @property
    def held(self) -> int:
        """Bytes read but not yet written (lines held for the overlap, the partial last line)."""
        return len(self._window.pending) + len(self._carry)

    def feed(self, block: bytes) -> bytes:
        return self._run(self._jobs(block))

    def flush(self) -> bytes:
        """The whole lines held back; the partial last line still waits for its line break."""
        return self._run([self._window.plan(b"", final=True)])

    def finish(self) -> bytes:
        return self._run(self._last())

    def feed_all(self, blocks: Iterable[bytes], spread: Spread | None = None) -> Iterator[bytes]:
        """``feed`` each block, then ``finish``: the same bytes. With ``spread``, once a text shows the
        output dense with findings (base64: each line one, each costing microseconds of Python), the
        jobs after it go through ``spread`` in order, redacted ahead by other processes."""
        jobs = (job for block in itertools.chain(blocks, [None])
                for job in (self._jobs(block) if block is not None else self._last()) if job is not None)
        for job in jobs:
            began = time.thread_time()
            clean = self._redact_lines(job.text)
            yield job.finish(clean)
            if spread is not None and dense(job.text, clean, time.thread_time() - began):
                yield from _spread(jobs, spread, self._redact_lines)
                return

    def _run(self, jobs: Iterable[_Job | None]) -> bytes:
        return b"".join(job.finish(self._redact_lines(job.text)) for job in jobs if job is not None)

    def _jobs(self, block: bytes) -> list[_Job | None]:
        data, jobs = self._carry + block, []
        cut = data.rfind(b"\n") + 1
        if cut:
            jobs.append(self._window.plan(data[:cut]))
            data = data[cut:]
        while len(data) > MAX_LINE:  # one line, still without its line break
            jobs.append(self._window.plan(b"", final=True))
            space = data.rfind(b" ", 0, MAX_LINE) + 1 or MAX_LINE
            jobs.append(_Job(data[:space].decode("utf-8", "surrogateescape"), piece=True))
            self._window.restart()
            data = data[space:]
        self._carry = data
        return jobs

    def _last(self) -> list[_Job | None]:
        carry, self._carry = self._carry, b""
        return [self._window.plan(carry, final=True)]


def dense(text: str, clean: str, cpu_s: float) -> bool:
    """Whether redacting more texts like ``text`` elsewhere pays: it took this thread ``cpu_s`` of CPU
    (log output: about 5 ms a MiB, where sending a text to another process and back costs about 1 ms;
    base64: about 50), and it held many findings (their placeholders in ``clean``), which is what made
    it slow, not a busy machine."""
    mib = len(text) / (1024 * 1024)
    return (len(text) >= DENSE_MIN and cpu_s > DENSE_S_PER_MIB * mib
            and clean.count(PLACEHOLDER_START) > DENSE_FINDINGS * mib)


def _spread(jobs: Iterator[_Job], spread: Spread, redact_lines: Redactor) -> Iterator[bytes]:
    """The jobs' bytes, their texts redacted through ``spread`` in order; when it fails, the jobs it
    holds and the rest are redacted here: the same bytes either way."""
    held: deque[_Job] = deque()

    def texts() -> Iterator[str]:
        for job in jobs:
            held.append(job)
            yield job.text

    with contextlib.suppress(SpreadFailed):
        for clean in spread(texts()):
            yield held.popleft().finish(clean)
    for job in itertools.chain(held, jobs):
        yield job.finish(redact_lines(job.text))


def read_blocks(src: BinaryIO, chunk: int, seen: Callable[[bytes], None] | None = None) -> Iterator[bytes]:
    """``src`` from where it stands, ``chunk`` bytes at a time; ``seen`` is given each block as read."""
    while block := src.read(chunk):
        if seen is not None:
            seen(block)
        yield block


def clean_text_stream(src: BinaryIO, redact_lines: Redactor, chunk: int,
                      seen: Callable[[bytes], None] | None = None,
                      spread: Spread | None = None) -> Iterator[bytes]:
    """The clean bytes of ``src``, block by block (same number of lines, every secret replaced);
    ``seen`` is given each block as read (to index the stream in the same pass)."""
    return TextCleaner(redact_lines).feed_all(read_blocks(src, chunk, seen), spread)
