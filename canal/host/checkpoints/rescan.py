"""A partial scan: the last state with only the folders the watch named listed again.

Each named folder is opened from the workspace root one component at a time (never following a
symlink), listed, and its entries compared with the last state as a full scan does (a changed stat key,
or a file the watch saw written, is read again); folders new since are walked whole and watched;
entries gone are dropped with everything below them. Every other path keeps its last entry: the watch
vouches that nothing happened to it. ``None`` when a folder cannot be opened the safe way (it moved
under us): the caller then walks everything.

What it costs follows what changed, not the workspace's size: a folder's old entries are found in the
state's list of them (``kids``), and the result names every path it removed or put back (``touched``),
so the totals, ``dirty`` and the store's delta are worked out from those paths alone
(tests/unit/checkpoints/test_incremental.py compares all of it with a walk of everything).
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from canal.host.checkpoints.ignore import Frame
from canal.host.checkpoints.scan import _DIR, IndexItem, Over, Scanner, ScanResult
from canal.host.checkpoints.watch import parent


def rescan(scanner: Scanner, last: ScanResult, folders: Iterable[str],
           index: dict[str, IndexItem] | None = None) -> ScanResult | None:
    """``index``: a copy of ``last.index`` made beforehand (the store's upkeep thread makes it), changed
    here; else one is made."""
    known = last.frames
    dirty = sorted((f for f in set(folders) if f in known), key=lambda f: (f.count("/"), f))
    out = ScanResult(index=dict(last.index) if index is None else index, not_covered=list(last.not_covered),
                     frames=dict(last.frames), kids=dict(last.kids))
    scanner.known_dirs = frozenset(known)
    listed = set(dirty)
    touched: set[str] = set()
    for rel in dirty:  # a listed folder's entries are what its listing finds now
        for p in last.kids.get(rel, ()):
            del out.index[p]
            touched.add(p)
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
        before = last.kids.get(rel, [])
        if any(p in known and p in out.index and out.index[p][1][0] != "d" for p in before):
            return None  # a folder replaced by a file or a link: walk everything
        gone = [p for p in before if p not in out.index]
        if gone:
            # a file still there but left out now (over the size cap, unreadable) keeps its watch, as a
            # walk keeps it: its return under the cap raises no event in the folder
            there = {n[0] for n in out.not_covered if parent(n[0]) == rel}
            _drop(out, gone, scanner, touched, there)
    for folder in out.walked:  # what the listings put back (a folder new since: all of it)
        touched.update(out.kids.get(folder, ()))
    out.touched = touched
    _totals(out, last, scanner)
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


def _drop(out: ScanResult, gone: list[str], scanner: Scanner, touched: set[str], there: set[str]) -> None:
    """Remove vanished entries and, for folders, everything that was below them (found through the
    state's ``kids``, not by searching every path). ``there``: paths still in the folder, left out now,
    whose watch stays."""
    removed = list(gone)
    stack = [p for p in gone if p in out.frames]
    folders = tuple(f"{p}/" for p in stack)
    while stack:
        folder = stack.pop()
        out.frames.pop(folder, None)
        for p in out.kids.pop(folder, ()):
            removed.append(p)
            if p in out.frames:
                stack.append(p)
    if folders:
        out.not_covered = [n for n in out.not_covered if not n[0].startswith(folders)]
    for p in removed:
        out.index.pop(p, None)
    touched.update(removed)
    if scanner.watch is not None:
        scanner.watch.forget([p for p in removed if p not in there])


def _totals(out: ScanResult, last: ScanResult, scanner: Scanner) -> None:
    """The last state's totals, amended at the touched paths; ``dirty`` when any of them differs."""
    files, size, dirty = last.files, last.bytes, False
    old_get, new_get = last.index.get, out.index.get
    assert out.touched is not None
    for p in out.touched:
        old, new = old_get(p), new_get(p)
        if old == new:
            continue
        dirty = True
        if old is not None and old[1][0] != "d":
            files -= 1
            size -= old[1][2]
        if new is not None and new[1][0] != "d":
            files += 1
            size += new[1][2]
    out.files, out.bytes, out.dirty = files, size, dirty
    settings = scanner.settings
    if files > settings.max_files:
        msg = f"more than {settings.max_files} files (checkpoints.max_files)"
        raise Over(msg)
    if size > settings.max_workspace_bytes:
        msg = f"more than {settings.max_workspace_bytes} bytes (checkpoints.max_workspace_bytes)"
        raise Over(msg)
