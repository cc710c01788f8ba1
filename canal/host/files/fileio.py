"""Reading and atomically replacing one workspace file, through its confined parent descriptor."""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import secrets
import shlex
import stat
from dataclasses import dataclass

from canal.core.fsutil import adopt_owner, folder_owner
from canal.core.next import act
from canal.host.files.confine import Located, open_parent
from canal.host.files.errors import (
    BINARY_FILE,
    FILE_CHANGED,
    FILE_TOO_LARGE,
    NOT_A_REGULAR_FILE,
    FileOpError,
    IsADirectory,
    PathNotFound,
    SymlinkEscape,
)

DEFAULT_MAX_BYTES = 8 * 1024 * 1024
NEW_FILE_MODE = 0o644
_SNIFF = 8192
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)


@dataclass(frozen=True)
class Snapshot:
    """A file's bytes as read, with its permission bits and digest (to detect a change before writing)."""

    data: bytes
    mode: int
    sha256: str


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def is_binary(data: bytes) -> bool:
    if b"\0" in data[:_SNIFF]:
        return True
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return True
    return False


def decode_text(snap: Snapshot, loc: Located, action: str) -> str:
    if is_binary(snap.data):
        msg = f"{loc.display} is a binary file ({len(snap.data)} bytes); {action} works on UTF-8 text only."
        raise BINARY_FILE(msg, next=act("view", "shows its size and type", path=loc.display),
                         details={"path": loc.display, "size": len(snap.data)})
    return snap.data.decode("utf-8")


def read_file(loc: Located, *, max_bytes: int = DEFAULT_MAX_BYTES) -> Snapshot:
    """Read a regular file (a final symlink is refused: callers locate with ``follow=True``)."""
    snap = read_if_exists(loc, max_bytes=max_bytes)
    if snap is None:
        msg = f"{loc.display} does not exist."
        raise PathNotFound(msg, next=act("view", path=str(loc.rel.parent)), details={"path": loc.display})
    return snap


def read_if_exists(loc: Located, *, max_bytes: int = DEFAULT_MAX_BYTES) -> Snapshot | None:
    if loc.is_root:
        raise _is_dir(loc)
    try:
        with open_parent(loc) as dfd:
            return _read_at(dfd, loc, max_bytes)
    except PathNotFound:
        return None


def _read_at(dfd: int, loc: Located, max_bytes: int) -> Snapshot | None:
    try:
        fd = os.open(loc.name, _READ_FLAGS, dir_fd=dfd)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            msg = f"{loc.display} became a symlink while it was being opened."
            raise SymlinkEscape(msg, hint="check the file, then run the command again",
                                details={"path": loc.display}) from None
        raise
    try:
        st = os.fstat(fd)
        check_regular(st, loc, max_bytes)
    except BaseException:
        os.close(fd)
        raise
    with os.fdopen(fd, "rb") as fh:
        data = fh.read(max_bytes + 1)
    check_size(len(data), loc, max_bytes)
    return Snapshot(data, stat.S_IMODE(st.st_mode), sha256_hex(data))


def check_regular(st: os.stat_result, loc: Located, max_bytes: int) -> None:
    if stat.S_ISDIR(st.st_mode):
        raise _is_dir(loc)
    if not stat.S_ISREG(st.st_mode):
        msg = f"{loc.display} is not a regular file (a device, pipe or socket)."
        raise NOT_A_REGULAR_FILE(msg, next=act("view", path=str(loc.rel.parent)),
                                 details={"path": loc.display})
    check_size(st.st_size, loc, max_bytes)


def check_size(size: int, loc: Located, max_bytes: int) -> None:
    if size > max_bytes:
        msg = f"{loc.display} is {size} bytes, over the {max_bytes}-byte limit for this operation."
        raise FILE_TOO_LARGE(msg, hint="work on it inside the sandbox (the limit is "
                             "storage.file_per_operation in canal.yaml, which a person may raise)",
                           next=act("run", command=f"sed -n 1,50p {shlex.quote(loc.display)}"),
                           details={"path": loc.display, "size": size, "limit": max_bytes})


def _is_dir(loc: Located) -> IsADirectory:
    msg = f"{loc.display} is a folder, not a file."
    return IsADirectory(msg, next=act("view", "lists it", path=loc.display), details={"path": loc.display})


def replace_file(loc: Located, data: bytes, *, mode: int, expect_sha256: str | None,
                 max_bytes: int = DEFAULT_MAX_BYTES) -> None:
    """Write ``data`` atomically (temp, fsync, rename, fsync folder), keeping ``mode``.

    ``expect_sha256`` is the digest the caller read (``None`` for a new file): if the file changed
    since, nothing is written and FILE_CHANGED is raised. A result larger than ``max_bytes`` is
    FILE_TOO_LARGE and nothing is written: every write and edit (CLI and MCP) passes here.
    """
    check_size(len(data), loc, max_bytes)
    with open_parent(loc, create=expect_sha256 is None) as dfd:
        found = _digest_at(dfd, loc)
        if found != expect_sha256:
            raise _changed(loc, expect_sha256, found)
        tmp = f".{loc.name}.canal-{secrets.token_hex(4)}.tmp"
        _write_temp(dfd, tmp, data, mode, _owner_at(dfd, loc.name))
        try:
            os.replace(tmp, loc.name, src_dir_fd=dfd, dst_dir_fd=dfd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=dfd)
            raise
        os.fsync(dfd)


def _digest_at(dfd: int, loc: Located) -> str | None:
    try:
        fd = os.open(loc.name, _READ_FLAGS, dir_fd=dfd)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return "symlink"
        raise
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        return "not-a-file"
    with os.fdopen(fd, "rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def _owner_at(dfd: int, name: str) -> tuple[int, int]:
    """The owner of the file being replaced, else of the folder it lands in."""
    try:
        info = os.stat(name, dir_fd=dfd, follow_symlinks=False)
    except FileNotFoundError:
        return folder_owner(dfd)
    return info.st_uid, info.st_gid


def _write_temp(dfd: int, name: str, data: bytes, mode: int, owner: tuple[int, int]) -> None:
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(name, flags, 0o600, dir_fd=dfd)
    try:
        adopt_owner(fd, *owner)
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb", closefd=False) as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fd)
    except BaseException:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(name, dir_fd=dfd)
        raise
    os.close(fd)


def _changed(loc: Located, expected: str | None, found: str | None) -> FileOpError:
    if expected is None:
        what = "was created by someone else"
    elif found is None:
        what = "was deleted"
    else:
        what = "changed"
    msg = f"{loc.display} {what} since it was read; nothing was written."
    return FILE_CHANGED(msg, next=act("view", "read it again, then retry", path=loc.display),
                       details={"path": loc.display, "expected_sha256": expected, "found_sha256": found})
