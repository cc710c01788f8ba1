"""Real OS users for approval tests: made with useradd, removed with userdel when the test ends.

Each command runs as its user through ``runuser``, inside a private mount namespace (``unshare -m``) that
makes two things reachable for an unprivileged user on these machines: the interpreter (which may live
under root's 0700 home, as pyenv's does) and device nodes (a fresh /dev with null, zero, random, tty and
its own devpts, so ``script`` gets a pseudo-terminal). Nothing of it is visible outside the namespace.
"""

from __future__ import annotations

import os
import secrets
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CANAL = str(Path(sys.executable).with_name("canal"))
DEV_NODES = (("null", 1, 3), ("zero", 1, 5), ("random", 1, 8), ("urandom", 1, 9), ("tty", 5, 0))


def hidden_root() -> Path | None:
    """The first folder on the way to the interpreter that other users cannot enter, if any."""
    path = Path(sys.base_prefix).resolve()
    for folder in [*reversed(path.parents), path]:
        if folder != Path("/") and not os.stat(folder).st_mode & 0o001:
            return folder
    return None


def namespace_script(scratch: Path) -> str:
    """Shell lines (run as root inside ``unshare -m``) that prepare the namespace; argv follows."""
    lines = ["set -e"]
    hidden = hidden_root()
    if hidden is not None:
        inner = Path(sys.base_prefix).resolve().relative_to(hidden).parts[0]
        keep = scratch / "keep"
        lines += [f"mkdir -p {keep}", f"mount --bind {hidden / inner} {keep}",
                  f"mount -t tmpfs -o mode=755 tmpfs {hidden}", f"mkdir -p {hidden / inner}",
                  f"mount --bind {keep} {hidden / inner}"]
    lines += ["mount -t tmpfs -o mode=755 tmpfs /dev"]
    lines += [f"mknod -m 666 /dev/{name} c {major} {minor}" for name, major, minor in DEV_NODES]
    lines += ["mkdir /dev/pts /dev/shm",
              "mount -t devpts -o newinstance,ptmxmode=0666,mode=620 devpts /dev/pts",
              "ln -s pts/ptmx /dev/ptmx", "mount -t tmpfs -o mode=1777 tmpfs /dev/shm",
              'u="$1"; shift', 'exec runuser -u "$u" -- "$@"']
    return "\n".join(lines)


@dataclass
class OsUser:
    name: str
    uid: int
    home: Path
    scratch: Path

    def env(self, **extra: str) -> dict[str, str]:
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(self.home), "LANG": "C.UTF-8",
               "USER": self.name, "LOGNAME": self.name, "CANAL_RUNTIME_DIR": str(self.home / "rt")}
        if "DOCKER_HOST" in os.environ:
            env["DOCKER_HOST"] = os.environ["DOCKER_HOST"]
        return {**env, **extra}

    def run(self, *argv: str, cwd: Path | None = None, timeout: float = 180, input_text: str | None = None,
            **extra_env: str) -> subprocess.CompletedProcess[str]:
        """``argv`` as this user (no terminal; stdin empty unless ``input_text``)."""
        wrapped = ["unshare", "-m", "--propagation", "private", "sh", "-c",
                   namespace_script(self.scratch), "ns", self.name,
                   "env", "-i", *(f"{k}={v}" for k, v in self.env(**extra_env).items()), *argv]
        stdin = subprocess.DEVNULL if input_text is None else None
        return subprocess.run(wrapped, cwd=cwd or self.home, text=True, capture_output=True, timeout=timeout,
                              stdin=stdin, input=input_text, check=False)

    def canal(self, *args: str, cwd: Path | None = None,
              **extra_env: str) -> subprocess.CompletedProcess[str]:
        return self.run(CANAL, *args, cwd=cwd, **extra_env)

    def canal_in_script(self, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        """``script -qc "canal ARGS" /dev/null``: the command gets a pseudo-terminal, as an agent can fake."""
        line = shlex.join([CANAL, *args])
        return self.run("script", "-qec", line, "/dev/null", cwd=cwd)


def make_user(base: Path, role: str, groups: tuple[str, ...] = ()) -> OsUser:
    name = f"ct{role[:5]}{secrets.token_hex(3)}"
    home = base / name
    home.mkdir(mode=0o755)
    argv = ["useradd", "--no-create-home", "--home-dir", str(home), "--shell", "/bin/sh", "--user-group"]
    if groups:
        argv += ["--groups", ",".join(groups)]
    subprocess.run([*argv, name], check=True, capture_output=True)
    uid = int(subprocess.run(["id", "-u", name], check=True, capture_output=True, text=True).stdout)
    os.chown(home, uid, uid)
    scratch = base / f"{name}-ns"
    scratch.mkdir()
    return OsUser(name, uid, home, scratch)


def remove_user(user: OsUser) -> None:
    """userdel refuses while a process of the user lives (a SIGKILLed one takes a moment to go): retry,
    and say so if the user is still there."""
    for _ in range(50):
        gone = subprocess.run(["userdel", user.name], check=False, capture_output=True, text=True)
        if gone.returncode == 0 or subprocess.run(["id", "-u", user.name], capture_output=True).returncode:
            return
        time.sleep(0.1)
    raise RuntimeError(f"userdel {user.name} failed: {gone.stderr.strip()}")


@dataclass
class Team:
    agent: OsUser
    approver: OsUser
    project: Path


def kill_leftovers(uid: int) -> None:
    """Processes still running as a user this test made (its Canal server, if stop did not end it)."""
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if entry.stat().st_uid == uid:
                    os.kill(int(entry.name), signal.SIGKILL)
            except (OSError, ProcessLookupError):
                continue


@contextmanager
def made_team(docker_client: Any, prefix: str) -> Iterator[Team]:
    """Two OS users made for the test (the agent's, in the docker group, and an approver's), a project
    owned by the agent with a build/ folder; then servers stopped, sandboxes removed, users deleted."""
    from project_helpers import remove_project_containers

    base = Path(tempfile.mkdtemp(prefix=prefix, dir="/tmp"))
    base.chmod(0o755)
    project = base / "project"
    users: list[OsUser] = []
    try:
        users.append(make_user(base, "agent", groups=("docker",)))
        users.append(make_user(base, "appr"))
        agent, approver = users
        project.mkdir()
        (project / "build").mkdir()
        for made in (project, project / "build"):
            os.chown(made, agent.uid, agent.uid)
        yield Team(agent, approver, project)
    finally:
        for user in users:
            user.canal("server", "stop")
        time.sleep(0.2)
        for user in users:
            kill_leftovers(user.uid)
        try:
            for user in users:
                remove_user(user)
        finally:
            remove_project_containers(docker_client, project)
            shutil.rmtree(base, ignore_errors=True)
