"""Moving and copying one entry (file, symlink or folder tree) between two folder descriptors.

Everything works on ``(folder fd, name)`` pairs and never follows a symlink: a link is carried as a
link. ``rename`` fails across filesystems (EXDEV); then the entry is copied (each file fsynced, modes
and times kept), the copy's folder fsynced, and only then the source unlinked.
"""

from __future__ import annotations

import errno
import os
import shlex
import shutil
import stat

from canal.core.next import act
from canal.host.trash.errors import UNSUPPORTED_FILE_TYPE, RestoreTargetExists

_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | _CLOEXEC
_CHUNK = 1024 * 1024


def lstat_at(dfd: int, name: str) -> os.stat_result | None:
    try:
        return os.stat(name, dir_fd=dfd, follow_symlinks=False)
    except FileNotFoundError:
        return None


def kind_of(st: os.stat_result, name: str) -> str:
    if stat.S_ISLNK(st.st_mode):
        return "symlink"
    if stat.S_ISDIR(st.st_mode):
        return "dir"
    if stat.S_ISREG(st.st_mode):
        return "file"
    msg = f"{name} is a device, pipe or socket; only files, folders and symlinks can be trashed."
    raise UNSUPPORTED_FILE_TYPE(msg, next=act("run", "the policy decides", command=f"rm {shlex.quote(name)}"),
                              details={"name": name})


def move_entry(src_dfd: int, src: str, dst_dfd: int, dst: str, *, no_replace: bool) -> None:
    """Move ``src`` to ``dst``; with ``no_replace`` an existing ``dst`` is never overwritten."""
    st = os.stat(src, dir_fd=src_dfd, follow_symlinks=False)
    # link() fails atomically when dst exists; rename() would silently replace a file.
    use_link = no_replace and not stat.S_ISDIR(st.st_mode)
    fallback = (errno.EXDEV, errno.EPERM, errno.ENOTSUP, errno.EMLINK) if use_link else (errno.EXDEV,)
    try:
        if use_link:
            os.link(src, dst, src_dir_fd=src_dfd, dst_dir_fd=dst_dfd, follow_symlinks=False)
            os.unlink(src, dir_fd=src_dfd)
        else:
            os.rename(src, dst, src_dir_fd=src_dfd, dst_dir_fd=dst_dfd)
    except OSError as exc:
        if exc.errno in (errno.EEXIST, errno.ENOTEMPTY):
            raise _exists(dst) from None
        if exc.errno not in fallback:
            raise
        copy_entry(src_dfd, src, dst_dfd, dst)
        os.fsync(dst_dfd)
        remove_entry(src_dfd, src)
    os.fsync(dst_dfd)
    os.fsync(src_dfd)


Links = dict[tuple[int, int], str]  # (device, inode) of a source file -> path of its first copy


def copy_entry(src_dfd: int, src: str, dst_dfd: int, dst: str, links: Links | None = None) -> None:
    """Copy ``src`` to a new ``dst`` (never overwriting), keeping modes and times, without following links.

    Sparse files stay sparse (only their data is copied) and files hard-linked to each other inside
    the copied tree stay linked (one copy, as many names)."""
    st = os.stat(src, dir_fd=src_dfd, follow_symlinks=False)
    kind = kind_of(st, src)
    links = {} if links is None else links
    try:
        if kind == "symlink":
            os.symlink(os.readlink(src, dir_fd=src_dfd), dst, dir_fd=dst_dfd)
        elif kind == "file" and (st.st_dev, st.st_ino) in links:
            os.link(links[(st.st_dev, st.st_ino)], dst, dst_dir_fd=dst_dfd, follow_symlinks=False)
        elif kind == "file":
            _copy_file(src_dfd, src, dst_dfd, dst, st)
            if st.st_nlink > 1:
                links[(st.st_dev, st.st_ino)] = os.path.join(os.readlink(f"/proc/self/fd/{dst_dfd}"), dst)
        else:
            _copy_dir(src_dfd, src, dst_dfd, dst, st, links)
    except FileExistsError:
        raise _exists(dst) from None


def _copy_data(rfd: int, wfd: int, size: int) -> None:
    """Copy the data extents only (SEEK_DATA/SEEK_HOLE), then set the size: holes stay holes."""
    pos = 0
    while pos < size:
        try:
            start = os.lseek(rfd, pos, os.SEEK_DATA)
        except OSError as exc:
            if exc.errno == errno.ENXIO:  # nothing but a hole up to the end
                break
            raise
        end = os.lseek(rfd, start, os.SEEK_HOLE)
        while start < end:
            chunk = os.pread(rfd, min(_CHUNK, end - start), start)
            if not chunk:
                break
            os.pwrite(wfd, chunk, start)
            start += len(chunk)
        pos = end
    os.ftruncate(wfd, size)


def _copy_file(src_dfd: int, src: str, dst_dfd: int, dst: str, st: os.stat_result) -> None:
    rfd = os.open(src, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | _CLOEXEC, dir_fd=src_dfd)
    try:
        wfd = os.open(dst, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | _CLOEXEC, 0o600,
                      dir_fd=dst_dfd)
        try:
            _copy_data(rfd, wfd, os.fstat(rfd).st_size)
            os.fchmod(wfd, stat.S_IMODE(st.st_mode))
            os.utime(wfd, ns=(st.st_atime_ns, st.st_mtime_ns))
            os.fsync(wfd)
        finally:
            os.close(wfd)
    finally:
        os.close(rfd)


def _copy_dir(src_dfd: int, src: str, dst_dfd: int, dst: str, st: os.stat_result, links: Links) -> None:
    os.mkdir(dst, 0o700, dir_fd=dst_dfd)
    sfd = os.open(src, _DIR_FLAGS, dir_fd=src_dfd)
    try:
        dfd = os.open(dst, _DIR_FLAGS, dir_fd=dst_dfd)
        try:
            for name in sorted(os.listdir(sfd)):
                copy_entry(sfd, name, dfd, name, links)
            os.fchmod(dfd, stat.S_IMODE(st.st_mode))
            os.utime(dfd, ns=(st.st_atime_ns, st.st_mtime_ns))
            os.fsync(dfd)
        finally:
            os.close(dfd)
    finally:
        os.close(sfd)


def remove_entry(dfd: int, name: str) -> None:
    """Delete ``name`` for good (a folder with everything in it); a symlink is removed, not followed."""
    st = lstat_at(dfd, name)
    if st is None:
        return
    if stat.S_ISDIR(st.st_mode):
        shutil.rmtree(name, dir_fd=dfd)
    else:
        os.unlink(name, dir_fd=dfd)


def _exists(name: str) -> RestoreTargetExists:
    msg = f"{name} already exists; it was not overwritten."
    return RestoreTargetExists(msg, hint="choose another place with --to PATH, or replace it with --force",
                               details={"name": name})


def adopt_tree(dfd: int, name: str, uid: int, gid: int) -> None:
    """Give ``name`` (in folder ``dfd``) and everything under it to ``uid:gid``, never following a
    symlink (a link itself is re-owned, not what it points at). Only root can; others keep theirs."""
    try:
        os.chown(name, uid, gid, dir_fd=dfd, follow_symlinks=False)
    except PermissionError:
        return
    st = os.stat(name, dir_fd=dfd, follow_symlinks=False)
    if not stat.S_ISDIR(st.st_mode):
        return
    fd = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=dfd)
    try:
        for entry in os.listdir(fd):
            adopt_tree(fd, entry, uid, gid)
    finally:
        os.close(fd)
