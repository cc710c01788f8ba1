"""A project driven through the real ``canal`` thin client and its own server, in a private runtime folder.

Each test gets its own runtime folder (so its own server), state and config folders; the server is
stopped and the project's sandboxes removed when the test ends.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from project_helpers import chown_tree, remove_project_containers
from server_helpers import stop_servers

CANAL = str(Path(sys.executable).with_name("canal"))


@dataclass
class ServedProject:
    root: Path
    runtime: Path
    env: dict[str, str] = field(default_factory=dict)

    def run(self, *args: str, input: str | None = None, cwd: Path | None = None,
            timeout: float = 120, **extra_env: str) -> subprocess.CompletedProcess[str]:
        env = {**self.env, **extra_env}
        return subprocess.run([CANAL, *args], cwd=cwd or self.root, env=env, text=True, capture_output=True,
                              input=input, timeout=timeout, check=False,
                              stdin=subprocess.DEVNULL if input is None else None)

    def popen(self, *args: str, **kwargs: Any) -> subprocess.Popen[str]:
        return subprocess.Popen([CANAL, *args], cwd=self.root, env=self.env, text=True, **kwargs)


def served_env(root: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CANAL_")}
    env.update(CANAL_RUNTIME_DIR=str(root / "rt"), CANAL_STATE_DIR=str(root / "state"),
               CANAL_CONFIG_DIR=str(root / "config"))
    return env


@pytest.fixture
def served(tmp_path: Path, docker_client: Any, sandbox_image: str) -> Iterator[ServedProject]:
    project = tmp_path / "project"
    project.mkdir()
    (project / "sub").mkdir()
    chown_tree(project)
    served = ServedProject(project, tmp_path / "rt", served_env(tmp_path))
    try:
        yield served
    finally:
        stop_servers(served.runtime)
        remove_project_containers(docker_client, project)
