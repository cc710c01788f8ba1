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
    records = (project.parent / "state").rglob("approvals/*.json")  # <root>/projects/<key>/approvals
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


def test_a_declined_token_leaves_the_pending_list(human: tuple[McpClient, Path, Person]) -> None:
    """Issue 32, finding 4: a "no" in the client is the person's decision; `canal approvals` no longer
    lists the token as waiting."""
    import json
    import subprocess
    import sys

    client, project, person = human
    _staged(project, "gone")
    person.answer = None
    result = client.call("run_command", {"command": "rm -rf gone"})
    assert data_of(result)["code"] == "CONFIRMATION_DECLINED"
    token = data_of(result)["details"]["token"]
    env = {**os.environ, "CANAL_STATE_DIR": str(project.parent / "state"),
           "CANAL_CONFIG_DIR": str(project.parent / "config")}
    listed = subprocess.run([sys.executable, "-m", "canal.cli", "approvals", "--json"], cwd=project,
                            env=env, capture_output=True, text=True, timeout=120, check=False)
    assert listed.returncode == 0, listed.stderr
    assert token not in [p["token"] for p in json.loads(listed.stdout)["pending"]]
    again = client.call("run_command", {"command": "rm -rf gone", "confirm_token": token})
    assert again.is_error
    assert "denied" in text_of(again).lower(), text_of(again)
    assert (project / "gone").exists()


def test_no_approvers_and_no_elicitation_says_what_is_true(serve: Any) -> None:
    """Issue 32, finding 4: a human-approval project that names no approvers is not told that an approver
    named in canal.yaml must decide."""
    client, project = serve(approval="human", args=("--no-elicit",))
    _staged(project, "dist2")
    text = text_of(client.call("run_command", {"command": "rm -rf dist2"}))
    assert text.startswith("CONFIRMATION_REQUIRED\n"), text
    assert "An approver named in canal.yaml must decide it" not in text
    assert "No approver is configured" in text, text
