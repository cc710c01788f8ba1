"""Layer 2: turn a lossless ``ExecResult`` into the text a model reads after every command."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from canal.core.next import Say
from canal.host.ports import Redactor, no_redaction
from canal.presenter.config import PresenterConfig
from canal.presenter.early import EarlySave
from canal.presenter.footer import end_reason, render_footer
from canal.presenter.store import OutputStore
from canal.presenter.success import fits, saved_copy, success_tail, wants_tail
from canal.presenter.view import StreamView, render_stream
from canal.sandbox.result import ExecResult

STDERR_OPEN = "--- stderr ---"
STDERR_CLOSE = "--- end stderr ---"


@dataclass(frozen=True)
class Presentation:
    """What the agent reads (``text``) and its parts, for the run result and ``--json``."""

    text: str
    output: str  # stdout as shown, with any truncation marker and notes
    stderr: str  # all of stderr within its caps (the rest saved), redacted, whatever the text shows
    footer: str
    output_file: str | None  # the in-sandbox path of the full stdout, when it was saved
    stderr_file: str | None
    truncated: bool
    binary: bool
    sniffed_type: str | None  # e.g. "PNG image, 640x480" or "binary data"
    total_lines: int
    total_bytes: int
    stderr_lines: int
    stderr_bytes: int
    end_reason: str  # "" for a normal exit, else e.g. "killed: hard timeout after 30s"
    save_error: str = ""

    def to_json(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__dataclass_fields__}


def present(result: ExecResult, *, config: PresenterConfig, output_dir: Path,
            sandbox_output_dir: str = "/canal/output", redact: Redactor = no_redaction,
            file_owner: tuple[int, int] | None = None, name_hint: str = "",
            redact_saved: Redactor | None = None, footer_extra: Sequence[str] = (), command: str = "",
            say: Say | None = None, notes: Sequence[str] = (),
            early: EarlySave | None = None) -> Presentation:
    """Render ``result``; full outputs that are cut short or binary are saved under ``output_dir``.

    ``output_dir`` is the host folder; ``sandbox_output_dir`` is where the sandbox sees it, and every
    path in the text is that in-sandbox path. Memory stays bounded whatever the output size.
    ``redact_saved`` (line-preserving) cleans a saved text output held in memory before it is written;
    a stream already spooled to disk is linked or copied as it is. ``command`` (as the agent typed it)
    tells whether a succeeding command's stderr is worth showing (presenter/success.py); ``say`` words
    the hints in the text for the front end's reader (a plain shell command without it). ``notes`` are
    lines shown just before the footer (the pipeline's hints after a failure). ``early``: stdout's save
    begun while it arrived (``early.py``, with ``redact_saved``), adopted when stdout is saved as text.
    """
    store = OutputStore(output_dir, sandbox_output_dir, file_owner=file_owner, name_hint=name_hint,
                        redact_saved=redact_saved)
    out = render_stream(result.stdout, config.stdout_limits(), config=config, store=store, redact=redact,
                        name="output", say=say, early=early)
    err: StreamView | None = None
    shown_err = ""
    stderr_file: str | None = None
    if result.stderr.size > 0:
        err = render_stream(result.stderr, config.stderr_limits(), config=config, store=store,
                            redact=redact, name="stderr", say=say)
        stderr_file = err.saved
        if not result.ok or config.show_stderr_on_success:
            shown_err = err.text
        elif wants_tail(config, command, result.stdout.size == 0):
            save_error = err.save_error
            if stderr_file is None and not err.binary and not fits(result.stderr, config):
                stderr_file, save_error = saved_copy(result.stderr, config, store)
            shown_err = success_tail(result.stderr, err, config, saved=stderr_file, save_error=save_error,
                                     redact=redact, say=say)
    footer = render_footer(result, footer_extra)
    parts = [out.text] if out.text else []
    if shown_err:
        parts += [STDERR_OPEN, shown_err, STDERR_CLOSE]
    parts += notes
    parts.append(footer)
    return Presentation(
        text="\n".join(parts), output=out.text, stderr=err.text if err else "", footer=footer,
        output_file=out.saved, stderr_file=stderr_file,
        truncated=out.truncated or (err is not None and err.truncated and shown_err != ""),
        binary=out.binary is not None,
        sniffed_type=out.binary.label if out.binary else None, total_lines=out.total_lines,
        total_bytes=out.total_bytes, stderr_lines=err.total_lines if err else 0,
        stderr_bytes=err.total_bytes if err else result.stderr.size, end_reason=end_reason(result),
        save_error=out.save_error or (err.save_error if err else ""),
    )
