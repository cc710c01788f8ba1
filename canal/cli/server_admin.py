"""``canal server status|stop|logs``: the thin client's own commands (standard library only).

They never start a server, and work whatever the server's build: ``status`` says when it will be
replaced at the next call, ``stop`` stops it (``--all``: every server in the runtime folder).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import time
from typing import Any

from canal.client import wire
from canal.client.lifecycle import connect, hello, holds_lock
from canal.client.paths import ServerPaths, all_servers, build_id, server_paths

EXIT_WAIT_S = 120.0  # ``stop --wait``: how long a server may take to close its warm state

USAGE = """Usage: canal server status|stop|logs [--json] [--all] [--wait] [-n LINES]

  status   is the server for this environment running? its pid, build, uptime, calls and warm state
  stop     stop it (--all: every Canal server of yours in the runtime folder); the next call starts one.
           It returns once the server lets go of its socket; the server then removes its spare
           sandboxes. --wait: return once its process has exited (spares removed)
  logs     the last lines of its log (-n LINES, default 50)

The server starts by itself at the first `canal` call and stops after 15 idle minutes
(CANAL_SERVER_IDLE_S). CANAL_NO_SERVER=1 runs every command in-process instead.
"""


def server_command(args: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="canal server", add_help=False)
    parser.add_argument("action", nargs="?", choices=["status", "stop", "logs"])
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--all", action="store_true")
    parser.add_argument("--wait", action="store_true")
    parser.add_argument("-n", type=int, default=50)
    parser.add_argument("-h", "--help", action="store_true")
    try:
        opts = parser.parse_args(args)
    except SystemExit:
        sys.stderr.write(USAGE)
        return 2
    if opts.help or opts.action is None:
        sys.stdout.write(USAGE)
        return 0 if opts.help else 2
    paths = server_paths()
    if opts.action == "status":
        return _status(paths, opts.json)
    if opts.action == "stop":
        return _stop(all_servers(paths.folder) if opts.all else [paths], opts.json, wait=opts.wait)
    return _logs(paths, opts.n)


def ask(paths: ServerPaths, op: str) -> dict[str, Any] | None:
    """The server's answer to ``status`` or ``stop`` (any build), or None when none is running."""
    sock = connect(paths)
    if sock is None:
        return None
    try:
        hello(sock, build_id())
        wire.send_json(sock, wire.REQUEST, {"op": op, "why": "canal server stop"})
        return wire.recv_json(sock, wire.DATA)
    except (wire.WireError, OSError):
        return None
    finally:
        sock.close()


def _status(paths: ServerPaths, as_json: bool) -> int:
    data = ask(paths, "status")
    mine = build_id()
    if as_json:
        out = {"running": data is not None, "socket": str(paths.socket), "log": str(paths.log),
               "client_build": mine, **(data or {})}
        sys.stdout.write(json.dumps(out, indent=2) + "\n")
        return 0
    if data is None:
        sys.stdout.write(f"No Canal server is running for this environment (socket {paths.socket}).\n"
                         "The next canal call starts one.\n")
        return 0
    build = str(data.get("build"))
    note = "" if build == mine else f" (this client is {mine}: the next call replaces it)"
    lines = [f"Canal server pid {data.get('pid')}, build {build}{note}",
             f"  socket {data.get('socket')}, up {_duration(float(data.get('uptime_s') or 0))}, "
             f"{data.get('served')} calls served, {data.get('active')} running now",
             f"  warm: {data.get('policies', 0)} compiled policies, {data.get('backends', 0)} projects' "
             f"sandboxes, idle timeout {_duration(float(data.get('idle_timeout_s') or 0))}",
             f"  log: {paths.log}   (canal server logs)"]
    sys.stdout.write("\n".join(lines) + "\n")
    return 0


def _stop(targets: list[ServerPaths], as_json: bool, *, wait: bool = False) -> int:
    stopped: list[dict[str, Any]] = []
    for paths in targets:
        data = ask(paths, "stop")
        if data is None:
            continue
        deadline = time.monotonic() + 15.0
        while holds_lock(paths) and time.monotonic() < deadline:
            time.sleep(0.02)
        entry: dict[str, Any] = {"pid": data.get("pid"), "socket": str(paths.socket)}
        if wait:
            entry["exited"] = _exited(data.get("pid"))
        stopped.append(entry)
    late = [s for s in stopped if s.get("exited") is False]
    if as_json:
        sys.stdout.write(json.dumps({"stopped": stopped}, indent=2) + "\n")
    elif stopped:
        for s in stopped:
            sys.stdout.write(f"Stopped the Canal server pid {s['pid']} ({s['socket']}).\n")
    else:
        sys.stdout.write("No Canal server was running.\n")
    for s in late:
        sys.stderr.write(f"The Canal server pid {s['pid']} let go of its socket but is still closing after "
                         f"{EXIT_WAIT_S:.0f} s (removing its spare sandboxes): see canal server logs\n")
    return 1 if late else 0


def _exited(pid: object) -> bool:
    """Whether the server process ``pid`` is gone, waiting up to ``EXIT_WAIT_S`` (it is not our child:
    its /proc entry is polled)."""
    if not isinstance(pid, int) or pid <= 0:
        return True
    deadline = time.monotonic() + EXIT_WAIT_S
    while _alive(pid):
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.02)
    return True


def _alive(pid: int) -> bool:
    """Running, not a zombie (a daemon's parent is whatever adopted it, which may be slow to reap)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            state = fh.read().rpartition(b")")[2].split()[:1]
    except OSError:
        return False
    return state not in ([b"Z"], [b"X"])


def _logs(paths: ServerPaths, lines: int) -> int:
    try:
        with open(paths.log, "rb") as fh:
            fh.seek(0, 2)
            fh.seek(max(0, fh.tell() - 256 * 1024))
            tail = fh.read().splitlines()[-max(1, lines):]
    except FileNotFoundError:
        sys.stdout.write(f"No server log yet ({paths.log}).\n")
        return 0
    with contextlib.suppress(BrokenPipeError):
        sys.stdout.write("\n".join(t.decode(errors="replace") for t in tail) + "\n")
    return 0


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"

