"""``canal mcp`` as a subprocess, driven over stdio by the mcp SDK's client, against a real sandbox."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pytest

from tests.integration.mcp.conftest import AGENT_UID, McpClient, data_of, text_of

TOOLS = {"run_command", "view", "edit", "remove", "restore", "write", "trash", "workflow",
         "list_capabilities", "describe_capability", "call_capability", "checkpoints", "diff", "undo", "fork",
         "changes", "apply", "discard", "task_start", "task_list", "task_show", "task_wait", "task_cancel"}


@pytest.fixture(scope="module")
def agent(serve: Any) -> tuple[McpClient, Path]:
    client, project = serve()
    return client, project


def test_lists_the_tools_with_schemas_and_examples(agent: tuple[McpClient, Path]) -> None:
    client, _ = agent
    tools = {t.name: t for t in client.list_tools().tools}
    assert set(tools) == TOOLS
    run = tools["run_command"]
    assert run.input_schema["required"] == ["command"]
    assert "confirm_token" in run.input_schema["properties"]
    assert all("Example" in (t.description or "") for t in tools.values())


def test_runs_a_command_and_returns_the_presenters_text(agent: tuple[McpClient, Path]) -> None:
    client, _ = agent
    result = client.call("run_command", {"command": "echo hi from $(whoami) in $PWD"})
    assert not result.is_error
    text = text_of(result)
    assert text.startswith("hi from agent in /workspace\n")
    # in MCP's words (its undo tool), not the CLI's
    undo = r'\(undo: call undo \{"checkpoint": "cp-\d+"\}\)'
    assert re.search(r"\[exit:0 \| [0-9.]+s \| checkpoint cp-\d+ " + undo + r"\]", text)
    assert data_of(result)["status"] == "ok"


def test_failed_command_is_a_result_not_an_error(agent: tuple[McpClient, Path]) -> None:
    client, _ = agent
    result = client.call("run_command", {"command": "ls /nope", "timeout": "30"})
    assert not result.is_error
    assert "[exit:2 |" in text_of(result)
    assert "No such file or directory" in text_of(result)


def test_overflow_output_path_is_usable_by_a_second_call(agent: tuple[McpClient, Path]) -> None:
    client, _ = agent
    first = text_of(client.call("run_command", {"command": "seq 1 100000"}))
    match = re.search(r"(/canal/output/\S+\.txt)", first)
    assert match is not None, first
    path = match.group(1)
    second = client.call("run_command", {"command": f"grep -n -x 77777 {path}"})
    assert text_of(second).startswith("77777:77777\n")


def test_destructive_command_needs_the_token_then_runs(agent: tuple[McpClient, Path]) -> None:
    client, project = agent
    (project / "build").mkdir()
    (project / "build" / "out.o").write_bytes(b"\0")
    for made in (project / "build", project / "build" / "out.o"):
        os.chown(made, AGENT_UID, AGENT_UID)
    first = client.call("run_command", {"command": "rm -rf build"})
    assert first.is_error
    text = text_of(first)
    assert text.startswith("CONFIRMATION_REQUIRED\n")
    assert "Nothing was run." in text
    token = data_of(first)["confirmation"]["token"]
    assert f'confirm_token "{token}"' in text
    assert (project / "build" / "out.o").exists()

    second = client.call("run_command", {"command": "rm -rf build", "confirm_token": token})
    assert not second.is_error, text_of(second)
    assert not (project / "build").exists()
    assert data_of(second)["backups"], "the confirmed delete backs up what it removes"

    reused = client.call("run_command", {"command": "rm -rf build", "confirm_token": token})
    assert reused.is_error
    assert text_of(reused).startswith("APPROVAL_")


def test_edit_returns_a_diff_and_view_shows_the_change(agent: tuple[McpClient, Path]) -> None:
    client, project = agent
    result = client.call("edit", {"file_path": "/workspace/src/app.py", "old_string": "return 1",
                                  "new_string": "return 2"})
    assert not result.is_error, text_of(result)
    text = text_of(result)
    assert "-    return 1\n+    return 2\n" in text
    assert re.search(r"\[edited src/app.py: 1 replacement, \+1 -1 \| checkpoint cp-\d+ "
                     r"\(undo: call undo ", text)
    assert (project / "src" / "app.py").read_text() == "def answer():\n    return 2\n"
    view = text_of(client.call("view", {"path": "src/app.py", "range": "2:2"}))
    assert "return 2" in view
    assert "def answer" not in view


def test_edit_not_found_writes_nothing(agent: tuple[McpClient, Path]) -> None:
    client, project = agent
    before = (project / "notes.txt").read_text()
    result = client.call("edit", {"path": "notes.txt", "old": "absent text", "new": "x"})
    assert result.is_error
    assert text_of(result).startswith("STRING_NOT_FOUND\n")
    assert (project / "notes.txt").read_text() == before


def test_remove_then_restore(agent: tuple[McpClient, Path]) -> None:
    client, project = agent
    removed = client.call("remove", {"path": "notes.txt"})
    assert not removed.is_error, text_of(removed)
    assert not (project / "notes.txt").exists()
    trash_id = data_of(removed)["results"][0]["entry"]["id"]
    assert f'restore {{"trash_id": "{trash_id}"}}' in text_of(removed)
    restored = client.call("restore", {"trash_id": trash_id})
    assert not restored.is_error, text_of(restored)
    assert (project / "notes.txt").read_text() == "keep me\n"


def test_invalid_arguments_name_the_field_and_its_constraint(agent: tuple[McpClient, Path]) -> None:
    client, _ = agent
    missing = client.call("run_command", {})
    assert missing.is_error
    assert text_of(missing).startswith("ARGUMENT_MISSING\nrun_command: the argument command is missing.")
    bad = client.call("run_command", {"command": "true", "timeout": "soon"})
    assert text_of(bad).startswith("ARGUMENT_INVALID\n")
    assert "Seconds before the command is killed" in text_of(bad)
    unknown = client.call("nope", {})
    assert text_of(unknown).startswith("TOOL_UNKNOWN\n")


def test_outside_the_project_is_refused_in_the_error_shape(agent: tuple[McpClient, Path]) -> None:
    client, _ = agent
    result = client.call("view", {"path": "/etc/passwd"})
    assert result.is_error
    assert text_of(result).splitlines()[0] == "PATH_OUTSIDE_WORKSPACE"
    assert "\nNext: " in text_of(result)


def test_capabilities_list_describe_call(agent: tuple[McpClient, Path]) -> None:
    client, _ = agent
    listed = text_of(client.call("list_capabilities", {"query": "greet"}))
    assert listed.startswith("greet: Print a greeting for a name")
    described = text_of(client.call("describe_capability", {"name": "greet"}))
    assert "name* string" in described
    assert 'call: call_capability {"name": "greet"' in described
    called = client.call("call_capability", {"name": "greet", "arguments": '{"name": "a b; rm -rf /"}'})
    assert not called.is_error, text_of(called)
    assert text_of(called).startswith("hello a b; rm -rf /\n")
    rejected = client.call("call_capability", {"name": "greet", "arguments": {}})
    assert rejected.is_error
    assert text_of(rejected).splitlines()[0] == "TOOL_ARGS_INVALID"


def test_workflow_start_advance_current_round_trip(agent: tuple[McpClient, Path]) -> None:
    client, _ = agent
    started = client.call("workflow", {"action": "start", "name": "cleanup-build"})
    assert not started.is_error, text_of(started)
    run_id = data_of(started)["run_id"]
    assert f'Next: call workflow {{"action": "advance", "run_id": "{run_id}"' in text_of(started)

    advanced = client.call("workflow", {"action": "advance", "run_id": run_id,
                                        "gate_data": {"directory": "mcp-build", "file_count": "2"}})
    assert not advanced.is_error, text_of(advanced)
    assert data_of(advanced)["status"] == "waiting_input"  # the review notification

    risky = client.call("workflow", {"action": "advance", "run_id": run_id})
    assert risky.is_error
    assert "CONFIRMATION_REQUIRED" in text_of(risky)
    token = data_of(risky)["confirmation"]["token"]

    current = client.call("workflow", {"action": "current", "run_id": run_id})
    assert data_of(current)["status"] == "waiting_confirmation"
    assert token in text_of(current)

    done = client.call("workflow", {"action": "advance", "run_id": run_id, "confirm_token": token})
    assert not done.is_error, text_of(done)
    final = client.call("workflow", {"action": "current", "run_id": run_id})
    assert data_of(final)["status"] == "completed", text_of(final)


def test_an_edit_past_the_size_cap_writes_nothing(agent: tuple[McpClient, Path]) -> None:
    client, project = agent
    before = (project / "notes.txt").read_text()
    huge = "x" * (20 * 1024 * 1024)
    result = client.call("edit", {"path": "notes.txt", "old": before.splitlines()[0], "new": huge})
    assert result.is_error
    assert text_of(result).startswith("FILE_TOO_LARGE\n"), text_of(result)[:200]
    assert (project / "notes.txt").read_text() == before
