"""Overflow mode: the first and last lines of a long output, each within a byte budget.

Only the lines that are shown are read (by offset) and decoded; the rest stays in the saved file,
and the text says where it is and which command shows the next part.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import BinaryIO

from canal.core.next import Say, act
from canal.host.ports import Redactor
from canal.presenter.config import StreamLimits
from canal.presenter.footer import format_size
from canal.presenter.scan import StreamIndex
from canal.presenter.text import clean_line, clip_utf8, decode

# Extra bytes decoded past a cut, so a secret that straddles the cut is still recognised and redacted.
_SLACK = 512
_SED_WINDOW = 100


@dataclass(frozen=True)
class Pick:
    line: int
    show: int  # raw bytes of the line to show; less than its length means the line is cut


def pick_lines(index: StreamIndex, limits: StreamLimits) -> tuple[list[Pick], list[Pick]]:
    """Head lines from the top and tail lines from the bottom, never overlapping, within budgets."""
    total = index.total_lines
    head = _budgeted(index, range(1, min(limits.head_lines, total) + 1), limits, limits.head_bytes)
    first_tail = max((head[-1].line if head else 0) + 1, total - limits.tail_lines + 1)
    tail = _budgeted(index, range(total, first_tail - 1, -1), limits, limits.tail_bytes)
    return head, tail[::-1]


def _budgeted(index: StreamIndex, lines: range, limits: StreamLimits, budget: int) -> list[Pick]:
    picks: list[Pick] = []
    for line in lines:
        if budget <= 0:
            break
        start, end = index.span(line)
        show = min(end - start, limits.max_line_bytes, budget)
        picks.append(Pick(line, show))
        budget -= show + 1
    return picks


def read_line(src: BinaryIO, index: StreamIndex, pick: Pick, redact: Redactor) -> str:
    start, end = index.span(pick.line)
    length = end - start
    src.seek(start)
    if pick.show >= length:
        return clean_line(decode(src.read(length)))
    raw = src.read(min(length, pick.show + _SLACK))
    if b"\r" in raw and (last := _last_progress_state(src, end, pick.show)):
        text, what = last, f"line {pick.line}: {length} bytes of progress updates, last state shown"
    else:
        text, what = clean_line(decode(raw)), f"line {pick.line} cut at {pick.show} of {length} bytes"
    return f"{clip_utf8(redact(text), pick.show)} [... {what} ...]"


def _last_progress_state(src: BinaryIO, end: int, window: int) -> str:
    """The text after the last carriage return near the end of a long line, if it fits the window."""
    src.seek(max(0, end - window))
    raw = src.read(window).rstrip(b"\r")
    cut = raw.rfind(b"\r")
    return "" if cut < 0 else clean_line(decode(raw[cut + 1:]))


@dataclass(frozen=True)
class Overflow:
    head: str
    marker: str  # between head and tail; empty when no whole line was left out
    tail: str
    note: str  # after the tail: where the full output is and what to run next

    def text(self) -> str:
        return "\n".join(part for part in (self.head, self.marker, self.tail, self.note) if part)


def runnable(command: str, say: Say | None) -> str:
    """A shell command the sandbox runs, in the words of the front end's reader (``canal run -- ...``
    in the CLI, a ``run_command`` call over MCP); as it is without a front end."""
    worded = say(act("run", command=command)) if say is not None else None
    return worded or command


def render_overflow(src: BinaryIO, index: StreamIndex, limits: StreamLimits, *, saved: str | None,
                    save_error: str, redact: Redactor, say: Say | None = None) -> Overflow:
    head, tail = pick_lines(index, limits)
    head_text = redact("\n".join(read_line(src, index, p, redact) for p in head))
    tail_text = redact("\n".join(read_line(src, index, p, redact) for p in tail))
    first_gap = (head[-1].line if head else 0) + 1
    gap_end = tail[0].line - 1 if tail else index.total_lines
    where = saved if saved is not None else f"not saved ({save_error})"
    gap = gap_end - first_gap + 1
    marker = f"[... {gap} lines truncated. Full output: {where} ...]" if gap > 0 else ""
    cut = next((p for p in (*head, *tail) if p.show < _length(index, p.line)), None)
    note = _note(index, saved, save_error, first_gap, gap, cut, say)
    return Overflow(head_text, marker, tail_text, note)


def _length(index: StreamIndex, line: int) -> int:
    start, end = index.span(line)
    return end - start


def _note(index: StreamIndex, saved: str | None, save_error: str, first_gap: int, gap: int,
          cut: Pick | None, say: Say | None) -> str:
    lines = "1 line" if index.total_lines == 1 else f"{index.total_lines} lines"
    size = f"{lines}, {format_size(index.total_bytes)}"
    if saved is None:
        return f"[Output truncated ({size}); the full output could not be saved: {save_error}]"
    path = shlex.quote(saved)
    hints = [f"grep -n PATTERN {path} | head -50"]
    if gap > 0:
        last = min(first_gap + gap - 1, first_gap + _SED_WINDOW - 1)
        hints.append(f"sed -n '{first_gap},{last}p' {path}")
    if cut is not None:
        hints.append(f"sed -n '{cut.line}p' {path} | cut -b {cut.show + 1}-{cut.show + 8192}")
    return f"[Full output: {size}. Next: " + ", or ".join(runnable(h, say) for h in hints) + "]"
