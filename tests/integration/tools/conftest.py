"""A tmp project with tools/, driven through the real CLI; its sandbox container is removed at the end."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from project_helpers import chown_tree, remove_project_containers
from tool_cli import ToolProject

TOOLS = {
    "clean_build.yaml": (
        'description: Delete a build folder of the workspace (destructive)\n'
        'parameters:\n  dir: { type: string, required: true, desc: "Folder to delete" }\n'
        'run: ["rm", "-rf", "--", "{{params.dir}}"]\n'),
    "word_count.yaml": (
        'description: Count the words of a file of the workspace\n'
        'parameters:\n  path: { type: string, required: true, desc: "File, relative to /workspace" }\n'
        'run: ["wc", "-w", "--", "{{params.path}}"]\nidempotent: true\n'),
}


@pytest.fixture
def tool_project(tmp_path: Path, sandbox_image: str, docker_client: Any) -> Iterator[ToolProject]:
    project = ToolProject(root=tmp_path / "project", state=tmp_path / "state", config=tmp_path / "config")
    (project.root / "tools").mkdir(parents=True)
    for name, text in TOOLS.items():
        (project.root / "tools" / name).write_text(text)
    build = project.root / "build"
    build.mkdir()
    for i in range(3):
        (build / f"out-{i}.o").write_bytes(b"\x7fELF" + bytes(64))
    (project.root / "notes.txt").write_text("one two three four\n")
    chown_tree(project.root)
    try:
        yield project
    finally:
        remove_project_containers(docker_client, project.root)
