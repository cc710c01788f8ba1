"""Two OS users made for the test (the agent's, in the docker group, and an approver's), a project owned
by the agent, and cleanup: servers stopped, sandboxes removed, users deleted, folders removed."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest
from os_users import Team, made_team


@pytest.fixture(scope="module")
def team(docker_client: Any, sandbox_image: str) -> Iterator[Team]:
    if os.geteuid() != 0:
        pytest.fail("the approval tests create OS users: run them as root (CI does)")
    with made_team(docker_client, "canal-approvals-") as made:
        yield made
