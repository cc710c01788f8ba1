"""A project whose canal.yaml moves the workspace (``sandbox.workdir: /src``): the MCP tools read and
write at that folder's paths and say so, and ``/workspace`` is then not the project (in-process server
over the fake backend; the real sandbox's side is tests/integration/pipeline/test_moved_workspace.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from canal.mcp.server import CanalMcp, build_server
from canal.runtime.api import Canal
from canal.runtime.settings.config import CanalConfig
from canal.sandbox.fake import FakeBackend


@pytest.fixture
def app(canal_home: Path) -> CanalMcp:
    project = canal_home / "project"
    (project / "pkg").mkdir(parents=True)
    (project / "pkg" / "app.py").write_text("def answer():\n    return 1\n")
    config = CanalConfig.model_validate({"sandbox": {"workdir": "/src"}})
    return CanalMcp(Canal(project, config=config, backend=FakeBackend()))


def call(app: CanalMcp, name: str, arguments: dict[str, Any]) -> tuple[str, bool]:
    async def go() -> Any:
        return await app.call(None, name, arguments)  # type: ignore[arg-type]  # no progress is sent

    result = anyio.run(go)
    return "\n".join(c.text for c in result.content), bool(result.is_error)


def test_a_path_under_the_moved_workdir_is_the_projects(app: CanalMcp) -> None:
    text, failed = call(app, "view", {"path": "/src/pkg/app.py"})
    assert not failed, text
    assert "return 1" in text
    text, failed = call(app, "view", {"path": "/workspace/pkg/app.py"})
    assert failed, text  # not the project's folder any more: refused, never read elsewhere


def test_the_tools_name_the_moved_workdir(app: CanalMcp) -> None:
    server = build_server(app)
    assert "/src" in (server.instructions or "")
    assert "/workspace" not in (server.instructions or "")

    described = json.dumps([t.model_dump(mode="json") for t in app.tools()])
    assert "/workspace" not in described
    assert "a /src/... path works too" in described
