"""A project owned by another uid than 1000: the sandbox runs as that owner and can write it."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from canal.runtime.api import Canal

OWNER = (1234, 1234) if os.geteuid() == 0 else (os.getuid(), os.getgid())


@pytest.fixture(scope="module")
def canal(host_env: Path) -> Iterator[Canal]:
    project = host_env / "owned"
    project.mkdir()
    if os.geteuid() == 0:
        os.chown(project, *OWNER)
    with Canal(project) as c:
        yield c
        c.down()


def test_sandbox_runs_as_the_project_owner_and_writes_its_workspace(canal: Canal) -> None:
    result = canal.run('id -u; id -g; echo "$HOME"; touch ~/.probe && echo home-ok; echo x > made.txt')
    assert result.status == "ok", result.text
    assert result.output.split() == [str(OWNER[0]), str(OWNER[1]), "/home/agent", "home-ok"]
    made = canal.project_dir / "made.txt"
    assert made.stat().st_uid == OWNER[0]


def test_saved_outputs_are_readable_by_the_owner(canal: Canal) -> None:
    first = canal.run("seq 1 5000")
    assert first.output_file is not None
    second = canal.run(f"tail -n 1 {first.output_file}")
    assert second.output.strip() == "5000"
