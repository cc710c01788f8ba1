"""A new user's first hour, through the ``canal`` CLI in a subprocess (issue #18's findings).

Each test gets its own home, state and config folders; containers of the projects it made are removed.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from first_hour import User
from project_helpers import remove_project_containers


@pytest.fixture
def user(tmp_path: Path, sandbox_image: str, docker_client: Any) -> Iterator[User]:
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("CANAL_", "XDG_")) or k in ("CANAL_NO_SERVER", "CANAL_RUNTIME_DIR")}
    env.update(HOME=str(home), CANAL_NO_SERVER="1")
    person = User(home, env)
    try:
        yield person
    finally:
        for project in person.projects:
            remove_project_containers(docker_client, project)
