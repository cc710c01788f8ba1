"""Putting the workspace back to a checkpoint: bytes, modes, symlinks, times (and owners as root).

Never setuid or setgid bits: a restore (or a fork's apply, or a copy fork) writes files as Canal's own
user, often root, so putting a recorded S_ISUID back would make a privileged file on the host that the
sandbox itself is refused (canal/sandbox/agent/seccomp.py). The paths whose bits were dropped are
returned, and every result that restores says so.

Every object needed is checked against its hash before anything in the workspace is touched. The
workspace is written through folder descriptors reached from its root without following symlinks,
so a folder swapped for a link (the sandbox writes this tree) stops the restore instead of leading
out. Paths the checkpoint did not cover are never removed; a folder still holding some is left.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import NamedTuple

from canal.host.checkpoints.compare import changes
from canal.host.checkpoints.models import Change, NotCovered
from canal.host.checkpoints.objects import ObjectStore
from canal.host.checkpoints.scan import Entry
from canal.host.files.errors import SymlinkEscape

_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
_CHUNK = 1024 * 1024
PRIVILEGE_BITS = stat.S_ISUID | stat.S_ISGID


class Restored(NamedTuple):
    changes: list[Change]
    left: list[NotCovered]  # not touched: folders holding paths no checkpoint covers
    stripped: list[str]  # written without the setuid/setgid bits their entry recorded


def unprivileged(mode: int) -> int:
    return mode & ~PRIVILEGE_BITS


def restore(root: Path, target: Mapping[str, Entry], current: Mapping[str, Entry],
            objects: ObjectStore, *, paths: set[str] | None = None, keep: set[str] | None = None) -> Restored:
    """Make the covered workspace equal ``target``; ``paths`` limits it to those paths (and parents).
    ``keep``: paths the target has no copy of although they were there (over the size cap...): never
    deleted or replaced, so an undo cannot turn a truncation it could not undo into a deletion."""
    left: list[NotCovered] = []
    found = []
    for c in changes(current, target):
        if paths is not None and c.path not in paths:
            continue
        if keep and c.path not in target and _kept(c.path, keep):
            left.append(NotCovered(path=c.path, reason="the checkpoint has no copy of it; left in place"))
            continue
        found.append(c)
    for c in found:  # check first: nothing is written from a store that fails
        entry = target.get(c.path)
        if entry is not None and entry[0] == "f":
            objects.verify(entry[6])
    writer = _Writer(root, objects)
    gone = [c.path for c in found if c.path not in target or _type_changed(current, target, c.path)]
    for path in sorted(gone, key=_depth, reverse=True):
        if not writer.remove(path, current[path]):
            left.append(NotCovered(path=path + "/", reason="holds paths no checkpoint covers; left in place"))
    made = [c.path for c in found if c.path in target]
    for path in sorted(made, key=_depth):
        if not writer.put(path, target[path]):
            left.append(NotCovered(path=path + "/", reason="holds paths no checkpoint covers; left in place"))
    for path in sorted((p for p in made if target[p][0] == "d"), key=_depth, reverse=True):
        writer.dir_meta(path, target[path])
    return Restored(found, left, sorted(writer.stripped))


def _kept(path: str, keep: set[str]) -> bool:
    return path in keep or any(path.startswith(k + "/") for k in keep)


def _type_changed(current: Mapping[str, Entry], target: Mapping[str, Entry], path: str) -> bool:
    a, b = current.get(path), target.get(path)
    return a is not None and b is not None and a[0] != b[0]


def _depth(path: str) -> int:
    return path.count("/")


class _Writer:
    def __init__(self, root: Path, objects: ObjectStore) -> None:
        self.root = root
        self.objects = objects
        self.as_root = os.geteuid() == 0
        self.stripped: set[str] = set()

    def mode(self, path: str, entry: Entry) -> int:
        if entry[1] & PRIVILEGE_BITS:
            self.stripped.add(path)
        return unprivileged(entry[1])

    @contextlib.contextmanager
    def parent(self, path: str) -> Iterator[tuple[int, str]]:
        parts = path.split("/")
        fd = os.open(self.root, _DIR)
        try:
            for part in parts[:-1]:
                try:
                    nxt = os.open(part, _DIR, dir_fd=fd)
                except OSError as exc:
                    if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                        msg = f"{path}: {part} is no longer a folder (a symlink or a file); restore stopped."
                        raise SymlinkEscape(msg, hint="stop what writes the workspace, then undo again",
                                            details={"path": path}) from None
                    raise
                os.close(fd)
                fd = nxt
            yield fd, parts[-1]
        finally:
            os.close(fd)

    def remove(self, path: str, entry: Entry) -> bool:
        with self.parent(path) as (fd, name):
            try:
                st = os.stat(name, dir_fd=fd, follow_symlinks=False)
            except FileNotFoundError:
                return True
            if not stat.S_ISDIR(st.st_mode):
                os.unlink(name, dir_fd=fd)
                return True
            try:
                os.rmdir(name, dir_fd=fd)
            except OSError as exc:
                if exc.errno in (errno.ENOTEMPTY, errno.EEXIST):
                    return False
                raise
            return True

    def put(self, path: str, entry: Entry) -> bool:
        kind = entry[0]
        with self.parent(path) as (fd, name):
            if kind == "d":
                return self._mkdir(fd, name)
            if kind == "l":
                done = self._replace(fd, name, lambda tmp: os.symlink(entry[6], tmp, dir_fd=fd))
                if done:
                    self._link_meta(fd, name, entry)
                return done
            return self._replace(fd, name, lambda tmp: self._write(fd, tmp, entry, self.mode(path, entry)))

    def _mkdir(self, fd: int, name: str) -> bool:
        try:
            st = os.stat(name, dir_fd=fd, follow_symlinks=False)
        except FileNotFoundError:
            os.mkdir(name, 0o700, dir_fd=fd)
            return True
        if not stat.S_ISDIR(st.st_mode):
            os.unlink(name, dir_fd=fd)
            os.mkdir(name, 0o700, dir_fd=fd)
        return True

    def dir_meta(self, path: str, entry: Entry) -> None:
        with self.parent(path) as (fd, name):
            dfd = os.open(name, _DIR, dir_fd=fd)
            try:
                if self.as_root:
                    os.fchown(dfd, entry[4], entry[5])
                os.fchmod(dfd, self.mode(path, entry))
            finally:
                os.close(dfd)

    def _link_meta(self, fd: int, name: str, entry: Entry) -> None:
        if self.as_root:
            os.chown(name, entry[4], entry[5], dir_fd=fd, follow_symlinks=False)
        with contextlib.suppress(OSError):
            os.utime(name, ns=(entry[3], entry[3]), dir_fd=fd, follow_symlinks=False)

    def _replace(self, fd: int, name: str, make: Callable[[str], None]) -> bool:
        """Create the new entry under a temporary name, then rename it over ``name``."""
        try:
            st = os.stat(name, dir_fd=fd, follow_symlinks=False)
            if stat.S_ISDIR(st.st_mode):
                os.rmdir(name, dir_fd=fd)  # a folder holding uncovered paths stays (ENOTEMPTY)
        except FileNotFoundError:
            pass
        except OSError as exc:
            if exc.errno in (errno.ENOTEMPTY, errno.EEXIST):
                return False
            raise
        tmp = f".{name}.canal-undo"
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp, dir_fd=fd)
        make(tmp)
        os.rename(tmp, name, src_dir_fd=fd, dst_dir_fd=fd)
        return True

    def _write(self, fd: int, tmp: str, entry: Entry, mode: int) -> None:
        src = os.open(self.objects.path(entry[6]), os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        try:
            out = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600,
                          dir_fd=fd)
            try:
                while chunk := os.read(src, _CHUNK):
                    view = memoryview(chunk)
                    while view:
                        view = view[os.write(out, view):]
                if self.as_root:
                    os.fchown(out, entry[4], entry[5])
                os.fchmod(out, mode)
                os.utime(out, ns=(entry[3], entry[3]))
            finally:
                os.close(out)
        finally:
            os.close(src)
