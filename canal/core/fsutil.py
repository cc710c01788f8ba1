"""Private, atomic file writes: each file Canal writes whole goes through here (0600, temp, fsync, rename)."""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import tempfile
from pathlib import Path

FILE_MODE = 0o600
DIR_MODE = 0o700


def private_dir(path: Path) -> Path:
    """Create ``path`` (and parents) as 0700 folders; tighten an existing one that is looser. (One
    ``stat`` when it exists: this runs several times per command.)"""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        path.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
        mode = os.stat(path).st_mode
    if not stat.S_ISDIR(mode):
        raise FileExistsError(errno.EEXIST, "not a folder", str(path))
    if mode & 0o077:
        path.chmod(DIR_MODE)
    return path


def adopt_owner(fd: int, uid: int, gid: int) -> None:
    """Give the open file or folder ``fd`` to ``uid:gid`` (the owner of the folder it lands in, or of
    the file it replaces), so a file Canal writes into a project stays writable by the sandbox, which
    runs as the project's owner. Only root can give a file away; for anyone else, when the owner
    differs, the file keeps the caller's uid (they could not write a file the sandbox cannot)."""
    info = os.fstat(fd)
    if (info.st_uid, info.st_gid) == (uid, gid):
        return
    with contextlib.suppress(PermissionError):
        os.fchown(fd, uid, gid)


def folder_owner(path: Path | int) -> tuple[int, int]:
    info = os.fstat(path) if isinstance(path, int) else os.stat(path)
    return info.st_uid, info.st_gid


def make_dirs_owned(path: Path, mode: int = 0o777) -> None:
    """``mkdir -p`` where each folder made takes the owner of the folder it is made in."""
    missing = []
    here = path
    while not here.exists():
        missing.append(here)
        here = here.parent
    for folder in reversed(missing):
        with contextlib.suppress(FileExistsError):
            folder.mkdir(mode)
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        try:
            adopt_owner(fd, *folder_owner(folder.parent))
        finally:
            os.close(fd)


def fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def atomic_write(path: Path, data: bytes, mode: int = FILE_MODE, *, private_folder: bool = True,
                 durable: bool = True, sync_folder: bool = True) -> None:
    """Write ``data`` to ``path`` atomically: temp file in the same folder, fsync, rename, fsync folder.

    ``private_folder``: create or tighten the folder to 0700 first (host state). A file written into a
    folder of the user's project (``private_folder=False``) leaves that folder as the user made it.
    ``durable=False``: no fsync (still all or nothing): a cache, or a file the caller syncs itself.
    ``sync_folder=False``: the data is synced, the rename is not: after a crash the path holds the old
    file or the new one, whole; the next durable write in the same folder makes the rename last.
    """
    folder = path.parent
    if private_folder:
        private_dir(folder)
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, mode)
        if not private_folder:  # a file of the user's project: it takes the folder's owner
            adopt_owner(fd, *folder_owner(folder))
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            if durable:
                os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    if durable and sync_folder:
        fsync_dir(folder)


def atomic_write_text(path: Path, text: str, mode: int = FILE_MODE) -> None:
    atomic_write(path, text.encode("utf-8"), mode)
