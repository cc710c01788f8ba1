"""Finding 11: what an agent reaches through MCP (the SDK's client against ``canal mcp``): workflows it
can list and describe, a write tool and a trash tool, hints that are tool calls, no host path in any
reply, and descriptions that match what the tools return."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.integration.mcp.conftest import McpClient, data_of, text_of


@pytest.fixture(scope="module")
def agent(serve: Any) -> tuple[McpClient, Path]:
    client, project = serve()
    return client, project


def _everything(result: Any) -> str:
    return text_of(result) + json.dumps(data_of(result))


def test_workflows_are_listed_and_described(agent: tuple[McpClient, Path]) -> None:
    client, _ = agent
    listed = text_of(client.call("workflow", {"action": "list"}))
    assert "cleanup-build: Stage a build directory" in listed
    assert "project-bootstrap:" in listed
    described = text_of(client.call("workflow", {"action": "describe", "name": "cleanup-build"}))
    for step in ("choose-target", "prepare", "delete-build", "verify"):
        assert step in described
    assert "directory" in described  # the first step's gate field
    capabilities = text_of(client.call("list_capabilities", {}))
    assert "cleanup-build" in capabilities
    tools = {t.name: t for t in client.list_tools().tools}
    assert "ls workflows" not in (tools["workflow"].description or "")


def test_write_and_trash_tools(agent: tuple[McpClient, Path]) -> None:
    client, project = agent
    wrote = client.call("write", {"path": "notes.txt", "content": "rewritten\n"})
    assert not wrote.is_error, text_of(wrote)
    assert (project / "notes.txt").read_text() == "rewritten\n"
    trash_id = re.search(r"\b(t\d{8}T\d{6}Z-[0-9a-f]+)\b", text_of(wrote))
    assert trash_id is not None, text_of(wrote)  # the replaced file went to the trash first
    created = client.call("write", {"path": "src/new.py", "content": "x = 1\n"})
    assert not created.is_error, text_of(created)
    listed = client.call("trash", {})
    assert not listed.is_error
    assert trash_id.group(1) in text_of(listed)
    assert "notes.txt" in text_of(listed)


def test_hints_are_tool_calls_and_no_reply_names_a_host_path(agent: tuple[McpClient, Path]) -> None:
    client, project = agent
    replies = [client.call("view", {"path": "missing.txt"}),
               client.call("restore", {"trash_id": "t20990101T000000Z-abcdef"}),
               client.call("edit", {"path": "src/app.py", "old": "nope", "new": "x"}),
               client.call("workflow", {"action": "start", "name": "no-such-workflow"}),
               client.call("run_command", {"command": "rm -rf src"}),
               client.call("view", {"path": "."})]
    for reply in replies:
        seen = _everything(reply)
        assert str(project) not in seen, seen
        assert str(project.parent) not in seen, seen
        for line in text_of(reply).splitlines():
            if line.startswith("Next:"):
                assert "canal " not in line.split("`")[0], line  # a tool call, not a CLI command
    missing = text_of(client.call("workflow", {"action": "start", "name": "no-such-workflow"}))
    assert 'call workflow {"action": "list"}' in missing


def test_descriptions_match_what_the_tools_return(agent: tuple[McpClient, Path]) -> None:
    client, _ = agent
    tools = {t.name: t for t in client.list_tools().tools}
    view = text_of(client.call("view", {"path": "src/app.py"}))
    first = view.splitlines()[0]
    prefix = re.match(r"^( *1)(\t|\| )", first)
    assert prefix is not None, view
    shown = repr(prefix.group(1) + prefix.group(2))[1:-1]  # "     1\\t": a tab is written \\t in prose
    assert f'"{shown}"' in (tools["view"].description or ""), (shown, tools["view"].description)
    for name, tool in tools.items():
        for example in re.findall(r"^Example: (\{.*\})$", tool.description or "", re.MULTILINE):
            if name in {"run_command", "edit", "remove", "restore", "undo", "fork", "apply", "discard",
                        "call_capability", "write"}:
                continue  # they change things; their argument shapes are checked below
            reply = client.call(name, json.loads(example))
            assert not text_of(reply).startswith("ARGUMENT_"), (name, example, text_of(reply))
        for example in re.findall(r"^Example: (\{.*\})$", tool.description or "", re.MULTILINE):
            tool_args = json.loads(example)
            assert set(tool_args) <= set(tool.input_schema.get("properties", {})), (name, example)
