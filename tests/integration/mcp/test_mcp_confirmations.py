"""Issue 32, finding 3 over MCP (the SDK's client against ``canal mcp``): every reply that asks for a
confirmation carries one object in ``_meta["canal/result"].confirmation``: token, reason, rule_ids,
expires_at, approval and rerun (the same call again, as a tool call)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from tests.integration.mcp.conftest import AGENT_UID, McpClient, data_of, text_of

SHAPE = {"token", "reason", "rule_ids", "expires_at", "approval", "rerun"}


@pytest.fixture(scope="module")
def agent(serve: Any) -> tuple[McpClient, Path]:
    client, project = serve()
    return client, project


def _confirmation(reply: Any) -> dict[str, Any]:
    assert reply.is_error, text_of(reply)
    found: dict[str, Any] = data_of(reply).get("confirmation") or {}
    assert set(found) >= SHAPE, data_of(reply)
    assert found["token"], found
    assert found["expires_at"], found
    assert found["approval"] == "agent", found
    assert f'confirm_token "{found["token"]}"' in found["rerun"], found
    return found


def test_run_apply_and_a_workflow_step_ask_in_one_shape(agent: tuple[McpClient, Path]) -> None:
    client, project = agent
    (project / "build").mkdir()
    os.chown(project / "build", AGENT_UID, AGENT_UID)
    run = _confirmation(client.call("run_command", {"command": "rm -rf build"}))
    assert run["rerun"].startswith("call run_command again"), run

    assert not client.call("fork", {"name": "f1"}).is_error
    made = client.call("run_command", {"sandbox": "f1", "command": "echo new > new.txt"})
    assert not made.is_error, text_of(made)
    apply = _confirmation(client.call("apply", {"name": "f1"}))
    assert apply["rule_ids"] == ["fork-apply"]
    done = client.call("apply", {"name": "f1", "confirm_token": apply["token"]})
    assert not done.is_error, text_of(done)
    assert (project / "new.txt").read_text() == "new\n"
    assert not client.call("discard", {"name": "f1"}).is_error

    run_id = data_of(client.call("workflow", {"action": "start", "name": "cleanup-build"}))["run_id"]
    client.call("workflow", {"action": "advance", "run_id": run_id, "gate_data": {"directory": "d-x"}})
    step = _confirmation(client.call("workflow", {"action": "advance", "run_id": run_id}))
    assert step["rule_ids"], step
