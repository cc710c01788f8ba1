"""``policy.approval: human``: a token is only good after a person approves it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from canal.cli.words import say as cli_words
from canal.host.approvals import Approver
from canal.runtime.api import Canal

from .conftest import make_project

ALICE_KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOq4dVvP1vq0nC2e7kY3t5GvXq9r4z2mH8n6bJ1aQ0Zk alice"


@pytest.fixture(scope="module")
def canal(host_env: Path) -> Iterator[Canal]:
    project = make_project(host_env / "human", "policy:\n  approval: human\napprovals:\n  approvers:\n"
                           f"    - {{name: alice, ssh_key: '{ALICE_KEY}'}}\n")
    trust = Canal(project)._services.trust  # a person approves the settings that name the approver
    trust.approve(Approver(user="root", how="tty"), trust.status().snapshot.digest)
    with Canal(project) as c:
        yield c
        c.down()


def test_human_approval_blocks_until_a_person_approves(canal: Canal) -> None:
    asked = canal.run("rm -rf build", say=cli_words)
    assert asked.confirmation is not None
    assert asked.confirmation.approval == "human"
    token = asked.confirmation.token
    assert f"approve {token} --ssh-key KEY" in asked.text  # how this project's approver decides it
    with pytest.raises(Exception) as pending:  # noqa: PT011 - the code is what matters
        canal.run("rm -rf build", confirm=token)
    assert getattr(pending.value, "code", "") == "APPROVAL_PENDING"
    assert (canal.project_dir / "build").exists()

    canal._services.approvals.approve(token, Approver(user="alice", how="ssh"))
    done = canal.run("rm -rf build", confirm=token)
    assert done.status == "ok", done.text
    assert not (canal.project_dir / "build").exists()
    started = [line for line in canal._services.audit.path.read_text().splitlines() if "run.started" in line]
    assert '"approver":"alice (ssh)"' in started[-1]
