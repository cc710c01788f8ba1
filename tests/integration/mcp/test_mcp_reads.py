"""Issue 32 over MCP (the SDK's client against ``canal mcp``): a passing test run says what ran, in the
text and in ``_meta["canal/result"].stderr``."""

from __future__ import annotations

import os
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
    client, project = serve()
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
