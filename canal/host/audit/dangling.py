"""Runs whose intent was written but whose outcome never was: the process running them stopped.

Every ``run.started`` names its runner (pid, the process's start time and the boot it ran in). A run
with neither a ``run.completed`` nor a ``run.interrupted`` is *dangling* once its runner is gone (a
killed server, a crashed CLI); while the runner lives it is simply still running. The first command
after such a crash records each one as ``run.interrupted`` and says so; ``canal audit show`` marks them.

Only the log's tail is scanned (a crash leaves its intent among the last records, and every new
process checks once), so the cost stays flat however long the log grows.
"""

from __future__ import annotations

import functools
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from canal.host.audit.reader import iter_lines

INTERRUPTED_EVENT = "run.interrupted"
TAIL_BYTES = 1024 * 1024
_MARKERS = (b'"run.started"', b'"run.completed"', b'"run.interrupted"')


@dataclass(frozen=True)
class Dangling:
    started: str  # the record id of the intent
    ts: str
    sandbox: str
    command: str
    runner_pid: int | None


@functools.cache
def _boot_id() -> str:
    """This boot's id (a process lives in one boot only: read once)."""
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return ""


def _start_time(pid: int) -> int | None:
    """When the process started (clock ticks after boot); None when it is gone or a zombie."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_bytes().decode(errors="replace")
    except OSError:
        return None
    fields = raw[raw.rfind(")") + 2:].split()
    return None if fields[0] in ("Z", "X") else int(fields[19])


def runner() -> dict[str, Any]:
    """Who runs commands in this process, as written in each intent record (read from /proc once per
    process: a forked child has its own pid, so its own entry)."""
    return dict(_runner(os.getpid()))


@functools.cache
def _runner(pid: int) -> tuple[tuple[str, Any], ...]:
    return (("pid", pid), ("start", _start_time(pid)), ("boot", _boot_id()))


def alive(who: Any) -> bool:
    """True when the runner named in an intent record is still running (the same process, not a reuse)."""
    if not isinstance(who, dict) or not isinstance(who.get("pid"), int):
        return False
    if who.get("boot") != _boot_id():
        return False
    return who.get("start") is not None and _start_time(who["pid"]) == who.get("start")


def find_dangling(log_path: Path, *, tail_bytes: int = TAIL_BYTES) -> list[Dangling]:
    """Intents in the log's tail with no outcome whose runner is gone, oldest first."""
    try:
        size = log_path.stat().st_size
    except FileNotFoundError:
        return []
    start = max(0, size - tail_bytes)
    open_runs: dict[str, dict[str, Any]] = {}
    for line in iter_lines(log_path, start=start):
        if line.offset == start and start > 0:
            continue  # most likely the middle of a record
        if not line.complete or not any(m in line.text for m in _MARKERS):
            continue
        try:
            rec = json.loads(line.text)
        except ValueError:
            continue  # `canal audit verify` reports malformed lines
        _track(open_runs, rec)
    return [Dangling(rid, str(r.get("ts", "")), str(r["data"].get("sandbox", "")),
                     str(r["data"].get("command", "")), _pid(r["data"].get("runner")))
            for rid, r in open_runs.items() if not alive(r["data"].get("runner"))]


def _track(open_runs: dict[str, dict[str, Any]], rec: dict[str, Any]) -> None:
    event, data = rec.get("event"), rec.get("data") or {}
    if event == "run.started":
        open_runs[f"a-{int(rec.get('seq', 0)):06d}"] = rec
    elif event in ("run.completed", INTERRUPTED_EVENT):
        open_runs.pop(str(data.get("started")), None)


def _pid(who: Any) -> int | None:
    return who.get("pid") if isinstance(who, dict) and isinstance(who.get("pid"), int) else None
