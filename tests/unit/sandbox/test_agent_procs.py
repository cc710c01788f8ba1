"""The agent's process counts (read from this host's /proc: the same files as inside a sandbox)."""

from __future__ import annotations

import os
import signal
import threading
from pathlib import Path

import pytest

from canal.sandbox.agent import procs as _agent_procs
from canal.sandbox.agent.procs import beat, pressure, process_count, task_count


def test_tasks_count_threads_and_processes_do_not(monkeypatch: pytest.MonkeyPatch) -> None:
    # only this process in /proc (the host's has every other process of the machine, coming and going)
    monkeypatch.setattr(_agent_procs.os, "listdir", lambda _: [str(os.getpid()), "self", "meminfo"])
    release = threading.Event()
    before = task_count()
    threads = [threading.Thread(target=release.wait) for _ in range(5)]
    for t in threads:
        t.start()
    try:
        assert task_count() == before + 5
        assert process_count() == 1
    finally:
        release.set()
        for t in threads:
            t.join()


def test_without_a_pids_cgroup_a_heartbeat_at_the_limit_is_a_hit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(_agent_procs._found, _agent_procs.PIDS_FILES, None)  # as under gVisor
    monkeypatch.setattr(_agent_procs, "_nproc_hits", [0])
    monkeypatch.setattr(_agent_procs.resource, "getrlimit", lambda _: (100, 100))
    monkeypatch.setattr(_agent_procs, "task_count", lambda: 80)
    monkeypatch.setattr(_agent_procs, "process_count", lambda: 10)
    start = pressure(look=False)[1]
    assert pressure()[1] == start  # 10 processes in use at the end: no hit seen there
    beat()  # but 80 of 100 tasks at a heartbeat while it ran
    assert pressure(look=False)[1] == start + 1
    monkeypatch.setattr(_agent_procs, "task_count", lambda: 74)
    beat()
    assert pressure(look=False)[1] == start + 1  # under three quarters: not a hit


def test_a_cgroup_counter_is_read_afresh_through_one_kept_descriptor(tmp_path: Path) -> None:
    from canal.sandbox.agent import procs as _agent_procs

    events = tmp_path / "pids.events"
    events.write_text("max 1\n")
    paths = (str(tmp_path / "v1-missing"), str(events))
    assert _agent_procs.cgroup_counter(paths, "max") == 1
    kept = _agent_procs._kept_fds[str(events)]
    with events.open("r+") as fh:  # the kernel rewrites the counter in place
        fh.write("max 7\n")
    assert _agent_procs.cgroup_counter(paths, "max") == 7
    assert _agent_procs._kept_fds[str(events)] == kept
    os.close(kept)  # a descriptor gone bad is opened again
    assert _agent_procs.cgroup_counter(paths, "max") == 7


class ForkLoop:
    """A process table where every running process forks whenever time passes (each signal sent), up to
    the pid limit: a fork bomb racing the sweep, as on a loaded machine where it outruns the looks."""

    def __init__(self, limit: int = 64) -> None:
        self.limit = limit
        self.next_pid = 100
        self.table: dict[int, str] = {}  # pid -> "R" running | "T" stopped
        self.spawn()

    def spawn(self) -> None:
        if len(self.table) < self.limit:
            self.table[self.next_pid] = "R"
            self.next_pid += 1

    def victims(self, *_args: object, **_kw: object) -> list[int]:
        return sorted(self.table)

    def kill(self, pid: int, sig: int) -> None:
        for _ in [p for p, s in self.table.items() if s == "R"]:
            self.spawn()
        if pid not in self.table:
            raise ProcessLookupError(pid)
        if sig == signal.SIGKILL:
            del self.table[pid]
        elif sig == signal.SIGSTOP:
            self.table[pid] = "T"


def test_the_sweep_outlasts_a_fork_loop_that_outruns_its_looks(monkeypatch: pytest.MonkeyPatch) -> None:
    """CI once saw 40 processes of ``:(){ :|:& };:`` left after the command under gVisor on a loaded
    machine. Killing as it went freed pid slots for the processes it had not seen yet; freezing every
    process first (a stopped process forks nothing and keeps its slot), then killing, leaves none."""
    bomb = ForkLoop()
    monkeypatch.setattr(_agent_procs, "spared_of", bomb.victims)
    monkeypatch.setattr(_agent_procs.os, "kill", bomb.kill)
    monkeypatch.setattr(_agent_procs.time, "sleep", lambda _s: None)
    assert _agent_procs.sweep({1}, budget_s=0.5) == []
    assert bomb.table == {}
