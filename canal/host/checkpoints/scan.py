"""One pass over the workspace: what is there now, reusing the stat cache for files that did not change.

A file whose stat key (type and mode, size, inode, ctime, mtime, owner) equals the cached one is taken
from the cache without reading it; any other file is read, hashed and stored. ``ctime`` cannot be set
from user space, so a command cannot fake an unchanged file. A key within ``RACY_NS`` of the scan's
start is not trusted next time (git's "racily clean" rule): a second write in the same clock tick
leaves the same key.
"""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from canal.host.checkpoints.ignore import Frame, Ignorer
from canal.host.checkpoints.objects import ObjectStore, Unstable, disk_full, hash_only
from canal.host.checkpoints.settings import CheckpointSettings

if TYPE_CHECKING:
    from canal.host.checkpoints.watch import Watch

# (kind, mode, size, mtime_ns, uid, gid, ref): kind f|l|d; ref is the object (file) or target (link)
Entry = tuple[str, int, int, int, int, int, str]
Key = tuple[int, int, int, int, int, int, int]
IndexItem = tuple[Key | None, Entry]
RACY_NS = 50_000_000  # coarse kernel clocks tick every 1-10 ms; this is well past one tick
_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


@dataclass
class ScanResult:
    index: dict[str, IndexItem] = field(default_factory=dict)
    not_covered: list[tuple[str, str]] = field(default_factory=list)  # (path, reason)
    files: int = 0
    bytes: int = 0
    added_bytes: int = 0  # new objects written
    hashed: int = 0
    dirty: bool = False  # differs from the cache it started from (an entry or a stat key)
    frames: dict[str, Frame] = field(default_factory=dict)  # each walked folder's .gitignore rules
    kids: dict[str, list[str]] = field(default_factory=dict)  # each covered folder's paths in ``index``
    walked: list[str] = field(default_factory=list)  # the folders this scan listed
    # the paths whose item may differ from the state a partial scan amended (rescan.py), so what
    # changed is found among them alone; None after a walk of everything (compare every path)
    touched: set[str] | None = None

    @property
    def entries(self) -> dict[str, Entry]:
        return entries_of(self.index)


def entries_of(index: Mapping[str, IndexItem]) -> dict[str, Entry]:
    """The manifest entries a stat cache holds (what a checkpoint of that state records)."""
    return {path: item[1] for path, item in index.items()}


class Over(Exception):
    """The workspace passed a cap; the message names which."""


@dataclass
class Scanner:
    root: Path
    settings: CheckpointSettings
    objects: ObjectStore | None  # None: look only (diff), hash changed files without storing them
    cache: dict[str, IndexItem]
    watch: Watch | None = None  # armed on every folder and covered entry before it is looked at
    known_dirs: frozenset[str] | None = None  # a partial scan: folders known before are not descended
    reread: frozenset[str] = frozenset()  # files read again whatever their stat key (written since)
    ignorer: Ignorer = field(init=False)

    def __post_init__(self) -> None:
        self.ignorer = Ignorer.make(self.settings.exclude, self.settings.gitignore)

    def scan(self) -> ScanResult:
        out = ScanResult()
        fd = os.open(self.root, _DIR)
        if self.watch is not None:
            self.watch.folder(fd, "")
        self.walk(out, [("", fd, Frame("", None))])
        out.dirty = out.dirty or len(out.index) != len(self.cache)
        return out

    def walk(self, out: ScanResult, stack: list[tuple[str, int, Frame]]) -> None:
        """Scan each (folder, open descriptor, parent's rules) on ``stack`` and the new folders found
        below them; the descriptors are closed."""
        start = time.time_ns()
        try:
            while stack:
                rel, fd, frame = stack.pop()
                try:
                    self._folder(rel, fd, frame, out, stack, start)
                finally:
                    os.close(fd)
                self._check_caps(out)
        finally:
            for _, fd, _ in stack:
                os.close(fd)

    def _check_caps(self, out: ScanResult) -> None:
        if out.files > self.settings.max_files:
            msg = f"more than {self.settings.max_files} files (checkpoints.max_files)"
            raise Over(msg)
        if out.bytes > self.settings.max_workspace_bytes:
            msg = f"more than {self.settings.max_workspace_bytes} bytes (checkpoints.max_workspace_bytes)"
            raise Over(msg)

    def _folder(self, rel: str, fd: int, parent: Frame, out: ScanResult,
                stack: list[tuple[str, int, Frame]], start: int) -> None:
        with os.scandir(fd) as it:
            items = list(it)
        frame = self.ignorer.frame_for(parent, rel, fd, {e.name for e in items})
        out.frames[rel] = frame
        out.walked.append(rel)
        prefix = f"{rel}/" if rel else ""
        cached = self.cache.get
        index = out.index
        watch = self.watch
        reread = self.reread
        paths = [prefix + item.name for item in items]
        # the fast path (an unchanged file) stays inline: it runs 20,000 times
        for path, item in zip(paths, items, strict=True):
            if watch is not None and not item.is_dir(follow_symlinks=False):
                watch.file(fd, item.name, path)  # before looking: a later change raises an event
            try:
                st = item.stat(follow_symlinks=False)
            except FileNotFoundError:
                continue  # gone since listed
            old = cached(path)
            mode = st.st_mode
            if old is not None and old[0] == (mode, st.st_size, st.st_ino, st.st_ctime_ns, st.st_mtime_ns,
                                              st.st_uid, st.st_gid) and path not in reread:
                index[path] = old
                out.files += 1
                out.bytes += st.st_size
                continue
            is_dir = stat.S_ISDIR(mode)
            # a covered path stays covered (the cache is dropped when the settings change)
            reason = self._excluded(frame, path, is_dir) if old is None else None
            if reason is not None:
                out.not_covered.append((path + "/" * is_dir, reason))
                if watch is not None:
                    watch.forget([path])
                continue
            if is_dir:
                self._dir(fd, item.name, path, st, frame, out, stack, old)
            else:
                self._leaf(fd, item.name, path, st, old, out, start)
        # (a partial scan removed the folder's old entries first: what is in the index is this listing)
        out.kids[rel] = [path for path in paths if path in index]

    def _excluded(self, frame: Frame, path: str, is_dir: bool) -> str | None:
        return self.ignorer.configured_reason(path, is_dir) or (
            self.ignorer.git_reason(frame, path, is_dir) if self.settings.gitignore else None)

    def _dir(self, fd: int, name: str, path: str, st: os.stat_result, frame: Frame, out: ScanResult,
             stack: list[tuple[str, int, Frame]], old: IndexItem | None) -> None:
        entry: Entry = ("d", st.st_mode & 0o7777, 0, 0, st.st_uid, st.st_gid, "")
        if self.known_dirs is not None and path in self.known_dirs and old is not None and old[1][0] == "d":
            if old[1] != entry:
                out.dirty = True
            out.index[path] = (None, entry)  # a partial scan: its content is known (listed if it changed)
            return
        try:
            child = os.open(name, _DIR, dir_fd=fd)
        except OSError as exc:
            out.not_covered.append((path + "/", f"unreadable folder ({exc.strerror})"))
            return
        if self.watch is not None:
            self.watch.folder(child, path)
        stack.append((path, child, frame))
        if old is None or old[1] != entry:
            out.dirty = True
        out.index[path] = (None, entry)

    def _leaf(self, fd: int, name: str, path: str, st: os.stat_result, old: IndexItem | None,
              out: ScanResult, start: int) -> None:
        mode = st.st_mode
        if not (stat.S_ISREG(mode) or stat.S_ISLNK(mode)):
            out.not_covered.append((path, "not a file, folder or symlink (device, pipe or socket)"))
            return
        if stat.S_ISREG(mode) and st.st_size > self.settings.max_file_bytes:
            out.not_covered.append((path, f"over the size cap ({self.settings.max_file_bytes} bytes)"))
            return
        key: Key = (mode, st.st_size, st.st_ino, st.st_ctime_ns, st.st_mtime_ns, st.st_uid, st.st_gid)
        if old is not None and old[0] == key and path not in self.reread:
            entry = old[1]
        else:
            made = self._read(fd, name, path, st, out)
            if made is None:
                return
            entry = made
        out.files += 1
        out.bytes += st.st_size
        racy = st.st_ctime_ns >= start - RACY_NS or st.st_mtime_ns >= start - RACY_NS
        item = (None if racy else key, entry)
        if old != item:
            out.dirty = True
        out.index[path] = item

    def _read(self, fd: int, name: str, path: str, st: os.stat_result, out: ScanResult) -> Entry | None:
        perm = st.st_mode & 0o7777
        if stat.S_ISLNK(st.st_mode):
            try:
                target = os.readlink(name, dir_fd=fd)
            except OSError as exc:
                out.not_covered.append((path, f"unreadable symlink ({exc.strerror})"))
                return None
            return ("l", perm, st.st_size, st.st_mtime_ns, st.st_uid, st.st_gid, target)
        for _ in range(3):
            try:
                ref, added = self._store(fd, name, st)
            except Unstable:
                continue
            except OSError as exc:
                if disk_full(exc) or self.objects is None:
                    raise
                out.not_covered.append((path, f"unreadable ({exc.strerror})"))
                return None
            out.hashed += 1
            out.added_bytes += added
            return ("f", perm, st.st_size, st.st_mtime_ns, st.st_uid, st.st_gid, ref)
        out.not_covered.append((path, "kept changing while it was read"))
        return None

    def _store(self, fd: int, name: str, st: os.stat_result) -> tuple[str, int]:
        if self.objects is None:
            return hash_only(fd, name, st), 0
        return self.objects.put(fd, name, st)
