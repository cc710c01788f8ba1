"""Issue 30, finding 2: a second Canal server of one user (another CANAL_STATE_DIR here; DOCKER_HOST or
CANAL_CONFIG_DIR do the same) did not get the approval door: it logged EADDRINUSE, and an approver
deciding its project's token reached the first server (APPROVAL_INVALID). Now an approver, another OS
user, decides a token of each server's project and each reaches its own; ``canal doctor`` says so.
Real users, real servers, real sandboxes."""

from __future__ import annotations

import json
import os
import re
import shlex
from pathlib import Path
from typing import Any

from os_users import CANAL, Team
from project_helpers import remove_project_containers

CONFIG = "policy: {{approval: human}}\napprovals:\n  approvers:\n    - {{name: bob, user: {approver}}}\n"


def _state(team: Team, name: str) -> dict[str, str]:
    """The environment of one server: its own state root (so its own fingerprint)."""
    return {"CANAL_STATE_DIR": str(team.agent.home / f"state-{name}")}


def test_an_approver_reaches_the_server_of_each_project(team: Team, docker_client: Any) -> None:
    projects = {"one": team.project, "two": team.project.parent / "project-two"}
    projects["two"].mkdir()
    try:
        _decide_one_token_of_each(team, projects)
    finally:  # the team removes its own project's sandboxes; the second project's are this test's
        team.agent.canal("server", "stop", "--all")
        remove_project_containers(docker_client, projects["two"])


def _decide_one_token_of_each(team: Team, projects: dict[str, Path]) -> None:
    agent, approver = team.agent, team.approver
    for name, project in projects.items():
        (project / "build").mkdir(exist_ok=True)
        (project / "canal.yaml").write_text(CONFIG.format(approver=approver.name))
        for made in (project, project / "build", project / "canal.yaml"):
            os.chown(made, agent.uid, agent.uid)
        line = shlex.join([CANAL, "-C", str(project), "config", "approve", "--yes"])
        boot = agent.run("script", "-qec", line, "/dev/null", **_state(team, name))
        assert boot.returncode == 0, boot.stdout + boot.stderr
    tokens = {}
    for name, project in projects.items():
        asked = agent.canal("run", "--", "rm", "-rf", "build", cwd=project, **_state(team, name))
        assert asked.returncode == 120, asked.stdout + asked.stderr
        tokens[name] = re.search(r"c_[a-z2-7]{12}", asked.stderr).group(0)  # type: ignore[union-attr]
    status = agent.canal("server", "status", "--json", **_state(team, "two"))
    assert status.returncode == 0, status.stderr
    for name, project in projects.items():  # the approver knows only the user, the project and the token
        ok = approver.canal("-C", str(project), "approve", tokens[name], "--for", agent.name, "--yes")
        assert ok.returncode == 0, f"{name}: {ok.stdout}{ok.stderr}"
        assert "as bob (os-user)" in ok.stdout
        done = agent.canal("run", "--confirm", tokens[name], "--", "rm", "-rf", "build", cwd=project,
                           **_state(team, name))
        assert done.returncode == 0, done.stdout + done.stderr
        assert not (project / "build").exists()
    for name, project in projects.items():
        doctor = agent.canal("doctor", "--json", cwd=project, **_state(team, name))
        door = next(c for c in json.loads(doctor.stdout)["checks"] if c["name"] == "door")
        assert door["ok"], door
        assert f"@canal-approvals-{agent.uid}-" in door["detail"]

