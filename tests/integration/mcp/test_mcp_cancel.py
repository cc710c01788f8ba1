"""A client's ``notifications/cancelled`` for a running run_command kills the command in the sandbox, as
Ctrl-C does on the CLI, and the next call runs at once instead of waiting behind it."""

from __future__ import annotations

import time
from typing import Any

import anyio
import docker.errors
import mcp_types as types

from canal.host.paths import project_key
from tests.integration.mcp.conftest import text_of


def sleeping(docker_client: Any, container: str) -> bool:
    try:
        box = docker_client.containers.get(container)
        found = box.exec_run(["pgrep", "-f", "sleep 123"])
    except docker.errors.NotFound:  # the server is still making it
        return False
    except docker.errors.APIError as exc:  # made, not started yet (409: "is not running")
        if exc.status_code == 409:
            return False
        raise
    return bool(found.exit_code == 0)


def test_cancelling_a_running_command_kills_it_in_the_sandbox(serve: Any, docker_client: Any) -> None:
    client, project = serve()
    container = f"canal-{project_key(project)}-default"

    async def cancelled_call() -> None:
        with anyio.move_on_after(60) as outer:
            async with anyio.create_task_group() as tg:
                async def call() -> None:
                    await client.session.call_tool("run_command", {"command": "sleep 123"},
                                                   read_timeout_seconds=300)
                tg.start_soon(call)
                # the command runs in the sandbox: now the client gives up on it (the SDK sends the cancel)
                while not await anyio.to_thread.run_sync(sleeping, docker_client, container):
                    await anyio.sleep(0.2)
                tg.cancel_scope.cancel()
        assert not outer.cancelled_caught, "the command never started"

    client.portal.call(cancelled_call)
    deadline = time.monotonic() + 20
    while sleeping(docker_client, container) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not sleeping(docker_client, container)

    async def next_call() -> types.CallToolResult:
        return await client.session.call_tool("run_command", {"command": "echo after"},
                                              read_timeout_seconds=30)

    assert text_of(client.portal.call(next_call)).startswith("after\n")
