"""Issue 33, finding 5: a project folder deleted and made again left its running sandbox on the old
folder (a bind mount keeps the folder it was made from): the next command saw an empty, deleted
workspace, or failed with SESSION_FAILED. The sandbox is now made again on the folder as it is, with a
notice, whether its session is live (the same Canal) or not (a new process)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from project_helpers import chown_tree, remove_project_containers

from canal.runtime.api import Canal


def _remake(project: Path, name: str) -> None:
    shutil.rmtree(project)
    project.mkdir()
    (project / name).write_text("new folder\n")
    chown_tree(project)


@pytest.fixture
def project(tmp_path: Path, sandbox_image: str, docker_client: Any,
            monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("CANAL_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("CANAL_CONFIG_DIR", str(tmp_path / "config"))
    folder = tmp_path / "project"
    folder.mkdir()
    yield folder
    remove_project_containers(docker_client, folder)


def test_a_recreated_project_folder_gets_a_sandbox_on_the_new_folder(project: Path) -> None:
    (project / "old.txt").write_text("old folder\n")
    chown_tree(project)
    with Canal(project) as canal:
        try:
            first = canal.run("ls && cd /tmp")
            assert first.output.startswith("old.txt"), first.text
            assert first.notices == []
            _remake(project, "one.txt")
            again = canal.run("ls; pwd")  # its session is live: the same Canal
            assert again.status == "ok", again.text
            assert again.output.splitlines() == ["one.txt", "/workspace"]  # a new session: cwd is back
            assert len(again.notices) == 1
            assert "was replaced since sandbox default started" in again.notices[0]
            assert canal.run("ls").notices == []  # said once
        finally:
            canal.close()
        _remake(project, "two.txt")
        with Canal(project) as fresh:  # no live session: a new process finds the sandbox by name
            seen = fresh.run("ls")
            assert seen.output.splitlines() == ["two.txt"], seen.text
            assert len(seen.notices) == 1
