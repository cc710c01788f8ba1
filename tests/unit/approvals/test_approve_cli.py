"""``canal approve``: a terminal never counts; an SSH signature by an approver's key does, once."""

from __future__ import annotations

import base64
import json
import re
import subprocess
import time
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from canal.cli import shared
from canal.cli.admin import approve_cmd
from canal.cli.main import CanalGroup
from canal.host.approvals import (
    APPROVAL_DENIED,
    APPROVAL_PENDING,
    ApprovalService,
    Approver,
    DecisionSummary,
)
from canal.runtime.services import APPROVAL_PURPOSE, Services
from canal.runtime.settings.project import find_project_dir
from tests.error_codes import raises_code

CMD = "rm -rf build/"
BINDING = {"sandbox": "default", "cwd": "/workspace", "policy_hash": "p1"}


def keypair(folder: Path, name: str) -> tuple[Path, str]:
    key = folder / name
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", str(key)], check=True)
    return key, key.with_suffix(".pub").read_text().strip()


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


@pytest.fixture
def alice(tmp_path: Path) -> Path:
    """A project whose approved canal.yaml names alice with an SSH key; returns her private key."""
    key, public = keypair(tmp_path, "alice")
    (tmp_path / "project" / "canal.yaml").write_text(
        "policy: {approval: human}\napprovals:\n  approvers:\n"
        f"    - name: alice\n      ssh_key: {public}\n")
    trust = Services(find_project_dir()).trust
    trust.approve(Approver(user="bootstrap", how="tty"), trust.status().snapshot.digest)
    return key


def services() -> Services:
    return Services(find_project_dir())


def human_token() -> str:
    # what the pipeline mints under canal.yaml's `approval: human`
    return services().approvals.request(CMD, **BINDING, decision_summary=DecisionSummary(
        ("rm-recursive",), "recursive")).token


def code(result: object) -> str:
    """The error code line of a CLI result's stderr (after what was shown to the approver)."""
    lines = str(getattr(result, "stderr", "")).splitlines()
    return next((line for line in lines if re.fullmatch(r"[A-Z][A-Z_]+", line)), "")


def events(name: str) -> list[dict[str, object]]:
    lines = services().audit.path.read_text().splitlines()
    return [json.loads(line) for line in lines if f'"event":"{name}"' in line]


def test_the_agent_at_a_terminal_cannot_approve(cli: click.Group, alice: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    token = human_token()
    monkeypatch.setattr(shared, "terminal_flags", lambda: (True, True))  # what `script -qc` gives it
    result = CliRunner().invoke(cli, ["approve", token, "--yes"])
    assert result.exit_code == 122
    assert result.stdout == ""
    assert code(result) == "APPROVER_IS_AGENT"
    with raises_code(APPROVAL_PENDING):
        services().approvals.redeem(token, CMD, **BINDING)
    refused = events("approval.refused")
    assert refused[-1]["data"]["code"] == "APPROVER_IS_AGENT"  # type: ignore[index]


def test_an_ssh_signed_approval_counts_and_names_the_approver(cli: click.Group, alice: Path) -> None:
    token = human_token()
    result = CliRunner().invoke(cli, ["approve", token, "--ssh-key", str(alice), "--yes"])
    assert result.exit_code == 0, result.output
    assert f"approved {token} as alice (ssh)" in result.stdout
    approval = services().approvals.redeem(token, CMD, **BINDING)
    assert (approval.approver, approval.how) == ("alice", "ssh")
    data = events("approval.approved")[-1]["data"]
    assert (data["approver"], data["how"]) == ("alice", "ssh")  # type: ignore[index]
    assert "BEGIN SSH SIGNATURE" in data["evidence"]["signature"]  # type: ignore[index]
    assert f"token {token}" in data["evidence"]["message"]  # type: ignore[index]


def sign_file(key: Path, text: str, out: Path) -> Path:
    done = subprocess.run(["ssh-keygen", "-Y", "sign", "-q", "-f", str(key), "-n", "canal-approval"],
                          input=text.encode(), capture_output=True, check=True)
    out.write_bytes(done.stdout)
    return out


def test_a_tampered_signature_does_not_verify(cli: click.Group, alice: Path, tmp_path: Path) -> None:
    token = human_token()
    message = CliRunner().invoke(cli, ["approve", token, "--print-message"]).stdout
    assert message.startswith("canal-approval/1\ndecision approve\n")
    other = message.replace(f"token {token}", "token c_aaaaaaaaaaaa")  # signed for another token
    sig = sign_file(alice, other, tmp_path / "other.sig")
    result = CliRunner().invoke(cli, ["approve", token, "--signature", str(sig), "--yes"])
    assert result.exit_code == 122
    assert code(result) == "SIGNATURE_INVALID"
    good = sign_file(alice, message, tmp_path / "good.sig")
    flipped = bytearray(good.read_bytes())
    flipped[80] = ord("A") if flipped[80] != ord("A") else ord("B")  # one byte of the armoured blob
    (tmp_path / "flipped.sig").write_bytes(bytes(flipped))
    flipped_file = str(tmp_path / "flipped.sig")
    result = CliRunner().invoke(cli, ["approve", token, "--signature", flipped_file, "--yes"])
    assert result.exit_code == 122
    assert code(result) in ("SIGNATURE_INVALID", "SIGNER_NOT_ALLOWED")
    assert [e["data"]["code"] for e in events("approval.refused")][:1] == ["SIGNATURE_INVALID"]  # type: ignore[index]
    with raises_code(APPROVAL_PENDING):
        services().approvals.redeem(token, CMD, **BINDING)


def test_a_key_not_in_allowed_signers_is_refused(cli: click.Group, alice: Path, tmp_path: Path) -> None:
    mallory, _ = keypair(tmp_path, "mallory")
    token = human_token()
    result = CliRunner().invoke(cli, ["approve", token, "--ssh-key", str(mallory), "--yes"])
    assert result.exit_code == 122
    assert code(result) == "SIGNER_NOT_ALLOWED"


def test_a_replayed_signature_is_refused(cli: click.Group, alice: Path, tmp_path: Path) -> None:
    token = human_token()
    message = CliRunner().invoke(cli, ["approve", token, "--print-message"]).stdout
    sig = sign_file(alice, message, tmp_path / "a.sig")
    assert CliRunner().invoke(cli, ["approve", token, "--signature", str(sig), "--yes"]).exit_code == 0
    again = CliRunner().invoke(cli, ["approve", token, "--signature", str(sig), "--yes"])
    assert again.exit_code == 122
    assert code(again) == "SIGNATURE_REPLAYED"
    services().approvals.redeem(token, CMD, **BINDING)
    used = CliRunner().invoke(cli, ["approve", token, "--signature", str(sig), "--yes"])
    assert code(used) == "APPROVAL_REUSED"


def test_an_expired_token_cannot_be_approved(cli: click.Group, alice: Path) -> None:
    hour_ago = time.time() - 3600
    minted = ApprovalService(services().state_dir, services().keys.derive(APPROVAL_PURPOSE), mode="human",
                             clock=lambda: hour_ago)
    token = minted.request(CMD, **BINDING, decision_summary=DecisionSummary((), "")).token
    result = CliRunner().invoke(cli, ["approve", token, "--ssh-key", str(alice), "--yes"])
    assert result.exit_code == 122
    assert code(result) == "APPROVAL_EXPIRED"


def test_a_denial_reaches_the_agent_with_its_reason(cli: click.Group, alice: Path) -> None:
    token = human_token()
    result = CliRunner().invoke(cli, ["approve", token, "--deny", "--reason", "build/ holds the release",
                                      "--ssh-key", str(alice), "--yes"])
    assert result.exit_code == 0, result.output
    with raises_code(APPROVAL_DENIED) as denied:
        services().approvals.redeem(token, CMD, **BINDING)
    assert "alice (ssh) denied" in denied.value.message
    assert "build/ holds the release" in denied.value.message


def test_without_approvers_nobody_approves_from_the_cli(cli: click.Group) -> None:
    token = human_token()
    result = CliRunner().invoke(cli, ["approve", token, "--yes"])
    assert code(result) == "APPROVER_IS_AGENT"


def test_approving_a_forged_token(cli: click.Group) -> None:
    result = CliRunner().invoke(cli, ["approve", "c_aaaaaaaaaaaa", "--yes"])
    assert result.exit_code == 122
    assert code(result) == "APPROVAL_FORGED"


def test_approvals_lists_pending(cli: click.Group) -> None:
    token = human_token()
    text = CliRunner().invoke(cli, ["approvals"])
    assert text.exit_code == 0
    assert token in text.stdout
    assert f"$ {CMD}" in text.stdout
    data = json.loads(CliRunner().invoke(cli, ["approvals", "--json"]).stdout)
    assert [p["token"] for p in data["pending"]] == [token]


def test_approvals_empty(cli: click.Group) -> None:
    result = CliRunner().invoke(cli, ["approvals"])
    assert result.exit_code == 0
    assert result.stdout == ""
    assert "no pending" in result.stderr


def test_a_piped_answer_is_read_and_only_yes_approves(cli: click.Group, alice: Path) -> None:
    """Issue 39, finding 5: ``echo n | canal approve`` approved (with no terminal the question was
    skipped); now the piped answer decides, and no answer at all is an error naming --yes."""
    token = human_token()
    declined = CliRunner().invoke(cli, ["approve", token, "--ssh-key", str(alice)], input="n\n")
    assert declined.exit_code == 1, declined.output
    assert "not approved: the answer was 'n'" in declined.stderr
    unanswered = CliRunner().invoke(cli, ["approve", token, "--ssh-key", str(alice)], input="")
    assert unanswered.exit_code == 2, unanswered.output
    assert "stdin is no terminal and nothing was piped" in unanswered.stderr
    assert "--yes" in unanswered.stderr
    with raises_code(APPROVAL_PENDING):
        services().approvals.redeem(token, CMD, **BINDING)
    approved = CliRunner().invoke(cli, ["approve", token, "--ssh-key", str(alice)], input="y\n")
    assert approved.exit_code == 0, approved.output
    assert f"approved {token} as alice (ssh)" in approved.stdout
