"""Measuring host folders and keeping the saved outputs under their total cap."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

_UNITS = ("KiB", "MiB", "GiB", "TiB")


def format_size(n: int) -> str:
    """``512 MiB``, ``1.5 GiB``, ``700 bytes``: exact units when they are whole, else one decimal."""
    if n < 1024:
        return f"{n} bytes"
    value = float(n)
    for unit in _UNITS:
        value /= 1024
        if value < 1024 or unit == _UNITS[-1]:
            return f"{value:.0f} {unit}" if value.is_integer() else f"{value:.1f} {unit}"
    raise AssertionError  # pragma: no cover - the loop always returns


def tree_usage(path: Path) -> int:
    """Bytes on disk under ``path`` (itself included): blocks, so holes of sparse files cost nothing,
    and each hard-linked inode once. Symlinks are not followed."""
    total, seen = 0, set()
    stack = [path]
    while stack:
        current = stack.pop()
        try:
            st = os.lstat(current)
        except FileNotFoundError:
            continue
        if st.st_nlink > 1 and not stat.S_ISDIR(st.st_mode):
            if (st.st_dev, st.st_ino) in seen:
                continue
            seen.add((st.st_dev, st.st_ino))
        total += st.st_blocks * 512
        if stat.S_ISDIR(st.st_mode):
            stack.extend(current / name for name in os.listdir(current))
    return total


@dataclass(frozen=True)
class Evicted:
    files: int
    bytes: int


def enforce_outputs_total(root: Path, cap: int, keep: Iterable[Path] = ()) -> Evicted:
    """Delete the oldest saved outputs (every sandbox's) until the folder holds at most ``cap`` bytes.
    A file with two names (a spool linked in as the saved output) goes as a whole. ``keep`` (the
    outputs of the command just shown) is never deleted."""
    groups: dict[int, tuple[int, int, list[Path]]] = {}  # inode -> (oldest mtime, bytes, names)
    for path, st in _files_two_deep(root):
        when, size, names = groups.get(st.st_ino, (st.st_mtime_ns, st.st_blocks * 512, []))
        groups[st.st_ino] = (min(when, st.st_mtime_ns), size, [*names, path])
    total = sum(size for _, size, _ in groups.values())
    gone = Evicted(0, 0)
    if total <= cap:  # after every command: the walk alone, nothing resolved
        return gone
    kept = {p.resolve() for p in keep}
    for _, size, names in sorted(groups.values(), key=lambda g: g[0]):
        if total <= cap:
            break
        if any(name.resolve() in kept for name in names):
            continue
        for name in names:
            name.unlink(missing_ok=True)
        total -= size
        gone = Evicted(gone.files + 1, gone.bytes + size)
    return gone


def _files_two_deep(root: Path) -> Iterator[tuple[Path, os.stat_result]]:
    """Regular files in the folders of ``root`` (``root.glob("*/*")``, symlinks to folders followed
    as glob does, files themselves never), with their ``lstat``."""
    try:
        tops = [e.path for e in os.scandir(root) if e.is_dir()]
    except OSError:  # missing or unreadable, as glob skips it
        return
    for top in tops:
        try:
            entries = list(os.scandir(top))
        except OSError:
            continue
        for entry in entries:
            try:
                st = entry.stat(follow_symlinks=False)
            except FileNotFoundError:
                continue
            if stat.S_ISREG(st.st_mode):
                yield Path(entry.path), st
