"""MCP's ``sandbox`` argument names an existing sandbox or fork, as its description says: a new name
is refused with the list of existing ones, and nothing is started."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from canal.host.paths import project_key
from tests.integration.mcp.conftest import McpClient, text_of


@pytest.fixture(scope="module")
def agent(serve: Any) -> tuple[McpClient, Path]:
    client, project = serve()
    return client, project


def containers(docker_client: Any, project: Path) -> list[str]:
    prefix = f"canal-{project_key(project)}-"
    found = docker_client.containers.list(all=True, filters={"name": prefix})
    return sorted(c.name.removeprefix(prefix) for c in found if c.name.startswith(prefix))


def test_a_new_sandbox_name_is_refused_with_the_existing_ones(agent: tuple[McpClient, Path],
                                                              docker_client: Any) -> None:
    client, project = agent
    own = client.call("run_command", {"command": "echo own"})
    assert not own.is_error, text_of(own)
    named = client.call("run_command", {"sandbox": "default", "command": "echo named"})
    assert not named.is_error, text_of(named)  # the project's own sandbox, by its name
    refused = client.call("run_command", {"sandbox": "brand-new", "command": "echo never"})
    assert refused.is_error
    text = text_of(refused)
    assert text.startswith("SANDBOX_UNKNOWN\n"), text
    assert "No sandbox or fork named brand-new in this project (there are: default)." in text
    assert "Nothing was run." in text
    assert 'fork {"name": "brand-new"}' in text  # how to make one
    task = client.call("task_start", {"sandbox": "other-new", "command": "sleep 1"})
    assert task.is_error
    assert text_of(task).startswith("SANDBOX_UNKNOWN\n")
    assert containers(docker_client, project) == ["default"]
