"""Projects with MCP backends; their sandboxes (the servers' included) are removed at the end."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from backend_world import BackendProject, make_project
from project_helpers import remove_project_containers


@pytest.fixture
def backend_project(tmp_path: Path, sandbox_image: str,
                    docker_client: Any) -> Iterator[Callable[..., BackendProject]]:
    made: list[BackendProject] = []

    def make(servers: dict[str, Any], **options: Any) -> BackendProject:
        project = make_project(tmp_path / f"p{len(made)}", servers, **options)
        made.append(project)
        return project

    yield make
    for project in made:
        remove_project_containers(docker_client, project.root)
