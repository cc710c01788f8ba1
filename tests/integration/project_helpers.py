"""Helpers for integration tests that use a real project folder and its real sandboxes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

SANDBOX_UID = 1000


def chown_tree(root: Path) -> None:
    """The sandbox user (uid 1000) owns the project, as on a developer's machine."""
    if os.geteuid() != 0:
        return
    for path in [root, *root.rglob("*")]:
        os.chown(path, SANDBOX_UID, SANDBOX_UID, follow_symlinks=False)


def remove_project_containers(docker_client: Any, project: Path) -> None:
    from canal.host.paths import project_key

    prefix = f"canal-{project_key(project)}-"
    for container in docker_client.containers.list(all=True, filters={"name": prefix}):
        if container.name.startswith(prefix):
            container.remove(force=True)


CANAL = str(Path(sys.executable).with_name("canal"))
KEEP = ("CANAL_NO_SERVER", "CANAL_RUNTIME_DIR", "CANAL_CACHE_DIR")  # the test session's choice: in-process


@dataclass(frozen=True)
class CliProject:
    """A tmp project driven through the real ``canal`` CLI, one process per command, its state and
    config in tmp folders of its own."""

    root: Path
    state: Path
    config: Path
    timeout: ClassVar[float] = 120

    @property
    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("CANAL_") or k in KEEP}
        return {**env, "CANAL_STATE_DIR": str(self.state), "CANAL_CONFIG_DIR": str(self.config)}

    def popen(self, *args: str) -> subprocess.Popen[str]:
        return subprocess.Popen([CANAL, *args], cwd=self.root, env=self.env, text=True,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)

    def run(self, *args: str, stdin: str | None = None,
            env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run([CANAL, *args], cwd=self.root, env={**self.env, **(env or {})}, text=True,
                              capture_output=True, timeout=self.timeout, check=False, input=stdin)

    def json(self, *args: str, code: int = 0, env: dict[str, str] | None = None) -> dict[str, Any]:
        done = self.run(*args, "--json", env=env)
        assert done.returncode == code, (done.returncode, done.stdout, done.stderr)
        data: dict[str, Any] = json.loads(done.stdout)
        return data
