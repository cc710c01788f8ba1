"""An agent over MCP: a command's checkpoint is undone with undo; a fork runs without confirmations,
its changes come back through changes, and apply asks before it writes the project."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from tests.integration.mcp.conftest import McpClient, data_of, text_of


@pytest.fixture(scope="module")
def agent(serve: Any) -> tuple[McpClient, Path]:
    client, project = serve()
    return client, project


def test_undo_puts_back_what_a_command_deleted(agent: tuple[McpClient, Path]) -> None:
    client, project = agent
    ran = client.call("run_command", {"command": "python3 -c \"import os; os.remove('notes.txt')\""})
    assert not ran.is_error, text_of(ran)
    checkpoint = data_of(ran)["checkpoint"]["id"]
    assert f"checkpoint {checkpoint}" in text_of(ran)
    assert not (project / "notes.txt").exists()
    listed = client.call("checkpoints", {})
    assert checkpoint in text_of(listed)
    assert "deleted   notes.txt" in text_of(client.call("diff", {"checkpoint": checkpoint}))
    undone = client.call("undo", {"checkpoint": checkpoint})
    assert not undone.is_error, text_of(undone)
    assert (project / "notes.txt").read_text() == "keep me\n"


@pytest.mark.skipif(os.geteuid() != 0, reason="kernel overlayfs needs root (CI runs as root)")
def test_a_fork_proposes_and_apply_asks_first(agent: tuple[McpClient, Path]) -> None:
    client, project = agent
    made = client.call("fork", {"name": "helper"})
    assert not made.is_error, text_of(made)
    try:
        ran = client.call("run_command", {"sandbox": "helper", "command": "rm -rf src && echo hi > new.txt"})
        assert not ran.is_error, text_of(ran)  # no confirmation in a fork
        assert (project / "src" / "app.py").exists()
        changes = text_of(client.call("changes", {"name": "helper"}))
        assert "deleted   src/app.py" in changes
        assert "+hi" in changes
        asked = client.call("apply", {"name": "helper"})
        assert asked.is_error
        assert text_of(asked).startswith("CONFIRMATION_REQUIRED")
        assert "Nothing was applied." in text_of(asked)
        assert (project / "src" / "app.py").exists()
        token = data_of(asked)["token"]
        applied = client.call("apply", {"name": "helper", "confirm_token": token})
        assert not applied.is_error, text_of(applied)
        assert not (project / "src").exists()
        assert (project / "new.txt").read_text() == "hi\n"
        client.call("undo", {"checkpoint": data_of(applied)["checkpoint"]})
        assert (project / "src" / "app.py").read_text() == "def answer():\n    return 1\n"
        assert not (project / "new.txt").exists()
    finally:
        client.call("discard", {"name": "helper"})


@pytest.mark.skipif(os.geteuid() != 0, reason="kernel overlayfs needs root (CI runs as root)")
def test_file_names_cannot_fake_lines_of_changes_or_apply(agent: tuple[McpClient, Path]) -> None:
    """Issue 39, finding 3: names holding every C0/C1 control (NUL aside), bidi override and separator
    are shown escaped in changes and in the list apply asks the user to confirm."""
    from tests.hidden_chars import HIDDEN, assert_shown_escaped, leaked

    client, _project = agent
    chars = [c for c in HIDDEN if c != "\x00"]
    groups = ["h-" + "".join(chars[i:i + 8]) for i in range(0, len(chars), 8)]
    names = ["ok\n  deleted nothing (all good)\n", *groups]
    quoted = ["$'" + "".join(f"\\x{b:02x}" for b in n.encode()) + "'" for n in names]
    made = client.call("fork", {"name": "names"})
    assert not made.is_error, text_of(made)
    try:
        command = "cd /workspace && " + " && ".join(f"printf 'x\\n' > {q}" for q in quoted)
        ran = client.call("run_command", {"sandbox": "names", "command": command})
        assert not ran.is_error, text_of(ran)
        changes = text_of(client.call("changes", {"name": "names"}))
        assert not leaked(changes), changes
        assert '"b/ok\\n  deleted nothing (all good)\\n"' in changes
        asked = text_of(client.call("apply", {"name": "names"}))
        assert "  deleted nothing (all good)" not in asked.splitlines()
        assert "added ok\\n  deleted nothing (all good)\\n" in asked
        assert_shown_escaped(asked, chars)
    finally:
        client.call("discard", {"name": "names"})
