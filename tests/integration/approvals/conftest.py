"""Two OS users made for the test (the agent's, in the docker group, and an approver's), a project owned
by the agent, and cleanup: servers stopped, sandboxes removed, users deleted, folders removed."""

from __future__ import annotations

import os
import shutil
import signal
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from os_users import OsUser, Team, make_user, remove_user


def _kill_leftovers(uid: int) -> None:
    """Processes still running as a user this test made (its Canal server, if stop did not end it)."""
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if entry.stat().st_uid == uid:
                    os.kill(int(entry.name), signal.SIGKILL)
            except (OSError, ProcessLookupError):
                continue


@pytest.fixture(scope="module")
def team(docker_client: Any, sandbox_image: str) -> Iterator[Team]:
    if os.geteuid() != 0:
        pytest.fail("the approval tests create OS users: run them as root (CI does)")
    base = Path(tempfile.mkdtemp(prefix="canal-approvals-", dir="/tmp"))
    base.chmod(0o755)
    project = base / "project"
    users: list[OsUser] = []
    try:
        users.append(make_user(base, "agent", groups=("docker",)))
        users.append(make_user(base, "appr"))
        agent, approver = users
        project.mkdir()
        (project / "build").mkdir()
        for made in (project, project / "build"):
            os.chown(made, agent.uid, agent.uid)
        yield Team(agent, approver, project)
    finally:
        from project_helpers import remove_project_containers

        for user in users:
            user.canal("server", "stop")
        time.sleep(0.2)
        for user in users:
            _kill_leftovers(user.uid)
        try:
            for user in users:
                remove_user(user)
        finally:
            remove_project_containers(docker_client, project)
            shutil.rmtree(base, ignore_errors=True)
