"""The in-container session agent. Its source is sent with ``python3 -c``; it imports only the stdlib.

Protocol on the exec's stdin/stdout (stderr is for the agent's own failures):

- request: 4-byte big-endian length, a JSON header, then ``stdin_len`` raw bytes;
- reply frames: 1 type byte, 4-byte big-endian length, payload. ``o`` stdout bytes, ``e`` stderr
  bytes, ``h`` heartbeat, ``x`` the final JSON for the request, echoing its ``id`` (the nonce).

Each command runs in its own session (``setsid``) with a raised OOM score; a ``str`` command runs in
bash through a fixed wrapper (the command is ``$1``, never spliced) that saves cwd and exported
variables on exit. On a timeout the agent kills the command's group, then every process in the
container but PID 1, the keepalive and itself, and checks again until nothing else is left.
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import signal
import struct
import subprocess
import sys
import tempfile
import time
from typing import Any

WRAPPER = r"""
__canal_sf=$__CANAL_STATE; unset __CANAL_STATE
__canal_save() {
  local IFS=$'\n' __canal_n
  { printf '%s\0' "$PWD"
    for __canal_n in $(compgen -e); do printf '%s=%s\0' "$__canal_n" "${!__canal_n}"; done
  } > "$__canal_sf" 2>/dev/null
}
trap __canal_save EXIT
eval "$1"
"""
CHUNK = 65536
HEARTBEAT_S = 1.0
DRAIN_AFTER_EXIT_S = 0.2


def write_frame(kind: bytes, payload: bytes) -> None:
    data = kind + struct.pack(">I", len(payload)) + payload
    view = memoryview(data)
    while view:
        view = view[os.write(1, view):]


def read_exact(n: int) -> bytes:
    parts = []
    while n:
        chunk = os.read(0, min(n, 1 << 20))
        if not chunk:
            raise EOFError
        parts.append(chunk)
        n -= len(chunk)
    return b"".join(parts)


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


def sweep(protected: set[int], budget_s: float = 5.0) -> list[int]:
    """Kill every process but ``protected`` until none is left; returns survivors (none when it worked)."""
    deadline = time.monotonic() + budget_s
    victims = [p for p in live_pids() if p not in protected]
    while victims and time.monotonic() < deadline:
        for sig in (signal.SIGSTOP, signal.SIGKILL):
            for pid in victims:
                with contextlib.suppress(OSError):
                    os.kill(pid, sig)
        time.sleep(0.01)
        victims = [p for p in live_pids() if p not in protected]
    return victims


def cgroup_counter(path: str, key: str) -> int:
    try:
        with open(path) as fh:
            for line in fh:
                name, _, value = line.partition(" ")
                if name == key:
                    return int(value)
    except (OSError, ValueError):
        pass
    return 0


def pressure() -> tuple[int, int]:
    """(OOM kills, pid-limit hits) of this container's cgroup so far (v1, else v2)."""
    oom = cgroup_counter("/sys/fs/cgroup/memory/memory.oom_control", "oom_kill") or cgroup_counter(
        "/sys/fs/cgroup/memory.events", "oom_kill")
    pids = cgroup_counter("/sys/fs/cgroup/pids/pids.events", "max") or cgroup_counter(
        "/sys/fs/cgroup/pids.events", "max")
    return oom, pids


class Agent:
    def __init__(self, init: bool) -> None:
        keep = keepalive_pid() if init else None
        self.protected = {1, os.getpid()} | ({keep} if keep else set())
        self.cwd = os.getcwd()
        self.env = dict(os.environ)
        self.state_dir = tempfile.mkdtemp(prefix=".canal-session-")

    def serve(self) -> None:
        while True:
            try:
                size = struct.unpack(">I", read_exact(4))[0]
                req = json.loads(read_exact(size))
                stdin = read_exact(req.get("stdin_len", 0)) if req.get("stdin_len") else None
            except EOFError:
                return
            reply = self.handle(req, stdin)
            reply["id"] = req.get("id")
            write_frame(b"x", json.dumps(reply).encode())

    def handle(self, req: dict[str, Any], stdin: bytes | None) -> dict[str, Any]:
        if req["op"] == "hello":
            return {"pid": os.getpid(), "protected": sorted(self.protected)}
        if req["op"] == "sweep":
            return {"survivors": sweep(self.protected)}
        return self.run(req, stdin)

    def spawn(self, req: dict[str, Any], stdin: bytes | None, state: str) -> subprocess.Popen[bytes]:
        env = dict(self.env)
        env.update(req.get("env") or {})
        if req.get("shell"):
            argv = ["/bin/bash", "--noprofile", "--norc", "-c", WRAPPER, "canal", req["command"]]
            env["__CANAL_STATE"] = state
        else:
            argv = req["argv"]
        cwd = req.get("workdir") or self.cwd
        if not os.path.isdir(cwd):
            cwd = "/"
        proc = subprocess.Popen(argv, cwd=cwd, env=env, start_new_session=True, close_fds=True,
                                stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            with open(f"/proc/{proc.pid}/oom_score_adj", "w") as fh:
                fh.write("1000")
        except OSError:
            pass
        return proc

    def run(self, req: dict[str, Any], stdin: bytes | None) -> dict[str, Any]:
        state = os.path.join(self.state_dir, "state")
        before = pressure()
        try:
            proc = self.spawn(req, stdin, state)
        except FileNotFoundError as exc:
            write_frame(b"e", f"canal: command not found: {exc.filename}\n".encode())
            return {"exit_code": 127, "reason": "exited"}
        except PermissionError as exc:
            write_frame(b"e", f"canal: permission denied: {exc.filename}\n".encode())
            return {"exit_code": 126, "reason": "exited"}
        except OSError as exc:
            write_frame(b"e", f"canal: cannot start the command: {exc}\n".encode())
            return {"exit_code": 126, "reason": "exited", "pid_limit_hits": pressure()[1] - before[1]}
        pump = Pump(proc, stdin)
        reason = pump.run(req.get("timeout_s"), req.get("idle_timeout_s"))
        survivors: list[int] = []
        if reason != "exited":
            with contextlib.suppress(OSError):
                os.killpg(proc.pid, signal.SIGKILL)
            survivors = sweep(self.protected)
        pump.close()
        code = proc.wait()
        after = pressure()
        if after[1] > before[1]:
            survivors = sweep(self.protected)
        if req.get("shell") and reason == "exited":
            self.load_state(state, req)
        return {"exit_code": 128 + -code if code < 0 else code, "reason": reason, "survivors": survivors,
                "oom_kills": after[0] - before[0], "pid_limit_hits": after[1] - before[1]}

    def load_state(self, path: str, req: dict[str, Any]) -> None:
        """Keep the command's cwd and exports, but not the env and workdir given for it alone."""
        old_cwd, old_env = self.cwd, self.env
        self.read_state(path)
        if req.get("workdir") and self.cwd == req["workdir"]:
            self.cwd = old_cwd
        for name, value in (req.get("env") or {}).items():
            if self.env.get(name) == value:
                if name in old_env:
                    self.env[name] = old_env[name]
                else:
                    self.env.pop(name, None)

    def read_state(self, path: str) -> None:
        try:
            with open(path, "rb") as fh:
                raw = fh.read()
            os.unlink(path)
        except OSError:
            return
        parts = raw.split(b"\0")
        if len(parts) < 2:
            return
        self.cwd = parts[0].decode(errors="surrogateescape")
        env = {}
        for item in parts[1:]:
            name, sep, value = item.decode(errors="surrogateescape").partition("=")
            if sep:
                env[name] = value
        self.env = env


class Pump:
    """Forwards a command's output as frames, feeds its stdin, and watches its deadlines."""

    def __init__(self, proc: subprocess.Popen[bytes], stdin: bytes | None) -> None:
        self.proc = proc
        self.sel = selectors.DefaultSelector()
        self.kinds: dict[int, bytes] = {}
        for stream, kind in ((proc.stdout, b"o"), (proc.stderr, b"e")):
            if stream is not None:
                os.set_blocking(stream.fileno(), False)
                self.sel.register(stream.fileno(), selectors.EVENT_READ)
                self.kinds[stream.fileno()] = kind
        self.pending = memoryview(stdin or b"")
        if proc.stdin is not None:
            os.set_blocking(proc.stdin.fileno(), False)
            self.sel.register(proc.stdin.fileno(), selectors.EVENT_WRITE)
        self.last_output = time.monotonic()

    def run(self, timeout_s: float | None, idle_s: float | None) -> str:
        """Returns the end reason: exited, hard_timeout or idle_timeout."""
        start = last_beat = time.monotonic()
        exited_at: float | None = None
        while True:
            now = time.monotonic()
            if exited_at is None and self.proc.poll() is not None:
                exited_at = now
            if exited_at is not None and (now - exited_at > DRAIN_AFTER_EXIT_S or not self.kinds):
                return "exited"
            if exited_at is None and timeout_s is not None and now - start >= timeout_s:
                return "hard_timeout"
            if exited_at is None and idle_s is not None and now - self.last_output >= idle_s:
                return "idle_timeout"
            if now - last_beat >= HEARTBEAT_S:
                write_frame(b"h", b"")
                last_beat = now
            self.step(0.05 if exited_at is None else 0.01)

    def step(self, wait_s: float) -> None:
        if not self.sel.get_map():
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(timeout=wait_s)
            return
        for key, _ in self.sel.select(timeout=wait_s):
            if key.fd in self.kinds:
                self.forward(key.fd)
            else:
                self.feed(key.fd)

    def forward(self, fd: int) -> None:
        chunk = read_some(fd)
        if chunk:
            write_frame(self.kinds[fd], chunk)
            self.last_output = time.monotonic()
        elif chunk is not None:
            self.sel.unregister(fd)
            del self.kinds[fd]

    def feed(self, fd: int) -> None:
        try:
            self.pending = self.pending[os.write(fd, self.pending[:CHUNK]):]
        except BlockingIOError:
            return
        except BrokenPipeError:
            self.pending = self.pending[:0]
        if not self.pending:
            self.sel.unregister(fd)
            if self.proc.stdin is not None:
                self.proc.stdin.close()

    def close(self) -> None:
        self.sel.close()
        for stream in (self.proc.stdout, self.proc.stderr, self.proc.stdin):
            if stream is not None:
                stream.close()


def read_some(fd: int) -> bytes | None:
    """Up to CHUNK bytes; b"" at end of stream; None when nothing is ready yet."""
    try:
        return os.read(fd, CHUNK)
    except BlockingIOError:
        return None


def main() -> None:
    mode = sys.argv[1] if len(sys.argv) > 1 else "serve"
    if mode == "sweep":
        keep = keepalive_pid()
        survivors = sweep({1, os.getpid()} | ({keep} if keep else set()))
        sys.stdout.write(json.dumps({"survivors": survivors}))
        return
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    Agent(init=mode == "serve").serve()


if __name__ == "__main__":
    main()
