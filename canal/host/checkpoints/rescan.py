"""A partial scan: the last state with only the folders the watch named listed again.

Each named folder is opened from the workspace root one component at a time (never following a
symlink), listed, and its entries compared with the last state as a full scan does (a changed stat key,
or a file the watch saw written, is read again); folders new since are walked whole and watched;
entries gone are dropped with everything below them. Every other path keeps its last entry: the watch
vouches that nothing happened to it. ``None`` when a folder cannot be opened the safe way (it moved
under us): the caller then walks everything.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from canal.host.checkpoints.ignore import Frame
from canal.host.checkpoints.scan import _DIR, Over, Scanner, ScanResult
from canal.host.checkpoints.watch import parent


def rescan(scanner: Scanner, last: ScanResult, folders: Iterable[str]) -> ScanResult | None:
    known = frozenset(last.frames)
    dirty = sorted((f for f in set(folders) if f in known), key=lambda f: (f.count("/"), f))
    out = ScanResult(index=dict(last.index), not_covered=list(last.not_covered), frames=dict(last.frames))
    scanner.known_dirs = known
    listed = set(dirty)
    before = {p for p in last.index if p.rpartition("/")[0] in listed}  # (index paths: no trailing /)
    children: dict[str, list[str]] = {}
    for p in before:
        del out.index[p]
        children.setdefault(p.rpartition("/")[0], []).append(p)
    out.not_covered = [n for n in out.not_covered if parent(n[0]) not in listed]
    for rel in dirty:
        if rel and rel not in out.frames:
            continue  # dropped with a folder above it that is gone
        fd = _open_below(scanner, rel)
        if fd is None:
            return None
        if scanner.watch is not None:  # before listing, as a walk arms it: a folder made again at a
            scanner.watch.folder(fd, rel)  # known path is a new inode that no watch covers yet
        up = out.frames[parent(rel)] if rel else Frame("", None)
        scanner.walk(out, [(rel, fd, up)])
        mine = children.get(rel, [])
        if any(p in known and p in out.index and out.index[p][1][0] != "d" for p in mine):
            return None  # a folder replaced by a file or a link: walk everything
        gone = sorted(p for p in mine if p not in out.index)
        if gone:
            out.dirty = True
            _drop(out, gone, scanner)
    _totals(out, scanner)
    return out


def _open_below(scanner: Scanner, rel: str) -> int | None:
    """A descriptor of folder ``rel``, opened component by component with O_NOFOLLOW."""
    try:
        fd = os.open(scanner.root, _DIR)
    except OSError:
        return None
    for part in rel.split("/") if rel else ():
        try:
            child = os.open(part, _DIR, dir_fd=fd)
        except OSError:
            os.close(fd)
            return None
        os.close(fd)
        fd = child
    return fd


def _drop(out: ScanResult, gone: list[str], scanner: Scanner) -> None:
    """Remove vanished entries and, for folders, everything that was below them."""
    folders = tuple(f"{p}/" for p in gone if p in out.frames)
    removed = list(gone)
    if folders:
        removed += [p for p in out.index if p.startswith(folders)]
        for f in [f for f in out.frames if f in gone or f.startswith(folders)]:
            del out.frames[f]
        out.not_covered = [n for n in out.not_covered if not n[0].startswith(folders)]
    for p in removed:
        out.index.pop(p, None)
    if scanner.watch is not None:
        scanner.watch.forget(removed)


def _totals(out: ScanResult, scanner: Scanner) -> None:
    files = 0
    size = 0
    for _, entry in out.index.values():
        if entry[0] != "d":
            files += 1
            size += entry[2]
    out.files, out.bytes = files, size
    settings = scanner.settings
    if files > settings.max_files:
        msg = f"more than {settings.max_files} files (checkpoints.max_files)"
        raise Over(msg)
    if size > settings.max_workspace_bytes:
        msg = f"more than {settings.max_workspace_bytes} bytes (checkpoints.max_workspace_bytes)"
        raise Over(msg)
