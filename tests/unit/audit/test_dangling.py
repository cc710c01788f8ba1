"""Intents without an outcome whose runner is gone are dangling; a live runner's are still running."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

from canal.host.audit import AuditLog
from canal.host.audit.dangling import INTERRUPTED_EVENT, find_dangling, runner


def dead_runner() -> dict[str, Any]:
    done = subprocess.run([sys.executable, "-c", "from canal.host.audit.dangling import runner; "
                           "import json; print(json.dumps(runner()))"], capture_output=True, text=True,
                          check=True)
    who: dict[str, Any] = json.loads(done.stdout)
    return who


def intent(log: AuditLog, command: str, who: dict[str, Any]) -> str:
    return log.append("run.started", {"sandbox": "default", "command": command, "runner": who})


def test_only_runs_of_a_gone_runner_without_an_outcome_dangle(log: AuditLog) -> None:
    gone = dead_runner()
    lost = intent(log, "sleep 300", gone)
    finished = intent(log, "true", gone)
    log.append("run.completed", {"started": finished, "sandbox": "default"}, durable=False)
    recorded = intent(log, "make", gone)
    log.append(INTERRUPTED_EVENT, {"started": recorded, "sandbox": "default", "reason": "x"})
    intent(log, "still running", runner())
    found = find_dangling(log.path)
    assert [(d.started, d.command, d.runner_pid) for d in found] == [(lost, "sleep 300", gone["pid"])]


def test_only_the_tail_is_read(log: AuditLog) -> None:
    intent(log, "old", dead_runner())
    for i in range(50):
        log.append("note.added", {"i": i, "pad": "x" * 200})
    assert find_dangling(log.path, tail_bytes=4096) == []
    assert len(find_dangling(log.path)) == 1
