"""canal.yaml's limits.sandboxes through the real CLI: one sandbox past it is refused with its code and
the way out, and nothing is started."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from project_helpers import remove_project_containers

from canal.host.paths import project_key
from tests.integration.pipeline.conftest import make_project


def canal_cli(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "canal.cli", *args], cwd=project,
                          env=os.environ.copy(), capture_output=True, text=True, timeout=300, check=False)


@pytest.fixture
def limited(host_env: Path, docker_client: Any) -> Iterator[Path]:
    project = make_project(host_env / "limited", "limits: {sandboxes: 2}\n")  # tighter: no approval needed
    yield project
    remove_project_containers(docker_client, project)


def containers(docker_client: Any, project: Path) -> list[str]:
    prefix = f"canal-{project_key(project)}-"
    found = docker_client.containers.list(all=True, filters={"name": prefix})
    return sorted(c.name.removeprefix(prefix) for c in found if c.name.startswith(prefix))


def test_one_sandbox_past_the_limit_is_refused_with_the_way_out(limited: Path, docker_client: Any) -> None:
    for name in ("one", "two"):
        done = canal_cli(limited, "run", "--sandbox", name, "--", "true")
        assert done.returncode == 0, done.stderr
    again = canal_cli(limited, "run", "--sandbox", "one", "--", "echo", "still")
    assert again.returncode == 0, again.stderr  # a running one is used, whatever the count
    refused = canal_cli(limited, "run", "--sandbox", "three", "--", "true")
    assert refused.returncode == 125, refused.stdout + refused.stderr
    lines = refused.stderr.splitlines()
    assert lines[0] == "SANDBOX_LIMIT_REACHED"
    said = "already runs 2 sandbox(es) (one, two), the most canal.yaml's limits.sandboxes allows (2)"
    assert said in lines[1]
    assert "Sandbox three was not started." in lines[1]
    assert "canal ps" in refused.stderr
    assert "canal down NAME" in refused.stderr
    assert refused.stdout == ""
    assert containers(docker_client, limited) == ["one", "two"]
    assert canal_cli(limited, "down", "two").returncode == 0
    freed = canal_cli(limited, "run", "--sandbox", "three", "--", "true")
    assert freed.returncode == 0, freed.stderr
