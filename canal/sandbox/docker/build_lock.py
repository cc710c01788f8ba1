"""One build of one content at a time, across processes: an ``flock`` keyed by the content's digest.

Without it, a dozen first runs at once each built the same image (the last tag wins, the rest are left
untagged on the engine). The builder that gets the lock builds; the others wait, then find the image
present and reuse it. The lock files live in the user's private cache folder (``CANAL_CACHE_DIR``, else
the user cache folder), 0700, never in a project or a sandbox mount; they hold nothing.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import platformdirs

from canal.core.fsutil import FILE_MODE, private_dir
from canal.sandbox.errors import ImageBuildFailed
from canal.sandbox.images import BuildEvent, Progress

WAIT_S = 3600.0  # a build of packages from the network can take many minutes


def lock_folder() -> Path:
    override = os.environ.get("CANAL_CACHE_DIR")
    base = Path(override) if override else Path(platformdirs.user_cache_dir("canal", appauthor=False))
    return private_dir(base / "build-locks")


@contextmanager
def build_lock(what: str, digest: str, on_event: Progress, wait_s: float = WAIT_S) -> Iterator[None]:
    """Hold the lock of building ``digest`` (``what`` names it in events and errors)."""
    path = lock_folder() / (hashlib.sha256(digest.encode()).hexdigest()[:32] + ".lock")
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, FILE_MODE)
    try:
        _acquire(fd, what, path, on_event, wait_s)
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def _acquire(fd: int, what: str, path: Path, on_event: Progress, wait_s: float) -> None:
    start = time.monotonic()
    told = False
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            waited = time.monotonic() - start
            if waited >= wait_s:
                msg = (f"another canal process has been building {what} for {waited:.0f}s (it holds "
                       f"{path}); nothing was built")
                raise ImageBuildFailed(msg, hint="wait for it to finish, then retry",
                                       details={"image": what, "lock": str(path)}) from None
            if not told:
                on_event(BuildEvent("info", f"another canal process is building {what}: waiting for it"))
                told = True
            time.sleep(0.1)


def _built_folder() -> Path:
    return private_dir(lock_folder().parent / "built-images")


def record_built(image_id: str) -> None:
    """Note that this user's Canal built ``image_id``: the proof ``canal gc`` asks for before it removes
    an image (a label alone is no proof: an image built ``FROM`` Canal's inherits its labels)."""
    name = image_id.removeprefix("sha256:")
    if name.isalnum():
        os.close(os.open(_built_folder() / name, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC,
                         FILE_MODE))


def built_by_us(image_id: str) -> bool:
    name = image_id.removeprefix("sha256:")
    return name.isalnum() and (_built_folder() / name).is_file()


def forget_built(image_id: str) -> None:
    name = image_id.removeprefix("sha256:")
    if name.isalnum():
        (_built_folder() / name).unlink(missing_ok=True)
