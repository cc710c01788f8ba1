"""In-container process helpers of the session agent (stdlib only; runs inside the sandbox).

``sweep`` kills every process of the container but the protected ones (PID 1, the ``--init``
keepalive, the agent), stopping them first so a fork loop cannot outrun it, until none is left.
"""

from __future__ import annotations

import contextlib
import os
import resource
import signal
import time


def read_small(path: str, size: int = 4096) -> bytes:
    """The first ``size`` bytes of a /proc or cgroup file. os.open/os.read: no buffered file object, no
    fstat (a third of open()'s cost, a quarter under gVisor; this runs for every process)."""
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        return os.read(fd, size)
    finally:
        os.close(fd)


def proc_stat(pid: int) -> tuple[str, int, int] | None:
    """(state, ppid, starttime) of a process, or None when it is gone."""
    try:
        raw = read_small(f"/proc/{pid}/stat").decode(errors="replace")
    except OSError:
        return None
    fields = raw[raw.rfind(")") + 2:].split()
    return fields[0], int(fields[1]), int(fields[19])


def live_pids() -> list[int]:
    pids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            stat = proc_stat(int(entry))
            if stat is not None and stat[0] not in ("Z", "X"):
                pids.append(int(entry))
    return pids


def keepalive_pid() -> int | None:
    """The container's main process under ``--init``: the oldest child of PID 1."""
    kids = [(s[2], p) for p in live_pids() if (s := proc_stat(p)) is not None and s[1] == 1]
    return min(kids)[1] if kids else None


def parents() -> dict[int, int]:
    """pid -> ppid of every live process (one read of each stat, as ``live_pids``)."""
    out = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            stat = proc_stat(int(entry))
            if stat is not None and stat[0] not in ("Z", "X"):
                out[int(entry)] = stat[1]
    return out


def tree(roots: frozenset[int], parent_of: dict[int, int] | None = None) -> set[int]:
    """``roots`` (those alive) and every process descending from them."""
    parent_of = parents() if parent_of is None else parent_of
    children: dict[int, list[int]] = {}
    for pid, ppid in parent_of.items():
        children.setdefault(ppid, []).append(pid)
    found = {r for r in roots if r in parent_of}
    stack = list(found)
    while stack:
        for child in children.get(stack.pop(), ()):
            if child not in found:
                found.add(child)
                stack.append(child)
    return found


MARKER_VAR = "CANAL_TASK"


def marked(markers: frozenset[str], among: list[int] | None = None) -> set[int]:
    """Processes (of ``among``, else all) whose environment carries ``CANAL_TASK=<one of markers>``."""
    needles = {f"{MARKER_VAR}={m}".encode() for m in markers}
    found = set()
    for pid in live_pids() if among is None else among:
        try:
            with open(f"/proc/{pid}/environ", "rb") as fh:
                env = fh.read()
        except OSError:
            continue
        if needles & set(env.split(b"\0")):
            found.add(pid)
    return found


def alive_as(pid: int, start: int) -> bool:
    """True when ``pid`` is the process that started at ``start`` (not a reuse of its number)."""
    stat = proc_stat(pid)
    return stat is not None and stat[2] == start and stat[0] not in ("Z", "X")


def spared_of(protected: set[int], spare: frozenset[int], marks: frozenset[str],
              others_of: int | None = None) -> list[int]:
    """Every live process but ``protected``, ``spare``'s trees and the processes marked with ``marks``;
    with ``others_of`` (an agent's pid), also but the other sessions of this sandbox: each agent the
    engine started (``docker exec``: its parent is outside the container, ppid 0, which nothing inside
    can arrange) other than ``others_of``, with its whole tree (another process using the same sandbox)."""
    parent_of = parents()
    roots = set(spare)
    if others_of is not None:
        roots |= {p for p, ppid in parent_of.items() if ppid == 0 and p not in (1, others_of)}
    kept = tree(frozenset(roots), parent_of) if roots else set()
    left = [p for p in parent_of if p not in protected and p not in kept]
    return [p for p in left if p not in marked(marks, left)] if marks and left else left


def sweep(protected: set[int], budget_s: float = 5.0, spare: frozenset[int] = frozenset(),
          marks: frozenset[str] = frozenset(), others_of: int | None = None) -> list[int]:
    """Kill every process but ``protected`` until none is left; returns survivors (none when it worked).

    ``spare``: roots whose whole trees are left alone (the background agent: tasks outlive the
    foreground command by design); ``marks``: running tasks' markers, for a task's process outside that
    tree (where the kernel has no subreapers, gVisor, a detached child goes to init); ``others_of``: an
    agent's pid, the other sessions of the sandbox are spared (``spared_of``), looked at each round."""
    def victims() -> list[int]:
        return spared_of(protected, spare, marks, others_of)

    deadline = time.monotonic() + budget_s
    left = victims()
    while left and time.monotonic() < deadline:
        # freeze first: stop every process listed, look again, stop the ones born meanwhile, until a
        # look finds no new one. A stopped process forks nothing and keeps its pid slot, so a fork loop
        # cannot outrun this; killing as we go (freeing slots for the ones not yet seen) could, on a
        # loaded machine. Then kill them all at once.
        stopped: set[int] = set()
        while left and time.monotonic() < deadline:
            for pid in left:
                if pid not in stopped:
                    with contextlib.suppress(OSError):
                        os.kill(pid, signal.SIGSTOP)
            stopped.update(left)
            left = victims()
            if stopped.issuperset(left):
                break
        for pid in left:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.01)
        left = victims()
    return left


def wait_gone(pids: list[int], budget_s: float = 1.0) -> None:
    """Until none of ``pids`` is in /proc any more, not even as a zombie (their reaper, PID 1's init or
    their parent, may lag on a loaded machine), or ``budget_s`` has passed."""
    deadline = time.monotonic() + budget_s
    waiting = list(pids)
    while waiting and time.monotonic() < deadline:
        waiting = [p for p in waiting if os.path.exists(f"/proc/{p}")]
        if waiting:
            time.sleep(0.005)


OOM_FILES = ("/sys/fs/cgroup/memory/memory.oom_control", "/sys/fs/cgroup/memory.events")
PIDS_FILES = ("/sys/fs/cgroup/pids/pids.events", "/sys/fs/cgroup/pids.events")
_found: dict[tuple[str, ...], str | None] = {}


def cgroup_counter(paths: tuple[str, ...], key: str) -> int:
    """``key`` in the first of ``paths`` that exists (cgroup v1, else v2); 0 when none has it."""
    if paths not in _found:
        _found[paths] = next((p for p in paths if os.path.exists(p)), None)
    path = _found[paths]
    if path is None:
        return 0
    try:
        for line in _read_kept(path).decode().splitlines():
            name, _, value = line.partition(" ")
            if name == key:
                return int(value)
    except (OSError, ValueError):
        pass
    return 0


_kept_fds: dict[str, int] = {}


def _read_kept(path: str) -> bytes:
    """A cgroup file read from offset 0 of a descriptor kept open (an open costs more than the read, and
    these are read twice per command); opened again once if the kept one fails."""
    for _ in range(2):
        fd = _kept_fds.get(path)
        if fd is None:
            fd = _kept_fds[path] = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        try:
            return os.pread(fd, 8192, 0)
        except OSError:
            del _kept_fds[path]
            with contextlib.suppress(OSError):
                os.close(fd)
    return read_small(path, 8192)


_nproc_hits = [0]
NUM_THREADS = 17  # field of /proc/PID/stat after the command name: num_threads


def process_count() -> int:
    """Processes of the container, zombies too (they hold their slot until reaped)."""
    return sum(1 for entry in os.listdir("/proc") if entry.isdigit())


def task_count() -> int:
    """Tasks of the container, threads included (RLIMIT_NPROC counts each), zombies too."""
    total = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            raw = read_small(f"/proc/{entry}/stat")
            total += int(raw[raw.rfind(b")") + 2:].split()[NUM_THREADS])
        except (OSError, ValueError, IndexError):
            total += 1  # gone meanwhile, or unreadable: count it, never miss a slot
    return total


def _nproc_look(in_use: int) -> int:
    """Where no pids cgroup is visible (gVisor), the process limit is RLIMIT_NPROC, which the kernel
    enforces without a counter: count each look that finds three quarters of it in use (processes
    retrying a failed fork come and go, so the count seen at one look is below the limit)."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NPROC)
    if soft != resource.RLIM_INFINITY and in_use * 4 >= soft * 3:
        _nproc_hits[0] += 1
    return _nproc_hits[0]


def _pids_cgroup() -> bool:
    if PIDS_FILES not in _found:
        _found[PIDS_FILES] = next((p for p in PIDS_FILES if os.path.exists(p)), None)
    return _found[PIDS_FILES] is not None


def pressure(*, look: bool = True) -> tuple[int, int]:
    """(OOM kills, pid-limit hits) of this container's cgroup so far. Without a pids cgroup (gVisor) the
    hits are the agent's own looks: ``look`` takes one now (processes only: cheap), else the count so far."""
    if _pids_cgroup():
        return cgroup_counter(OOM_FILES, "oom_kill"), cgroup_counter(PIDS_FILES, "max")
    hits = _nproc_look(process_count()) if look else _nproc_hits[0]
    return cgroup_counter(OOM_FILES, "oom_kill"), hits


def beat() -> None:
    """At each heartbeat of a running command: without a pids cgroup (gVisor), a look at every task,
    threads included (about 50 us a process under gVisor, once a second), so a command that
    held the limit for a while is reported however its end looks; with one, nothing (the cgroup counts)."""
    if not _pids_cgroup():
        _nproc_look(task_count())


def nproc_pressed() -> int:
    """Where the process limit is RLIMIT_NPROC (no pids cgroup: gVisor), 1 when this look finds it three
    quarters used (counted as a hit, as ``pressure`` does), else 0."""
    if _pids_cgroup():
        return 0
    before = _nproc_hits[0]
    return _nproc_look(process_count()) - before


def raise_oom_score(pid: int) -> None:
    """Make ``pid`` (and what it forks) the OOM killer's first choice, before the agent."""
    with contextlib.suppress(OSError), open(f"/proc/{pid}/oom_score_adj", "w") as fh:
        fh.write("1000")
