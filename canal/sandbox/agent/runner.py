"""One background task's runner (stdlib only; runs inside the sandbox, forked by ``agent.bg``).

The runner is the task: a child subreaper (``agent.tree``) that starts the command in bash, in a
session of its own, with the working directory and exported variables the foreground session had
when the task was started, and waits. When the command ends, whatever it left running is killed (as a
foreground command's leftovers are); SIGUSR1 (cancel, timeout, the sandbox going down) kills the whole
tree at once. Then it writes one JSON status line to fd 3 and exits.

Its stdout and stderr (fds 1 and 2) are the task's output pipes, read by the background agent; its
stdin is /dev/null.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess

from canal.sandbox.agent.procs import MARKER_VAR, raise_oom_score
from canal.sandbox.agent.tree import kill_tree, set_subreaper

TYPE_CHECKING = False  # typing's import is milliseconds of every session's start (mypy reads this the same)
if TYPE_CHECKING:
    from typing import Any

# Variables a starting bash acts on by itself: the task's bash starts without them and exports them
# before it evaluates the command, as the foreground session's loop does (``agent.shell``).
START_UNSAFE = frozenset({"BASH_ENV", "ENV", "SHELLOPTS", "BASHOPTS"})
TASK_SCRIPT = r"""
__canal_cmd=$1
shift
for __canal_kv; do export "$__canal_kv" 2>/dev/null; done
unset __canal_kv
set --
eval -- "$__canal_cmd"
"""


class Cancel(Exception):
    """SIGUSR1 or SIGTERM reached the runner: kill the task's tree."""


class Runner:
    def __init__(self, command: str, cwd: str, env: dict[str, str], marker: str) -> None:
        self.command = command
        self.cwd = cwd if os.path.isdir(cwd) else "/"
        self.marker = marker
        clean = {k: v for k, v in env.items() if k not in START_UNSAFE and not k.startswith("BASH_FUNC_")}
        clean[MARKER_VAR] = marker
        self.env = clean
        self.unsafe = [f"{k}={v}" for k, v in env.items() if k in START_UNSAFE]
        self.armed = False
        self.cancelled = False

    def on_signal(self, _signum: int, _frame: object) -> None:
        self.cancelled = True
        if self.armed:
            raise Cancel

    def run(self) -> dict[str, Any]:
        subreaper = set_subreaper()
        for sig in (signal.SIGUSR1, signal.SIGTERM):
            signal.signal(sig, self.on_signal)
        argv = ["/bin/bash", "--noprofile", "--norc", "-c", TASK_SCRIPT, "bash", self.command, *self.unsafe]
        try:
            leader = subprocess.Popen(argv, cwd=self.cwd, env=self.env, start_new_session=True,
                                      stdin=subprocess.DEVNULL, close_fds=True)
        except OSError as exc:
            os.write(2, f"canal: cannot start the task: {exc}\n".encode())
            return {"exit_code": 127, "left": 0, "survivors": [], "subreaper": subreaper}
        raise_oom_score(leader.pid)
        code, left, survivors = self.wait(leader.pid)
        return {"exit_code": code, "left": left, "survivors": survivors, "subreaper": subreaper,
                "cancelled": self.cancelled}

    def wait(self, leader: int) -> tuple[int | None, int, list[int]]:
        """Wait for the leader; then kill what is left. A cancel kills everything at once."""
        code: int | None = None
        left, survivors = 0, list[int]()
        self.armed = True
        if self.cancelled:
            return None, *self.kill()
        while True:
            try:
                pid, status = os.waitpid(-1, 0)
            except ChildProcessError:
                break
            except Cancel:
                self.armed = False
                left, survivors = self.kill()
                continue
            if pid == leader and code is None and not self.cancelled:
                code = os.waitstatus_to_exitcode(status)
                code = 128 - code if code < 0 else code  # killed by a signal: as a shell reports it
                self.armed = False  # from here on the runner is ending anyway
                left, survivors = self.kill()
        return code, left, survivors

    def kill(self) -> tuple[int, list[int]]:
        me = frozenset({os.getpid()})
        return kill_tree(me, self.marker, exclude=me)


def run_forked(spec: dict[str, Any], status_fd: int) -> None:
    """The forked child's whole life: run the task, report on ``status_fd``, exit (never returns)."""
    try:
        runner = Runner(str(spec["command"]), str(spec.get("cwd") or "/"),
                        {str(k): str(v) for k, v in (spec.get("env") or {}).items()}, str(spec["marker"]))
        status = runner.run()
    except BaseException as exc:  # the runner must always report and exit, never return into the agent
        status = {"exit_code": None, "error": f"{type(exc).__name__}: {exc}", "left": 0, "survivors": []}
    with contextlib.suppress(OSError):
        os.write(status_fd, json.dumps(status).encode() + b"\n")
    os._exit(0)
