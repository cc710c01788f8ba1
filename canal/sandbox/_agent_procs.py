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


def proc_stat(pid: int) -> tuple[str, int, int] | None:
    """(state, ppid, starttime) of a process, or None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            raw = fh.read().decode(errors="replace")
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


def session_of(pid: int) -> int | None:
    """The session id of a process (field 6 of its stat), or None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            raw = fh.read().decode(errors="replace")
    except OSError:
        return None
    return int(raw[raw.rfind(")") + 2:].split()[3])


def other_sessions(own: int) -> set[int]:
    """The processes of the other Canal sessions in this container (another process using the same
    sandbox): each agent was started by the engine (``docker exec``: its parent is outside the
    container, ppid 0, which nothing inside can arrange), and everything under it is its own."""
    stats = {p: s for p in live_pids() if (s := proc_stat(p)) is not None}
    children: dict[int, list[int]] = {}
    for pid, stat in stats.items():
        children.setdefault(stat[1], []).append(pid)
    todo = [p for p, s in stats.items() if s[1] == 0 and p not in (1, own)]
    found: set[int] = set()
    while todo:
        pid = todo.pop()
        if pid not in found:
            found.add(pid)
            todo.extend(children.get(pid, []))
    return found


def sweep(protected: set[int], budget_s: float = 5.0,
          keep_sessions: frozenset[int] = frozenset(), spare_others_of: int | None = None) -> list[int]:
    """Kill every process but ``protected`` until none is left; returns survivors (none when it worked).

    ``keep_sessions``: session ids spared as a whole (a background task started as one, later).
    ``spare_others_of``: an agent's pid; the other sessions' processes are spared (looked at each round)."""
    def victims() -> list[int]:
        spared = protected | (other_sessions(spare_others_of) if spare_others_of is not None else set())
        return [p for p in live_pids() if p not in spared
                and (not keep_sessions or session_of(p) not in keep_sessions)]

    deadline = time.monotonic() + budget_s
    left = victims()
    while left and time.monotonic() < deadline:
        for sig in (signal.SIGSTOP, signal.SIGKILL):
            for pid in left:
                with contextlib.suppress(OSError):
                    os.kill(pid, sig)
        time.sleep(0.01)
        left = victims()
    return left


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
        with open(path) as fh:
            for line in fh:
                name, _, value = line.partition(" ")
                if name == key:
                    return int(value)
    except (OSError, ValueError):
        pass
    return 0


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
        try:  # os.open/os.read: a quarter of open()'s cost under gVisor (no buffering, no fstat)
            fd = os.open(f"/proc/{entry}/stat", os.O_RDONLY)
            try:
                raw = os.read(fd, 4096)
            finally:
                os.close(fd)
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


def raise_oom_score(pid: int) -> None:
    """Make ``pid`` (and what it forks) the OOM killer's first choice, before the agent."""
    with contextlib.suppress(OSError), open(f"/proc/{pid}/oom_score_adj", "w") as fh:
        fh.write("1000")
