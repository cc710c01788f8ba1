"""Who is running a run's automated steps, and whether that process is still alive.

A step recorded ``started`` by a live process is in progress; by a dead one, it was interrupted by a
crash. The process start time (Linux ``/proc``) guards against a reused pid.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Callable

from canal.workflows.rundoc import Owner

Liveness = Callable[[Owner], bool]


def _stat(pid: int) -> list[str] | None:
    """Fields of /proc/<pid>/stat after the command name (state first), or None off Linux."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as fh:
            stat = fh.read()
    except OSError:
        return None
    # The command name is parenthesised and may contain spaces and ')'.
    return stat.rsplit(")", 1)[-1].split()


def _start_ticks(pid: int) -> int | None:
    fields = _stat(pid)
    # Field 22 of stat (starttime) is index 19 once pid and name are cut off.
    return int(fields[19]) if fields and len(fields) > 19 and fields[19].isdigit() else None


def current_owner() -> Owner:
    pid = os.getpid()
    return Owner(host=socket.gethostname(), pid=pid, start_ticks=_start_ticks(pid))


def process_alive(owner: Owner) -> bool:
    """True when the owning process still runs. Another host's process cannot be checked: assume alive."""
    if owner.host != socket.gethostname():
        return True
    try:
        os.kill(owner.pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    fields = _stat(owner.pid)
    if fields is None or owner.start_ticks is None:
        return fields is not None or owner.start_ticks is None
    # A killed process its parent has not reaped yet is a zombie: it will run nothing more.
    return fields[0] not in ("Z", "X") and _start_ticks(owner.pid) == owner.start_ticks
