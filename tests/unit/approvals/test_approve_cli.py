from __future__ import annotations

import base64
import json
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from canal.runtime.approvals import ApprovalPendingError, ApprovalService, DecisionSummary
from canal.runtime.cli import approve_cmd, shared
from canal.runtime.cli.main import CanalGroup
from canal.runtime.paths import state_dir_for
from canal.runtime.project import find_project_dir
from canal.runtime.services import APPROVAL_PURPOSE, Services

CMD = "rm -rf build/"
BINDING = {"sandbox": "default", "cwd": "/workspace", "policy_hash": "p1"}


@pytest.fixture
def cli() -> click.Group:
    group = CanalGroup("canal")
    approve_cmd.register(group)
    return group


@pytest.fixture(autouse=True)
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CANAL_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("CANAL_CONFIG_DIR", str(tmp_path / "config"))
    (tmp_path / "project").mkdir(exist_ok=True)
    monkeypatch.setenv("CANAL_PROJECT_DIR", str(tmp_path / "project"))
    monkeypatch.setenv("CANAL_KEY", base64.b64encode(b"m" * 32).decode())
    monkeypatch.delenv("CANAL_APPROVER_KEY", raising=False)


def human_token() -> str:
    # what the pipeline builds under canal.yaml's `approval: human`
    key = Services(find_project_dir()).keys.derive(APPROVAL_PURPOSE)
    svc = ApprovalService(state_dir_for(find_project_dir()), key, mode="human")
    return svc.request(CMD, **BINDING, decision_summary=DecisionSummary(("rm-recursive",), "recursive")).token


def as_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shared, "terminal_flags", lambda: (True, True))


def test_agent_without_terminal_or_key_cannot_approve(cli: click.Group) -> None:
    token = human_token()
    result = CliRunner().invoke(cli, ["approve", token])
    assert result.exit_code == 122
    assert result.stdout == ""
    assert result.stderr.startswith("APPROVER_UNVERIFIED")
    with pytest.raises(ApprovalPendingError):
        Services(find_project_dir()).approvals.redeem(token, CMD, **BINDING)


def test_person_at_a_terminal_approves_after_seeing_the_command(cli: click.Group,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    token = human_token()
    as_terminal(monkeypatch)
    result = CliRunner().invoke(cli, ["approve", token], input="y\n")
    assert result.exit_code == 0, result.output
    assert f"$ {CMD}" in result.stdout
    assert "rule rm-recursive: recursive" in result.stdout
    assert f"canal run --confirm {token} -- {CMD}" in result.stdout
    approval = Services(find_project_dir()).approvals.redeem(token, CMD, **BINDING)
    assert approval.how == "tty"
    log = Services(find_project_dir()).audit.path.read_text()
    events = [line for line in log.splitlines() if "approval.approved" in line]
    assert len(events) == 1


def test_person_can_decline(cli: click.Group, monkeypatch: pytest.MonkeyPatch) -> None:
    token = human_token()
    as_terminal(monkeypatch)
    result = CliRunner().invoke(cli, ["approve", token], input="n\n")
    assert result.exit_code == 122
    with pytest.raises(ApprovalPendingError):
        Services(find_project_dir()).approvals.redeem(token, CMD, **BINDING)


def test_registered_approver_key_works_without_a_terminal(cli: click.Group, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    key_file = tmp_path / "alice.key"
    refused = CliRunner().invoke(cli, ["approvals", "add-approver", "alice", "--key-out", str(key_file)])
    assert refused.exit_code == 122  # registering an approver needs a person too
    assert not key_file.exists()
    as_terminal(monkeypatch)
    added = CliRunner().invoke(cli, ["approvals", "add-approver", "alice", "--key-out", str(key_file)])
    assert added.exit_code == 0, added.output
    monkeypatch.setattr(shared, "terminal_flags", lambda: (False, False))
    monkeypatch.setenv("CANAL_APPROVER_KEY", str(key_file))
    token = human_token()
    result = CliRunner().invoke(cli, ["approve", token])
    assert result.exit_code == 0, result.output
    assert Services(find_project_dir()).approvals.redeem(token, CMD, **BINDING).how == "approver-key"


def test_approving_a_forged_token(cli: click.Group, monkeypatch: pytest.MonkeyPatch) -> None:
    as_terminal(monkeypatch)
    result = CliRunner().invoke(cli, ["approve", "c_aaaaaaaaaaaa", "--yes"])
    assert result.exit_code == 122
    assert result.stderr.startswith("APPROVAL_FORGED")


def test_approvals_lists_pending(cli: click.Group) -> None:
    token = human_token()
    text = CliRunner().invoke(cli, ["approvals"])
    assert text.exit_code == 0
    assert token in text.stdout
    assert "[rm-recursive] (needs a person)" in text.stdout
    assert f"$ {CMD}" in text.stdout
    data = json.loads(CliRunner().invoke(cli, ["approvals", "--json"]).stdout)
    assert [p["token"] for p in data["pending"]] == [token]
    assert data["pending"][0]["mode"] == "human"


def test_approvals_empty(cli: click.Group) -> None:
    result = CliRunner().invoke(cli, ["approvals"])
    assert result.exit_code == 0
    assert result.stdout == ""
    assert "no pending" in result.stderr
