"""Process trees of background tasks (stdlib only; runs inside the sandbox).

A task's runner is a child subreaper (``prctl(PR_SET_CHILD_SUBREAPER)``): whatever its command starts,
even a process that calls ``setsid`` and whose parent exits, is re-parented to the runner instead of
the container's init, so the task's whole tree stays under it. Where the kernel refuses (gVisor has no
subreapers), each task's processes also carry ``CANAL_TASK=<marker>`` in their environment, and a
kill looks for that too (a process that clears its environment and leaves the tree escapes it there).

Killing stops every process first and kills it next, again until none is left, so a fork loop cannot
outrun it.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import time

from canal.sandbox.agent.procs import marked, parents, tree

PR_SET_CHILD_SUBREAPER = 36


def set_subreaper() -> bool:
    """Become the subreaper of this process's descendants; False when the kernel refuses."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


def members(roots: frozenset[int], marker: str | None, exclude: frozenset[int]) -> list[int]:
    """The processes of a task: ``roots`` and their descendants, plus the marked ones."""
    found = tree(roots, parents())
    if marker:
        found |= marked(frozenset({marker}))
    return sorted(found - exclude)


def kill_tree(roots: frozenset[int], marker: str | None, exclude: frozenset[int] = frozenset(),
              budget_s: float = 5.0) -> tuple[int, list[int]]:
    """Kill a task's processes until none is left: (how many there were, survivors)."""
    exclude = exclude | {os.getpid()}
    left = members(roots, marker, exclude)
    seen = set(left)
    deadline = time.monotonic() + budget_s
    while left and time.monotonic() < deadline:
        for sig in (signal.SIGSTOP, signal.SIGKILL):
            for pid in left:
                with contextlib.suppress(OSError):
                    os.kill(pid, sig)
        reap()
        time.sleep(0.01)
        left = members(roots, marker, exclude)
        seen.update(left)
    return len(seen), left


def reap() -> None:
    """Collect every child that has ended (a subreaper inherits other processes' orphans)."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
