"""Private, atomic file writes: each file Canal writes whole goes through here (0600, temp, fsync, rename)."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

FILE_MODE = 0o600
DIR_MODE = 0o700


def private_dir(path: Path) -> Path:
    """Create ``path`` (and parents) as 0700 folders; tighten an existing one that is looser."""
    path.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
    if path.stat().st_mode & 0o077:
        path.chmod(DIR_MODE)
    return path


def fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def atomic_write(path: Path, data: bytes, mode: int = FILE_MODE, *, private_folder: bool = True) -> None:
    """Write ``data`` to ``path`` atomically: temp file in the same folder, fsync, rename, fsync folder.

    ``private_folder``: create or tighten the folder to 0700 first (host state). A file written into a
    folder of the user's project (``private_folder=False``) leaves that folder as the user made it.
    """
    folder = path.parent
    if private_folder:
        private_dir(folder)
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    fsync_dir(folder)


def atomic_write_text(path: Path, text: str, mode: int = FILE_MODE) -> None:
    atomic_write(path, text.encode("utf-8"), mode)
