"""Stopping every Canal server a test started (no server outlives the test that made it)."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from pathlib import Path

from canal.cli.server_admin import ask
from canal.client.lifecycle import holds_lock
from canal.client.paths import all_servers


def server_pid(lock: Path) -> int | None:
    try:
        text = lock.read_text().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def is_canal_server(pid: int) -> bool:
    try:
        return b"canal.server" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


def stop_servers(folder: Path, timeout_s: float = 20.0) -> None:
    """Ask each server in ``folder`` to stop; kill one that does not let go of its lock in time."""
    if not folder.is_dir():
        return
    for paths in all_servers(folder):
        pid = server_pid(paths.lock)
        with contextlib.suppress(Exception):
            ask(paths, "stop")
        deadline = time.monotonic() + timeout_s
        while holds_lock(paths) and time.monotonic() < deadline:
            time.sleep(0.05)
        if pid is not None and is_canal_server(pid):
            deadline = time.monotonic() + 5.0
            while is_canal_server(pid) and time.monotonic() < deadline:
                time.sleep(0.05)  # it drains its requests, then closes its sessions
            if is_canal_server(pid):
                os.kill(pid, signal.SIGKILL)
