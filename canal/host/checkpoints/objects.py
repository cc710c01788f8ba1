"""Content-addressed files: one stored file per (content, mode, owner), shared by every checkpoint.

An object's name is ``<sha256 of the bytes>-<mode>-<uid>-<gid>``, and the stored file carries that
mode and owner, so a fork can hard-link it into a read-only lower layer as it is. Objects are never
written after creation; every read checks the bytes and the inode against the name.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import functools
import hashlib
import os
import re
import stat
import tempfile
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from canal.core.fsutil import private_dir
from canal.core.next import act
from canal.host.checkpoints.errors import CHECKPOINT_FAILED, CheckpointError, CheckpointStoreCorrupt

_CHUNK = 1024 * 1024
FSYNC_EACH = 64
_SMALL = 1024 * 1024  # read whole into memory below this
_NAME = re.compile(r"^([0-9a-f]{64})-([0-7]{3,4})-(\d+)-(\d+)$")
_READ = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)


class Unstable(Exception):
    """The file changed while it was being read."""


def object_name(digest: str, mode: int, uid: int, gid: int) -> str:
    return f"{digest}-{mode & 0o777:04o}-{uid}-{gid}"


def parse_name(name: str) -> tuple[str, int, int, int]:
    m = _NAME.match(name)
    if m is None:
        msg = f"checkpoint object name {name!r} is malformed"
        raise CheckpointStoreCorrupt(msg, hint="the checkpoint store is damaged", next=act("checkpoints"),
                                     details={"object": name})
    return m.group(1), int(m.group(2), 8), int(m.group(3)), int(m.group(4))


class ObjectStore:
    def __init__(self, root: Path) -> None:
        self.root = root
        self._root_uid = os.geteuid() == 0
        self._folders: set[str] = set()  # fan-out folders known to exist
        self.written = 0  # objects written since the last ``flush``
        self._unsynced: list[int] = []  # descriptors of the first FSYNC_EACH of them, synced by ``flush``
        self._unsynced_folders: set[Path] = set()

    def path(self, name: str) -> Path:
        return self.root / name[:2] / name

    def has(self, name: str) -> bool:
        return os.path.lexists(self.path(name))

    def put(self, dirfd: int, entry: str, st: os.stat_result) -> tuple[str, int]:
        """Store the regular file ``entry`` of folder ``dirfd``; returns (object name, bytes added).

        Raises ``Unstable`` when the file changed while read, ``OSError`` when it cannot be read."""
        fd = os.open(entry, _READ, dir_fd=dirfd)
        try:
            before = os.fstat(fd)
            if not stat.S_ISREG(before.st_mode) or before.st_ino != st.st_ino:
                raise Unstable(entry)
            uid, gid = (st.st_uid, st.st_gid) if self._root_uid else (os.geteuid(), os.getegid())
            if before.st_size <= _SMALL:
                return self._put_small(fd, before, uid, gid)
            return self._put_stream(fd, before, uid, gid)
        finally:
            os.close(fd)

    def _times(self, tfd: int, before: os.stat_result) -> None:
        # a fork's lower layer links this object: let it show the file's own time
        os.utime(tfd, ns=(before.st_mtime_ns, before.st_mtime_ns))

    def _put_small(self, fd: int, before: os.stat_result, uid: int, gid: int) -> tuple[str, int]:
        data = _read_all(fd, before.st_size)
        _check_same(fd, before)
        name = object_name(hashlib.sha256(data).hexdigest(), before.st_mode, uid, gid)
        if self.has(name):
            return name, 0
        with self._temp() as (tfd, tmp):
            _write_all(tfd, data)
            self._times(tfd, before)
            return name, self._commit(tfd, tmp, name, before.st_mode, uid, gid)

    def _put_stream(self, fd: int, before: os.stat_result, uid: int, gid: int) -> tuple[str, int]:
        sha = hashlib.sha256()
        with self._temp() as (tfd, tmp):
            while chunk := os.read(fd, _CHUNK):
                sha.update(chunk)
                _write_all(tfd, chunk)
            _check_same(fd, before)
            name = object_name(sha.hexdigest(), before.st_mode, uid, gid)
            if self.has(name):
                return name, 0
            self._times(tfd, before)
            return name, self._commit(tfd, tmp, name, before.st_mode, uid, gid)

    @contextlib.contextmanager
    def _temp(self) -> Iterator[tuple[int, str]]:
        if "tmp" not in self._folders:
            private_dir(self.root / "tmp")
            self._folders.add("tmp")
        tfd, tmp = tempfile.mkstemp(dir=self.root / "tmp", prefix="obj.")
        try:
            yield tfd, tmp
        finally:
            os.close(tfd)
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)

    def _commit(self, tfd: int, tmp: str, name: str, mode: int, uid: int, gid: int) -> int:
        """Give the temp file its mode and owner, then its name. Nothing is synced here: ``flush``
        does it for every object of a checkpoint at once, before a record names them."""
        self.written += 1
        if self._root_uid:
            os.fchown(tfd, uid, gid)
        os.fchmod(tfd, mode & 0o777)
        size = os.fstat(tfd).st_size
        if name[:2] not in self._folders:
            private_dir(self.root / name[:2])
            self._folders.add(name[:2])
        try:
            os.link(tmp, self.path(name))  # never replaces: an existing object stays as it was
        except FileExistsError:
            return 0
        if self.written <= FSYNC_EACH:  # kept open: the object's own mode may not let us open it again
            self._unsynced.append(os.dup(tfd))
            self._unsynced_folders.add(self.path(name).parent)
        return size

    def discard(self) -> None:
        """Forget the objects written since the last flush unsynced (a checkpoint that failed: no
        record names them)."""
        fds, self._unsynced, self._unsynced_folders, self.written = self._unsynced, [], set(), 0
        for fd in fds:
            os.close(fd)

    def flush(self, also: list[Path] | None = None) -> None:
        """Put the objects written since the last flush (and ``also``: files and folders the caller
        wrote) on disk. Up to ``FSYNC_EACH`` objects are fsynced side by side (concurrent fsyncs
        share the filesystem's journal commits) with their folders (their names); past that, one
        flush of the filesystem."""
        fds, folders, many = self._unsynced, self._unsynced_folders, self.written > FSYNC_EACH
        self._unsynced, self._unsynced_folders, self.written = [], set(), 0
        try:
            if many:
                sync_folder(self.root)
                return
            jobs = [functools.partial(os.fsync, fd) for fd in fds]
            jobs += [functools.partial(_fsync_path, p) for p in [*sorted(folders), *(also or [])]]
            if len(jobs) == 1:
                jobs[0]()
            elif jobs:
                list(_syncers().map(lambda job: job(), jobs))
        finally:
            for fd in fds:
                os.close(fd)

    def open_verified(self, name: str) -> bytes:
        """The object's bytes, after checking them and its inode against its name."""
        digest, mode, uid, gid = parse_name(name)
        path = self.path(name)
        try:
            fd = os.open(path, _READ)
        except OSError as exc:
            raise _corrupt(name, f"missing or unreadable ({exc.strerror})") from None
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode) or st.st_mode & 0o777 != mode or (st.st_uid, st.st_gid) != (
                    uid, gid):
                raise _corrupt(name, "its mode or owner differs from its name")
            data = _read_all(fd, st.st_size)
        finally:
            os.close(fd)
        if hashlib.sha256(data).hexdigest() != digest:
            raise _corrupt(name, "its bytes do not match its hash")
        return data

    def verify(self, name: str) -> None:
        self.open_verified(name)

    def names(self) -> Iterator[tuple[str, int]]:
        """Every stored object with its size."""
        if not self.root.is_dir():
            return
        for folder in self.root.iterdir():
            if folder.name == "tmp" or not folder.is_dir():
                continue
            for item in folder.iterdir():
                yield item.name, item.lstat().st_size

    def listing(self) -> Iterator[str]:
        """Every stored object's name (no stat: what pruning lists)."""
        with contextlib.suppress(FileNotFoundError):
            for folder in os.scandir(self.root):
                if folder.name != "tmp" and folder.is_dir(follow_symlinks=False):
                    with contextlib.suppress(FileNotFoundError):
                        yield from os.listdir(folder.path)

    def remove(self, name: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.path(name).unlink()


def hash_only(dirfd: int, entry: str, st: os.stat_result) -> str:
    """The object name the file would get, without storing it."""
    fd = os.open(entry, _READ, dir_fd=dirfd)
    try:
        before = os.fstat(fd)
        if not stat.S_ISREG(before.st_mode) or before.st_ino != st.st_ino:
            raise Unstable(entry)
        sha = hashlib.sha256()
        while chunk := os.read(fd, _CHUNK):
            sha.update(chunk)
        _check_same(fd, before)
    finally:
        os.close(fd)
    uid, gid = (st.st_uid, st.st_gid) if os.geteuid() == 0 else (os.geteuid(), os.getegid())
    return object_name(sha.hexdigest(), before.st_mode, uid, gid)


def _corrupt(name: str, why: str) -> CheckpointStoreCorrupt:
    msg = f"The checkpoint store's object {name[:16]}… is corrupt or was tampered with: {why}."
    return CheckpointStoreCorrupt(msg, hint="nothing was restored; keep the store as evidence and undo to "
                                  "another checkpoint", next=act("checkpoints", "lists them"),
                                  details={"object": name, "why": why})


def _read_all(fd: int, size: int) -> bytes:
    parts = []
    while chunk := os.read(fd, max(_CHUNK, size + 1)):
        parts.append(chunk)
    return b"".join(parts)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _check_same(fd: int, before: os.stat_result) -> None:
    after = os.fstat(fd)
    if (after.st_size, after.st_mtime_ns, after.st_ctime_ns) != (
            before.st_size, before.st_mtime_ns, before.st_ctime_ns):
        msg = "changed while read"
        raise Unstable(msg)


_pool: list[ThreadPoolExecutor] = []  # the threads that sync side by side, kept: starting 4 threads per
# checkpoint cost more than the syncs themselves (~4 ms against ~0.3 ms)


def _syncers() -> ThreadPoolExecutor:
    if not _pool:
        _pool.append(ThreadPoolExecutor(max_workers=16, thread_name_prefix="canal-checkpoint-sync"))
    return _pool[0]


os.register_at_fork(after_in_child=_pool.clear)  # a forked child has none of the parent's threads


def _fsync_path(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def sync_folder(folder: Path) -> None:
    """Flush the filesystem holding ``folder`` (syncfs(2) where libc has it, else sync(2))."""
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0))
    try:
        syncfs = getattr(_libc(), "syncfs", None)
        if syncfs is None or syncfs(fd) != 0:
            os.sync()
    finally:
        os.close(fd)


@functools.cache
def _libc() -> ctypes.CDLL | None:
    try:
        return ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None


def disk_full(exc: OSError) -> bool:
    return exc.errno in (errno.ENOSPC, errno.EDQUOT)


def failed(exc: OSError, where: Path) -> CheckpointError:
    why = "the disk is full" if disk_full(exc) else (exc.strerror or str(exc))
    msg = f"Could not write the checkpoint ({why}, in {where}); the command was not run unprotected."
    hint = ("free disk space or prune old checkpoints, then run the command again"
            if disk_full(exc) else f"check the folder {where}, then run the command again")
    prune = [act("checkpoints", "prunes old checkpoints", prune=True)] if disk_full(exc) else []
    return CHECKPOINT_FAILED(msg, hint=hint, next=prune, details={"errno": exc.errno, "folder": str(where)})
