"""A project driven through the real ``canal`` client and its own server, in a private runtime folder.

``served``: the test's own runtime folder (so its own server), state and config folders, for tests that
stop, kill or replace the server. ``shared``: one per module, for tests that only use it. Either way the
server is stopped and the project's sandboxes removed at the end.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from project_helpers import chown_tree, remove_project_containers
from served_cli import ServedProject, served_env
from server_helpers import stop_servers


@contextmanager
def served_project(root: Path, docker_client: Any) -> Iterator[ServedProject]:
    project = root / "project"
    project.mkdir()
    (project / "sub").mkdir()
    chown_tree(project)
    served = ServedProject(project, root / "rt", served_env(root))
    try:
        yield served
    finally:
        stop_servers(served.runtime)
        remove_project_containers(docker_client, project)


@pytest.fixture
def served(tmp_path: Path, docker_client: Any, sandbox_image: str) -> Iterator[ServedProject]:
    with served_project(tmp_path, docker_client) as project:
        yield project


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory, docker_client: Any,
           sandbox_image: str) -> Iterator[ServedProject]:
    with served_project(tmp_path_factory.mktemp("served"), docker_client) as project:
        yield project
