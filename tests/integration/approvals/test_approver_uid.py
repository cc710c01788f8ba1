"""The approver is another OS user: the agent's uid cannot approve (CLI, a faked terminal, the door);
the approver's uid can, through the agent's server, and the re-run executes. Real users, real server."""

from __future__ import annotations

import json
import re

from os_users import Team

CONFIG = """policy: {{approval: human}}
approvals:
  approvers:
    - {{name: bob, user: {approver}}}
"""


def code_of(stderr: str) -> str:
    return next((line for line in stderr.splitlines() if re.fullmatch(r"[A-Z][A-Z_]+", line)), "")


def audit_events(team: Team, event: str) -> list[dict[str, object]]:
    shown = team.agent.canal("audit", "show", "--json", cwd=team.project)
    assert shown.returncode == 0, shown.stderr
    return [r for r in json.loads(shown.stdout)["records"] if r["event"] == event]


def test_only_the_approvers_uid_approves(team: Team) -> None:
    agent, approver, project = team.agent, team.approver, team.project
    (project / "canal.yaml").write_text(CONFIG.format(approver=approver.name))
    # no approvers are in force yet: a person at a terminal approves the first settings
    boot = agent.canal_in_script("-C", str(project), "config", "approve", "--yes")
    assert boot.returncode == 0, boot.stdout + boot.stderr

    asked = agent.canal("run", "--", "rm", "-rf", "build", cwd=project)
    assert asked.returncode == 120, asked.stderr
    token = re.search(r"c_[a-z2-7]{12}", asked.stdout + asked.stderr).group(0)  # type: ignore[union-attr]
    assert f"--for {agent.name}" in asked.stdout + asked.stderr

    plain = agent.canal("approve", token, "--yes", cwd=project)
    assert plain.returncode == 122
    assert code_of(plain.stderr) == "APPROVER_IS_AGENT"
    faked = agent.canal_in_script("-C", str(project), "approve", token, "--yes")
    assert faked.returncode == 122, faked.stdout
    assert "APPROVER_IS_AGENT" in faked.stdout  # script puts both streams on its terminal
    door = agent.canal("-C", str(project), "approve", token, "--for", agent.name, "--yes")
    assert code_of(door.stderr) == "APPROVER_IS_AGENT", door.stderr
    assert (project / "build").is_dir()

    ok = approver.canal("-C", str(project), "approve", token, "--for", agent.name, "--yes")
    assert ok.returncode == 0, ok.stderr
    assert "as bob (os-user)" in ok.stdout

    done = agent.canal("run", "--confirm", token, "--", "rm", "-rf", "build", cwd=project)
    assert done.returncode == 0, done.stderr
    assert not (project / "build").exists()

    refused = [r["data"] for r in audit_events(team, "approval.refused")]
    assert [r["code"] for r in refused] == ["APPROVER_IS_AGENT"] * 3  # type: ignore[index]
    approved = audit_events(team, "approval.approved")[-1]["data"]
    assert approved["approver"] == "bob"  # type: ignore[index]
    assert approved["how"] == "os-user"  # type: ignore[index]
    assert approved["evidence"]["uid"] == approver.uid  # type: ignore[index]


def test_changed_settings_and_ssh_signatures_use_the_same_identities(team: Team) -> None:
    """Runs after the test above (bob, an OS-user approver, is in force): bob adds his SSH key, which
    only he may approve; then a token signed with that key (which the agent cannot read) verifies, and
    a tampered signature does not."""
    agent, approver, project = team.agent, team.approver, team.project
    key = approver.home / "id_ed25519"
    made = approver.run("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "bob", "-f", str(key))
    assert made.returncode == 0, made.stderr
    public = (approver.home / "id_ed25519.pub").read_text().strip()
    (project / "canal.yaml").write_text(
        f"policy: {{approval: human}}\napprovals:\n  approvers:\n"
        f"    - {{name: bob, user: {approver.name}, ssh_key: '{public}'}}\n")
    self_approved = agent.canal_in_script("-C", str(project), "config", "approve", "--yes")
    assert self_approved.returncode == 122, self_approved.stdout
    assert "APPROVER_IS_AGENT" in self_approved.stdout
    by_bob = approver.canal("-C", str(project), "config", "approve", "--for", agent.name, "--yes")
    assert by_bob.returncode == 0, by_bob.stderr
    assert "as bob (os-user)" in by_bob.stdout

    (project / "dist").mkdir()
    (project / "dist").chmod(0o777)
    asked = agent.canal("run", "--", "rm", "-rf", "dist", cwd=project)
    token = re.search(r"c_[a-z2-7]{12}", asked.stderr).group(0)  # type: ignore[union-attr]
    stolen = agent.canal("approve", token, "--ssh-key", str(key), "--yes", cwd=project)
    assert stolen.returncode == 2  # the agent cannot read bob's key
    assert "is not readable" in stolen.stderr

    message = approver.canal("-C", str(project), "approve", token, "--for", agent.name, "--print-message")
    assert message.returncode == 0, message.stderr
    forged = message.stdout.replace("decision approve", "decision deny")
    sig_file = approver.home / "t.sig"
    sig = approver.run("sh", "-c", f"ssh-keygen -Y sign -q -f {key} -n canal-approval > {sig_file}",
                       input_text=forged)
    assert sig.returncode == 0, sig.stderr
    tampered = agent.canal("approve", token, "--signature", str(sig_file), "--yes", cwd=project)
    assert code_of(tampered.stderr) == "SIGNATURE_INVALID"
    assert (project / "dist").is_dir()

    signed = approver.canal("-C", str(project), "approve", token, "--for", agent.name, "--ssh-key", str(key),
                            "--yes")
    assert signed.returncode == 0, signed.stderr
    assert "as bob (ssh)" in signed.stdout
    done = agent.canal("run", "--confirm", token, "--", "rm", "-rf", "dist", cwd=project)
    assert done.returncode == 0, done.stderr
    evidence = audit_events(team, "approval.approved")[-1]["data"]["evidence"]  # type: ignore[index]
    assert f"token {token}" in evidence["message"]  # type: ignore[index]


def test_only_an_approvers_uid_or_the_agents_sees_a_pending_approval_through_the_door(team: Team) -> None:
    """Any local user can knock on the door and knows the project path (it is in the agent's messages):
    the door shows a pending approval (command, rule, the text to sign), or the changed settings, only to
    a configured approver's uid or the agent's own; anyone else gets APPROVER_UNKNOWN, audited. Runs
    after the tests above."""
    from os_users import make_user, remove_user

    agent, approver, project = team.agent, team.approver, team.project
    (project / "logs").mkdir()
    (project / "logs").chmod(0o777)
    asked = agent.canal("run", "--", "rm", "-rf", "logs", cwd=project)
    token = re.search(r"c_[a-z2-7]{12}", asked.stderr).group(0)  # type: ignore[union-attr]
    stranger = make_user(project.parent, "other")
    try:
        peek = stranger.canal("-C", str(project), "approve", token, "--for", agent.name, "--print-message")
        assert peek.returncode == 122, peek.stdout + peek.stderr
        assert code_of(peek.stderr) == "APPROVER_UNKNOWN", peek.stderr
        assert token not in peek.stdout
        assert "rm -rf" not in peek.stdout + peek.stderr
        settings = stranger.canal("-C", str(project), "config", "approve", "--for", agent.name, "--yes")
        assert code_of(settings.stderr) == "APPROVER_UNKNOWN", settings.stderr
        assert "settings of" not in settings.stderr  # the door showed it nothing of the settings
    finally:
        stranger.canal("server", "stop")
        remove_user(stranger)
    for who in (approver, agent):
        seen = who.canal("-C", str(project), "approve", token, "--for", agent.name, "--print-message")
        assert seen.returncode == 0, seen.stderr
        assert f"token {token}" in seen.stdout
    refused = audit_events(team, "approval.refused")[-1]["data"]
    assert refused["code"] == "APPROVER_UNKNOWN"  # type: ignore[index]
    assert refused["op"] == "show"  # type: ignore[index]
    assert refused["peer_uid"] == stranger.uid  # type: ignore[index]
    config_refused = audit_events(team, "config.refused")[-1]["data"]
    assert (config_refused["code"], config_refused["op"]) == ("APPROVER_UNKNOWN", "config-show")  # type: ignore[index]
