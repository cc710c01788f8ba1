"""A real project with a real sandbox, shared by the tests of one module."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from project_helpers import chown_tree

from canal.runtime.api import Canal


def make_project(root: Path, config: str = "") -> Path:
    project = root / "project"
    (project / "build").mkdir(parents=True)
    (project / "build" / "out.bin").write_bytes(b"\x00artifact\x01")
    (project / "notes.txt").write_text("keep me\n")
    if config:
        (project / "canal.yaml").write_text(config)
    chown_tree(project)  # the sandbox runs as uid 1000: let it write its workspace
    return project


@pytest.fixture(scope="module")
def host_env(tmp_path_factory: pytest.TempPathFactory, sandbox_image: str) -> Iterator[Path]:
    root = tmp_path_factory.mktemp("canal")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("CANAL_STATE_DIR", str(root / "state"))
        mp.setenv("CANAL_CONFIG_DIR", str(root / "config"))
        mp.delenv("CANAL_KEY", raising=False)
        mp.delenv("CANAL_PROJECT_DIR", raising=False)
        yield root


@pytest.fixture(scope="module")
def project(host_env: Path) -> Path:
    return make_project(host_env)


@pytest.fixture(scope="module")
def canal(project: Path) -> Iterator[Canal]:
    with Canal(project) as c:
        yield c
        c.down()
