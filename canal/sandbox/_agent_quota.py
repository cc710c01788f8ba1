"""The workspace quota of a bind-mounted workspace (stdlib only; runs inside the sandbox).

A bind mount has no size limit of its own, so the agent measures: a walk of the workspace sums the
blocks its files use (hard links once, no symlink followed, no other filesystem entered). A walk costs
time proportional to the number of files, so it does not run on a timer: ``statvfs`` of the workspace's
filesystem (one system call) says how much free space went since the last walk, and only when that
drop could have taken the workspace past its limit is the tree walked again. Walks are further spaced
so they take at most ``BUDGET`` of the command's time. A folder the walk cannot read makes it trust
the free-space drop instead (the writer might hide data there).

The limit of a command is the quota, or the usage at its start when that is already higher: a
workspace that is bigger than its quota can still be used, but not grown.
"""

from __future__ import annotations

import os
import time

BUDGET = 0.05  # at most this share of a command's time goes to walking the workspace
CHECK_EVERY_S = 0.1  # how often free space is looked at while a command runs


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
        self.limit = limit
        self.next_check = 0.0
        self.measure()

    def measure(self) -> int:
        start = time.monotonic()
        free = _free(self.path)
        used, complete = _blocks(self.path)
        if not complete and self.free_at_walk is not None and free is not None:
            used = max(used, self.usage + max(0, self.free_at_walk - free))
        self.usage, self.free_at_walk = used, free
        self.walked_at = time.monotonic()
        self.walk_s = self.walked_at - start
        return used

    def begin(self) -> None:
        """A command starts: its limit is the quota, or today's usage when that is higher."""
        self.limit = max(self.quota, self.usage)
        self.next_check = 0.0

    def maybe_over(self) -> bool:
        """True when free space dropped enough since the last walk that the limit may be passed."""
        free = _free(self.path)
        if free is None or self.free_at_walk is None:
            return True
        return self.usage + (self.free_at_walk - free) > self.limit

    def exceeded(self, *, final: bool = False) -> bool:
        """Cheap while nothing much was written; walks when the free space says it may be over."""
        now = time.monotonic()
        if not final and now < self.next_check:
            return False
        self.next_check = now + CHECK_EVERY_S
        if not self.maybe_over():
            return False
        if not final and now - self.walked_at < self.walk_s / BUDGET:
            return False
        return self.measure() > self.limit

    def report(self) -> dict[str, int]:
        return {"limit": self.limit, "used": self.usage}
