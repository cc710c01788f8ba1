"""stderr of a command that succeeded: shown when it carries what the reader needs.

Real tools put their summary on stderr: ``python3 -m unittest`` prints "Ran 774 tests ... OK" there and
nothing on stdout; cargo's "Finished", make's own lines and compiler warnings go there too. So on
success the presenter shows stderr when stdout is empty, or when the command is a known test or build
runner (``presenter.stderr_runners``), and then only its last lines (``stderr_success_lines``, within
``stderr_success_bytes``), with a note saying how many came before and where all of it is.
"""

from __future__ import annotations

import shlex

from canal.core.next import Say
from canal.host.ports import Redactor
from canal.presenter.config import PresenterConfig, StreamLimits
from canal.presenter.overflow import pick_lines, read_line, runnable
from canal.presenter.runners import is_runner
from canal.presenter.scan import scan
from canal.presenter.store import OutputStore
from canal.presenter.text import clean_text, decode
from canal.presenter.view import StreamView, save_stream
from canal.sandbox.result import CapturedOutput


def wants_tail(config: PresenterConfig, command: str, stdout_empty: bool) -> bool:
    if config.stderr_on_success == "never":
        return False
    return stdout_empty or is_runner(command, config.stderr_runners)


def fits(captured: CapturedOutput, config: PresenterConfig) -> bool:
    """Whether the whole stderr is within the success tail's bounds (nothing is cut)."""
    if captured.size > config.stderr_success_bytes:
        return False
    with captured.open() as src:
        data = src.read()
    lines = data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1)
    return lines <= config.stderr_success_lines


def saved_copy(captured: CapturedOutput, config: PresenterConfig,
               store: OutputStore) -> tuple[str | None, str]:
    """Save the whole stderr (redacted like any saved output) when the tail leaves some out."""
    with captured.open() as src:
        spool = captured.path if config.link_spooled else None
        _, saved, error = save_stream(src, spool, store, ".stderr.txt", (0, 0), config.chunk_bytes,
                                      captured.data)
    return saved, error


def success_tail(captured: CapturedOutput, err: StreamView, config: PresenterConfig, *, saved: str | None,
                 save_error: str, redact: Redactor, say: Say | None) -> str:
    """The last lines of stderr, after a note when earlier lines are left out."""
    if err.binary is not None:
        return err.text
    n, budget = config.stderr_success_lines, config.stderr_success_bytes
    limits = StreamLimits(n, 0, n, budget, 0, budget, min(config.max_line_bytes, budget // 2))
    with captured.open() as src:
        index = scan(src, head=0, tail=n, chunk_bytes=config.chunk_bytes)
        if index.total_lines <= n and index.total_bytes <= budget:
            src.seek(0)
            return redact(clean_text(decode(src.read())))
        _, tail = pick_lines(index, limits)
        text = redact("\n".join(read_line(src, index, p, redact) for p in tail))
    hidden = tail[0].line - 1 if tail else index.total_lines
    return f"{_note(hidden, index.total_lines, saved, save_error, say)}\n{text}"


def _note(hidden: int, total: int, saved: str | None, save_error: str, say: Say | None) -> str:
    what = f"[... {hidden} earlier lines of stderr not shown ({total} in all)"
    if saved is None:
        return f"{what}; they could not be saved: {save_error or 'unknown error'}]"
    read = f"sed -n 1,{min(hidden, 100)}p {shlex.quote(saved)}"  # no quotes: reads plainly when worded
    return f"{what}. Full stderr: {saved}; read it: {runnable(read, say)}]"
