"""Helpers for the first-hour tests: a person with a home folder, running ``canal`` in a subprocess or at a
pseudo-terminal (a module name of its own: ``conftest`` is ambiguous across test folders)."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from project_helpers import chown_tree


@dataclass
class User:
    """A person at a shell: their home, Canal's folders, and the projects they made."""

    home: Path
    env: dict[str, str]
    projects: list[Path] = field(default_factory=list)

    def project(self, name: str = "app", files: dict[str, str] | None = None, *, git: bool = False) -> Path:
        root = self.home / name
        root.mkdir(parents=True)
        for rel, text in (files or {}).items():
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        if git:
            subprocess.run(["git", "init", "-q", str(root)], check=True)
        chown_tree(root)
        self.projects.append(root)
        return root

    def canal(self, cwd: Path, *args: str, env: dict[str, str] | None = None, stdin: str | None = None,
              timeout: float = 300) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "canal.cli", *args], cwd=cwd,
                              env={**self.env, **(env or {})}, capture_output=True, text=True,
                              input=stdin, timeout=timeout, check=False)





def at_terminal(cwd: Path, env: dict[str, str], args: list[str], answers: list[tuple[str, str]],
                timeout: float = 120) -> tuple[int, str]:
    """Run ``canal ARGS`` on a terminal; each (prompt, answer) is typed once the prompt appears.

    Returns the exit code and everything the terminal showed."""
    leader, follower = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "canal.cli", *args], cwd=cwd, env=env,
                            stdin=follower, stdout=follower, stderr=follower, close_fds=True)
    os.close(follower)
    shown = b""
    pending = list(answers)
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([leader], [], [], 0.2)
            if ready:
                try:
                    chunk = os.read(leader, 65536)
                except OSError:  # the child closed the terminal
                    break
                if not chunk:
                    break
                shown += chunk
            if pending and pending[0][0].encode() in shown.rsplit(b"\n", 1)[-1]:
                os.write(leader, pending.pop(0)[1].encode() + b"\n")
            if not ready and proc.poll() is not None:
                break
        try:
            code = proc.wait(timeout=max(1.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            text = shown.decode(errors="replace")
            msg = f"canal {' '.join(args)} did not finish at the terminal; it showed:\n{text}"
            raise AssertionError(msg) from None
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(leader)
    return code, shown.decode(errors="replace").replace("\r\n", "\n")
