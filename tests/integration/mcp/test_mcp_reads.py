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
