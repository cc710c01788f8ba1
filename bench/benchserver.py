"""The Canal server around a benchmark, shared by the scripts in this folder (run as ``python
bench/NAME.py``, they find it beside them)."""

from __future__ import annotations

import contextlib
import json
import subprocess
import time
from pathlib import Path


def stop_server(canal: str) -> None:
    """``canal server stop``, then wait until the process is gone: it answers before its warm state is
    closed, and closing it writes into the state folder (the projects' checkpoint stores)."""
    done = subprocess.run([canal, "server", "status", "--json"], capture_output=True, text=True, check=False)
    pid = None
    with contextlib.suppress(json.JSONDecodeError, KeyError, TypeError, ValueError):
        pid = int(json.loads(done.stdout)["pid"])
    subprocess.run([canal, "server", "stop"], capture_output=True, check=False)
    deadline = time.monotonic() + 60
    while pid is not None and Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:
        time.sleep(0.1)
