"""The agent's process counts (read from this host's /proc: the same files as inside a sandbox)."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from canal.sandbox import _agent_procs
from canal.sandbox._agent_procs import beat, pressure, process_count, task_count


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
    from canal.sandbox import _agent_procs

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
