"""Issue 32 over MCP (the SDK's client against ``canal mcp``): a passing test run says what ran, in the
text and in ``_meta["canal/result"].stderr``."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from tests.integration.mcp.conftest import AGENT_UID, McpClient, data_of, text_of

UNIT_TEST = """\
import unittest


class T(unittest.TestCase):
    def test_one(self):
        self.assertEqual(1, 1)
"""


@pytest.fixture(scope="module")
def agent(serve: Any) -> tuple[McpClient, Path]:
    client, project = serve(args=("--unattended",))  # no person watching: confirm becomes deny
    test = project / "test_small.py"
    test.write_text(UNIT_TEST)
    os.chown(test, AGENT_UID, AGENT_UID)
    return client, project


def test_a_passing_unittest_run_says_what_ran(agent: tuple[McpClient, Path]) -> None:
    client, _ = agent
    reply = client.call("run_command", {"command": "python3 -m unittest"})
    assert not reply.is_error, text_of(reply)
    assert "Ran 1 test in " in text_of(reply)
    assert "Ran 1 test in " in data_of(reply)["stderr"]


def _calls(text: str, tool: str) -> list[dict[str, Any]]:
    """The arguments of each ``call TOOL {...}`` the text names."""
    found = []
    for match in re.finditer(rf"call {tool} (\{{.*?\}})(?=, or |\]|   |$)", text, re.MULTILINE):
        found.append(json.loads(match.group(1)))
    return found


def test_overflow_hints_are_tool_calls_that_work(agent: tuple[McpClient, Path]) -> None:
    client, _ = agent
    reply = client.call("run_command", {"command": "seq -f 'line %g' 5000"})
    note = text_of(reply).splitlines()[-2]
    grep, sed = _calls(note, "run_command")[:2]
    assert grep["command"].startswith("grep -n PATTERN /canal/output/"), note
    found = client.call("run_command", {"command": grep["command"].replace("PATTERN", "4999")})
    assert text_of(found).startswith("4999:line 4999\n"), text_of(found)
    assert text_of(client.call("run_command", sed)).startswith("line 51\n")


def test_a_denied_recursive_delete_suggests_the_remove_tool(agent: tuple[McpClient, Path]) -> None:
    client, project = agent
    (project / "build").mkdir()
    os.chown(project / "build", AGENT_UID, AGENT_UID)
    denied = client.call("run_command", {"command": "rm -rf build"})
    assert denied.is_error
    [remove] = _calls(text_of(denied), "remove")
    assert remove == {"path": "build", "recursive": True}, text_of(denied)
    removed = client.call("remove", remove)
    assert not removed.is_error, text_of(removed)
    assert not (project / "build").exists()


ERROR_CALLS: list[tuple[str, dict[str, Any]]] = [
    ("view", {"path": "/etc/passwd"}), ("view", {"path": "../outside"}), ("view", {"path": "missing.txt"}),
    ("edit", {"path": "/etc/hosts", "old": "a", "new": "b"}),
    ("edit", {"path": "nope.py", "old": "a", "new": "b"}),
    ("write", {"path": "/etc/x", "content": "x"}), ("write", {"path": "../x", "content": "x"}),
    ("remove", {"path": "/etc/passwd"}), ("remove", {"path": "../x"}), ("remove", {"path": "nothing-here"}),
    ("restore", {"trash_id": "t20990101T000000Z-abcdef"}), ("diff", {"checkpoint": "cp-9999"}),
    ("undo", {"checkpoint": "cp-9999"}), ("changes", {"name": "no-fork"}), ("apply", {"name": "no-fork"}),
    ("discard", {"name": "no-fork"}), ("fork", {"name": "f2", "from_checkpoint": "cp-9999"}),
    ("workflow", {"action": "start", "name": "no-such"}),
    ("workflow", {"action": "current", "run_id": "wr_x"}),
    ("describe_capability", {"name": "nope"}), ("call_capability", {"name": "nope"}),
    ("task_show", {"task_id": "nope"}), ("run_command", {"command": "cat /etc/shadow", "sandbox": "nope"}),
    ("run_command", {"command": "rm -rf /"}), ("view", {"path": "src/app.py", "range": "x"}),
]


def test_no_error_reply_names_the_host_project_folder(agent: tuple[McpClient, Path]) -> None:
    """Finding 5: every tool's error paths, swept for the project's host path (as given and resolved)."""
    client, project = agent
    spellings = {str(project), os.path.realpath(project), str(project.parent)}
    for tool, arguments in ERROR_CALLS:
        reply = client.call(tool, arguments)
        seen = text_of(reply) + json.dumps(data_of(reply))
        for spelling in spellings:
            assert spelling not in seen, (tool, arguments, seen)


def test_listed_schemas_are_json_schema(agent: tuple[McpClient, Path]) -> None:
    """Finding 5: what the client sees is JSON Schema (no pydantic gt/le), alternatives declared."""
    from jsonschema import Draft202012Validator

    client, _ = agent
    tools = {t.name: t.input_schema for t in client.list_tools().tools}
    for schema in tools.values():
        Draft202012Validator.check_schema(schema)
        assert '"gt"' not in json.dumps(schema)
        assert '"le"' not in json.dumps(schema)
    timeout = tools["run_command"]["properties"]["timeout"]
    assert timeout["exclusiveMinimum"] == 0
    assert timeout["maximum"] == 3600
    assert Draft202012Validator(tools["remove"]["properties"]["path"]).is_valid("build")
