"""A real ``canal mcp`` subprocess per test module, driven by the mcp SDK's stdio client.

The client lives on an event loop in a worker thread (an anyio blocking portal), so the tests stay
plain synchronous functions and one server (one warm sandbox) serves a whole module.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from anyio.from_thread import BlockingPortal, start_blocking_portal
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from canal.host.paths import project_key

CANAL = str(Path(sys.executable).parent / "canal")
AGENT_UID = 1000
TOOL_YAML = """\
description: Print a greeting for a name
parameters:
  name: { type: string, required: true, desc: "Who to greet" }
run: ["echo", "hello", "{{params.name}}"]
"""


class McpClient:
    """Synchronous calls into an async ``ClientSession`` running on the portal's loop."""

    def __init__(self, portal: BlockingPortal, session: ClientSession) -> None:
        self.portal = portal
        self.session = session

    def list_tools(self) -> types.ListToolsResult:
        return self.portal.call(self.session.list_tools)

    def call(self, name: str, arguments: dict[str, Any] | None = None) -> types.CallToolResult:
        async def _call() -> types.CallToolResult:
            return await self.session.call_tool(name, arguments or {}, read_timeout_seconds=120)

        return self.portal.call(_call)


def text_of(result: types.CallToolResult) -> str:
    return "\n".join(c.text for c in result.content if isinstance(c, types.TextContent))


def data_of(result: types.CallToolResult) -> dict[str, Any]:
    data: dict[str, Any] = (result.meta or {}).get("canal/result", {})
    return data


def make_project(root: Path, image: str, *, approval: str = "agent") -> Path:
    project = root / "proj"
    (project / "src").mkdir(parents=True)
    (project / "tools").mkdir()
    (project / "canal.yaml").write_text(f"sandbox:\n  image: {image}\npolicy:\n  approval: {approval}\n")
    (project / "src" / "app.py").write_text("def answer():\n    return 1\n")
    (project / "notes.txt").write_text("keep me\n")
    (project / "tools" / "greet.yaml").write_text(TOOL_YAML)
    for folder, dirs, files in os.walk(project):
        for name in [folder, *(os.path.join(folder, n) for n in dirs + files)]:
            os.chown(name, AGENT_UID, AGENT_UID)
    return project


def server_params(project: Path, root: Path, *extra: str) -> StdioServerParameters:
    state, config = root / "state", root / "config"
    state.mkdir(mode=0o700, exist_ok=True)
    config.mkdir(mode=0o700, exist_ok=True)
    env = {"CANAL_STATE_DIR": str(state), "CANAL_CONFIG_DIR": str(config)}
    session = ("CANAL_NO_SERVER", "CANAL_RUNTIME_DIR", "CANAL_CACHE_DIR")  # the test session's choices
    env.update({k: os.environ[k] for k in session if k in os.environ})
    if "DOCKER_HOST" in os.environ:
        env["DOCKER_HOST"] = os.environ["DOCKER_HOST"]
    return StdioServerParameters(command=CANAL, args=["mcp", *extra], env=env, cwd=str(project))


@asynccontextmanager
async def _connect(params: StdioServerParameters, callback: Any) -> AsyncIterator[ClientSession]:
    with (params_log(params)).open("w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write), \
                ClientSession(read, write, elicitation_callback=callback) as session:
            await session.initialize()
            yield session


def params_log(params: StdioServerParameters) -> Path:
    return Path(str(params.cwd)).parent / "server.log"


def remove_containers(docker_client: Any, project: Path) -> None:
    prefix = f"canal-{project_key(project)}-"
    for container in docker_client.containers.list(all=True, filters={"name": prefix}):
        if container.name.startswith(prefix):
            container.remove(force=True)


@pytest.fixture(scope="module")
def serve(tmp_path_factory: pytest.TempPathFactory, sandbox_image: str,
          docker_client: Any) -> Iterator[Any]:
    """A factory: ``serve(approval=..., elicitation=callback)`` starts one server for the module."""
    projects: list[Path] = []

    with start_blocking_portal() as portal:
        opened: list[Any] = []

        def start(*, approval: str = "agent", elicitation: Any = None,
                  args: tuple[str, ...] = ()) -> tuple[McpClient, Path]:
            root = tmp_path_factory.mktemp("mcp")
            project = make_project(root, sandbox_image, approval=approval)
            projects.append(project)
            cm = portal.wrap_async_context_manager(_connect(server_params(project, root, *args), elicitation))
            session = cm.__enter__()
            opened.append(cm)
            return McpClient(portal, session), project

        try:
            yield start
        finally:
            for cm in reversed(opened):
                cm.__exit__(None, None, None)
            for project in projects:
                remove_containers(docker_client, project)
                shutil.rmtree(project.parent, ignore_errors=True)
