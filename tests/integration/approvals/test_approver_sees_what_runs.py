"""What an approver is shown is what runs (issue 39, findings 2 and 5): a command that hides its end
behind a carriage return, bidi overrides or separators is shown with each of them escaped, by the
approval door, ``canal approvals`` and the "approved" line; and ``canal approve`` takes a piped answer,
where anything but yes declines and no answer at all (no terminal, no --yes) is an error that says so.
Two OS users made by the test: the agent and the approver."""

from __future__ import annotations

import re

from os_users import CANAL, Team

from tests.hidden_chars import HIDDEN, assert_shown_escaped

CONFIG = "policy: {{approval: human}}\napprovals:\n  approvers:\n    - {{name: bob, user: {approver}}}\n"
SHOWN = [c for c in HIDDEN if c not in "\x00\n"]  # argv cannot hold NUL; a newline ends the comment
SPOOF = "rm -rf build /tmp/zz # \r" + " " * 60 + "$ ls -la /tmp/zz"


def ask(team: Team, command: str) -> str:
    asked = team.agent.canal("run", "--", command, cwd=team.project)
    assert asked.returncode == 120, asked.stdout + asked.stderr
    return re.search(r"c_[a-z2-7]{12}", asked.stdout + asked.stderr).group(0)  # type: ignore[union-attr]


def test_the_approver_sees_every_hidden_character_escaped(team: Team) -> None:
    agent, approver, project = team.agent, team.approver, team.project
    (project / "canal.yaml").write_text(CONFIG.format(approver=approver.name))
    boot = agent.canal_in_script("-C", str(project), "config", "approve", "--yes")
    assert boot.returncode == 0, boot.stdout + boot.stderr
    token = ask(team, SPOOF + " " + "".join(SHOWN))

    listed = agent.canal("approvals", cwd=project)
    assert listed.returncode == 0, listed.stderr
    assert "# \\r    " in listed.stdout
    assert_shown_escaped(listed.stdout, SHOWN)

    ok = approver.canal("-C", str(project), "approve", token, "--for", agent.name, "--yes")
    assert ok.returncode == 0, ok.stderr
    assert "  $ rm -rf build /tmp/zz # \\r    " in ok.stderr  # the door's description of the command
    assert_shown_escaped(ok.stderr, SHOWN)
    assert "it can run once, with: canal run --confirm" in ok.stdout
    assert_shown_escaped(ok.stdout, SHOWN)


def test_a_piped_no_declines_and_no_answer_is_an_error_that_says_so(team: Team) -> None:
    """Runs after the test above (bob is in force)."""
    agent, approver, project = team.agent, team.approver, team.project
    (project / "build").mkdir(exist_ok=True)
    token = ask(team, "rm -rf build")
    door = ("-C", str(project), "approve", token, "--for", agent.name)

    declined = approver.run(CANAL, *door, input_text="n\n")
    assert declined.returncode == 1, declined.stdout + declined.stderr
    assert "not approved" in declined.stderr
    assert "approved" not in declined.stdout
    unanswered = approver.canal(*door)  # stdin is /dev/null: no terminal, nothing piped
    assert unanswered.returncode == 2, unanswered.stdout + unanswered.stderr
    assert "no terminal" in unanswered.stderr
    assert "--yes" in unanswered.stderr
    still = agent.canal("run", "--confirm", token, "--", "rm", "-rf", "build", cwd=project)
    assert still.returncode == 120, still.stderr  # APPROVAL_PENDING: neither answer approved it
    assert (project / "build").is_dir()

    approved = approver.run(CANAL, *door, input_text="yes\n")
    assert approved.returncode == 0, approved.stderr
    assert "as bob (os-user)" in approved.stdout
    done = agent.canal("run", "--confirm", token, "--", "rm", "-rf", "build", cwd=project)
    assert done.returncode == 0, done.stderr
    assert not (project / "build").exists()
