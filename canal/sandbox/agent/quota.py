"""The workspace quota of a bind-mounted workspace (stdlib only; runs inside the sandbox).

A bind mount has no size limit of its own, so the agent measures: a walk of the workspace sums the
blocks its files use (hard links once, no symlink followed, no other filesystem entered). A walk costs
time proportional to the number of files, so it is not the trigger. Two cheap signals are: how much
free space the workspace's filesystem lost since the last walk (``statvfs``, one system call; it sees
``fallocate`` too, but also other writers on the host), and how many bytes the container's processes
wrote to storage since then (``write_bytes`` of ``/proc/*/io``, which includes reaped children; tmpfs
writes do not count). Only when either could have taken the workspace past its limit is the tree walked
again; a walk also runs every ``BACKSTOP_S`` while a command runs. Walks are spaced so they take at
most ``BUDGET`` of the command's time. A folder the walk cannot read makes it trust the signals
instead (the writer might hide data there).

The limit of a command is the quota, or the usage at its start when that is already higher: a
workspace that is bigger than its quota can still be used, but not grown.
"""

from __future__ import annotations

import os
import time

BUDGET = 0.05  # at most this share of a command's time goes to walking the workspace
CHECK_EVERY_S = 0.1  # how often the signals are looked at while a command runs
BACKSTOP_S = 5.0  # a walk at least this often while a command runs, whatever the signals say


def _blocks(path: str) -> tuple[int, bool]:
    """(bytes the tree at ``path`` occupies, whether every folder of it could be read)."""
    try:
        root_dev = os.lstat(path).st_dev
    except OSError:
        return 0, True
    total, complete, seen = 0, True, set()
    stack = [path]
    while stack:
        folder = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            complete = False
            continue
        for entry in entries:
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if st.st_dev != root_dev:
                continue
            if st.st_nlink > 1 and not entry.is_dir(follow_symlinks=False):
                if st.st_ino in seen:
                    continue
                seen.add(st.st_ino)
            total += st.st_blocks * 512
            if entry.is_dir(follow_symlinks=False):
                stack.append(entry.path)
    return total, complete


def _written() -> int:
    """Bytes every process of the container (and the children each reaped) sent to storage."""
    total = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/io", "rb") as fh:
                for line in fh:
                    if line.startswith(b"write_bytes:"):
                        total += int(line.split()[1])
        except (OSError, ValueError):
            continue
    return total


def _free(path: str) -> int | None:
    try:
        st = os.statvfs(path)
    except OSError:
        return None
    return st.f_bfree * st.f_frsize


class Quota:
    """Watches one workspace against ``limit`` bytes."""

    def __init__(self, path: str, limit: int) -> None:
        self.path = path
        self.quota = limit
        self.usage = 0
        self.walk_s = 0.0
        self.walked_at = 0.0
        self.free_at_walk: int | None = None
        self.written_at_walk = 0
        self.limit = limit
        self.next_check = 0.0
        self.measure()

    def measure(self) -> int:
        start = time.monotonic()
        free, written = _free(self.path), _written()
        used, complete = _blocks(self.path)
        if not complete:
            used = max(used, self.usage + self.growth(free, written))
        self.usage, self.free_at_walk, self.written_at_walk = used, free, written
        self.walked_at = time.monotonic()
        self.walk_s = self.walked_at - start
        return used

    def begin(self) -> None:
        """A command starts: its limit is the quota, or today's usage when that is higher. The first look
        at the signals comes ``CHECK_EVERY_S`` into it (then every ``CHECK_EVERY_S``), and one when it
        ends (``exceeded(final=True)``): a short command costs that one look, not two."""
        self.limit = max(self.quota, self.usage)
        self.next_check = time.monotonic() + CHECK_EVERY_S

    def growth(self, free: int | None, written: int) -> int:
        """The most the workspace can have grown since the last walk, by either signal."""
        dropped = 0 if free is None or self.free_at_walk is None else self.free_at_walk - free
        return max(dropped, written - self.written_at_walk, 0)

    def maybe_over(self) -> bool:
        """True when the signals say the limit may have been passed since the last walk."""
        return self.usage + self.growth(_free(self.path), _written()) > self.limit

    def exceeded(self, *, final: bool = False) -> bool:
        """Cheap while nothing much was written; walks when the free space says it may be over."""
        now = time.monotonic()
        if not final and now < self.next_check:
            return False
        self.next_check = now + CHECK_EVERY_S
        due = not final and now - self.walked_at >= BACKSTOP_S
        if not due and not self.maybe_over():
            return False
        if not final and now - self.walked_at < self.walk_s / BUDGET:
            return False
        return self.measure() > self.limit

    def report(self) -> dict[str, int]:
        return {"limit": self.limit, "used": self.usage}
