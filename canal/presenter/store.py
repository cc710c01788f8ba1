"""The output folder: full outputs the presenter cut short, readable from the same sandbox.

On the host each file is 0600, created with O_EXCL under a fresh random name (never overwriting or
following a link). When Canal runs as root it hands the file to the sandbox user (``file_owner``) so
the agent can read it through the read-only mount at ``sandbox_output_dir``.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import BinaryIO

from canal.core.fsutil import FILE_MODE, private_dir
from canal.host.ports import Redactor, Spread, no_redaction
from canal.presenter.binclean import clean_binary_stream
from canal.presenter.textclean import clean_text_stream

_UNSAFE = re.compile(r"[^A-Za-z0-9_.]+")
_OPEN_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


@dataclass(frozen=True)
class SavedFile:
    host_path: Path
    sandbox_path: str


def spread_for(redact: Redactor) -> Spread | None:
    """Worker processes for the texts of a long output dense with findings, when this process runs
    them (the server: ``host.redact.pool``); None: every text is redacted here."""
    from canal.host.redact.pool import spread_for as workers_for

    return workers_for(redact)


class OutputStore:
    """Creates uniquely named 0600 files in ``host_dir``; names them as the sandbox sees them."""

    def __init__(self, host_dir: Path, sandbox_dir: str, *, file_owner: tuple[int, int] | None = None,
                 name_hint: str = "", redact_saved: Redactor | None = None) -> None:
        self.redact_saved = redact_saved
        self._host_dir = host_dir
        self._sandbox_dir = PurePosixPath(sandbox_dir)
        self._owner = file_owner if file_owner is not None and os.geteuid() == 0 else None
        hint = _UNSAFE.sub("-", name_hint).strip("-.")[:24].rstrip("-.")
        self._stem = f"{hint or 'run'}-{secrets.token_hex(4)}"

    def _target(self, suffix: str) -> tuple[Path, SavedFile]:
        folder = private_dir(self._host_dir)
        if self._owner is not None:
            os.chown(folder, *self._owner)
        name = f"{self._stem}{suffix}"
        return folder / name, SavedFile(folder / name, str(self._sandbox_dir / name))

    def write_clean(self, data: bytes, suffix: str) -> SavedFile:
        """Save text held in memory with secrets replaced (line numbers kept); bytes that are not
        UTF-8 pass through unchanged."""
        assert self.redact_saved is not None
        text = data.decode("utf-8", "surrogateescape")
        clean = self.redact_saved(text).encode("utf-8", "surrogateescape")
        with self.create(suffix) as (sink, saved):
            sink.write(clean)
        return saved

    def write_text_clean(self, src: BinaryIO, suffix: str, chunk: int,
                         seen: Callable[[bytes], None] | None = None) -> SavedFile:
        """Save a text stream of any size with secrets replaced, block by block (``textclean``: line
        numbers kept); ``seen`` is given each block of ``src`` as read."""
        assert self.redact_saved is not None
        spread = spread_for(self.redact_saved)
        with self.create(suffix) as (sink, saved):
            for block in clean_text_stream(src, self.redact_saved, chunk, seen, spread):
                sink.write(block)
        return saved

    def write_binary_clean(self, src: BinaryIO, suffix: str, chunk: int) -> SavedFile:
        """Save binary bytes with secrets in their printable runs replaced (``binclean``)."""
        redact = self.redact_saved or no_redaction  # the run pipeline always passes one
        with self.create(suffix) as (sink, saved):
            for block in clean_binary_stream(src, redact, chunk):
                sink.write(block)
        return saved

    def adopt(self, fd: int, suffix: str) -> SavedFile:
        """Name a finished file that has none yet (``O_TMPFILE``, written by ``early``); closes ``fd``.
        The name is new (a link never replaces a file), as with ``create``."""
        try:
            path, saved = self._target(suffix)
            if self._owner is not None:
                os.fchown(fd, *self._owner)
            folder = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
            try:  # with a folder descriptor, os.link is linkat(AT_SYMLINK_FOLLOW): the file, not the link
                os.link(f"/proc/self/fd/{fd}", path.name, dst_dir_fd=folder, follow_symlinks=True)
            finally:
                os.close(folder)
        finally:
            os.close(fd)
        return saved

    def link(self, source: Path, suffix: str) -> SavedFile | None:
        """Hard-link a finished spool file in: no copy at all. None when that is not possible (another
        filesystem, not a plain file, linked elsewhere too); the caller then copies."""
        path, saved = self._target(suffix)
        try:
            os.link(source, path, follow_symlinks=False)
        except OSError:
            return None
        try:
            st = os.lstat(path)
            if not stat.S_ISREG(st.st_mode) or st.st_nlink != 2:
                path.unlink()
                return None
            os.chmod(path, FILE_MODE, follow_symlinks=False)
            if self._owner is not None:
                os.lchown(path, *self._owner)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
            raise
        return saved

    @contextlib.contextmanager
    def create(self, suffix: str) -> Iterator[tuple[BinaryIO, SavedFile]]:
        """An open, empty file; removed again if the block fails, so no half file is ever named."""
        path, saved = self._target(suffix)
        fd = os.open(path, _OPEN_FLAGS, FILE_MODE)
        try:
            if self._owner is not None:
                os.fchown(fd, *self._owner)
            with os.fdopen(fd, "wb", buffering=0) as fh:
                fd = -1
                yield fh, saved
        except BaseException:
            if fd >= 0:
                os.close(fd)
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
            raise
