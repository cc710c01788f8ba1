"""Helpers: run ``canal`` in its own process against a tmp project whose state lives in tmp folders."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CANAL = str(Path(sys.executable).with_name("canal"))
SANDBOX_UID = 1000


@dataclass(frozen=True)
class ToolProject:
    root: Path
    state: Path
    config: Path

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("CANAL_")}
        env.update(CANAL_STATE_DIR=str(self.state), CANAL_CONFIG_DIR=str(self.config))
        return subprocess.run([CANAL, *args], cwd=self.root, env=env, text=True, capture_output=True,
                              timeout=120, check=False)


def chown_tree(root: Path) -> None:
    """The sandbox user (uid 1000) owns the project, as on a developer's machine."""
    if os.geteuid() != 0:
        return
    for path in [root, *root.rglob("*")]:
        os.chown(path, SANDBOX_UID, SANDBOX_UID)


def remove_project_containers(docker_client: Any, project: Path) -> None:
    from runtime.paths import project_key

    prefix = f"canal-{project_key(project)}-"
    for container in docker_client.containers.list(all=True, filters={"name": prefix}):
        if container.name.startswith(prefix):
            container.remove(force=True)
