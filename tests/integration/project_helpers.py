"""Helpers for integration tests that use a real project folder and its real sandboxes."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

SANDBOX_UID = 1000


def chown_tree(root: Path) -> None:
    """The sandbox user (uid 1000) owns the project, as on a developer's machine."""
    if os.geteuid() != 0:
        return
    for path in [root, *root.rglob("*")]:
        os.chown(path, SANDBOX_UID, SANDBOX_UID, follow_symlinks=False)


def remove_project_containers(docker_client: Any, project: Path) -> None:
    from canal.runtime.paths import project_key

    prefix = f"canal-{project_key(project)}-"
    for container in docker_client.containers.list(all=True, filters={"name": prefix}):
        if container.name.startswith(prefix):
            container.remove(force=True)
