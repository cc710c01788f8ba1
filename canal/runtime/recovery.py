"""After a crash: runs a stopped process left without an outcome are recorded as interrupted, once.

The first command a process runs for a project looks for them (``audit/dangling.py``); each one gets a
``run.interrupted`` record and a notice the front end shows, so the next caller learns that a command
it may have been waiting for was cut short, and where to read about it.
"""

from __future__ import annotations

import threading
from pathlib import Path

from canal.host.audit.dangling import INTERRUPTED_EVENT, find_dangling
from canal.runtime.services import Services

_checked: set[Path] = set()
_lock = threading.Lock()


def recover_dangling(services: Services) -> list[str]:
    """Notices for the runs found dangling (each now recorded as interrupted); [] after the first call."""
    audit = services.audit
    with _lock:
        if audit.path in _checked:
            return []
        _checked.add(audit.path)
    notices = []
    for run in find_dangling(audit.path):
        who = f"the Canal process that ran it (pid {run.runner_pid})" if run.runner_pid else "its runner"
        why = f"{who} stopped before it finished; its processes in the sandbox were killed with its session"
        rid = audit.append(INTERRUPTED_EVENT, {"started": run.started, "sandbox": run.sandbox, "reason": why},
                           actor="canal")
        notices.append(f"NOTE: {run.started} `{run.command}` (sandbox {run.sandbox}, started {run.ts[:19]}Z) "
                       f"has no outcome: {why}. Recorded as interrupted in {rid} (audit log)")
    return notices
