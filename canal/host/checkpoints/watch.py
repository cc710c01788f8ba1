"""An inotify watch over the covered workspace, so "nothing changed" needs no walk.

Every covered folder and every covered file or symlink gets its own watch, added through the folder
descriptor the scan holds (``/proc/self/fd/N/name``: never a path an agent could swap for a symlink) and
before the entry is looked at, so any later change raises an event. Folders report entries created,
deleted, moved and changed in mode or owner; files report writes, closes after writing, mode, owner,
link count, deletion and moves, whatever name they were reached by (a hard link from outside the
workspace included: the event belongs to the inode).

The watch vouches only for what it saw. It gives up (the caller walks everything) on a queue overflow,
an unmounted filesystem, the watch limit, a folder it could not watch, a folder renamed, and any
``.gitignore`` touched (what is covered may change). A folder deleted is listed again by path as well as
its parent: a folder made again under that name is new, whatever the last state knew below it.

Writes through a shared memory mapping raise no event until the last reference to the file is gone
(then ``IN_CLOSE_WRITE`` does): a process keeping such a mapping across checkpoints is seen only by the
store's periodic walk (by mtime, as a walk always saw it). docs/checkpoints.md says so.
"""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from canal.host.checkpoints.ignore import GITIGNORE

try:  # a dependency on Linux only (pyproject): elsewhere open_watch says why not, and every scan walks
    from inotify_simple import INotify
except ImportError:  # pragma: no cover (not Linux)
    INotify = None


class F:
    """inotify's event bits (<sys/inotify.h>, a stable kernel ABI)."""

    MODIFY, ATTRIB, CLOSE_WRITE = 0x2, 0x4, 0x8
    MOVED_FROM, MOVED_TO, CREATE, DELETE, DELETE_SELF, MOVE_SELF = 0x40, 0x80, 0x100, 0x200, 0x400, 0x800
    UNMOUNT, Q_OVERFLOW, IGNORED = 0x2000, 0x4000, 0x8000
    ONLYDIR, DONT_FOLLOW, ISDIR = 0x01000000, 0x02000000, 0x40000000


_FOLDER = F.CREATE | F.DELETE | F.MOVED_FROM | F.MOVED_TO | F.ATTRIB | F.DELETE_SELF | F.MOVE_SELF | F.ONLYDIR
_FILE = F.MODIFY | F.ATTRIB | F.CLOSE_WRITE | F.DELETE_SELF | F.MOVE_SELF | F.DONT_FOLLOW
_CONTENT = F.MODIFY | F.CLOSE_WRITE


def parent(path: str) -> str:
    return path.rstrip("/").rpartition("/")[0]


@dataclass
class Pending:
    """What changed since the state the watch was armed on: folders to list again, files to read again
    whatever their stat key, or why the watch cannot vouch (then everything is walked)."""

    folders: set[str] = field(default_factory=set)
    reread: set[str] = field(default_factory=set)
    lost: str = ""


class Watch:
    def __init__(self) -> None:
        if INotify is None:
            msg = "no inotify_simple (Linux only)"
            raise ImportError(msg)
        self._inotify: Any = INotify(nonblocking=True)
        self._folders: dict[int, str] = {}
        self._files: dict[int, set[str]] = {}
        self._wd_of: dict[str, int] = {}
        self._unwatched: set[str] = set()  # files that could not be watched: listed again every time
        self.pending = Pending()
        self.exhausted = False  # the watch limit was reached (fs.inotify.max_user_watches)

    # -- arming (during a scan, before each entry is looked at) ---------------------------------
    def folder(self, fd: int, rel: str) -> None:
        try:
            wd = self._inotify.add_watch(f"/proc/self/fd/{fd}", _FOLDER)
        except OSError as exc:
            self._lose(_why(exc, rel or "."))
            self.exhausted = self.exhausted or exc.errno == errno.ENOSPC
            return
        self._folders[wd] = rel

    def file(self, dirfd: int, name: str, rel: str) -> None:
        try:
            wd = self._inotify.add_watch(f"/proc/self/fd/{dirfd}/{name}", _FILE)
        except OSError as exc:
            if exc.errno == errno.ENOSPC:
                self._lose(_why(exc, rel))
                self.exhausted = True
            elif exc.errno != errno.ENOENT:  # gone since listed: its folder's event says so
                self._unwatched.add(rel)
            return
        old = self._wd_of.get(rel)
        if old is not None and old != wd:
            self._drop(rel)
        self._files.setdefault(wd, set()).add(rel)
        self._wd_of[rel] = wd
        self._unwatched.discard(rel)

    def forget(self, paths: Iterable[str]) -> None:
        """Paths no longer in the workspace's state (gone, or left out)."""
        for path in paths:
            self._unwatched.discard(path)
            self._drop(path)

    def _drop(self, path: str) -> None:
        wd = self._wd_of.pop(path, None)
        if wd is None:
            return
        names = self._files.get(wd)
        if names is not None:
            names.discard(path)
            if not names:
                del self._files[wd]
                with contextlib.suppress(OSError):  # already gone with its inode
                    self._inotify.rm_watch(wd)

    # -- reading --------------------------------------------------------------------------------
    def poll(self) -> Pending:
        """Read every event queued so far into ``pending`` (kept until ``clear``) and return it."""
        if not self.pending.lost:
            try:
                events = self._inotify.read(timeout=0)
                for event in events:
                    self._event(event.wd, event.mask, event.name)
            except OSError as exc:
                self._lose(f"reading the watch failed ({exc.strerror})")
        for path in self._unwatched:
            self.pending.folders.add(parent(path))
        return self.pending

    def wrote(self, paths: list[str]) -> None:
        """Paths written by Canal itself: their folders are listed again, the files read again (and a
        path that is a folder now is listed too)."""
        for path in paths:
            self.pending.folders.update((parent(path), path))
            self.pending.reread.add(path)

    def clear(self) -> None:
        self.pending = Pending()

    def _event(self, wd: int, mask: int, name: str) -> None:
        if mask & F.Q_OVERFLOW:
            self._lose("the watch's event queue overflowed")
        elif mask & F.UNMOUNT:
            self._lose("the workspace's filesystem was unmounted")
        elif mask & F.IGNORED:
            gone = self._folders.pop(wd, None)
            if gone is not None:  # its parent lists it no more, or lists a new folder of that name,
                self.pending.folders.update((parent(gone), gone))  # whose content is new: list it too
            for path in self._files.pop(wd, set()):
                self._wd_of.pop(path, None)
                self.pending.folders.add(parent(path))
        elif wd in self._folders:
            self._folder_event(self._folders[wd], mask, name)
        elif wd in self._files:
            for path in self._files[wd]:
                if path.rpartition("/")[2] == GITIGNORE:
                    self._lose(f"{path} changed")
                self.pending.folders.add(parent(path))
                if mask & _CONTENT:
                    self.pending.reread.add(path)

    def _folder_event(self, rel: str, mask: int, name: str) -> None:
        if not name:  # the folder itself: its own entry lives in its parent's listing
            if mask & F.MOVE_SELF or (mask & F.DELETE_SELF and not rel):
                self._lose(f"the folder {rel or '.'} was moved or deleted")
            elif rel:
                self.pending.folders.add(parent(rel))
            return
        if name == GITIGNORE:
            self._lose(f"{rel + '/' if rel else ''}{name} changed")
        elif mask & F.ISDIR and mask & (F.MOVED_FROM | F.MOVED_TO):
            self._lose(f"a folder in {rel or '.'} was renamed")  # every path below it moved
        self.pending.folders.add(rel)

    def _lose(self, why: str) -> None:
        if not self.pending.lost:
            self.pending.lost = why

    @property
    def watches(self) -> int:
        return len(self._folders) + len(self._files)

    def close(self) -> None:
        self._inotify.close()


def open_watch() -> tuple[Watch | None, str]:
    """A new watch, or None and why not (no inotify here, or no instance left)."""
    try:
        return Watch(), ""
    except (OSError, AttributeError, ImportError) as exc:  # not Linux, or a libc without inotify
        return None, f"inotify is not available ({getattr(exc, 'strerror', None) or exc})"


def _why(exc: OSError, rel: str) -> str:
    if exc.errno == errno.ENOSPC:  # (inotify says ENOSPC for the watch limit, not for a full disk)
        return "the inotify watch limit was reached (fs.inotify.max_user_watches)"
    return f"{rel} could not be watched ({exc.strerror or os.strerror(exc.errno or 0)})"
