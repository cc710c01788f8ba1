"""Each test gets its own runtime folder (so its own server), state and config folders; the server is
stopped and the project's sandboxes removed when the test ends."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from project_helpers import chown_tree, remove_project_containers
from served_cli import ServedProject, served_env
from server_helpers import stop_servers


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
