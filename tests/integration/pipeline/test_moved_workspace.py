"""A project whose canal.yaml mounts the workspace elsewhere (``sandbox.workdir: /src``) works as one at
/workspace does: writes run unasked, are checkpointed and undone, git reads its own repository; a write to
/workspace, no longer the workspace, is asked about. Before the fix every write was confirmed as "outside
the workspace" and every git command as a foreign repository (real sandbox, Python API)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from project_helpers import chown_tree

from canal.runtime.api import Canal
from canal.runtime.services import Services
from canal.runtime.trust.service import Approver


@pytest.fixture
def moved(host_env: Path, tmp_path: Path) -> Iterator[Canal]:
    project = tmp_path / "project"
    project.mkdir()
    (project / "canal.yaml").write_text("sandbox:\n  workdir: /src\n")
    (project / "notes.txt").write_text("keep me\n")
    chown_tree(project)
    services = Services(project)
    services.trust.approve(Approver(user="alice", how="tty"), services.trust.status().snapshot.digest)
    with Canal(project) as canal:
        yield canal
        canal.down()


def test_a_workspace_at_src_is_the_workspace(moved: Canal) -> None:
    project = moved.project_dir
    assert moved.run("pwd").output.strip() == "/src"
    for command in ("echo new >> notes.txt", "git init -q . && git status --short", "rm -f notes.txt"):
        result = moved.run(command)
        assert result.status == "ok", result.text
    assert not (project / "notes.txt").exists()
    moved.undo()  # the delete was checkpointed: undo brings the file back
    assert (project / "notes.txt").read_text() == "keep me\nnew\n"


def test_the_default_folder_is_outside_a_moved_workspace(moved: Canal) -> None:
    asked = moved.run("echo x > /workspace/x")
    assert asked.status == "confirmation_required", asked.text
    assert asked.decision is not None
    assert "outside-workspace-write" in asked.decision.rule_ids
