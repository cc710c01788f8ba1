"""``policy.approval: human``: a token is only good after a person approves it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from canal.runtime.api import Canal
from canal.runtime.approvals import Approver
from canal.runtime.cli.words import say as cli_words

from .conftest import make_project


@pytest.fixture(scope="module")
def canal(host_env: Path) -> Iterator[Canal]:
    project = make_project(host_env / "human", "policy:\n  approval: human\n")
    with Canal(project) as c:
        yield c
        c.down()


def test_human_approval_blocks_until_a_person_approves(canal: Canal) -> None:
    asked = canal.run("rm -rf build", say=cli_words)
    assert asked.confirmation is not None
    assert asked.confirmation.approval == "human"
    token = asked.confirmation.token
    assert f"canal approve {token}" in asked.text
    with pytest.raises(Exception) as pending:  # noqa: PT011 - the code is what matters
        canal.run("rm -rf build", confirm=token)
    assert getattr(pending.value, "code", "") == "APPROVAL_PENDING"
    assert (canal.project_dir / "build").exists()

    canal.services.approvals.approve(token, Approver(user="alice", how="tty"))
    done = canal.run("rm -rf build", confirm=token)
    assert done.status == "ok", done.text
    assert not (canal.project_dir / "build").exists()
    started = [line for line in canal.services.audit.path.read_text().splitlines() if "run.started" in line]
    assert '"approver":"alice (tty)"' in started[-1]
