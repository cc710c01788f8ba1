"""The MCP servers of tools.mcp_servers are trusted settings, and so is the code their command names:
an edit of ``mcp/backend.py`` (which the agent can write) needs a person again, like the setting itself."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from canal.host.approvals import Approver
from canal.runtime.errors import ConfigError
from canal.runtime.trust import TrustedConfig

KEY = b"k" * 32
PERSON = Approver(user="alice", how="tty")
CONFIG = "tools:\n  mcp_servers:\n    backend: {command: [python3, -u, mcp/backend.py, --mode, fast]}\n"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    (folder / "mcp").mkdir(parents=True)
    (folder / "mcp" / "backend.py").write_text("print('serving')\n")
    (folder / "canal.yaml").write_text(CONFIG)
    return folder


def approved(project: Path) -> TrustedConfig:
    trust = TrustedConfig(project, project.parent / "state", KEY)
    trust.approve(PERSON, trust.status().snapshot.digest)
    return trust


def test_the_servers_file_is_approved_by_content(project: Path) -> None:
    trust = approved(project)
    snap = trust.status().snapshot
    assert set(snap.settings["tools"]["mcp_servers"]["backend"]["files"]) == {"mcp/backend.py"}
    assert trust.status().state == "approved"
    (project / "mcp" / "backend.py").write_text("import os; print(os.environ)\n")
    assert trust.status().state == "unapproved"


def test_a_new_server_needs_a_person(project: Path) -> None:
    trust = approved(project)
    (project / "canal.yaml").write_text(CONFIG + "    other: {command: [python3, mcp/backend.py]}\n")
    assert trust.status().state == "unapproved"


def test_a_project_without_servers_keeps_its_earlier_approval_digest(tmp_path: Path) -> None:
    folder = tmp_path / "plain"
    folder.mkdir()
    (folder / "canal.yaml").write_text("timeouts: {command: 30}\n")
    trust = TrustedConfig(folder, tmp_path / "state", KEY)
    assert "tools" not in trust.status().snapshot.settings  # digests made before the section existed hold


def test_a_server_file_that_is_a_link_is_refused(project: Path, tmp_path: Path) -> None:
    (tmp_path / "outside.py").write_text("print('elsewhere')\n")
    (project / "mcp" / "backend.py").unlink()
    (project / "mcp" / "backend.py").symlink_to(tmp_path / "outside.py")
    with pytest.raises(ConfigError, match="cannot be read without leaving the project"):
        TrustedConfig(project, tmp_path / "state", KEY).status()


@pytest.mark.parametrize(("command", "problem"), [
    (["./mcp/server.sh"], "goes after its interpreter"),
    ([], "at least the program"),
    (["python3", ""], "no empty element"),
])
def test_a_command_that_would_run_unapproved_code_is_refused(project: Path, command: list[str],
                                                            problem: str) -> None:
    servers = {"backend": {"command": command}}
    (project / "canal.yaml").write_text(json.dumps({"tools": {"mcp_servers": servers}}))
    with pytest.raises(ConfigError, match=problem):
        TrustedConfig(project, project.parent / "state", KEY).status()


def test_every_argument_naming_a_project_file_is_approved(project: Path) -> None:
    (project / "server").write_text("print('no suffix, no folder')\n")
    (project / "canal.yaml").write_text(json.dumps({"tools": {"mcp_servers": {"backend": {
        "command": ["python3", "-X", "dev", "server", "--config", "mcp/backend.py", "/etc/hostname"]}}}}))
    files = TrustedConfig(project, project.parent / "state", KEY).status().snapshot.settings
    assert set(files["tools"]["mcp_servers"]["backend"]["files"]) == {"server", "mcp/backend.py"}


@pytest.mark.parametrize(("server", "problem"), [
    ({"url": "https://mcp.example.com/mcp"}, "streamable-HTTP MCP servers are not supported yet"),
    ({"command": ["python3", "x.py"], "headers_from_env": {"Authorization": "TOKEN"}}, "applies to a url"),
    ({"command": ["python3"], "url": "https://mcp.example.com/mcp"}, "exactly one of command"),
    ({"command": ["python3"], "env_from_env": {"A-B": "C"}}, "variable names"),
])
def test_settings_canal_cannot_honour_are_refused_when_they_load(project: Path, server: dict[str, object],
                                                                 problem: str) -> None:
    (project / "canal.yaml").write_text(json.dumps({"tools": {"mcp_servers": {"backend": server}}}))
    with pytest.raises(ConfigError, match=problem):
        TrustedConfig(project, project.parent / "state", KEY).status()


def test_a_default_written_out_needs_nobody(project: Path) -> None:
    """Only what differs from a server setting's default counts: writing a default out, or a setting
    added to Canal later, leaves the approval valid."""
    trust = approved(project)
    (project / "canal.yaml").write_text(CONFIG.replace("--mode, fast]}", "--mode, fast], timeout: 30, "
                                                      "workspace: none, env_from_env: {}}"))
    assert trust.status().state == "approved"
    (project / "canal.yaml").write_text(CONFIG.replace("--mode, fast]}", "--mode, fast], workspace: ro}"))
    assert trust.status().state == "unapproved"
