"""One output stream (stdout or stderr) as shown: whole, in overflow mode, or described as binary."""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from canal.core.next import Say
from canal.host.ports import Redactor
from canal.presenter.binclean import NotRedactable
from canal.presenter.config import PresenterConfig, StreamLimits
from canal.presenter.copy import copy_while
from canal.presenter.early import EarlySave
from canal.presenter.footer import format_size
from canal.presenter.overflow import render_overflow, runnable
from canal.presenter.scan import Indexer, StreamIndex, scan
from canal.presenter.sniff import Kind, classify
from canal.presenter.store import OutputStore
from canal.presenter.text import clean_text, decode
from canal.sandbox.result import CapturedOutput


@dataclass(frozen=True)
class StreamView:
    text: str
    total_bytes: int
    total_lines: int
    truncated: bool = False
    binary: Kind | None = None
    saved: str | None = None  # the in-sandbox path of the full stream
    save_error: str = ""


def render_stream(captured: CapturedOutput, limits: StreamLimits, *, config: PresenterConfig,
                  store: OutputStore, redact: Redactor, name: str, say: Say | None = None,
                  early: EarlySave | None = None) -> StreamView:
    """``name`` is ``output`` or ``stderr``: it names the saved file and the binary notice. ``early``:
    the stream's save begun while it arrived, adopted when it is saved as text from its spool file."""
    with captured.open() as src:
        kind = classify(src.read(config.binary_sample_bytes), config.binary_threshold)
        src.seek(0)
        if kind is None:
            small = src.read(limits.max_bytes + 1)
            lines = small.count(b"\n") + (0 if small.endswith(b"\n") or not small else 1)
            if len(small) <= limits.max_bytes and lines <= limits.max_lines:
                return StreamView(redact(clean_text(decode(small))), len(small), lines)
            src.seek(0)
        ext = ".bin" if kind is not None else ".txt"
        suffix = ext if name == "output" else f".{name}{ext}"
        head, tail = (0, 0) if kind is not None else (limits.head_lines, limits.tail_lines)
        if kind is not None:
            index, saved, error = _save_binary(src, store, suffix, config.chunk_bytes)
            return _binary_view(name, kind, index, saved, error, say)
        spool = captured.path if config.link_spooled else None
        index, saved, error = save_stream(src, spool, store, suffix, (head, tail), config.chunk_bytes,
                                          captured.data, early)
        overflow = render_overflow(src, index, limits, saved=saved, save_error=error, redact=redact, say=say)
        return StreamView(overflow.text(), index.total_bytes, index.total_lines, True, None, saved, error)


def save_stream(src: BinaryIO, spool: Path | None, store: OutputStore, suffix: str, keep: tuple[int, int],
                chunk: int, text: bytes | None = None,
                early: EarlySave | None = None) -> tuple[StreamIndex, str | None, str]:
    """Put the stream in the output folder, then index it: redacted when the store has a redactor
    (held in memory, or streamed from its spool file), else a link to its spool file or a copy.

    When saving fails the stream is still indexed, so the agent sees head and tail either way.
    """
    def index() -> StreamIndex:
        src.seek(0)
        return scan(src, head=keep[0], tail=keep[1], chunk_bytes=chunk)

    try:
        if text is not None and store.redact_saved is not None:
            return index(), store.write_clean(text, suffix).sandbox_path, ""
        if store.redact_saved is not None:  # a spooled stream is never linked as it came
            adopted = _adopted(early, src, store, suffix, keep)
            if adopted is not None:
                return adopted
            src.seek(0)
            indexer = Indexer(head=keep[0], tail=keep[1])  # indexed as it is read: one pass
            saved = store.write_text_clean(src, suffix, chunk, indexer.add)
            return indexer.index(), saved.sandbox_path, ""
        linked = store.link(spool, suffix) if spool is not None else None
        if linked is not None:
            return index(), linked.sandbox_path, ""
        with store.create(suffix) as (sink, file):
            return copy_while(src, sink, chunk, index), file.sandbox_path, ""
    except NotRedactable as exc:
        return index(), None, str(exc)
    except OSError as exc:
        return index(), None, exc.strerror or exc.__class__.__name__


def _adopted(early: EarlySave | None, src: BinaryIO, store: OutputStore, suffix: str,
             keep: tuple[int, int]) -> tuple[StreamIndex, str | None, str] | None:
    """The save ``early`` began, finished from the spool file and named; None when there is none to
    adopt, or naming it failed (the whole stream is then saved again)."""
    resumed = early.resume(src, store.redact_saved, keep) if early is not None else None
    if resumed is None:
        return None
    try:
        return resumed.index, store.adopt(resumed.fd, suffix).sandbox_path, ""
    except OSError:
        return None


def _save_binary(src: BinaryIO, store: OutputStore, suffix: str,
                 chunk: int) -> tuple[StreamIndex, str | None, str]:
    """Binary bytes are saved only with the detector run over their printable runs (never linked as
    they came): a secret after a NUL byte stays off the host."""
    def index() -> StreamIndex:
        src.seek(0)
        return scan(src, head=0, tail=0, chunk_bytes=chunk)

    try:
        src.seek(0)
        saved = store.write_binary_clean(src, suffix, chunk)
    except NotRedactable as exc:
        return index(), None, str(exc)
    except OSError as exc:
        return index(), None, exc.strerror or exc.__class__.__name__
    return index(), saved.sandbox_path, ""


def _binary_view(name: str, kind: Kind, index: StreamIndex, saved: str | None, error: str,
                 say: Say | None) -> StreamView:
    size = f"{index.total_bytes} bytes" + ("" if index.total_bytes < 1024 else
                                          f" ({format_size(index.total_bytes)})")
    if saved is None:
        text = f"[binary {name} not shown: {kind.label}, {size}; it could not be saved: {error}]"
    else:
        path = shlex.quote(saved)
        commands = [f"file {path}", f"xxd {path} | head -20",
                    *(h.format(path=path) for h in kind.hints if "{path}" in h)]
        prose = [h for h in kind.hints if "{path}" not in h]  # advice, not a command to word
        hints = [runnable(c, say) for c in commands] + prose
        text = (f"[binary {name} not shown: {kind.label}, {size}. Saved to {saved}]\n"
                f"[Next: {', or '.join(hints)}]")
    return StreamView(text, index.total_bytes, index.total_lines, False, kind, saved, error)
