"""``policy.approval: human``: the server asks the person through the client (MCP elicitation) and
records who answered; a refusal runs nothing."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest

from tests.integration.mcp.conftest import AGENT_UID, McpClient, data_of, text_of


class Person:
    """Answers the client's elicitation requests like a person at the harness would."""

    def __init__(self) -> None:
        self.answer: dict[str, Any] | None = None  # None: decline
        self.asked: list[str] = []

    async def __call__(self, context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        assert isinstance(params, types.ElicitRequestFormParams)
        self.asked.append(params.message)
        if self.answer is None:
            return types.ElicitResult(action="decline")
        return types.ElicitResult(action="accept", content=self.answer)


@pytest.fixture(scope="module")
def human(serve: Any) -> tuple[McpClient, Path, Person]:
    person = Person()
    client, project = serve(approval="human", elicitation=person)
    return client, project, person


def _staged(project: Path, name: str) -> Path:
    folder = project / name
    folder.mkdir()
    (folder / "x.o").write_bytes(b"\0")
    for made in (folder, folder / "x.o"):
        os.chown(made, AGENT_UID, AGENT_UID)
    return folder


def test_person_approves_through_the_client_and_is_recorded(human: tuple[McpClient, Path, Person]) -> None:
    client, project, person = human
    folder = _staged(project, "dist")
    person.answer = {"approve": True, "name": "Alice"}
    result = client.call("run_command", {"command": "rm -rf dist"})
    assert not result.is_error, text_of(result)
    assert not folder.exists()
    assert "rm -rf dist" in person.asked[-1]
    records = (project.parent / "state" / "approvals").glob("*.json")
    assert any("Alice" in p.read_text() for p in records), "the approval names who answered"


def test_person_declines_and_nothing_runs(human: tuple[McpClient, Path, Person]) -> None:
    client, project, person = human
    folder = _staged(project, "out")
    person.answer = None
    result = client.call("run_command", {"command": "rm -rf out"})
    assert result.is_error
    assert text_of(result).splitlines()[0] == "CONFIRMATION_DECLINED"
    assert folder.exists()
    assert data_of(result)["code"] == "CONFIRMATION_DECLINED"


def test_the_person_is_asked_with_hidden_characters_escaped(human: tuple[McpClient, Path, Person]) -> None:
    """Issue 39, finding 2: a carriage return cannot hide the delete behind a harmless-looking tail."""
    from tests.hidden_chars import HIDDEN, assert_shown_escaped

    client, project, person = human
    folder = _staged(project, "objs")
    person.answer = None
    hidden = [c for c in HIDDEN if c not in "\x00\n"]
    spoof = "rm -rf objs /tmp/zz # \r" + " " * 60 + "$ ls -la /tmp/zz " + "".join(hidden)
    result = client.call("run_command", {"command": spoof})
    assert data_of(result)["code"] == "CONFIRMATION_DECLINED", text_of(result)
    assert "$ rm -rf objs /tmp/zz # \\r    " in person.asked[-1]
    assert_shown_escaped(person.asked[-1], hidden)
    assert folder.exists()
