"""The in-container session agent (stdlib only). ``session.py`` sends it, with its helper modules
``agent.procs``, ``agent.pump`` and ``agent.shell``, as one ``python3 -c`` program.

Protocol on the exec's stdin/stdout (stderr is for the agent's own failures):

- request: 4-byte big-endian length, a JSON header, then ``stdin_len`` raw bytes; a header with
  ``"stdin": "stream"`` gives the command a stdin that stays open for control frames;
- control frames (same framing, a ``ctl`` key and the request's ``id``), read while that request runs:
  ``stdin`` (``stdin_len`` more bytes), ``eof``, ``kill`` (with the client's ``signal``); one that
  arrives after its command ended is skipped;
- reply frames: 1 type byte, 4-byte big-endian length, payload. ``o`` stdout bytes, ``e`` stderr
  bytes, ``h`` heartbeat, ``x`` the final JSON for the request, echoing its ``id`` (the nonce).

A ``str`` command runs in the session's long-lived bash (``agent.shell``), in a subshell of its
own; an argv command is started directly. Both run in their own session with a raised OOM score.
On a timeout, a wedged shell, or a fork bomb, the agent kills every process in the container but
PID 1, the keepalive and itself, and checks again until nothing else is left.
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import signal
import subprocess
import sys
import tempfile

from canal.sandbox.agent.procs import (
    alive_as,
    beat,
    keepalive_pid,
    nproc_pressed,
    pressure,
    raise_oom_score,
    spared_of,
    sweep,
    wait_gone,
)
from canal.sandbox.agent.pump import Input, Pump, write_frame
from canal.sandbox.agent.quota import Quota
from canal.sandbox.agent.seccomp import FilterRefused
from canal.sandbox.agent.seccomp import install as refuse_privileged_files
from canal.sandbox.agent.shell import Shell, ShellRun, needed_overrides, run_mode

TYPE_CHECKING = False  # typing's import is milliseconds of every session's start (mypy reads this the same)
if TYPE_CHECKING:
    from typing import Any

SHELL_LOST = {
    "shell_died": "the command killed the session's shell",
    "wedged": "the command stopped the session's shell",
    "out_of_step": "the session's shell answered out of step (something wrote to its own pipes)",
    "stuck": "the session's shell stopped taking commands (something read its own input)",
}
AFTER_SHELL_LOST = ("; every process in the sandbox was killed and a fresh shell starts with the next "
                    "command (with the working directory and variables from before this command)")


STATE_NAMES_MAX = 256


def _sha256(data: bytes) -> str:
    """SHA-256 from the interpreter's own module, the same digest as hashlib's without loading OpenSSL
    (milliseconds of every session's start)."""
    try:
        from _sha2 import sha256  # type: ignore[import-not-found,unused-ignore]  # Python 3.12 and later
    except ImportError:
        try:
            from _sha256 import sha256  # type: ignore[import-not-found,unused-ignore]  # Python 3.11 and before
        except ImportError:  # an interpreter built without them
            from hashlib import sha256
    return str(sha256(data).hexdigest())


def state_digest(cwd: str, changed: list[str], path: str) -> str:
    """The digest the host computes the same way (``canal.sandbox.result.SessionState.digest``)."""
    blob = json.dumps([cwd, sorted(changed), path], separators=(",", ":"))
    return _sha256(blob.encode("utf-8", "surrogateescape"))[:32]


class ProcRun:
    """An argv command started by the agent, as the pump's ``Child``."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        self.proc = proc

    def finished(self) -> bool:
        return self.proc.poll() is not None

    def watch_fd(self) -> int | None:
        return None

    def on_ready(self) -> bool:
        return False

    def wait(self, timeout_s: float) -> None:
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=timeout_s)

    def wedged(self) -> bool:
        return False


def spared(value: Any) -> frozenset[int]:
    """The background agent named by the host (``[pid, start time]``), when that very process lives."""
    if not isinstance(value, list) or len(value) != 2 or not all(isinstance(v, int) for v in value):
        return frozenset()
    return frozenset({value[0]}) if alive_as(value[0], value[1]) else frozenset()


def error_reply(message: str, code: int) -> dict[str, Any]:
    write_frame(b"e", f"canal: {message}\n".encode())
    return {"exit_code": code, "reason": "exited"}


class Agent:
    def __init__(self, init: bool) -> None:
        keep = keepalive_pid() if init else None
        self.protected = {1, os.getpid()} | ({keep} if keep else set())
        self.cwd = os.getcwd()
        self.env = dict(os.environ)
        self.start_env = dict(self.env)
        self.last_env: dict[str, Any] = {}  # the variables of the last run request (``take_env``)
        self._state: tuple[str, dict[str, str], dict[str, Any]] | None = None  # (cwd, env, ``state()``)
        self.shell = Shell()
        self.input = Input(0)
        self.quota: Quota | None = None
        # the background agent (``agent.bg``), whose tree (the tasks) outlives foreground commands by
        # design; every other process left when a foreground command ends is killed at once
        self.spare: frozenset[int] = frozenset()
        self.marks: frozenset[str] = frozenset()  # running tasks' markers (``agent.tree``)

    def state(self) -> dict[str, Any]:
        """What the next command runs with: its working directory and the exported variables changed since
        the session started (names only; PATH's value too). Sent with every reply, so the host decides on
        it without asking."""
        cwd = self.cwd if os.path.isdir(self.cwd) else "/"
        known = self._state
        if known is not None and known[0] == cwd and known[1] is self.env:
            return known[2]  # the same folder and the same variables (a command that changes them
            # gives the agent a new dict): computed once, not for every request and reply
        names = set(self.env) | set(self.start_env)
        changed = sorted(n for n in names if self.env.get(n) != self.start_env.get(n))[:STATE_NAMES_MAX]
        path = self.env.get("PATH", "") if "PATH" in changed else ""
        state = {"cwd": cwd, "changed": changed, "path": path, "digest": state_digest(cwd, changed, path)}
        self._state = (cwd, self.env, state)
        return state

    def serve(self) -> None:
        while True:
            try:
                req, data = self.input.read_frame()
            except EOFError:
                return
            if "ctl" in req:
                continue  # a late control frame of a request that has ended
            stdin = data if req.get("stdin_len") or req.get("stdin") == "stream" else None
            reply = self.handle(req, stdin)
            reply["id"] = req.get("id")
            reply["state"] = self.state()
            write_frame(b"x", json.dumps(reply).encode())

    def take_env(self, req: dict[str, Any]) -> None:
        """A run request's ``env``: the previous run request's when it says ``env_same``
        (``session.compact_env``)."""
        if req.get("op") != "run":
            return
        if req.pop("env_same", False):
            req["env"] = self.last_env
        else:
            self.last_env = req.get("env") or {}

    def handle(self, req: dict[str, Any], stdin: bytes | None) -> dict[str, Any]:
        self.take_env(req)
        self.watch_quota(req.get("quota"))
        self.spare = spared(req.get("spare"))
        self.marks = frozenset(str(m) for m in req.get("marks") or () if isinstance(m, str) and m)
        if req["op"] == "hello":
            with contextlib.suppress(OSError):
                self.shell.ensure(self.env, self.cwd)  # warm: the first str command pays nothing
            return {"pid": os.getpid(), "protected": sorted(self.protected)}
        if req["op"] == "sweep":
            return {"survivors": self.sweep()}
        expected = req.get("expect_state")
        if expected and expected != self.state()["digest"]:
            return error_reply("the session's working directory or environment changed after the policy "
                               "decided (another command ran); nothing ran: run the command again", 126)
        if req["op"] == "spawn_spec":
            return self.spawn_spec()
        if req.get("shell"):
            return self.run_shell(req, stdin)
        return self.run_argv(req, stdin)

    def held_back(self, req: dict[str, Any]) -> dict[str, Any] | None:
        """For a request that said ``hold``: wait for the host's ``go`` (None: start it now) or its
        ``cancel``/``kill`` (the reply: nothing ran). Frames of other requests are late ones: skipped.
        (The host streams stdin only after ``go``.)"""
        if not req.get("hold"):
            return None
        while True:
            try:
                header, _ = self.input.read_frame()
            except EOFError:
                return error_reply("the host went away before the command started; nothing ran", 126)
            if header.get("id") != req.get("id") or "ctl" not in header:
                continue
            what = header.get("ctl")
            if what == "go":
                return None
            if what == "kill":
                sig = str(header.get("signal") or "host")
                return {"exit_code": None, "reason": "interrupted", "signal": sig,
                        "detail": "before it started; nothing ran"}
            if what == "cancel":
                return error_reply("the host cancelled the command before it started; nothing ran", 126)

    def spawn_spec(self) -> dict[str, Any]:
        """Where a background task starts: the session's working directory and exported variables, in a
        0600 file of the session's private folder that the background agent reads once and deletes (so
        no value travels through the host)."""
        cwd = self.cwd if os.path.isdir(self.cwd) else "/"
        try:
            if not os.path.isdir(self.shell.dir):
                self.shell.dir = tempfile.mkdtemp(prefix=".canal-shell-")
            fd, path = tempfile.mkstemp(prefix="spawn-", dir=self.shell.dir)
            with os.fdopen(fd, "w") as fh:
                json.dump({"cwd": cwd, "env": self.env}, fh)
        except OSError as exc:
            return error_reply(f"cannot hand the session's state to the task: {exc}", 126)
        return {"exit_code": 0, "reason": "exited", "spec": path}

    def sweep(self) -> list[int]:
        survivors = sweep(self.protected, spare=self.spare, marks=self.marks)
        if not self.shell.alive():
            self.shell.reap()
        return survivors

    def sweep_leftovers(self, reply: dict[str, Any]) -> dict[str, Any]:
        """Kill what a finished foreground command left running (daemons, ``&`` jobs), now rather than
        at the next timeout; the session's shell stays, and so do other sessions of this sandbox (another
        process's agent, its shell and its commands) and the background agent's tasks. The reply gains how
        many there were."""
        keep = self.protected | ({self.shell.proc.pid} if self.shell.proc is not None else set())
        left = spared_of(keep, self.spare, self.marks, others_of=os.getpid())
        if not left:
            return dict(reply, swept=0)
        # a fork bomb's leftovers may reach the process limit only after the command's own look
        hits = int(reply.get("pid_limit_hits") or 0) + nproc_pressed()
        survivors = sweep(keep, spare=self.spare, marks=self.marks, others_of=os.getpid())
        wait_gone([p for p in left if p not in survivors])  # the command's own leave nothing behind
        found = sorted({*reply.get("survivors", []), *survivors})
        return dict(reply, swept=len(left), pid_limit_hits=hits, survivors=found)

    def watch_quota(self, spec: dict[str, Any] | None) -> None:
        """Start watching the workspace the first time a request names its quota; no single file may
        then grow past the quota either (RLIMIT_FSIZE, inherited by every command)."""
        if not spec or self.quota is not None or not os.path.isdir(spec["path"]):
            return
        limit = int(spec["bytes"])
        self.quota = Quota(spec["path"], limit)
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    def quota_over(self) -> bool:
        return self.quota is not None and self.quota.exceeded()

    def quota_reply(self, reason: str) -> tuple[str, dict[str, Any]]:
        """After a command: a final look at the workspace (it may have written fast and exited)."""
        if self.quota is None:
            return reason, {}
        if reason == "exited" and self.quota.exceeded(final=True):
            reason = "workspace_quota"
        return reason, ({"quota": self.quota.report()} if reason == "workspace_quota" else {})

    # argv commands ---------------------------------------------------------------------------
    def run_argv(self, req: dict[str, Any], stdin: bytes | None) -> dict[str, Any]:
        env = dict(self.env, **(req.get("env") or {}))
        cwd = req.get("workdir") or self.cwd
        held_back = self.held_back(req)
        if held_back is not None:
            return held_back
        before = pressure(look=False)
        try:
            proc = subprocess.Popen(
                req["argv"], cwd=cwd if os.path.isdir(cwd) else "/", env=env, start_new_session=True,
                close_fds=True, stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        except FileNotFoundError as exc:
            return error_reply(f"command not found: {exc.filename}", 127)
        except PermissionError as exc:
            return error_reply(f"permission denied: {exc.filename}", 126)
        except (OSError, ValueError) as exc:
            return dict(error_reply(f"cannot start the command: {exc}", 126),
                        pid_limit_hits=pressure()[1] - before[1])
        raise_oom_score(proc.pid)
        assert proc.stdout is not None
        assert proc.stderr is not None
        outputs = {proc.stdout.fileno(): b"o", proc.stderr.fileno(): b"e"}
        pump = self.pump(ProcRun(proc), outputs, proc.stdin.fileno() if proc.stdin else None, stdin, req)
        if self.quota is not None:
            self.quota.begin()
        reason = pump.run(req.get("timeout_s"), req.get("idle_timeout_s"), self.quota_over, beat)
        survivors: list[int] = []
        if reason != "exited":
            with contextlib.suppress(OSError):
                os.killpg(proc.pid, signal.SIGKILL)
            survivors = self.sweep()
        pump.close()
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()
        code = proc.wait()
        reason, extra = self.quota_reply(reason)
        reply = self.finish(reason, 128 + -code if code < 0 else code, before, survivors)
        # after finish: its look at the process count (gVisor's pid limit) must see the leftovers
        reply = dict(self.sweep_leftovers(reply), **extra)
        return dict(reply, signal=pump.killed) if reason == "interrupted" else reply

    def pump(self, child: ProcRun | ShellRun, outputs: dict[int, bytes], stdin_fd: int | None,
             stdin: bytes | None, req: dict[str, Any]) -> Pump:
        return Pump(child, outputs, stdin_fd, stdin, self.input, req.get("id"), req.get("stdin") == "stream")

    def finish(self, reason: str, code: int | None, before: tuple[int, int],
               survivors: list[int]) -> dict[str, Any]:
        after = pressure()
        if after[1] > before[1]:
            survivors = self.sweep()
        return {"exit_code": code, "reason": reason, "survivors": survivors,
                "oom_kills": after[0] - before[0], "pid_limit_hits": after[1] - before[1]}

    # str commands ----------------------------------------------------------------------------
    def run_shell(self, req: dict[str, Any], stdin: bytes | None) -> dict[str, Any]:
        env = needed_overrides({str(k): str(v) for k, v in (req.get("env") or {}).items()}, self.env)
        fields = [req["command"], req.get("workdir") or "", *env, *env.values()]
        if any("\0" in f for f in fields):
            return error_reply("a command, variable or folder cannot contain a NUL byte", 126)
        if not all(k.isidentifier() and k.isascii() for k in env):
            return error_reply(f"not a valid variable name in env: {sorted(env)!r}", 126)
        try:
            self.shell.ensure(self.env, self.cwd)
        except OSError as exc:
            return error_reply(f"cannot start bash for a shell command: {exc}", 127)
        before = pressure(look=False)
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        in_r, in_w = os.pipe() if stdin is not None else (-1, -1)
        me = f"/proc/{os.getpid()}/fd"
        paths = [f"{me}/{in_r}" if stdin is not None else "/dev/null", f"{me}/{out_w}", f"{me}/{err_w}"]
        held = [out_w, err_w, *([in_r] if stdin is not None else [])]
        try:
            mode = run_mode(req["command"], env, req.get("workdir") or "", self.shell.names(),
                            os.path.isdir(self.cwd))
            self.shell.prepare([*paths, req.get("workdir") or "", req["command"], mode,
                                *(f"{k}={v}" for k, v in env.items())])
            held_back = self.held_back(req)
            token = self.shell.wake() if held_back is None else ""
        except OSError as exc:
            for fd in (out_r, err_r, *held, *([in_w] if stdin is not None else [])):
                os.close(fd)
            self.shell.reap()
            return error_reply(f"the session's shell did not take the command: {exc}", 126)
        if held_back is not None:
            for fd in (out_r, err_r, *held, *([in_w] if stdin is not None else [])):
                os.close(fd)
            return held_back
        run = ShellRun(self.shell, token, held, saves=mode == "save")
        pump = self.pump(run, {out_r: b"o", err_r: b"e"}, in_w if stdin is not None else None, stdin, req)
        if self.quota is not None:
            self.quota.begin()
        reason = pump.run(req.get("timeout_s"), req.get("idle_timeout_s"), self.quota_over, beat)
        if reason in ("exited", "wedged") and run.lost is not None:
            reason = run.lost
        return self.end_shell(reason, run, pump, before)

    def end_shell(self, reason: str, run: ShellRun, pump: Pump,
                  before: tuple[int, int]) -> dict[str, Any]:
        survivors = self.sweep() if reason != "exited" else []
        run.release()
        pump.close()
        if reason == "exited" and run.saves:
            state = self.shell.take_state()
            if state is not None:
                self.cwd, self.env = state
        else:  # the state of a command cut short is not kept (the loop is swept and starts afresh); one
            self.shell.take_state(adopt=False)  # that saves none has none (the loop applied none)
        if reason in SHELL_LOST:
            reply = self.finish("killed", None, before, survivors)
            return dict(reply, detail=SHELL_LOST[reason] + AFTER_SHELL_LOST)
        exited = reason == "exited"
        reason, extra = self.quota_reply(reason)
        reply = self.finish(reason, run.status, before, survivors)
        reply = dict(self.sweep_leftovers(reply) if exited else dict(reply, swept=0), **extra)
        return dict(reply, signal=pump.killed) if reason == "interrupted" else reply


def main() -> None:
    mode = sys.argv[-1] if len(sys.argv) > 1 else "serve"
    try:  # first of all: nothing this agent starts may make a setuid or setgid file
        refuse_privileged_files()
    except FilterRefused as exc:
        sys.stderr.write(f"canal-agent: refusing to serve: the kernel did not take Canal's seccomp filter "
                         f"({exc})\n")
        sys.exit(71)
    with contextlib.suppress(OSError), open("/proc/self/comm", "w") as fh:
        fh.write("canal-agent")  # what ps -e, top and pgrep show
    if mode == "sweep":  # after a broken session: everything but the background agent's tree
        keep = keepalive_pid()
        named = os.environ.get("CANAL_SPARE", "").split(":")
        spare = spared([int(n) for n in named]) if all(n.isdigit() for n in named) else frozenset()
        marks = frozenset(m for m in os.environ.get("CANAL_SPARE_MARKS", "").split(",") if m)
        survivors = sweep({1, os.getpid()} | ({keep} if keep else set()), spare=spare, marks=marks)
        sys.stdout.write(json.dumps({"survivors": survivors}))
        return
    if mode == "background":
        # imported here: a session's agent (serve) never runs it, and it starts on every new sandbox
        from canal.sandbox.agent.bg import main as background_main

        background_main()
        return
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    Agent(init=mode == "serve").serve()


if __name__ == "__main__":
    main()
