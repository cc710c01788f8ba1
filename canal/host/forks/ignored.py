"""What a fork carries beyond its checkpoint: every path of the working tree no checkpoint holds
(gitignored folders such as ``.venv`` and ``node_modules``, build outputs, files over the size cap), so a
subagent in the fork can run the project's tests.

Hard links to the project's own files where the fork's folder is on the same filesystem: they cost no
data, and overlayfs copies a file up before its first write, so a fork never writes the project's file
(in an overlay fork they are a lower layer of their own, above the checkpoint's). Otherwise (another
filesystem, or a fork that is a full copy) the bytes are copied, after checking they fit.

The project is read through folder descriptors opened without following symlinks: the sandbox writes
this tree, and a folder swapped for a link must not lead the walk out of the project.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import stat
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Literal, NamedTuple

from canal.core.next import act
from canal.host.checkpoints.restore import unprivileged
from canal.host.checkpoints.scan import Entry
from canal.host.forks.errors import FORK_NO_SPACE

_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_CHUNK = 1 << 20
Way = Literal["linked", "copied", "none"]
SPARE_BYTES = 256 << 20  # a copy leaves at least this much free on the state disk


class Carried(NamedTuple):
    way: Way
    files: int
    bytes: int  # on disk (blocks), what a copy costs


class _CrossDevice(Exception):
    pass


def carry(project: Path, entries: Mapping[str, Entry], dest: Path, *, link: bool,
          protected: Sequence[Path] = (), left: Iterable[tuple[str, str]] | None = None) -> Carried:
    """Put every path of ``project`` that ``entries`` (a checkpoint) does not hold under ``dest``, at the
    same relative path. ``link``: hard links when the filesystem allows (else a copy). ``protected``:
    host folders (Canal's state, keys) never carried, nor a folder holding one. ``left``: the paths the
    scan that made ``entries`` left out (CheckpointStore.not_covered), the top-most of each (a folder
    left out is not walked): they are those paths, without listing every covered folder again."""
    found = _uncovered(project, entries) if left is None else sorted(_split(p) for p, _ in left)
    tops = [t for t in found if not _guarded(project, t, protected)]
    if not tops:
        return Carried("none", 0, 0)
    if link:
        with contextlib.suppress(_CrossDevice):
            return Carried("linked", *_put(project, tops, dest, entries, link=True))
        _clear(dest, tops)
    files, size = _measure(project, tops)
    free = shutil.disk_usage(_existing(dest)).free
    if size + SPARE_BYTES > free:
        msg = (f"The project's paths no checkpoint holds (gitignored folders such as .venv, files over the "
               f"size cap: {files} files, {size // 1_000_000} MB) do not fit the state disk "
               f"({free // 1_000_000} MB free) for a copy in the fork. Nothing was made.")
        raise FORK_NO_SPACE(msg,
                            hint="free space on the state disk (or put the state folder on the project's "
                          "filesystem, where they are linked, not copied), then fork again",
                          next=act("gc"), details={"files": files, "bytes": size, "free": free,
                                                   "paths": [t for t, _ in tops[:20]]})
    return Carried("copied", *_put(project, tops, dest, entries, link=False))


def _split(path: str) -> tuple[str, str]:
    """(parent, name) of a path as a scan names it (a folder with a slash at the end)."""
    parent, _, name = path.rstrip("/").rpartition("/")
    return parent, name


def _guarded(project: Path, top: tuple[str, str], protected: Sequence[Path]) -> bool:
    path = project / top[0] / top[1]
    return any(q == path or q.is_relative_to(path) or path.is_relative_to(q) for q in protected)


def _existing(path: Path) -> Path:
    while not path.exists():
        path = path.parent
    return path


def _uncovered(project: Path, entries: Mapping[str, Entry]) -> Iterator[tuple[str, str]]:
    """(parent, name) of each top-most path of the project not in ``entries``: only covered folders are
    listed (by name, no stat), so this costs a listing of the covered folders."""
    root = os.open(project, _DIR)
    try:
        stack: list[tuple[str, int]] = [("", root)]
        while stack:
            rel, fd = stack.pop()
            try:
                for name in sorted(os.listdir(fd)):
                    path = f"{rel}/{name}" if rel else name
                    entry = entries.get(path)
                    if entry is None:
                        yield rel, name
                    elif entry[0] == "d":
                        with contextlib.suppress(OSError):  # gone, or no longer a folder: nothing to carry
                            stack.append((path, os.open(name, _DIR, dir_fd=fd)))
            finally:
                if fd != root:
                    os.close(fd)
    finally:
        os.close(root)


@contextlib.contextmanager
def _parent(project: Path, rel: str) -> Iterator[int]:
    fd = os.open(project, _DIR)
    try:
        for part in rel.split("/") if rel else ():
            nxt = os.open(part, _DIR, dir_fd=fd)
            os.close(fd)
            fd = nxt
        yield fd
    finally:
        os.close(fd)


def _measure(project: Path, tops: list[tuple[str, str]]) -> tuple[int, int]:
    files = size = 0
    for rel, name in tops:
        with contextlib.suppress(OSError), _parent(project, rel) as fd:
            for st in _stats(fd, name):
                files += stat.S_ISREG(st.st_mode)
                size += st.st_blocks * 512 if stat.S_ISREG(st.st_mode) else 0
    return files, size


def _stats(fd: int, name: str) -> Iterator[os.stat_result]:
    st = os.stat(name, dir_fd=fd, follow_symlinks=False)
    yield st
    if stat.S_ISDIR(st.st_mode):
        sub = os.open(name, _DIR, dir_fd=fd)
        try:
            for child in os.listdir(sub):
                with contextlib.suppress(OSError):
                    yield from _stats(sub, child)
        finally:
            os.close(sub)


def _put(project: Path, tops: list[tuple[str, str]], dest: Path, entries: Mapping[str, Entry], *,
         link: bool) -> tuple[int, int]:
    as_root = os.geteuid() == 0
    counts = [0, 0]
    for rel, name in tops:
        target = _folders(dest, rel, entries, as_root)
        with contextlib.suppress(FileNotFoundError, NotADirectoryError), _parent(project, rel) as fd:
            _one(fd, name, str(target / name), link=link, as_root=as_root, counts=counts)
    return counts[0], counts[1]


def _folders(dest: Path, rel: str, entries: Mapping[str, Entry], as_root: bool) -> Path:
    """Folder ``rel`` under ``dest``, each folder made with the mode (never setuid or setgid) and owner
    the checkpoint records: in an overlay fork this layer lies above the checkpoint's layers (a path a
    later layer removed or made a file would otherwise hide what is carried below it), and a folder's
    attributes are those of the top layer holding it."""
    dest.mkdir(parents=True, exist_ok=True)
    target = dest
    parts = rel.split("/") if rel else []
    for i, part in enumerate(parts):
        target = target / part
        if target.is_dir():
            continue  # made for another path, or (a copy fork) restored from the checkpoint
        target.mkdir(0o700)
        entry = entries.get("/".join(parts[:i + 1]))
        if entry is not None and entry[0] == "d":
            if as_root:
                os.chown(target, entry[4], entry[5])
            os.chmod(target, unprivileged(entry[1]))
    return target


def match_folders(dest: Path, entries: Mapping[str, Entry]) -> None:
    """Give the folders of a carried layer that the checkpoint also has its mode and owner, going down
    only through those (a fork made before the carried layer lay above the checkpoint's has them as
    ``mkdir`` made them; they would show over the checkpoint's when it is mounted again)."""
    as_root = os.geteuid() == 0
    stack = [""]
    while stack:
        rel = stack.pop()
        with contextlib.suppress(OSError):
            for item in os.scandir(dest / rel if rel else dest):
                path = f"{rel}/{item.name}" if rel else item.name
                entry = entries.get(path)
                if entry is not None and entry[0] == "d" and item.is_dir(follow_symlinks=False):
                    if as_root:
                        os.chown(item.path, entry[4], entry[5])
                    os.chmod(item.path, unprivileged(entry[1]))
                    stack.append(path)


def _one(fd: int, name: str, out: str, *, link: bool, as_root: bool, counts: list[int]) -> None:
    try:
        st = os.stat(name, dir_fd=fd, follow_symlinks=False)
    except FileNotFoundError:
        return
    if stat.S_ISDIR(st.st_mode):
        os.mkdir(out, 0o700)
        sub = os.open(name, _DIR, dir_fd=fd)
        try:
            for child in sorted(os.listdir(sub)):
                _one(sub, child, f"{out}/{child}", link=link, as_root=as_root, counts=counts)
        finally:
            os.close(sub)
        if as_root:
            os.chown(out, st.st_uid, st.st_gid)
        os.chmod(out, unprivileged(st.st_mode) & 0o7777)
    elif stat.S_ISLNK(st.st_mode):
        os.symlink(os.readlink(name, dir_fd=fd), out)
        if as_root:
            os.chown(out, st.st_uid, st.st_gid, follow_symlinks=False)
    elif stat.S_ISREG(st.st_mode):
        counts[0] += 1
        counts[1] += st.st_blocks * 512
        if link:
            try:
                os.link(name, out, src_dir_fd=fd, follow_symlinks=False)
            except OSError as exc:
                if exc.errno in (errno.EXDEV, errno.EPERM):
                    raise _CrossDevice from None
                raise
        else:
            _copy(fd, name, out, st, as_root)
    # devices, pipes and sockets are not carried (as a checkpoint does not cover them)


def _copy(fd: int, name: str, out: str, st: os.stat_result, as_root: bool) -> None:
    src = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK, dir_fd=fd)
    try:
        dst = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        try:
            while chunk := os.read(src, _CHUNK):
                view = memoryview(chunk)
                while view:
                    view = view[os.write(dst, view):]
            if as_root:
                os.fchown(dst, st.st_uid, st.st_gid)
            os.fchmod(dst, unprivileged(st.st_mode) & 0o7777)
            os.utime(dst, ns=(st.st_atime_ns, st.st_mtime_ns))
        finally:
            os.close(dst)
    finally:
        os.close(src)


def _clear(dest: Path, tops: list[tuple[str, str]]) -> None:
    """Remove what a link attempt made, before a copy starts over."""
    for rel, name in tops:
        path = (dest / rel / name) if rel else dest / name
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)
