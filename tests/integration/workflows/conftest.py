"""The module's tmp project: state and config dirs in tmp folders; its sandbox container is removed at
the end."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from project_helpers import chown_tree, remove_project_containers
from wf_cli import CliProject


@pytest.fixture(scope="module")
def cli_project(tmp_path_factory: pytest.TempPathFactory, sandbox_image: str,
                docker_client: Any) -> Iterator[CliProject]:
    base = tmp_path_factory.mktemp("wf-cli")
    project = CliProject(root=base / "project", state=base / "state", config=base / "config")
    project.root.mkdir()
    data = Path(__file__).with_name("data")
    if data.is_dir():
        for src in data.rglob("*"):
            dest = project.root / src.relative_to(data)
            if src.is_dir():
                dest.mkdir(parents=True, exist_ok=True)
            else:
                dest.write_bytes(src.read_bytes())
    chown_tree(project.root)
    try:
        yield project
    finally:
        remove_project_containers(docker_client, project.root)
