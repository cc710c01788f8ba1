"""Issue 30, finding 1: one ``CANAL_STATE_DIR`` (exported once in a shell profile) used by two projects
wrote one audit log and one approval record for both: ``audit verify`` failed with AUDIT_LOG_FOREIGN and
``ps``/``down`` with CONFIG_TRUST_INVALID. Now each project has its own folder under it; real sandboxes,
the real CLI, both projects' settings approved, a confirmation
in each, both logs verified."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from project_helpers import chown_tree, remove_project_containers
from trust_cli import run_cli

from canal.host.approvals import Approver
from canal.host.paths import project_key
from canal.runtime.services import Services

pytestmark = pytest.mark.docker

CONFIG = "policy:\n  profile: standard\n  approval: agent\nunattended: false\n"


@pytest.fixture
def projects(host_env: Path, docker_client: Any) -> Iterator[tuple[Path, Path]]:
    made = []
    for name in ("alpha", "beta"):
        folder = host_env / name
        (folder / "build").mkdir(parents=True)
        (folder / "canal.yaml").write_text(CONFIG)
        chown_tree(folder)
        services = Services(folder)
        services.trust.approve(Approver(user="alice", how="tty"), services.trust.status().snapshot.digest)
        made.append(folder)
    yield made[0], made[1]
    for folder in made:
        remove_project_containers(docker_client, folder)


def _token(shown: Any) -> str:
    found = re.search(r"c_[a-z2-7]{12}", shown.stdout + shown.stderr)
    assert found is not None, shown.stdout + shown.stderr
    return found.group(0)


def test_two_projects_share_one_state_dir_without_mixing(projects: tuple[Path, Path], host_env: Path) -> None:
    tokens = {}
    for project in projects:
        ran = run_cli(project, "run", "--", "echo hello")
        assert ran.returncode == 0, ran.stdout + ran.stderr
        asked = run_cli(project, "run", "--", "rm -rf build")
        assert asked.returncode == 120, asked.stdout + asked.stderr
        tokens[project] = _token(asked)
    alpha, beta = projects
    crossed = run_cli(beta, "run", "--confirm", tokens[alpha], "--", "rm -rf build")  # alpha's, in beta
    assert crossed.returncode != 0, crossed.stdout
    assert (beta / "build").is_dir()
    for project in projects:
        done = run_cli(project, "run", "--confirm", tokens[project], "--", "rm -rf build")
        assert done.returncode == 0, done.stdout + done.stderr
        assert not (project / "build").exists()
        listed = run_cli(project, "ps", "--json")
        assert listed.returncode == 0, listed.stdout + listed.stderr
        verified = run_cli(project, "audit", "verify", "--json")
        assert verified.returncode == 0, verified.stdout + verified.stderr
        report = json.loads(verified.stdout)
        assert report["path"] == str(host_env / "state" / "projects" / project_key(project) / "audit"
                                     / "audit.jsonl")
        status = run_cli(project, "config", "status", "--json")
        assert json.loads(status.stdout)["state"] == "approved", status.stdout
        down = run_cli(project, "down")
        assert down.returncode == 0, down.stdout + down.stderr
