"""Finding 6 of issue 15, second half: files Canal wrote or restored on the host became the caller's
(root's), so the sandbox (the project's owner) could no longer write them. Now they take the owner of
the file they replace, or of the folder they land in."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from project_helpers import chown_tree, remove_project_containers
from trust_cli import run_cli

pytestmark = [pytest.mark.docker,
              pytest.mark.skipif(os.geteuid() != 0, reason="only root can give a file to another uid")]
OWNER = 1000


@pytest.fixture
def project(host_env: Path, docker_client) -> Iterator[Path]:  # type: ignore[no-untyped-def]
    folder = host_env / "project"
    folder.mkdir()
    (folder / "notes.txt").write_text("keep me\n")
    (folder / "old.txt").write_text("old\n")
    chown_tree(folder)
    yield folder
    remove_project_containers(docker_client, folder)


def owners(project: Path, *names: str) -> list[int]:
    return [(project / name).stat().st_uid for name in names]


def test_edit_write_restore_and_workflow_init_keep_the_projects_owner(project: Path) -> None:
    assert run_cli(project, "edit", "notes.txt", "--old", "keep", "--new", "kept").returncode == 0
    assert run_cli(project, "write", "new/deep/file.txt", stdin="new\n").returncode == 0
    replaced = run_cli(project, "write", "old.txt", "--json", stdin="replaced\n")
    backup = json.loads(replaced.stdout)["backup_id"]
    restored = run_cli(project, "restore", backup, "--to", "backup-of-old.txt")
    assert restored.returncode == 0, restored.stderr
    removed = run_cli(project, "rm", "--json", "notes.txt")
    entry = json.loads(removed.stdout)["results"][0]["entry"]["id"]
    assert run_cli(project, "restore", entry).returncode == 0
    init = run_cli(project, "workflow", "init", "demo")
    assert init.returncode == 0, init.stderr
    made = ["notes.txt", "new", "new/deep", "new/deep/file.txt", "old.txt", "backup-of-old.txt",
            "workflows", "workflows/demo", "workflows/demo/WorkFlow.md"]
    assert owners(project, *made) == [OWNER] * len(made)
    appended = run_cli(project, "run", "--", "sh -c 'for f in notes.txt old.txt backup-of-old.txt "
                                            "new/deep/file.txt; do echo more >> $f || exit 1; done'")
    assert appended.returncode == 0, appended.stdout + appended.stderr
