"""Viewing a workspace path: numbered lines of a text file, a folder listing, or the binary guard."""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

from canal.core.next import act
from canal.host.files.confine import Located, Workspace, open_parent
from canal.host.files.diff import split_lines
from canal.host.files.errors import INVALID_RANGE, IsADirectory
from canal.host.files.fileio import DEFAULT_MAX_BYTES, is_binary, read_file
from canal.host.files.models import BinaryView, DirEntry, DirView, TextView, ViewResult
from canal.host.ports import Redactor, no_redaction

DEFAULT_MAX_LINES = 2000
MAX_LINE_CHARS = 2000
MAX_ENTRIES = 1000
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


def view_path(workspace: Workspace, path: Path | str, *, base: Path | None = None,
              start: int | None = None, end: int | None = None, redactor: Redactor = no_redaction,
              max_lines: int = DEFAULT_MAX_LINES, max_bytes: int = DEFAULT_MAX_BYTES) -> ViewResult:
    """Lines ``start``..``end`` (1-based, inclusive; at most ``max_lines``), a listing, or binary facts."""
    loc = workspace.locate(path, base=base, follow=True)
    try:
        snap = read_file(loc, max_bytes=max_bytes)
    except IsADirectory:
        return list_dir(loc)
    if is_binary(snap.data):
        return BinaryView(path=loc.display, size=len(snap.data), sha256=snap.sha256)
    lines = split_lines(snap.data.decode("utf-8"))
    first, last = _window(loc, len(lines), start, end, max_lines)
    shown, note = _redact_lines([line.rstrip("\n") for line in lines[first - 1:last]], redactor)
    return TextView(path=loc.display, start=first, end=max(last, first - 1), total_lines=len(lines),
                    lines=[_cut(line) for line in shown], sha256=snap.sha256, note=note)


def _window(loc: Located, total: int, start: int | None, end: int | None, max_lines: int) -> tuple[int, int]:
    first = start or 1
    if first < 1 or (end is not None and end < first) or (total and first > total):
        msg = f"The range {start}:{end} does not fit {loc.display}, which has {total} lines."
        raise INVALID_RANGE(msg,
                           next=act("view", path=loc.display, range=f"1:{min(max(total, 1), max_lines)}"),
                           details={"path": loc.display, "total_lines": total})
    last = min(total, end if end is not None else first + max_lines - 1, first + max_lines - 1)
    return first, last


def _redact_lines(lines: list[str], redactor: Redactor) -> tuple[list[str], str | None]:
    """Redact the shown text as a whole, so a secret spanning lines is caught too."""
    redacted = redactor("\n".join(lines))
    out = redacted.split("\n") if lines else []
    if len(out) == len(lines):
        return out, None
    return out, "a multi-line secret was redacted: line numbers after it are shifted"


def _cut(line: str) -> str:
    if len(line) <= MAX_LINE_CHARS:
        return line
    return f"{line[:MAX_LINE_CHARS]}... [{len(line) - MAX_LINE_CHARS} more characters]"


def list_dir(loc: Located, *, max_entries: int = MAX_ENTRIES) -> DirView:
    """The folder's entries, sorted by name; symlinks are shown, never followed."""
    with open_parent(loc) as parent:
        fd = os.open(loc.name, _DIR_FLAGS, dir_fd=parent) if not loc.is_root else os.dup(parent)
    try:
        names = sorted(os.listdir(fd))
        entries = [_entry(fd, name) for name in names[:max_entries]]
    finally:
        os.close(fd)
    return DirView(path=loc.display, entries=[e for e in entries if e is not None], total_entries=len(names))


def _entry(dfd: int, name: str) -> DirEntry | None:
    try:
        st = os.stat(name, dir_fd=dfd, follow_symlinks=False)
    except FileNotFoundError:
        return None
    if stat.S_ISLNK(st.st_mode):
        target = None
        with contextlib.suppress(OSError):
            target = os.readlink(name, dir_fd=dfd)
        return DirEntry(name=name, kind="symlink", target=target)
    if stat.S_ISDIR(st.st_mode):
        return DirEntry(name=name, kind="dir")
    if stat.S_ISREG(st.st_mode):
        return DirEntry(name=name, kind="file", size=st.st_size)
    return DirEntry(name=name, kind="other")
